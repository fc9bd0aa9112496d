package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// ImportReport counts what an import changed.
type ImportReport struct {
	File         string `json:"file"`
	Kind         string `json:"kind"` // "cache", "csv" (steps), "layers-csv" or "loader-csv"
	Source       string `json:"source"`
	Devices      int    `json:"devices_added"`
	Configs      int    `json:"configs_added"`
	Measurements Merged `json:"measurements"`
	Steps        Merged `json:"steps"`
	// LoaderRates counts a loader-rate CSV's rows (scripts/dataloader_rate.py --csv).
	LoaderRates  Merged `json:"loader_rates"`
	UserMachines int    `json:"user_machines_added"`
	// Prices counts an imported cache's clouds of prices (prices import/update): a
	// cloud the cache lacks is added, one whose prices are of a later day replaces the
	// cache's whole, and one the cache holds as new or newer is left out.
	Prices Merged `json:"prices"`
	// PricesRefused names the imported cache's clouds of prices that were left out as
	// no catalog cnntime keeps, and why: more instance types or regions than any cloud
	// has (hw.MaxCloudOffers …), a figure no instance has, a date in the future or not a
	// date, or more than the cache keeps with the others (hw.MaxStoredOffers).
	PricesRefused []string `json:"prices_refused,omitempty"`
	CustomModels  int      `json:"custom_models_added"`
	// CustomModelClashes names the imported cache's custom models that the cache holds
	// under the same name with a different definition: the cache keeps its own.
	CustomModelClashes []string `json:"custom_model_clashes,omitempty"`
}

// Merged counts how the rows of an import met the cache's: added, replacing an older
// row of the same key, or left out because the cache's row is as new or newer.
type Merged struct {
	Added    int `json:"added"`
	Replaced int `json:"replaced"`
	Kept     int `json:"kept"`
}

