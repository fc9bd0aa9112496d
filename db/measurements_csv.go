package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"cnntime/db/csvsafe"
	"cnntime/predictor/measure"
)

// A kernel measurement CSV (MeasurementCSVColumns) is what `cnntime cache export --csv
// --layers` writes and `scripts/pytorch_sweep.py --layers` emits: one row per device,
// layer configuration, batch size, precision, phase and policy. Its columns:
//
//	device           a measured device's key containing ':' ("cpu:HOST:MODEL:pytorch-2-threads",
//	                 "cuda:GPU-…"), stored as it is; or a catalog GPU id, stored as "gpu:<id>"
//	config           the layer configuration's key (cnn.Config.Key)
//	batch_size       a positive integer
//	precision        the kernel's arithmetic: fp32, tf32 or amp
//	phase            fwd, bwd_data or bwd_weights
//	policy           heuristic, fastest, or empty (a CPU: no algorithm choice)
//	algorithm        the algorithm that ran, or empty
//	median_ms        the median time in ms: > 0 when status is ok, may be empty otherwise
//	spread_ms        half the interquartile range, ms (empty: 0)
//	repeats          timed runs (empty: 0)
//	workspace_bytes  the algorithm's workspace (empty: 0)
//	status           ok, oom or unsupported
//	sweep_id         the sweep of the cache it came from: local to that cache, not imported
//	measured_at      when, RFC 3339 (empty: unknown)
//	source           where it came from; empty: "csv:<file name>"
//	device_info      the device described as JSON (measure.Device's fields: backend, name,
//	                 sm_count, memory_bytes, gpu_id, host, ...); empty: only its key is known
//
// The header is required; columns may come in any order; policy, algorithm, spread_ms,
// repeats, workspace_bytes, sweep_id, measured_at, source and device_info may be left out.
var measurementCSVOptional = map[string]bool{"policy": true, "algorithm": true, "spread_ms": true, "repeats": true,
	"workspace_bytes": true, "sweep_id": true, "measured_at": true, "source": true, "device_info": true}

// CSVMeasurement is one row of a kernel measurement CSV.
type CSVMeasurement struct {
	measure.Measurement
	Source string
	// Device describes the device when the row's device_info does; nil when it does not.
	Device *measure.Device
}

// IsMeasurementCSVHeader reports whether a CSV header line's columns are those of a
// kernel measurement CSV (it has a config and a phase column) rather than a step CSV.
func IsMeasurementCSVHeader(header []string) bool {
	var config, phase bool
	for _, h := range header {
		switch strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) {
		case "config":
			config = true
		case "phase":
			phase = true
		}
	}
	return config && phase
}

// ParseMeasurementsCSV reads a kernel measurement CSV named name (for messages and the
// default source). It reads all of it or returns the first error, naming its line.
func ParseMeasurementsCSV(r io.Reader, name string) ([]CSVMeasurement, error) {
	s, err := openCSV(r, name)
	if errors.Is(err, io.EOF) {
		return nil, emptyMeasurementCSV(name)
	}
	if err != nil {
		return nil, err
	}
	var out []CSVMeasurement
	err = s.measurements(&ImportChecks{}, func(m CSVMeasurement) error {
		out = append(out, m)
		return nil
	})
	return out, err
}

func emptyMeasurementCSV(name string) error {
	return fmt.Errorf("%s is empty: a kernel measurement CSV starts with the header %s", name, strings.Join(MeasurementCSVColumns, ","))
}

// measurements reads the rest of s, a kernel measurement CSV, calling fn with each row.
func (s *csvStream) measurements(checks *ImportChecks, fn func(CSVMeasurement) error) error {
	col := map[string]int{}
	for i, h := range s.header {
		if !slices.Contains(MeasurementCSVColumns, h) {
			return fmt.Errorf("%s line 1: unknown column %q: a kernel measurement CSV has the columns %s", s.name, h, strings.Join(MeasurementCSVColumns, ", "))
		}
		if _, dup := col[h]; dup {
			return fmt.Errorf("%s line 1: column %q appears twice", s.name, h)
		}
		col[h] = i
	}
	for _, c := range MeasurementCSVColumns {
		if _, ok := col[c]; !ok && !measurementCSVOptional[c] {
			return fmt.Errorf("%s line 1: missing column %q: a kernel measurement CSV has the columns %s", s.name, c, strings.Join(MeasurementCSVColumns, ", "))
		}
	}
	infos := map[string]*measure.Device{} // one parsed description per distinct text
	n := 0
	for {
		rec, line, ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if len(infos) > 1024 { // a file of many devices: forget, parse again when seen again
			clear(infos)
		}
		m, err := parseMeasurementRecord(rec, col, s.name, infos, checks)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", s.name, line, err)
		}
		if err := fn(m); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s has a header but no measurements", s.name)
	}
	return nil
}

