package db

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cnntime/db/csvsafe"
	"cnntime/db/heldtemp"
)

// ExportFilter chooses part of the cache to export; the zero filter is the whole cache.
type ExportFilter struct {
	DeviceKey  string   // one device's measurements and steps
	Models     []string // these models' steps (kernel measurements belong to configurations, see ConfigKeys)
	ConfigKeys []string // these configurations' kernel measurements (a model's, say)
}

// IsZero reports whether f chooses the whole cache.
func (f ExportFilter) IsZero() bool {
	return f.DeviceKey == "" && f.Models == nil && f.ConfigKeys == nil
}

// measurementWhere is the condition on measurements m joined to devices d and configs c.
func (f ExportFilter) measurementWhere() (string, []any) {
	conds, args := []string{"true"}, []any{}
	if f.DeviceKey != "" {
		conds, args = append(conds, "d.key = ?"), append(args, f.DeviceKey)
	}
	if f.ConfigKeys != nil {
		conds, args = append(conds, "c.key IN (SELECT value FROM json_each(?))"), append(args, jsonStrings(f.ConfigKeys))
	} else if f.Models != nil {
		conds = append(conds, "false") // models chosen without their configurations: steps only
	}
	return strings.Join(conds, " AND "), args
}

func (f ExportFilter) stepWhere() (string, []any) {
	conds, args := []string{"true"}, []any{}
	if f.DeviceKey != "" {
		conds, args = append(conds, "device_key = ?"), append(args, f.DeviceKey)
	}
	if f.Models != nil {
		conds, args = append(conds, "model IN (SELECT value FROM json_each(?))"), append(args, jsonStrings(f.Models))
	} else if f.ConfigKeys != nil {
		conds = append(conds, "false") // configurations chosen without models: kernels only
	}
	return strings.Join(conds, " AND "), args
}

// ExportReport counts what an export wrote.
type ExportReport struct {
	File         string `json:"file"`
	Devices      int    `json:"devices"`
	Configs      int    `json:"configs"`
	Measurements int    `json:"measurements"`
	Steps        int    `json:"steps"`
	// RemovedLeftovers are the partial files of earlier exports to the same place whose
	// process died (killed, crashed), removed before this one.
	RemovedLeftovers []string `json:"removed_leftovers,omitempty"`
}

// testHookExportCopied, when set (by a test), runs between an export's copy and its
// file getting its name: a test's child process waits there to be killed.
var testHookExportCopied func(temp string)

// exportJournals are the files SQLite keeps beside a cache being written.
var exportJournals = []string{"-journal", "-wal", "-shm"}

// ExportCache writes the part of the cache f chooses to a new cache file at path; it
// refuses to overwrite an existing file, and to create the missing target of a dangling
// symbolic link. The whole cache (the zero filter) includes sweeps, user machines,
// price overrides and custom models; a filtered export holds the chosen measurements and
// steps with the devices and configurations they refer to. The file is made under a
// temporary name beside path, held by this process (heldtemp), and given its name when
// complete, so path never holds a partial cache; on error nothing is left behind. A
// killed export leaves only its temporary file, ".NAME.….tmp": the next export to the
// same place removes it (never a live export's), and until then `cache info` of this
// cache names it (InterruptedExports).
func (d *DB) ExportCache(ctx context.Context, path string, f ExportFilter) (ExportReport, error) {
	rep := ExportReport{File: path}
	fail := func(err error) (ExportReport, error) {
		if IsDiskFull(err) {
			// SQLite's own error, without the sentences that named the temporary file or
			// the cache: the export's disk is the full one.
			var full *diskFullError
			for errors.As(err, &full) {
				err = full.err
			}
			return rep, fmt.Errorf("export to %s: %w", path, &diskFullError{path: path, err: err, what: "nothing was left there; free some space there, or export to another disk"})
		}
		return rep, fmt.Errorf("export to %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fail(err)
	}
	if err := checkNewFile(abs); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fail(err)
	}
	rep.RemovedLeftovers = heldtemp.RemoveStale(abs, exportJournals...)
	d.removeDeadExportMarks()
	tmp, err := heldtemp.Create(abs, 0o644) // with what the umask makes of 0644, as SQLite creates a cache
	if err != nil {
		return fail(fmt.Errorf("%w (is the folder writable?)", err))
	}
	defer tmp.Release()
	defer removeCacheFiles(tmp.Name) // once linked to path, only the temporary name goes
	mark := d.markExport(abs, tmp.Name)
	defer d.unmarkExport(mark)
	if err := createExportCache(tmp.Name); err != nil {
		return fail(err)
	}
	if err := d.attached(ctx, tmp.Name, "dst", func(tx *sql.Tx) error { return copyTo(ctx, tx, f, &rep) }); err != nil {
		return fail(err)
	}
	if testHookExportCopied != nil {
		testHookExportCopied(tmp.Name)
	}
	if err := linkNew(tmp.Name, abs); err != nil {
		return fail(err)
	}
	return rep, nil
}

