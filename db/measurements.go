package db

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"cnntime/predictor/measure"
)

// MeasuredKey names one measured kernel of a device at one precision and policy: what a
// sweep may skip because the cache already holds it.
type MeasuredKey struct {
	Config string
	Batch  int
	Phase  measure.Phase
}

// validateMeasurement is measure.Measurement.Validate plus the enumerations the cache
// stores as text.
func validateMeasurement(m measure.Measurement) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if _, err := measure.ParsePrecision(string(m.Precision)); err != nil {
		return fmt.Errorf("measurement of %s: %w", m.ConfigKey, err)
	}
	if m.Policy != measure.NoPolicy {
		if _, err := measure.ParsePolicy(string(m.Policy)); err != nil {
			return fmt.Errorf("measurement of %s: %w", m.ConfigKey, err)
		}
	}
	if m.MedianMS < 0 || m.SpreadMS < 0 || m.Repeats < 0 || m.WorkspaceBytes < 0 {
		return fmt.Errorf("measurement of %s at batch %d has a negative time, repeat count or workspace", m.ConfigKey, m.Batch)
	}
	if err := checkMeasuredAt(m.At); err != nil {
		return fmt.Errorf("measurement of %s at batch %d: %w", m.ConfigKey, m.Batch, err)
	}
	return nil
}

// PutMeasurements saves ms in one transaction: all of them or, when one is invalid or
// the write fails, none. A measurement replaces the cache's one of the same device,
// configuration, batch, precision, phase and policy. Configurations and devices the
// cache does not know yet get a row with only their key.
func (d *DB) PutMeasurements(ctx context.Context, ms []measure.Measurement) error {
	for i, m := range ms {
		if err := validateMeasurement(m); err != nil {
			return fmt.Errorf("save measurements: measurement %d of %d: %w; nothing was saved", i+1, len(ms), err)
		}
	}
	if len(ms) == 0 {
		return nil
	}
	return d.write(ctx, fmt.Sprintf("save %d measurements", len(ms)), func(tx *sql.Tx) error {
		return putMeasurements(ctx, tx, ms)
	})
}

func putMeasurements(ctx context.Context, tx *sql.Tx, ms []measure.Measurement) error {
	devices, err := newKeyIDs(ctx, tx, "devices")
	if err != nil {
		return err
	}
	defer devices.close()
	configs, err := newKeyIDs(ctx, tx, "configs")
	if err != nil {
		return err
	}
	defer configs.close()
	insert, err := tx.PrepareContext(ctx, `INSERT INTO measurements (device_id, config_id, batch,
			precision, phase, policy, algorithm, median_ms, spread_ms, repeats, workspace_bytes,
			status, sweep_id, at, source, notes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)
		ON CONFLICT (device_id, config_id, batch, precision, phase, policy) DO UPDATE SET
			algorithm = excluded.algorithm, median_ms = excluded.median_ms,
			spread_ms = excluded.spread_ms, repeats = excluded.repeats,
			workspace_bytes = excluded.workspace_bytes, status = excluded.status,
			sweep_id = excluded.sweep_id, at = excluded.at, source = excluded.source,
			notes = excluded.notes`)
	if err != nil {
		return err
	}
	defer insert.Close()
	for _, m := range ms {
		deviceID, err := devices.id(ctx, m.DeviceKey)
		if err != nil {
			return err
		}
		configID, err := configs.id(ctx, m.ConfigKey)
		if err != nil {
			return err
		}
		var sweep sql.NullInt64
		if m.SweepID != 0 {
			sweep = sql.NullInt64{Int64: m.SweepID, Valid: true}
		}
		if _, err := insert.ExecContext(ctx, deviceID, configID, m.Batch, string(m.Precision),
			string(m.Phase), string(m.Policy), m.Algorithm, m.MedianMS, m.SpreadMS, m.Repeats,
			m.WorkspaceBytes, string(m.Status), sweep, unixNanos(m.At), m.Notes); err != nil {
			return fmt.Errorf("save %s at batch %d: %w", m.ConfigKey, m.Batch, err)
		}
	}
	return nil
}

