package db

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] takes a cache from schema version i to version i+1. A released
// migration is never edited: a change to the schema is a new migration at the end.
var migrations = [][]string{
	// Version 1: devices, layer configurations, kernel measurements, whole steps, sweeps,
	// user machines and price overrides.
	{
		`CREATE TABLE devices (
			id                 INTEGER PRIMARY KEY,
			key                TEXT NOT NULL UNIQUE CHECK (key <> ''),
			backend            TEXT NOT NULL DEFAULT '',
			name               TEXT NOT NULL DEFAULT '',
			uuid               TEXT NOT NULL DEFAULT '',
			gpu_id             TEXT NOT NULL DEFAULT '',
			compute_capability TEXT NOT NULL DEFAULT '',
			sm_count           INTEGER NOT NULL DEFAULT 0,
			memory_bytes       INTEGER NOT NULL DEFAULT 0,
			clock_mhz          INTEGER NOT NULL DEFAULT 0,
			memory_clock_mhz   INTEGER NOT NULL DEFAULT 0,
			driver             TEXT NOT NULL DEFAULT '',
			cuda               TEXT NOT NULL DEFAULT '',
			cudnn              TEXT NOT NULL DEFAULT '',
			host               TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE configs (
			id          INTEGER PRIMARY KEY,
			key         TEXT NOT NULL UNIQUE CHECK (key <> ''),
			description TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE measurements (
			id              INTEGER PRIMARY KEY,
			device_id       INTEGER NOT NULL REFERENCES devices (id),
			config_id       INTEGER NOT NULL REFERENCES configs (id),
			batch           INTEGER NOT NULL CHECK (batch > 0),
			precision       TEXT NOT NULL,
			phase           TEXT NOT NULL CHECK (phase IN ('fwd', 'bwd_data', 'bwd_weights')),
			policy          TEXT NOT NULL,
			algorithm       TEXT NOT NULL DEFAULT '',
			median_ms       REAL NOT NULL,
			spread_ms       REAL NOT NULL DEFAULT 0,
			repeats         INTEGER NOT NULL DEFAULT 0,
			workspace_bytes INTEGER NOT NULL DEFAULT 0,
			status          TEXT NOT NULL CHECK (status IN ('ok', 'oom', 'unsupported')),
			sweep_id        INTEGER,
			at              INTEGER NOT NULL, -- Unix nanoseconds; 0 when unknown
			CHECK (status <> 'ok' OR median_ms > 0),
			UNIQUE (device_id, config_id, batch, precision, phase, policy)
		)`,
		`CREATE TABLE steps (
			id         INTEGER PRIMARY KEY,
			device_key TEXT NOT NULL CHECK (device_key <> ''),
			model      TEXT NOT NULL CHECK (model <> ''),
			batch      INTEGER NOT NULL CHECK (batch > 0),
			precision  TEXT NOT NULL,
			framework  TEXT NOT NULL DEFAULT '',
			source     TEXT NOT NULL DEFAULT '',
			median_ms  REAL NOT NULL,
			spread_ms  REAL NOT NULL DEFAULT 0,
			status     TEXT NOT NULL CHECK (status IN ('ok', 'oom', 'unsupported')),
			at         INTEGER NOT NULL,
			CHECK (status <> 'ok' OR median_ms > 0),
			UNIQUE (device_key, model, batch, precision, framework, source)
		)`,
		`CREATE TABLE sweeps (
			id         INTEGER PRIMARY KEY AUTOINCREMENT,
			device_key TEXT NOT NULL,
			plan       TEXT NOT NULL,
			state      TEXT NOT NULL CHECK (state IN ('running', 'paused', 'done', 'cancelled', 'failed')),
			total      INTEGER NOT NULL CHECK (total >= 0),
			done       INTEGER NOT NULL CHECK (done >= 0),
			created_at INTEGER NOT NULL,
			updated_at INTEGER NOT NULL
		)`,
		`CREATE TABLE user_machines (
			id                 TEXT PRIMARY KEY CHECK (id <> ''),
			provider           TEXT NOT NULL DEFAULT '',
			instance           TEXT NOT NULL DEFAULT '',
			gpu_id             TEXT NOT NULL DEFAULT '',
			gpu_count          INTEGER NOT NULL DEFAULT 0,
			vcpus              INTEGER NOT NULL DEFAULT 0,
			memory_gib         REAL NOT NULL DEFAULT 0,
			region             TEXT NOT NULL DEFAULT '',
			price_usd_per_hour REAL NOT NULL DEFAULT 0,
			price_source       TEXT NOT NULL DEFAULT '',
			notes              TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE price_overrides (
			machine_id   TEXT PRIMARY KEY CHECK (machine_id <> ''),
			usd_per_hour REAL NOT NULL CHECK (usd_per_hour >= 0),
			set_at       INTEGER NOT NULL
		)`,
	},
	// Version 2: provenance of kernel measurements, for merged caches. '' is this
	// cache's own sweeps; an imported row names the file it came from.
	{
		`ALTER TABLE measurements ADD COLUMN source TEXT NOT NULL DEFAULT ''`,
	},
	// Version 3: measurements clustered by device and configuration: the predictor reads
	// one device's measurements of a set of configurations, each one contiguous range.
	{
		`CREATE TABLE measurements_v3 (
			device_id       INTEGER NOT NULL REFERENCES devices (id),
			config_id       INTEGER NOT NULL REFERENCES configs (id),
			precision       TEXT NOT NULL,
			policy          TEXT NOT NULL,
			phase           TEXT NOT NULL CHECK (phase IN ('fwd', 'bwd_data', 'bwd_weights')),
			batch           INTEGER NOT NULL CHECK (batch > 0),
			algorithm       TEXT NOT NULL DEFAULT '',
			median_ms       REAL NOT NULL,
			spread_ms       REAL NOT NULL DEFAULT 0,
			repeats         INTEGER NOT NULL DEFAULT 0,
			workspace_bytes INTEGER NOT NULL DEFAULT 0,
			status          TEXT NOT NULL CHECK (status IN ('ok', 'oom', 'unsupported')),
			sweep_id        INTEGER,
			at              INTEGER NOT NULL, -- Unix nanoseconds; 0 when unknown
			source          TEXT NOT NULL DEFAULT '',
			CHECK (status <> 'ok' OR median_ms > 0),
			PRIMARY KEY (device_id, config_id, precision, policy, phase, batch)
		) WITHOUT ROWID`,
		`INSERT INTO measurements_v3 (device_id, config_id, precision, policy, phase, batch, algorithm,
			median_ms, spread_ms, repeats, workspace_bytes, status, sweep_id, at, source)
		SELECT device_id, config_id, precision, policy, phase, batch, algorithm,
			median_ms, spread_ms, repeats, workspace_bytes, status, sweep_id, at, source
		FROM measurements`,
		`DROP TABLE measurements`,
		`ALTER TABLE measurements_v3 RENAME TO measurements`,
	},
	// Version 4: the user's own CNNs (custom model files the GUI added), kept as the
	// file's JSON so they come back after a restart; id keeps the order they were added.
	{
		`CREATE TABLE custom_models (
			id       INTEGER PRIMARY KEY,
			name     TEXT NOT NULL UNIQUE CHECK (name <> ''),
			json     TEXT NOT NULL CHECK (json <> ''),
			added_at INTEGER NOT NULL -- Unix nanoseconds
		)`,
	},
	// Version 5: cloud prices imported from SkyPilot's catalog, one set per cloud that an
	// import or update replaces whole: where and when they came from (with the HTTP
	// validators of a download, for conditional requests), and one row per instance type
	// and region with its accelerator, size, on-demand and spot prices (0: none).
	{
		`CREATE TABLE price_catalogs (
			cloud         TEXT PRIMARY KEY CHECK (cloud <> ''),
			source        TEXT NOT NULL CHECK (source <> ''),
			price_date    TEXT NOT NULL CHECK (price_date <> ''),
			imported_at   INTEGER NOT NULL, -- Unix nanoseconds
			checked_at    INTEGER NOT NULL, -- Unix nanoseconds: the last download that found it unchanged, or imported_at
			etag          TEXT NOT NULL DEFAULT '',
			last_modified TEXT NOT NULL DEFAULT '',
			rows          INTEGER NOT NULL DEFAULT 0 CHECK (rows >= 0)
		)`,
		`CREATE TABLE cloud_offers (
			cloud             TEXT NOT NULL REFERENCES price_catalogs (cloud) ON DELETE CASCADE,
			instance          TEXT NOT NULL CHECK (instance <> ''),
			region            TEXT NOT NULL CHECK (region <> ''),
			accelerator       TEXT NOT NULL CHECK (accelerator <> ''),
			accelerator_count REAL NOT NULL CHECK (accelerator_count > 0),
			vcpus             REAL NOT NULL DEFAULT 0 CHECK (vcpus >= 0),
			memory_gib        REAL NOT NULL DEFAULT 0 CHECK (memory_gib >= 0),
			price_usd         REAL NOT NULL DEFAULT 0 CHECK (price_usd >= 0),
			spot_usd          REAL NOT NULL DEFAULT 0 CHECK (spot_usd >= 0),
			spot_zone         TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (cloud, instance, region)
		) WITHOUT ROWID`,
	},
	// Version 6: this computer's measured input-pipeline rate (scripts/dataloader_rate.py
	// through cache import), one row per loader: what one worker delivers on its own core.
	{
		`CREATE TABLE loader_rates (
			loader          TEXT PRIMARY KEY CHECK (loader <> ''),
			images_per_s    REAL NOT NULL CHECK (images_per_s > 0), -- per worker on its own core
			workers         INTEGER NOT NULL CHECK (workers > 0),   -- the workers it was measured with
			cpu             TEXT NOT NULL DEFAULT '',
			host            TEXT NOT NULL DEFAULT '',
			measured_at     INTEGER NOT NULL, -- Unix seconds
			source          TEXT NOT NULL DEFAULT ''
		)`,
	},
	// Version 7: notes on a kernel measurement, which say how to read its time (the GPU
	// worker's: host-bound, l2-flushed, l2-hot); '' for none.
	{
		`ALTER TABLE measurements ADD COLUMN notes TEXT NOT NULL DEFAULT ''`,
	},
	// Version 8: a user machine's host CPU (cnntime machine add --cpu): its model name
	// ('' for unknown) and turbo clock in GHz (0 for unknown), which set its loader's
	// per-core rate as the catalog's cpus.csv does for the catalog's machines.
	{
		`ALTER TABLE user_machines ADD COLUMN cpu_model TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE user_machines ADD COLUMN cpu_turbo_ghz REAL NOT NULL DEFAULT 0 CHECK (cpu_turbo_ghz >= 0)`,
	},
}

