package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound is wrapped by errors about a row that does not exist (a user machine, a
// price override, a sweep), so callers can tell "nothing there" from a failure.
var ErrNotFound = errors.New("not found")

// DB is an open cache file. It is safe for concurrent use by several goroutines, and
// several DBs (in this or other processes) may have the same file open.
type DB struct {
	path   string
	checks ImportChecks

	readOnly bool // opened by openReadOnly: writes fail

	file     atomic.Pointer[openFile] // the file it holds and the connections to it (see identity.go)
	reopenMu sync.Mutex               // one Reopen at a time

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
	d := &DB{path: abs}
	f, err := d.openFile(context.Background())
	if err != nil {
		if readOnlyFile(err) {
			if _, serr := os.Stat(abs); serr == nil {
				return openReadOnly(abs)
			}
			return nil, fmt.Errorf("create cache %s: its folder is read-only: give a cache in a folder you may write with --db PATH (or CNNTIME_DB)", abs)
		}
		return nil, fmt.Errorf("open cache %s: %w", abs, Explain(abs, err))
	}
	d.file.Store(f)
	return d, nil
}

// openFile opens the cache file at d.path, creating it when missing, puts it in WAL
// mode and migrates its schema.
func (d *DB) openFile(ctx context.Context) (*openFile, error) {
	if err := createIfMissing(d.path); err != nil {
		return nil, err
	}
	ident, err := identOf(d.path)
	if err != nil {
		return nil, err
	}
	f := &openFile{ident: ident}
	openPool(d.path, f)
	if err := migratePool(ctx, f.sql, d.path, latestVersion); err != nil {
		f.sql.Close()
		return nil, err
	}
	return f, nil
}

// createIfMissing creates an empty file at path (SQLite takes it for an empty
// database) unless there is one, so that the cache's connections never create it: a
// cache deleted under them is not silently made again, empty.
func createIfMissing(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// current is the file the DB holds now.
func (d *DB) current() *openFile { return d.file.Load() }

// sqldb is the connection pool of the file the DB holds now.
func (d *DB) sqldb() *sql.DB { return d.current().sql }

// readOnlyFile reports whether err is SQLite (or the system) refusing to write the file
// or its folder: a cache in a read-only folder, or one this user may only read.
func readOnlyFile(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
			return true
		}
	}
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// openReadOnly opens the existing cache at abs, which this user may not write, for
// reading only: nothing is written in or beside it. Where a writer has it open (its log
// and log index are there) it reads through them; otherwise it reads the file as it is
// (SQLite's immutable mode: no lock, no log). Writes through it fail with a sentence
// that says so (DB.write).
func openReadOnly(abs string) (*DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Set("mode", "ro")
	if !hasLogIndex(abs) {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	sqldb, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", abs, err)
	}
	version, appID, err := readSchemaMarks(context.Background(), sqldb)
	switch {
	case err != nil:
		err = fmt.Errorf("open cache %s (read-only): %w", abs, err)
	case appID != applicationID:
		err = fmt.Errorf("open cache %s: not a cnntime cache: choose another file", abs)
	case version > latestVersion:
		err = newerSchemaError(abs, version)
	case version < latestVersion:
		err = fmt.Errorf("cache %s was written by an older cnntime (schema version %d) and must be upgraded, which writes it, but you may not write it or its folder: copy it to a folder of yours and give that copy with --db", abs, version)
	}
	if err != nil {
		sqldb.Close()
		return nil, err
	}
	d := &DB{path: abs, readOnly: true}
	ident, _ := identOf(abs)
	d.file.Store(&openFile{sql: sqldb, ident: ident})
	return d, nil
}

// ReadOnly reports whether the cache was opened for reading only (see Open).
func (d *DB) ReadOnly() bool { return d.readOnly }

// errReadOnly is what a write to a read-only cache says.
func (d *DB) errReadOnly(what string) error {
	return fmt.Errorf("%s: cache %s is read-only (you may not write it or its folder): commands that only read it work; to change it, copy it to a folder of yours and give that copy with --db", what, d.path)
}

// poolDSN is the data source name of a cache's own connections (openPool): dsn's,
// without creating the file (mode=rw) and without setting the journal mode, which
// reads the file (Open sets it once, in migratePool): a connection must not read a
// byte before identityConnector has checked that it opened the DB's file.
func poolDSN(abs string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	q.Set("mode", "rw")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return u.String()
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
	f := d.current()
	var lost error
	if f.wrote.Load() { // what this DB wrote is in the cache file, or rescued
		if lost = d.Changed(); lost != nil {
			if conn, err := f.sql.Conn(context.Background()); err == nil {
				d.rescue(context.Background(), f, conn)
				conn.Close()
			}
		}
	}
	if err := f.sql.Close(); err != nil {
		return fmt.Errorf("close cache %s: %w", d.path, err)
	}
	return lost
}

// Path is the cache file's absolute path.
func (d *DB) Path() string { return d.path }

// write runs fn in one immediate transaction: all of fn's changes are committed, or
// none when fn or the commit fails.
func (d *DB) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if d.readOnly {
		return d.errReadOnly(what)
	}
	if err := d.checkIntact(ctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	f := d.current()
	conn, err := f.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, Explain(d.path, err))
	}
	defer conn.Close()
	return d.transact(ctx, f, conn, func(step string, err error) error {
		if step == "" {
			return fmt.Errorf("%s: %w", what, err)
		}
		return fmt.Errorf("%s: %s %s: %w", what, step, d.path, err)
	}, fn)
}

// transact runs fn in one transaction on conn, a connection to f: all of fn's changes
// are committed, or none. It checks that f is still the file at the cache's path once
// the transaction holds the write lock (nothing is written to a file that is no longer
// the cache) and again after the commit (a commit that landed in the old file is an
// error, and rescued). wrap says what failed: step is "begin a transaction on",
// "commit to", or "" for fn's own error and a changed file.
func (d *DB) transact(ctx context.Context, f *openFile, conn *sql.Conn, wrap func(step string, err error) error, fn func(tx *sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		if lost := f.changed(d.path); lost != nil {
			return wrap("", lost)
		}
		return wrap("begin a transaction on", Explain(d.path, err))
	}
	if err := d.checkSame(ctx, f, nil); err != nil {
		tx.Rollback()
		d.rescue(ctx, f, conn)
		return wrap("", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return wrap("", Explain(d.path, err))
	}
	if err := tx.Commit(); err != nil {
		return wrap("commit to", Explain(d.path, err))
	}
	f.wrote.Store(true)
	if err := d.checkSame(ctx, f, conn); err != nil {
		return wrap("", err)
	}
	return nil
}
