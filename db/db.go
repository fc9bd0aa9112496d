package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// ErrNotFound is wrapped by errors about a row that does not exist (a user machine, a
// price override, a sweep), so callers can tell "nothing there" from a failure.
var ErrNotFound = errors.New("not found")

// DB is an open cache file. It is safe for concurrent use by several goroutines, and
// several DBs (in this or other processes) may have the same file open.
type DB struct {
	sql    *sql.DB
	path   string
	checks ImportChecks

	holdMu sync.Mutex
	holds  map[int64]*os.File // the running sweeps this DB holds (see holdSweep)
}

// Open opens the cache at path, creating the file and its directory when missing, and
// migrates an older schema to the current one. It refuses, without changing the file, a
// file that is not a cnntime cache (another SQLite database or not SQLite at all), a
// truncated one, and one written by a newer cnntime.
func Open(path string) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("open cache: no file path given (use --db PATH or CNNTIME_DB)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", path, err)
	}
	if err := checkExistingFile(abs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("create the cache's directory %s: %w", filepath.Dir(abs), err)
	}
	sqldb, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	d := &DB{sql: sqldb, path: abs}
	if err := d.migrate(context.Background()); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	return d, nil
}

// dsn is the driver's data source name for the file at abs: WAL journal, a busy timeout
// long enough for a sweep's largest write, foreign keys on, and write transactions that
// take the write lock when they begin (so two writers queue instead of failing).
// readOnly opens the file without ever writing to it.
func dsn(abs string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// NORMAL in WAL mode: a commit survives the process being killed; only a
		// power loss may roll back the last commits, never corrupt the file.
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
}

// Close closes the cache; in WAL mode the last connection to close folds the log back
// into the file.
func (d *DB) Close() error {
	d.releaseSweeps()
	if err := d.sql.Close(); err != nil {
		return fmt.Errorf("close cache %s: %w", d.path, err)
	}
	return nil
}

// Path is the cache file's absolute path.
func (d *DB) Path() string { return d.path }

// write runs fn in one immediate transaction: all of fn's changes are committed, or
// none when fn or the commit fails.
func (d *DB) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin a transaction on %s: %w", what, d.path, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit to %s: %w", what, d.path, err)
	}
	return nil
}