// latestVersion is the schema version this cnntime writes.
var latestVersion = len(migrations)

// migrate brings the schema up to latestVersion in one transaction, and marks the file
// as a cnntime cache. It refuses a file that is not a cache or is newer.
func (d *DB) migrate(ctx context.Context) error {
	return d.migrateTo(ctx, latestVersion)
}

// migrateTo brings the schema up to version target (tests build old caches with it).
func (d *DB) migrateTo(ctx context.Context, target int) error {
	return migratePool(ctx, d.sqldb(), d.path, target)
}

// migratePool puts the cache file at path, open as pool, in WAL mode and brings its
// schema up to version target.
func migratePool(ctx context.Context, pool *sql.DB, path string, target int) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("lock the file to check its schema: %w", err)
	}
	defer tx.Rollback()
	version, appID, err := readSchemaMarks(ctx, tx)
	if err != nil {
		return err
	}
	if appID != 0 && appID != applicationID {
		return fmt.Errorf("not a cnntime cache (application id %#x): choose another file", appID)
	}
	if appID == 0 {
		var tables int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			return fmt.Errorf("read the schema: %w", err)
		}
		if version != 0 || tables != 0 {
			return fmt.Errorf("not a cnntime cache (an SQLite database of another program): choose another file")
		}
	}
	if version > latestVersion {
		return newerSchemaError(path, version)
	}
	if version >= target && appID == applicationID {
		return nil
	}
	for v := version; v < target; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate the schema from version %d to %d: %w", v, v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", max(version, target))); err != nil {
		return fmt.Errorf("record the schema version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return fmt.Errorf("mark the file as a cnntime cache: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit the schema migration: %w", err)
	}
	return nil
}

// readSchemaMarks reads PRAGMA user_version and application_id.
func readSchemaMarks(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (version, appID int, err error) {
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, 0, fmt.Errorf("read the schema version (is it an SQLite database?): %w", err)
	}
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, 0, fmt.Errorf("read the application id: %w", err)
	}
	return version, appID, nil
}

// SchemaVersion is the schema version of the open cache.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	v, _, err := readSchemaMarks(ctx, d.sqldb())
	return v, err
}