func parseMeasurementRecord(rec []string, col map[string]int, name string, infos map[string]*measure.Device, checks *ImportChecks) (CSVMeasurement, error) {
	// Text cells come back as they were before ExportMeasurementsCSV (or
	// pytorch_sweep.py) neutralised them for spreadsheets (csvsafe.Untext); a number
	// never starts with the apostrophe it takes off.
	field := func(c string) string {
		if i, ok := col[c]; ok {
			return csvsafe.Untext(strings.TrimSpace(rec[i]))
		}
		return ""
	}
	m := CSVMeasurement{Source: field("source")}
	m.ConfigKey = field("config")
	m.Precision = measure.Precision(field("precision"))
	m.Phase = measure.Phase(field("phase"))
	m.Policy = measure.Policy(field("policy"))
	m.Algorithm = field("algorithm")
	m.Status = measure.Status(field("status"))
	var err error
	if m.DeviceKey, err = csvDeviceKey("device", field("device")); err != nil {
		return m, err
	}
	if err := checks.checkDevice("device", m.DeviceKey); err != nil {
		return m, err
	}
	if m.Source == "" {
		m.Source = "csv:" + name
	}
	if m.Batch, err = strconv.Atoi(field("batch_size")); err != nil {
		return m, fmt.Errorf("batch_size %q is not a whole number", field("batch_size"))
	}
	if err := checkBatch(m.Batch); err != nil {
		return m, err
	}
	if m.MedianMS, err = parseMS("median_ms", field("median_ms")); err != nil {
		return m, err
	}
	if m.SpreadMS, err = parseMS("spread_ms", field("spread_ms")); err != nil {
		return m, err
	}
	if v := field("repeats"); v != "" {
		if m.Repeats, err = strconv.Atoi(v); err != nil || m.Repeats < 0 {
			return m, fmt.Errorf("repeats %q is not a whole number ≥ 0", v)
		}
	}
	if v := field("workspace_bytes"); v != "" {
		if m.WorkspaceBytes, err = strconv.ParseInt(v, 10, 64); err != nil || m.WorkspaceBytes < 0 {
			return m, fmt.Errorf("workspace_bytes %q is not a whole number ≥ 0", v)
		}
	}
	if m.At, err = parseMeasuredAt(field("measured_at")); err != nil {
		return m, err
	}
	if err := validateMeasurement(m.Measurement); err != nil {
		return m, err
	}
	if info := field("device_info"); info != "" {
		dev, ok := infos[info]
		if !ok {
			dev = new(measure.Device)
			dec := json.NewDecoder(strings.NewReader(info))
			dec.DisallowUnknownFields()
			if err := dec.Decode(dev); err != nil {
				return m, fmt.Errorf("device_info is not a device description (JSON with backend, name, sm_count, memory_bytes, host, ...): %v", err)
			}
			infos[info] = dev
		}
		d := *dev
		d.Key = m.DeviceKey // the row's key, whatever the description says
		m.Device = &d
	}
	return m, nil
}

// ImportCSV merges a CSV read from r, named name (a file name: it names the rows'
// default source): a kernel measurement CSV (see MeasurementCSVColumns), a loader-rate
// CSV (see LoaderRateCSVColumns) or a step CSV (see StepCSVColumns), told apart by the
// columns of its header. It reads r a row at a time inside one transaction and writes
// all rows or none: on any error the cache is unchanged.
func (d *DB) ImportCSV(ctx context.Context, r io.Reader, name string) (ImportReport, error) {
	s, err := openCSV(r, name)
	switch {
	case errors.Is(err, io.EOF):
		return ImportReport{File: name, Kind: "csv"}, fmt.Errorf("import %s is empty: a step CSV starts with the header %s; the cache was not changed",
			name, strings.Join(StepCSVColumns, ","))
	case err != nil:
		return ImportReport{File: name, Kind: "csv"}, fmt.Errorf("import %w; the cache was not changed", err)
	case IsMeasurementCSVHeader(s.header):
		return d.importMeasurements(ctx, s)
	}
	if IsLoaderRateCSVHeader(s.header) {
		return d.importLoaderRates(ctx, s)
	}
	return d.importSteps(ctx, s)
}