// Measurements returns the kernel measurements of the device deviceKey ("" for every
// device) whose configuration is one of configKeys (nil for every configuration),
// ordered by device, configuration, precision, policy, phase and batch.
func (d *DB) Measurements(ctx context.Context, deviceKey string, configKeys []string) ([]measure.Measurement, error) {
	if configKeys != nil && len(configKeys) == 0 {
		return nil, nil
	}
	// The joins run in the order written (CROSS JOIN): every (device, configuration)
	// pair is one contiguous range of the primary key, never a scan.
	var args []any
	var from string
	if configKeys != nil {
		// One bound JSON array instead of thousands of parameters.
		from = `json_each(?) AS wanted
			CROSS JOIN configs c ON c.key = wanted.value
			CROSS JOIN devices d
			CROSS JOIN measurements m ON m.device_id = d.id AND m.config_id = c.id`
		// Sorted and without duplicates: the rows then come out in the order returned.
		keys := slices.Clone(configKeys)
		slices.Sort(keys)
		args = append(args, jsonStrings(slices.Compact(keys)))
	} else {
		from = `devices d
			CROSS JOIN configs c
			CROSS JOIN measurements m ON m.device_id = d.id AND m.config_id = c.id`
	}
	if deviceKey != "" {
		from += " WHERE d.key = ?"
		args = append(args, deviceKey)
	}
	if configKeys == nil {
		from += " ORDER BY d.key, c.key" // read through the key indexes: no sort
	}
	query := `SELECT d.key, c.key, m.batch, m.precision, m.phase, m.policy, m.algorithm,
			m.median_ms, m.spread_ms, m.repeats, m.workspace_bytes, m.status,
			coalesce(m.sweep_id, 0), m.at, m.notes
		FROM ` + from
	rows, err := d.sqldb().QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read measurements from %s: %w", d.path, err)
	}
	defer rows.Close()
	var out []measure.Measurement
	for rows.Next() {
		var m measure.Measurement
		var at int64
		if err := rows.Scan(&m.DeviceKey, &m.ConfigKey, &m.Batch, &m.Precision, &m.Phase, &m.Policy,
			&m.Algorithm, &m.MedianMS, &m.SpreadMS, &m.Repeats, &m.WorkspaceBytes, &m.Status,
			&m.SweepID, &at, &m.Notes); err != nil {
			return nil, fmt.Errorf("read measurements from %s: %w", d.path, err)
		}
		m.At = fromUnixNanos(at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read measurements from %s: %w", d.path, err)
	}
	// Sorted here, where it is needed at all: Go sorts the rows several times faster
	// than SQLite's sorter. One device's rows come sorted from the primary key.
	if !slices.IsSortedFunc(out, compareMeasurements) {
		slices.SortFunc(out, compareMeasurements)
	}
	return out, nil
}

// compareMeasurements orders by device, configuration, precision, policy, phase, batch.
func compareMeasurements(a, b measure.Measurement) int {
	return cmp.Or(
		strings.Compare(a.DeviceKey, b.DeviceKey),
		strings.Compare(a.ConfigKey, b.ConfigKey),
		strings.Compare(string(a.Precision), string(b.Precision)),
		strings.Compare(string(a.Policy), string(b.Policy)),
		strings.Compare(string(a.Phase), string(b.Phase)),
		cmp.Compare(a.Batch, b.Batch),
	)
}

// Cached is what the cache holds of one kernel: its outcome (a time, out of memory,
// unsupported) and the algorithm that ran.
type Cached struct {
	Status    measure.Status
	Algorithm string
}

// MeasuredSet returns what the cache holds for one device at one precision and policy,
// with each kernel's outcome and algorithm: the sweep planner leaves out the ones that
// need no new measurement (gpu.Settled) and tries the others again.
func (d *DB) MeasuredSet(ctx context.Context, deviceKey string, precision measure.Precision, policy measure.Policy) (map[MeasuredKey]Cached, error) {
	rows, err := d.sqldb().QueryContext(ctx, `SELECT c.key, m.batch, m.phase, m.status, m.algorithm
		FROM measurements m JOIN devices d ON d.id = m.device_id JOIN configs c ON c.id = m.config_id
		WHERE d.key = ? AND m.precision = ? AND m.policy = ?`, deviceKey, string(precision), string(policy))
	if err != nil {
		return nil, fmt.Errorf("read what %s holds for %s: %w", d.path, deviceKey, err)
	}
	defer rows.Close()
	out := map[MeasuredKey]Cached{}
	for rows.Next() {
		var k MeasuredKey
		var c Cached
		if err := rows.Scan(&k.Config, &k.Batch, &k.Phase, &c.Status, &c.Algorithm); err != nil {
			return nil, fmt.Errorf("read what %s holds for %s: %w", d.path, deviceKey, err)
		}
		out[k] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read what %s holds for %s: %w", d.path, deviceKey, err)
	}
	return out, nil
}

// unixNanos stores a time as Unix nanoseconds; the zero time is 0.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromUnixNanos is the inverse of unixNanos, in UTC.
func fromUnixNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