// Import merges the file at path into the cache: another cnntime cache file (told apart
// by its first bytes), a CSV of kernel measurements (see MeasurementCSVColumns) or a CSV
// of whole-step measurements (see StepCSVColumns), told apart by their header. It is
// all or nothing: on any error the cache is unchanged.
func (d *DB) Import(ctx context.Context, path string) (ImportReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return ImportReport{}, fmt.Errorf("import %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, _ := io.ReadFull(f, head)
	if bytes.HasPrefix(head[:n], []byte("SQLite format")) {
		f.Close()
		return d.ImportCache(ctx, path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ImportReport{}, fmt.Errorf("import %s: %w", path, err)
	}
	return d.ImportCSV(ctx, f, filepath.Base(path))
}

// ImportStepsCSV merges a CSV of whole-step measurements read from r, named name (a
// file name: it names the rows' default source). It reads r a row at a time inside one
// transaction and writes all rows or none. A row replaces the cache's step of the same
// key only when it was measured later; one measured at the same time (re-importing a
// file) or earlier, or with no measured_at, leaves the cache's step and is counted as kept.
func (d *DB) ImportStepsCSV(ctx context.Context, r io.Reader, name string) (ImportReport, error) {
	s, err := openCSV(r, name)
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s is empty: a step CSV starts with the header %s", name, strings.Join(StepCSVColumns, ","))
	}
	if err != nil {
		return ImportReport{File: name, Kind: "csv", Source: "csv:" + name}, fmt.Errorf("import %w; the cache was not changed", err)
	}
	return d.importSteps(ctx, s)
}

// importSteps merges the rows of the step CSV s as they are read (see ImportStepsCSV).
func (d *DB) importSteps(ctx context.Context, s *csvStream) (ImportReport, error) {
	rep := ImportReport{File: s.name, Kind: "csv", Source: "csv:" + s.name}
	if d.readOnly {
		return rep, d.errReadOnly("import " + s.name)
	}
	err := d.streamWrite(ctx, func(tx *sql.Tx) error {
		before, err := countRows(ctx, tx, "steps")
		if err != nil {
			return err
		}
		insert, err := tx.PrepareContext(ctx, upsertStep)
		if err != nil {
			return err
		}
		defer insert.Close()
		rows, changed := 0, 0
		err = s.steps(&d.checks, func(st measure.Step) error {
			res, err := insert.ExecContext(ctx, st.DeviceKey, st.Model, st.Batch, string(st.Precision),
				st.Framework, st.Source, st.MedianMS, st.SpreadMS, string(st.Status), unixNanos(st.At))
			if err != nil {
				return fmt.Errorf("save step of %s at batch %d: %w", st.Model, st.Batch, err)
			}
			n, _ := res.RowsAffected() // 0 when the cache's row is as new
			changed += int(n)
			rows++
			return nil
		})
		if err != nil {
			return err
		}
		after, err := countRows(ctx, tx, "steps")
		if err != nil {
			return err
		}
		rep.Steps = merged(rows, changed, after-before)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("import %w; the cache was not changed", err)
	}
	return rep, nil
}

// streamWrite runs fn in one immediate transaction, as write does, and returns fn's
// error as it is: an import's errors name the file and line themselves.
func (d *DB) streamWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if d.readOnly {
		return d.errReadOnly("import")
	}
	if err := d.checkIntact(ctx); err != nil {
		return err
	}
	f := d.current()
	conn, err := f.sql.Conn(ctx)
	if err != nil {
		return Explain(d.path, err)
	}
	defer conn.Close()
	return d.transact(ctx, f, conn, d.wrapStep, fn)
}

// wrapStep says which step of a write failed (see transact), for imports.
func (d *DB) wrapStep(step string, err error) error {
	if step == "" {
		return err
	}
	return fmt.Errorf("%s %s: %w", step, d.path, err)
}

// ImportCache merges another cnntime cache file into this one, in one transaction. The
// other file is checked (a cache, not newer, not truncated, intact) and read through a
// consistent copy, so it is never changed. Rows are merged by key: a measurement or
// step replaces the cache's one only when it was measured later. Imported measurements
// and steps keep their source, or get "cache:<file name>" where they had none; sweep ids
// are local to a cache and are dropped. Sweeps and price overrides are not imported; user
// machines are added when the cache has none of that id. Custom models are merged by
// name: one the cache lacks is added, one it holds with the same definition is left as
// it is, and one it holds with a different definition keeps the cache's and is named in
// the report's CustomModelClashes.
func (d *DB) ImportCache(ctx context.Context, path string) (ImportReport, error) {
	rep := ImportReport{File: path, Kind: "cache", Source: "cache:" + filepath.Base(path)}
	if d.readOnly {
		return rep, d.errReadOnly("import " + path)
	}
	if same, err := sameFile(path, d.path); err != nil {
		return rep, fmt.Errorf("import %s: %w", path, err)
	} else if same {
		return rep, fmt.Errorf("import %s: it is this cache itself", path)
	}
	tmpDir, err := os.MkdirTemp("", "cnntime-import-")
	if err != nil {
		return rep, fmt.Errorf("import %s: make a scratch directory: %w", path, err)
	}
	defer os.RemoveAll(tmpDir)
	copyPath := filepath.Join(tmpDir, "import.db")
	if err := snapshotCache(ctx, path, copyPath); err != nil {
		return rep, fmt.Errorf("import %s: %w; the cache was not changed", path, err)
	}
	err = d.attached(ctx, copyPath, "src", func(tx *sql.Tx) error {
		return d.mergeFrom(ctx, tx, rep.Source, &rep)
	})
	if err != nil {
		return ImportReport{File: path, Kind: "cache"}, fmt.Errorf("import %s: %w; the cache was not changed", path, err)
	}
	return rep, nil
}

// snapshotCache checks that the file at path is an intact cnntime cache this cnntime
// can read, and writes a consistent copy of it, migrated to the current schema, to dst.
//
// It never writes next to path: the file may be another user's, whom a log or log index
// owned by the importer would lock out of their own cache, or lie in a directory this
// user may not write. Where a program may have the cache open (its log and log index are
// there), it reads it read-only through them, as SQLite's own readers do; otherwise it
// copies the file and its log privately and lets SQLite recover the copy (see
// privateCopy). Where a writer's commits are still in the file's log, it judges the file
// by what SQLite reads through the log, not by its stale header.
func snapshotCache(ctx context.Context, path, dst string) error {
	h, size, err := readHeader(path)
	if err != nil {
		return err
	}
	if size == 0 {
		return fmt.Errorf("the file is empty, not a cnntime cache")
	}
	if h.pageSize == 0 {
		return fmt.Errorf("%s is not a cnntime cache (not an SQLite database): choose another file", path)
	}
	pending, err := hasPendingWrites(path)
	if err != nil {
		return err
	}
	if !pending { // the header is current: judge it before SQLite reads the file
		if err := h.check(path, size); err != nil {
			return err
		}
		if h.applicationID != applicationID {
			return fmt.Errorf("it is an SQLite database but not a cnntime cache")
		}
	}
	if hot, err := hasHotJournal(path); err != nil {
		return err
	} else if hot {
		return fmt.Errorf("the program writing it was stopped half-way and left a write to undo: open it once with 'cnntime --db %s cache check' to recover it, then import it again", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if hasLogIndex(abs) {
		err := copyReadOnly(ctx, abs, dst)
		if err == nil || !needsRecovery(err) {
			return err
		}
		// The log index is a stale one this user may not rebuild: copy the files instead.
		os.Remove(dst)
	}
	if err := privateCopy(abs, dst); err != nil {
		return err
	}
	src, err := sql.Open("sqlite", dsnPlain(dst))
	if err != nil {
		return err
	}
	err = checkSource(ctx, src)
	if cerr := src.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	copied, err := Open(dst) // migrates an older cache's copy
	if err != nil {
		return err
	}
	return copied.Close()
}

// copyReadOnly reads the cache at abs on a read-only connection, which uses the log and
// log index beside it and creates nothing, checks it and writes a consistent, migrated
// copy of it to dst.
func copyReadOnly(ctx context.Context, abs, dst string) error {
	src, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		return err
	}
	defer src.Close()
	if err := checkSource(ctx, src); err != nil {
		return err
	}
	if _, err := src.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return fmt.Errorf("copy it: %w", err)
	}
	copied, err := Open(dst) // migrates an older cache's copy
	if err != nil {
		return err
	}
	return copied.Close()
}

// checkSource refuses a database to import that is not a cnntime cache, is newer than
// this cnntime, or is damaged. The error of a read-only connection that may not recover
// the file is returned as it is (see needsRecovery).
func checkSource(ctx context.Context, src *sql.DB) error {
	version, appID, err := readSchemaMarks(ctx, src)
	if err != nil {
		return err
	}
	if appID != applicationID {
		return fmt.Errorf("it is not a cnntime cache")
	}
	if version > latestVersion {
		return fmt.Errorf("it was written by a newer cnntime (schema version %d; this cnntime knows up to %d): update cnntime", version, latestVersion)
	}
	var verdict string
	if err := src.QueryRowContext(ctx, "PRAGMA quick_check(1)").Scan(&verdict); err != nil {
		return fmt.Errorf("it is damaged (%v): restore it from a copy", err)
	}
	if verdict != "ok" {
		return fmt.Errorf("it is damaged (%s): restore it from a copy", verdict)
	}
	return nil
}

// hasLogIndex reports whether the database at abs has both a write-ahead log and its
// index (the -shm file) beside it: a program may have it open, and a reader must share
// that index with it rather than read a copy.
func hasLogIndex(abs string) bool {
	_, werr := os.Stat(abs + "-wal")
	_, serr := os.Stat(abs + "-shm")
	return werr == nil && serr == nil
}

// privateCopy copies the database at abs and its write-ahead log, where it has one, to
// dst and dst-wal. No program has the database open (it has no log index), but one may
// open it while it is copied: a copy during which the file or its log changed is made
// again, up to three times.
func privateCopy(abs, dst string) error {
	for range 3 {
		before, err := fileStates(abs)
		if err != nil {
			return err
		}
		for _, suffix := range []string{"", "-wal"} {
			os.Remove(dst + suffix)
			if err := copyFile(abs+suffix, dst+suffix); err != nil && !(suffix != "" && errors.Is(err, os.ErrNotExist)) {
				return fmt.Errorf("copy it: %w", err)
			}
		}
		after, err := fileStates(abs)
		if err != nil {
			return err
		}
		if after == before {
			return nil
		}
	}
	return fmt.Errorf("it kept changing while it was copied (a program is writing it): import it again when that program is done")
}

// fileState is what tells that a file changed: its size and modification time.
type fileState struct {
	size    int64
	modTime int64
}

// fileStates are the states of the database at abs and of its log (zero where missing).
func fileStates(abs string) ([2]fileState, error) {
	var out [2]fileState
	for i, suffix := range []string{"", "-wal"} {
		info, err := os.Stat(abs + suffix)
		if errors.Is(err, os.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("read %s: %w", abs+suffix, err)
		}
		out[i] = fileState{info.Size(), info.ModTime().UnixNano()}
	}
	return out, nil
}

// attached runs fn in one write transaction on a connection that has the cache file
// at path attached as schema name.
func (d *DB) attached(ctx context.Context, path, name string, fn func(tx *sql.Tx) error) error {
	if d.readOnly {
		return d.errReadOnly("import")
	}
	if err := d.checkIntact(ctx); err != nil {
		return err
	}
	f := d.current()
	conn, err := f.sql.Conn(ctx)
	if err != nil {
		return Explain(d.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS "+name, dsnPlain(path)); err != nil {
		return fmt.Errorf("attach %s: %w", path, err)
	}
	defer conn.ExecContext(context.Background(), "DETACH DATABASE "+name)
	return d.transact(ctx, f, conn, d.wrapStep, fn)
}

// dsnPlain is a file URI for ATTACH, without the driver's own parameters.
func dsnPlain(abs string) string {
	return "file:" + filepath.ToSlash(abs)
}

// mergeFrom merges the attached cache "src" into main; source labels rows without one.
func (d *DB) mergeFrom(ctx context.Context, tx *sql.Tx, source string, rep *ImportReport) error {
	if err := checkImportedText(ctx, tx); err != nil {
		return err
	}
	var err error
	count := func(table string) int {
		if err != nil {
			return 0
		}
		var n int
		n, err = countRows(ctx, tx, table)
		return n
	}
	exec := func(query string, args ...any) int {
		if err != nil {
			return 0
		}
		var res sql.Result
		if res, err = tx.ExecContext(ctx, query, args...); err != nil {
			return 0
		}
		n, _ := res.RowsAffected()
		return int(n)
	}

	before := count("devices")
	exec(`INSERT INTO main.devices (` + deviceColumns + `) SELECT ` + deviceColumns + ` FROM src.devices
		WHERE true ON CONFLICT (key) DO NOTHING`)
	rep.Devices = count("devices") - before

	before = count("configs")
	exec(`INSERT INTO main.configs (key, description) SELECT key, description FROM src.configs
		WHERE true ON CONFLICT (key) DO UPDATE SET description = excluded.description
		WHERE main.configs.description = ''`)
	rep.Configs = count("configs") - before

	incoming := 0
	if err == nil {
		err = tx.QueryRowContext(ctx, `SELECT count(*) FROM src.measurements`).Scan(&incoming)
	}
	before = count("measurements")
	changed := exec(`INSERT INTO main.measurements (device_id, config_id, batch, precision, phase,
			policy, algorithm, median_ms, spread_ms, repeats, workspace_bytes, status, sweep_id, at, source, notes)
		SELECT md.id, mc.id, s.batch, s.precision, s.phase, s.policy, s.algorithm, s.median_ms,
			s.spread_ms, s.repeats, s.workspace_bytes, s.status, NULL, s.at,
			CASE s.source WHEN '' THEN ? ELSE s.source END, s.notes
		FROM src.measurements s
			JOIN src.devices sd ON sd.id = s.device_id JOIN main.devices md ON md.key = sd.key
			JOIN src.configs sc ON sc.id = s.config_id JOIN main.configs mc ON mc.key = sc.key
		WHERE true
		ON CONFLICT (device_id, config_id, batch, precision, phase, policy) DO UPDATE SET
			algorithm = excluded.algorithm, median_ms = excluded.median_ms,
			spread_ms = excluded.spread_ms, repeats = excluded.repeats,
			workspace_bytes = excluded.workspace_bytes, status = excluded.status,
			sweep_id = NULL, at = excluded.at, source = excluded.source, notes = excluded.notes
		WHERE excluded.at > main.measurements.at OR `+storedInFuture("main.measurements.at"), source)
	rep.Measurements = merged(incoming, changed, count("measurements")-before)

	if err == nil {
		err = tx.QueryRowContext(ctx, `SELECT count(*) FROM src.steps`).Scan(&incoming)
	}
	before = count("steps")
	changed = exec(`INSERT INTO main.steps (device_key, model, batch, precision, framework, source,
			median_ms, spread_ms, status, at)
		SELECT device_key, model, batch, precision, framework,
			CASE source WHEN '' THEN ? ELSE source END, median_ms, spread_ms, status, at
		FROM src.steps WHERE true
		ON CONFLICT (device_key, model, batch, precision, framework, source) DO UPDATE SET
			median_ms = excluded.median_ms, spread_ms = excluded.spread_ms,
			status = excluded.status, at = excluded.at
		WHERE excluded.at > main.steps.at OR `+storedInFuture("main.steps.at"), source)
	rep.Steps = merged(incoming, changed, count("steps")-before)

	before = count("user_machines")
	exec(`INSERT INTO main.user_machines SELECT * FROM src.user_machines WHERE true ON CONFLICT (id) DO NOTHING`)
	rep.UserMachines = count("user_machines") - before
	if err != nil {
		return err
	}
	if err := mergePrices(ctx, tx, rep); err != nil {
		return err
	}
	return d.mergeCustomModels(ctx, tx, rep)
}

// mergePrices takes the attached cache's prices cloud by cloud, as ReplacePrices stores
// them: a cloud main lacks, or whose prices there are of a later day (or the same day,
// imported later), replaces main's catalog and offers of that cloud whole; any other
// is left out, so an import never puts older prices over newer ones.
func mergePrices(ctx context.Context, tx *sql.Tx, rep *ImportReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.cloud, m.cloud IS NULL,
			m.cloud IS NULL OR s.price_date > m.price_date OR (s.price_date = m.price_date AND s.imported_at > m.imported_at)
		FROM src.price_catalogs s LEFT JOIN main.price_catalogs m ON m.cloud = s.cloud ORDER BY s.cloud`)
	if err != nil {
		return fmt.Errorf("read the imported cache's prices: %w", err)
	}
	type candidate struct {
		cloud        string
		added, newer bool
	}
	var candidates []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.cloud, &c.added, &c.newer); err != nil {
			rows.Close()
			return err
		}
		candidates = append(candidates, c)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	var total, clouds int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM main.cloud_offers), (SELECT count(*) FROM main.price_catalogs)`).Scan(&total, &clouds); err != nil {
		return fmt.Errorf("count the cache's prices: %w", err)
	}
	var take []string
	for _, c := range candidates {
		if !c.added && !c.newer {
			rep.Prices.Kept++
			continue
		}
		offers, why, err := importablePrices(ctx, tx, c.cloud)
		if err != nil {
			return err
		}
		var held int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM main.cloud_offers WHERE cloud = ?`, c.cloud).Scan(&held); err != nil {
			return fmt.Errorf("count the cache's %s prices: %w", c.cloud, err)
		}
		switch {
		case why != "":
		case total-held+offers > hw.MaxStoredOffers:
			why = fmt.Sprintf("with them the cache would hold %d instance types × regions across its clouds, more than cnntime keeps (%d)", total-held+offers, hw.MaxStoredOffers)
		case c.added && clouds+1 > hw.MaxPriceClouds:
			why = fmt.Sprintf("the cache holds the prices of %d clouds already, the most cnntime keeps", clouds)
		}
		if why != "" {
			rep.PricesRefused = append(rep.PricesRefused, fmt.Sprintf("%q (%s)", c.cloud, why))
			continue
		}
		total += offers - held
		if c.added {
			clouds++
			rep.Prices.Added++
		} else {
			rep.Prices.Replaced++
		}
		take = append(take, c.cloud)
	}
	for _, cloud := range take {
		for _, q := range []string{
			`DELETE FROM main.cloud_offers WHERE cloud = ?`,
			`INSERT OR REPLACE INTO main.price_catalogs (cloud, source, price_date, imported_at, checked_at, etag, last_modified, rows)
				SELECT cloud, source, price_date, imported_at, checked_at, etag, last_modified, rows FROM src.price_catalogs WHERE cloud = ?`,
			`INSERT INTO main.cloud_offers (cloud, instance, region, accelerator, accelerator_count, vcpus, memory_gib,
					price_usd, spot_usd, spot_zone)
				SELECT cloud, instance, region, accelerator, accelerator_count, vcpus, memory_gib, price_usd, spot_usd, spot_zone
				FROM src.cloud_offers WHERE cloud = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, cloud); err != nil {
				return fmt.Errorf("take the imported cache's %s prices: %w", cloud, err)
			}
		}
	}
	return nil
}