// ImportMeasurementsCSV merges a kernel measurement CSV read from r, named name, in one
// transaction: all rows or none. A row replaces the cache's measurement of the same
// device, configuration, batch, precision, phase and policy only when it was measured
// later, as a cache import does. Devices the cache lacks are added, described by the
// rows' device_info where given (a device the cache knows only by its key gets the
// description; one it describes keeps its own); configurations it lacks are added by key.
func (d *DB) ImportMeasurementsCSV(ctx context.Context, r io.Reader, name string) (ImportReport, error) {
	s, err := openCSV(r, name)
	if errors.Is(err, io.EOF) {
		err = emptyMeasurementCSV(name)
	}
	if err != nil {
		return ImportReport{File: name, Kind: "layers-csv", Source: "csv:" + name}, fmt.Errorf("import %w; the cache was not changed", err)
	}
	return d.importMeasurements(ctx, s)
}

// importMeasurements merges the rows of the kernel measurement CSV s as they are read
// (see ImportMeasurementsCSV).
func (d *DB) importMeasurements(ctx context.Context, s *csvStream) (ImportReport, error) {
	rep := ImportReport{File: s.name, Kind: "layers-csv", Source: "csv:" + s.name}
	if d.readOnly {
		return rep, d.errReadOnly("import " + s.name)
	}
	err := d.streamWrite(ctx, func(tx *sql.Tx) error {
		devicesBefore, err := countRows(ctx, tx, "devices")
		if err != nil {
			return err
		}
		configsBefore, err := countRows(ctx, tx, "configs")
		if err != nil {
			return err
		}
		before, err := countRows(ctx, tx, "measurements")
		if err != nil {
			return err
		}
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
		describe, err := tx.PrepareContext(ctx, upsertDevice+`
				WHERE devices.name IN ('', devices.key)`) // only a device the cache knows by its key alone takes the row's description
		if err != nil {
			return err
		}
		defer describe.Close()
		insert, err := tx.PrepareContext(ctx, `INSERT INTO measurements (device_id, config_id, batch,
				precision, phase, policy, algorithm, median_ms, spread_ms, repeats, workspace_bytes,
				status, sweep_id, at, source)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
			ON CONFLICT (device_id, config_id, batch, precision, phase, policy) DO UPDATE SET
				algorithm = excluded.algorithm, median_ms = excluded.median_ms,
				spread_ms = excluded.spread_ms, repeats = excluded.repeats,
				workspace_bytes = excluded.workspace_bytes, status = excluded.status,
				sweep_id = NULL, at = excluded.at, source = excluded.source
			WHERE excluded.at > measurements.at OR `+storedInFuture("measurements.at"))
		if err != nil {
			return err
		}
		defer insert.Close()
		described := map[string]bool{}
		changed, rows := 0, 0
		err = s.measurements(&d.checks, func(m CSVMeasurement) error {
			if m.Device != nil && !described[m.DeviceKey] && len(described) < 1<<16 {
				described[m.DeviceKey] = true
				if _, err := describe.ExecContext(ctx, deviceValues(*m.Device)...); err != nil {
					return fmt.Errorf("save device %s: %w", m.DeviceKey, err)
				}
			}
			deviceID, err := devices.id(ctx, m.DeviceKey)
			if err != nil {
				return err
			}
			configID, err := configs.id(ctx, m.ConfigKey)
			if err != nil {
				return err
			}
			res, err := insert.ExecContext(ctx, deviceID, configID, m.Batch, string(m.Precision), string(m.Phase),
				string(m.Policy), m.Algorithm, m.MedianMS, m.SpreadMS, m.Repeats, m.WorkspaceBytes,
				string(m.Status), unixNanos(m.At), m.Source)
			if err != nil {
				return fmt.Errorf("save %s at batch %d: %w", m.ConfigKey, m.Batch, err)
			}
			n, _ := res.RowsAffected()
			changed += int(n)
			rows++
			return nil
		})
		if err != nil {
			return err
		}
		after, err := countRows(ctx, tx, "measurements")
		if err != nil {
			return err
		}
		rep.Measurements = merged(rows, changed, after-before)
		devicesAfter, err := countRows(ctx, tx, "devices")
		if err != nil {
			return err
		}
		configsAfter, err := countRows(ctx, tx, "configs")
		if err != nil {
			return err
		}
		rep.Devices, rep.Configs = devicesAfter-devicesBefore, configsAfter-configsBefore
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("import %w; the cache was not changed", err)
	}
	return rep, nil
}