// checkNewFile refuses a path that names a file (or a link to one) or a dangling link.
func checkNewFile(abs string) error {
	li, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case li.Mode()&fs.ModeSymlink != 0:
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			to, _ := os.Readlink(abs)
			return fmt.Errorf("it is a symbolic link to %s, which does not exist: an export never creates a link's target; give the target's own path, or remove the link", to)
		}
	}
	return errors.New("the file exists; choose a new file name")
}

// createExportCache makes an empty cache at path, in rollback-journal mode: an
// export's writes then leave no write-ahead log beside it, and the finished file is
// whole by itself (Open turns WAL on again when the cache is opened).
func createExportCache(path string) error {
	out, err := Open(path)
	if err != nil {
		return err
	}
	if _, err := out.sqldb().Exec("PRAGMA journal_mode = DELETE"); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// linkNew gives the finished file tmp the name abs, unless a file appeared there
// meanwhile: a hard link fails where the name exists (a rename would replace it).
func linkNew(tmp, abs string) error {
	err := os.Link(tmp, abs)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return errors.New("the file exists; choose a new file name")
	}
	// A file system without hard links (FAT, some network shares): rename, after one
	// more look.
	if _, serr := os.Lstat(abs); serr == nil {
		return errors.New("the file exists; choose a new file name")
	}
	return os.Rename(tmp, abs)
}

// removeCacheFiles removes the cache file at path with its journal, log and log index.
func removeCacheFiles(path string) {
	os.Remove(path)
	for _, suffix := range exportJournals {
		os.Remove(path + suffix)
	}
}

