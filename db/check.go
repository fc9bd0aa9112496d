package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// consistencyChecks are cnntime's own checks: each query counts the rows that break one
// rule the cache's writers keep (a file written by another tool, or with foreign keys or
// CHECK constraints off, may break them).
var consistencyChecks = []struct{ problem, query string }{
	{"measurements whose device row is missing",
		`SELECT count(*) FROM measurements m LEFT JOIN devices d ON d.id = m.device_id WHERE d.id IS NULL`},
	{"measurements whose layer configuration row is missing",
		`SELECT count(*) FROM measurements m LEFT JOIN configs c ON c.id = m.config_id WHERE c.id IS NULL`},
	{"ok measurements with a time that is not positive",
		`SELECT count(*) FROM measurements WHERE status = 'ok' AND NOT (median_ms > 0)`},
	{"measurements with a negative spread, repeat count or workspace",
		`SELECT count(*) FROM measurements WHERE spread_ms < 0 OR repeats < 0 OR workspace_bytes < 0`},
	{"measurements with a batch size that is not positive",
		`SELECT count(*) FROM measurements WHERE NOT (batch > 0)`},
	{"measurements with an unknown status, phase, precision or policy",
		`SELECT count(*) FROM measurements WHERE status NOT IN ('ok', 'oom', 'unsupported')
			OR phase NOT IN ('fwd', 'bwd_data', 'bwd_weights')
			OR precision NOT IN ('fp32', 'fp32-strict', 'tf32', 'amp')
			OR policy NOT IN ('', 'heuristic', 'fastest')`},
	{"ok step measurements with a time that is not positive",
		`SELECT count(*) FROM steps WHERE status = 'ok' AND NOT (median_ms > 0)`},
	{"step measurements with a batch size that is not positive",
		`SELECT count(*) FROM steps WHERE NOT (batch > 0)`},
	{"step measurements with an unknown status or precision",
		`SELECT count(*) FROM steps WHERE status NOT IN ('ok', 'oom', 'unsupported')
			OR precision NOT IN ('fp32', 'fp32-strict', 'tf32', 'amp')`},
	{"sweeps with more items done than planned",
		`SELECT count(*) FROM sweeps WHERE done > total`},
	{"negative price overrides",
		`SELECT count(*) FROM price_overrides WHERE usd_per_hour < 0`},
	{"imported cloud prices that are negative",
		`SELECT count(*) FROM cloud_offers WHERE price_usd < 0 OR spot_usd < 0`},
	{"imported cloud prices whose catalog record is missing",
		`SELECT count(*) FROM cloud_offers o LEFT JOIN price_catalogs p ON p.cloud = o.cloud WHERE p.cloud IS NULL`},
}

// Check runs SQLite's integrity check, its foreign key check and cnntime's own
// consistency checks, and returns every problem found (none: the cache is sound). The
// error is for a check that could not run.
func (d *DB) Check(ctx context.Context) ([]string, error) {
	var problems []string
	rows, err := d.sqldb().QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", d.path, err)
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return nil, fmt.Errorf("check %s: %w", d.path, err)
		}
		if msg != "ok" {
			problems = append(problems, "integrity: "+msg)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check %s: %w", d.path, err)
	}
	var fkViolations int
	if err := d.sqldb().QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&fkViolations); err != nil {
		return nil, fmt.Errorf("check %s: foreign keys: %w", d.path, err)
	}
	if fkViolations > 0 {
		problems = append(problems, fmt.Sprintf("%d rows refer to rows that do not exist (foreign key check)", fkViolations))
	}
	for _, c := range consistencyChecks {
		var n int
		if err := d.sqldb().QueryRowContext(ctx, c.query).Scan(&n); err != nil {
			return nil, fmt.Errorf("check %s: %s: %w", d.path, c.problem, err)
		}
		if n > 0 {
			problems = append(problems, fmt.Sprintf("%d %s", n, c.problem))
		}
	}
	return problems, nil
}

// quickCheck runs SQLite's quick check (the b-tree pages and their records, without
// the slower index cross-check) and returns what it found wrong, "" when nothing.
func (d *DB) quickCheck(ctx context.Context) (string, error) {
	rows, err := d.sqldb().QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		if isCorrupt(err) {
			return err.Error(), nil
		}
		return "", fmt.Errorf("check %s: %w", d.path, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return "", fmt.Errorf("check %s: %w", d.path, err)
		}
		if msg != "ok" {
			found = append(found, msg)
		}
	}
	if err := rows.Err(); err != nil {
		if isCorrupt(err) {
			return err.Error(), nil
		}
		return "", fmt.Errorf("check %s: %w", d.path, err)
	}
	return strings.Join(found, "; "), nil
}