// importablePrices counts the attached cache's offers of cloud and says why they are
// no prices cnntime keeps ("" when they are): a cloud name no catalog has, a price date
// that is not a day or is in the future, more instance types or instance types ×
// regions than any cloud has, or a figure no instance has (hw.CheckOffer's bounds).
func importablePrices(ctx context.Context, tx *sql.Tx, cloud string) (offers int, why string, err error) {
	if err := hw.CheckCloudName(cloud); err != nil {
		return 0, err.Error(), nil
	}
	var unprintable int
	err = tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM src.cloud_offers WHERE cloud = ?1 AND (
				instance GLOB ?2 OR region GLOB ?2 OR accelerator GLOB ?2 OR spot_zone GLOB ?2 OR
				length(CAST(instance AS BLOB)) > ?3 OR length(CAST(region AS BLOB)) > ?3 OR
				length(CAST(accelerator AS BLOB)) > ?3 OR length(CAST(spot_zone AS BLOB)) > ?3))
			+ (SELECT count(*) FROM src.price_catalogs WHERE cloud = ?1 AND (
				source GLOB ?2 OR price_date GLOB ?2 OR etag GLOB ?2 OR last_modified GLOB ?2 OR
				length(source) > ?4 OR length(etag) > ?4 OR length(last_modified) > ?4))`,
		cloud, unprintableGlob, hw.MaxNameBytes, maxImportedText).Scan(&unprintable)
	if err != nil {
		return 0, "", fmt.Errorf("read the imported cache's %s prices: %w", cloud, err)
	}
	if unprintable > 0 {
		return 0, fmt.Sprintf("%d of their names hold a control character or are longer than a name may be: names must be printable text", unprintable), nil
	}
	var date string
	var types, bad int
	err = tx.QueryRowContext(ctx, `SELECT (SELECT price_date FROM src.price_catalogs WHERE cloud = ?1), count(*), count(DISTINCT instance),
			coalesce(sum(CASE WHEN price_usd BETWEEN 0 AND ?2 AND spot_usd BETWEEN 0 AND ?2 AND accelerator_count > 0 AND accelerator_count <= ?3
				AND vcpus BETWEEN 0 AND ?4 AND memory_gib BETWEEN 0 AND ?5 THEN 0 ELSE 1 END), 0)
		FROM src.cloud_offers WHERE cloud = ?1`,
		cloud, hw.MaxPriceUSDPerHour, hw.MaxMachineGPUs, hw.MaxOfferVCPUs, hw.MaxOfferMemoryGiB).Scan(&date, &offers, &types, &bad)
	if err != nil {
		return 0, "", fmt.Errorf("read the imported cache's %s prices: %w", cloud, err)
	}
	day, perr := time.Parse(time.DateOnly, date)
	switch {
	case perr != nil:
		return 0, fmt.Sprintf("their date %q is not a day such as 2026-11-20", date), nil
	case day.After(time.Now().UTC()):
		return 0, fmt.Sprintf("their date %s is in the future", date), nil
	case offers > hw.MaxCloudOffers:
		return 0, fmt.Sprintf("%d instance types × regions, more than any cloud's catalog holds (cnntime keeps %d)", offers, hw.MaxCloudOffers), nil
	case types > hw.MaxCloudInstanceTypes:
		return 0, fmt.Sprintf("%d instance types, more than any cloud's catalog holds (cnntime keeps %d)", types, hw.MaxCloudInstanceTypes), nil
	case bad > 0:
		return 0, fmt.Sprintf("%d of their instance types × regions have a price, GPU count, vCPU count or memory no instance has", bad), nil
	}
	return offers, "", nil
}

// mergeCustomModels adds the attached cache's custom models that main lacks, in the
// order they were saved there, and names in rep those whose name main gives another
// definition (main's is kept: an import never replaces the user's own model).
func (d *DB) mergeCustomModels(ctx context.Context, tx *sql.Tx, rep *ImportReport) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.name, s.json, s.added_at, m.json
		FROM src.custom_models s LEFT JOIN main.custom_models m ON m.name = s.name ORDER BY s.id`)
	if err != nil {
		return fmt.Errorf("read the custom models: %w", err)
	}
	type incoming struct {
		name, json string
		addedAt    int64
	}
	var add []incoming
	for rows.Next() {
		var (
			in    incoming
			local sql.NullString
		)
		if err := rows.Scan(&in.name, &in.json, &in.addedAt, &local); err != nil {
			rows.Close()
			return fmt.Errorf("read the custom models: %w", err)
		}
		switch {
		case !local.Valid:
			add = append(add, in)
		case !sameJSON(local.String, in.json):
			rep.CustomModelClashes = append(rep.CustomModelClashes, in.name)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("read the custom models: %w", err)
	}
	for _, in := range add {
		if check := d.checks.CustomModel; check != nil {
			if err := check(in.name, []byte(in.json)); err != nil {
				return fmt.Errorf("its custom model %q cannot be used (%v): remove it there ('cnntime --db FILE model remove NAME', or the app's File → Remove model…) and import again", in.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO main.custom_models (name, json, added_at) VALUES (?, ?, ?)`,
			in.name, in.json, in.addedAt); err != nil {
			return fmt.Errorf("add custom model %s: %w", in.name, err)
		}
	}
	rep.CustomModels = len(add)
	return nil
}

// sameJSON reports whether two JSON texts hold the same value, however laid out (white
// space, the order of an object's keys); texts that do not parse are compared as text.
func sameJSON(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a == b
	}
	return reflect.DeepEqual(va, vb)
}

func merged(incoming, changed, added int) Merged {
	return Merged{Added: added, Replaced: changed - added, Kept: incoming - changed}
}

// countRows counts the rows of a table of the main schema.
func countRows(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, table string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, "SELECT count(*) FROM main."+table).Scan(&n)
	return n, err
}

// sameFile reports whether a and b are the same file; a missing b is not.
func sameFile(a, b string) (bool, error) {
	ia, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	ib, err := os.Stat(b)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return os.SameFile(ia, ib), nil
}

// importedText are the columns of names in a cache that cnntime shows, quotes and
// writes into job files and CSVs: an imported cache's must be printable text. (Its
// prices are checked cloud by cloud, and a cloud with such a name left out:
// importablePrices.)
var importedText = []struct {
	table   string
	columns []string
}{
	{"devices", []string{"key", "backend", "name", "uuid", "gpu_id", "compute_capability", "driver", "cuda", "cudnn"}},
	{"configs", []string{"key"}},
	{"measurements", []string{"precision", "policy", "algorithm", "source"}},
	{"steps", []string{"device_key", "model", "precision", "framework", "source"}},
	{"user_machines", []string{"id", "provider", "instance", "gpu_id", "region", "price_source"}},
	{"loader_rates", []string{"loader", "cpu", "host", "source"}},
	{"custom_models", []string{"name"}},
}

// maxImportedText bounds a name in an imported cache (a configuration's key, a
// source that cites a file, are the longest: a few hundred bytes).
const maxImportedText = 1024

// unprintableGlob is a GLOB pattern that matches a text holding a character
// hw.Unprintable refuses.
var unprintableGlob = func() string {
	var b strings.Builder
	b.WriteString("*[")
	for r := rune(1); r < 0x2070; r++ {
		if hw.Unprintable(r) {
			b.WriteRune(r)
		}
	}
	return b.String() + "]*"
}()

// checkImportedText refuses an attached cache "src" whose names hold a control
// character (a line break, ESC, BEL, DEL, a C1 control, a Unicode line separator or
// bidirectional override: hw.Unprintable) or are longer than maxImportedText.
func checkImportedText(ctx context.Context, tx *sql.Tx) error {
	for _, t := range importedText {
		for _, c := range t.columns {
			var v string
			err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT %s FROM src.%s WHERE %s GLOB ? OR length(%s) > ? LIMIT 1`, c, t.table, c, c),
				unprintableGlob, maxImportedText).Scan(&v)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				continue
			case err != nil:
				return fmt.Errorf("check the text of its %s: %w", t.table, err)
			case len(v) > maxImportedText:
				return fmt.Errorf("its %s holds a %s %d bytes long (%q…), more than a name may be (%d): it is not a cache cnntime wrote", t.table, c, len(v), v[:48], maxImportedText)
			}
			return fmt.Errorf("its %s holds the %s %q, with a control character: names in a cache must be printable text; it is not a cache cnntime wrote", t.table, c, v)
		}
	}
	return nil
}