// copyTo copies what f chooses from main to the attached new cache "dst".
func copyTo(ctx context.Context, tx *sql.Tx, f ExportFilter, rep *ExportReport) error {
	mWhere, mArgs := f.measurementWhere()
	sWhere, sArgs := f.stepWhere()
	chosen := `FROM main.measurements m JOIN main.devices d ON d.id = m.device_id
		JOIN main.configs c ON c.id = m.config_id WHERE ` + mWhere
	steps := []struct {
		count *int
		query string
		args  []any
	}{
		{&rep.Devices, `INSERT INTO dst.devices SELECT * FROM main.devices
			WHERE id IN (SELECT m.device_id ` + chosen + `)
			OR ? = 1 OR key = ?`, append(append([]any{}, mArgs...), boolInt(f.IsZero()), f.DeviceKey)},
		{&rep.Configs, `INSERT INTO dst.configs SELECT * FROM main.configs
			WHERE id IN (SELECT m.config_id ` + chosen + `)
			OR ? = 1`, append(append([]any{}, mArgs...), boolInt(f.IsZero()))},
		{&rep.Measurements, `INSERT INTO dst.measurements SELECT m.* ` + chosen, mArgs},
		{&rep.Steps, `INSERT INTO dst.steps SELECT * FROM main.steps WHERE ` + sWhere, sArgs},
	}
	if f.IsZero() {
		for _, table := range []string{"sweeps", "user_machines", "price_overrides", "custom_models", "price_catalogs", "cloud_offers"} {
			steps = append(steps, struct {
				count *int
				query string
				args  []any
			}{new(int), `INSERT INTO dst.` + table + ` SELECT * FROM main.` + table, nil})
		}
	}
	for _, s := range steps {
		res, err := tx.ExecContext(ctx, s.query, s.args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		*s.count = int(n)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ExportStepsCSV writes the steps f chooses to w as a step CSV (see StepCSVColumns), a
// file that ImportStepsCSV reads back. It returns the number of rows.
func (d *DB) ExportStepsCSV(ctx context.Context, w io.Writer, f ExportFilter) (int, error) {
	where, args := f.stepWhere()
	rows, err := d.sqldb().QueryContext(ctx, `SELECT device_key, model, batch, precision, framework,
		source, median_ms, spread_ms, status, at FROM steps WHERE `+where+`
		ORDER BY device_key, model, precision, framework, source, batch`, args...)
	if err != nil {
		return 0, fmt.Errorf("export step measurements from %s: %w", d.path, err)
	}
	defer rows.Close()
	steps, err := scanSteps(rows)
	if err != nil {
		return 0, fmt.Errorf("export step measurements from %s: %w", d.path, err)
	}
	return len(steps), WriteStepsCSV(w, steps)
}

// MeasurementCSVColumns is the header of the CSV of kernel measurements that
// ExportMeasurementsCSV writes and ImportMeasurementsCSV reads (one row per device,
// configuration, batch size, precision, phase and policy; times in milliseconds;
// measured_at in RFC 3339; source "" for the cache's own sweeps; device_info the
// device's description as JSON). See measurements_csv.go for each column. Text cells
// that would start a formula in a spreadsheet are neutralised as in the step CSV
// (csvsafe.Text), and the reader takes that off again; numbers are not touched.
var MeasurementCSVColumns = []string{"device", "config", "batch_size", "precision", "phase", "policy",
	"algorithm", "median_ms", "spread_ms", "repeats", "workspace_bytes", "status", "sweep_id", "measured_at", "source", "device_info"}

// ExportMeasurementsCSV writes the kernel measurements f chooses to w as CSV (see
// MeasurementCSVColumns). It returns the number of rows.
func (d *DB) ExportMeasurementsCSV(ctx context.Context, w io.Writer, f ExportFilter) (int, error) {
	where, args := f.measurementWhere()
	devices, err := d.Devices(ctx)
	if err != nil {
		return 0, fmt.Errorf("export measurements from %s: %w", d.path, err)
	}
	infos := make(map[string]string, len(devices))
	for _, dev := range devices {
		if dev.Name == "" || dev.Name == dev.Key {
			continue // known by its key alone
		}
		b, err := json.Marshal(dev)
		if err != nil {
			return 0, fmt.Errorf("export measurements from %s: describe device %s: %w", d.path, dev.Key, err)
		}
		infos[dev.Key] = string(b)
	}
	rows, err := d.sqldb().QueryContext(ctx, `SELECT d.key, c.key, m.batch, m.precision, m.phase, m.policy,
			m.algorithm, m.median_ms, m.spread_ms, m.repeats, m.workspace_bytes, m.status,
			coalesce(m.sweep_id, 0), m.at, m.source
		FROM measurements m JOIN devices d ON d.id = m.device_id JOIN configs c ON c.id = m.config_id
		WHERE `+where+` ORDER BY d.key, c.key, m.precision, m.policy, m.phase, m.batch`, args...)
	if err != nil {
		return 0, fmt.Errorf("export measurements from %s: %w", d.path, err)
	}
	defer rows.Close()
	cw := csv.NewWriter(w)
	cw.Write(MeasurementCSVColumns)
	n := 0
	for rows.Next() {
		var device, config, precision, phase, policy, algorithm, status, source string
		var batch, repeats int
		var median, spread float64
		var workspace, sweep, at int64
		if err := rows.Scan(&device, &config, &batch, &precision, &phase, &policy, &algorithm,
			&median, &spread, &repeats, &workspace, &status, &sweep, &at, &source); err != nil {
			return n, fmt.Errorf("export measurements from %s: %w", d.path, err)
		}
		when := ""
		if at != 0 {
			when = fromUnixNanos(at).Format(time.RFC3339Nano)
		}
		sweepID := ""
		if sweep != 0 {
			sweepID = strconv.FormatInt(sweep, 10)
		}
		t := csvsafe.Text
		cw.Write([]string{t(device), t(config), strconv.Itoa(batch), t(precision), t(phase), t(policy), t(algorithm),
			formatMS(median), formatMS(spread), strconv.Itoa(repeats), strconv.FormatInt(workspace, 10),
			t(status), sweepID, when, t(source), t(infos[device])})
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("export measurements from %s: %w", d.path, err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return n, fmt.Errorf("write measurement CSV: %w", err)
	}
	return n, nil
}