// isCorrupt reports whether err is SQLite finding the file damaged.
func isCorrupt(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// checkIntact refuses to write into a damaged cache: before the first write through d
// it runs the quick check once (a write would add to a file that already lost data,
// and a later repair would lose it too). A check that cannot run lets the write try.
func (d *DB) checkIntact(ctx context.Context) error {
	f := d.current()
	f.intactOnce.Do(func() {
		damage, err := d.quickCheck(ctx)
		if err == nil && damage != "" {
			f.damage = damage
		}
	})
	if f.damage != "" {
		return fmt.Errorf("cache %s is damaged (%s): nothing was written; restore it from a copy, or export what still reads ('cnntime cache export') into a new cache; 'cnntime cache check' lists every problem", d.path, f.damage)
	}
	return nil
}

// Info summarises the cache.
type Info struct {
	Path          string         `json:"path"`
	SchemaVersion int            `json:"schema_version"`
	SizeBytes     int64          `json:"size_bytes"` // the file and its write-ahead log
	Configs       int            `json:"configs"`
	Measurements  int            `json:"measurements"`
	Steps         int            `json:"steps"`
	Sweeps        int            `json:"sweeps"`
	UserMachines  int            `json:"user_machines"`
	PriceOverride int            `json:"price_overrides"`
	CustomModels  int            `json:"custom_models"`
	Devices       []DeviceCounts `json:"devices"`
	StepSources   []SourceCount  `json:"step_sources"`
	// InterruptedSweeps counts the sweeps recorded as running that no live process
	// holds (see SweepInterrupted).
	InterruptedSweeps int `json:"interrupted_sweeps"`
	// StoppedSweeps say, one sentence each, which sweeps ended when the cache could not
	// record it (the disk was full), and why.
	StoppedSweeps []string `json:"stopped_sweeps,omitempty"`
	// InterruptedExports are the exports from this cache whose process died, leaving a
	// partial file beside where they were going (removed by the next export there).
	InterruptedExports []InterruptedExport `json:"interrupted_exports,omitempty"`
	// Damage is what SQLite's quick check found wrong with the file; "" when intact.
	Damage string `json:"damage,omitempty"`
}

// DeviceCounts is what the cache holds of one device.
type DeviceCounts struct {
	Key          string `json:"key"`
	Name         string `json:"name"`
	Measurements int    `json:"measurements"`
	Configs      int    `json:"configs"`
	OutOfMemory  int    `json:"out_of_memory"`
	MinBatch     int    `json:"min_batch"`
	MaxBatch     int    `json:"max_batch"`
}

// SourceCount counts the step measurements from one source.
type SourceCount struct {
	Source string `json:"source"`
	Steps  int    `json:"steps"`
}

// Info counts what the cache holds.
func (d *DB) Info(ctx context.Context) (Info, error) {
	info := Info{Path: d.path}
	var err error
	if info.Damage, err = d.quickCheck(ctx); err != nil {
		return info, err
	}
	if info.Damage != "" { // the counts below would read damaged pages
		info.SchemaVersion, _ = d.SchemaVersion(ctx)
		return info, nil
	}
	if info.SchemaVersion, err = d.SchemaVersion(ctx); err != nil {
		return info, err
	}
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(d.path + suffix); err == nil {
			info.SizeBytes += st.Size()
		}
	}
	for _, c := range []struct {
		n     *int
		table string
	}{{&info.Configs, "configs"}, {&info.Measurements, "measurements"}, {&info.Steps, "steps"},
		{&info.Sweeps, "sweeps"}, {&info.UserMachines, "user_machines"}, {&info.PriceOverride, "price_overrides"},
		{&info.CustomModels, "custom_models"}} {
		if *c.n, err = countRows(ctx, d.sqldb(), c.table); err != nil {
			return info, fmt.Errorf("count %s in %s: %w", c.table, d.path, err)
		}
	}
	rows, err := d.sqldb().QueryContext(ctx, `SELECT d.key, d.name, count(m.device_id), count(DISTINCT m.config_id),
			coalesce(sum(m.status = 'oom'), 0), coalesce(min(m.batch), 0), coalesce(max(m.batch), 0)
		FROM devices d LEFT JOIN measurements m ON m.device_id = d.id GROUP BY d.id ORDER BY d.key`)
	if err != nil {
		return info, fmt.Errorf("count measurements per device in %s: %w", d.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c DeviceCounts
		if err := rows.Scan(&c.Key, &c.Name, &c.Measurements, &c.Configs, &c.OutOfMemory, &c.MinBatch, &c.MaxBatch); err != nil {
			return info, fmt.Errorf("count measurements per device in %s: %w", d.path, err)
		}
		info.Devices = append(info.Devices, c)
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("count measurements per device in %s: %w", d.path, err)
	}
	sweeps, err := d.Sweeps(ctx)
	if err != nil {
		return info, err
	}
	info.InterruptedExports = d.InterruptedExports()
	for _, s := range sweeps {
		if s.State == SweepInterrupted {
			info.InterruptedSweeps++
		}
		if s.Note != "" {
			info.StoppedSweeps = append(info.StoppedSweeps, fmt.Sprintf("sweep %d of %s %s: %s; running the same sweep again continues it, measuring only what is missing", s.ID, s.DeviceKey, s.State, s.Note))
		}
	}
	srows, err := d.sqldb().QueryContext(ctx, `SELECT source, count(*) FROM steps GROUP BY source ORDER BY source`)
	if err != nil {
		return info, fmt.Errorf("count steps per source in %s: %w", d.path, err)
	}
	defer srows.Close()
	for srows.Next() {
		var s SourceCount
		if err := srows.Scan(&s.Source, &s.Steps); err != nil {
			return info, fmt.Errorf("count steps per source in %s: %w", d.path, err)
		}
		info.StepSources = append(info.StepSources, s)
	}
	return info, srows.Err()
}
