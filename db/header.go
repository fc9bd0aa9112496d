package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// applicationID marks a SQLite file as a cnntime cache (PRAGMA application_id): the
// ASCII bytes "cnnT".
const applicationID = 0x636e6e54

// sqliteMagic opens every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// fileHeader is what cnntime reads from the 100-byte header of a SQLite database file
// (https://www.sqlite.org/fileformat.html#the_database_header) to judge a file before
// SQLite opens it for writing.
type fileHeader struct {
	pageSize      int64
	changeCounter uint32
	pageCount     uint32 // the in-header database size; valid when validFor == changeCounter
	userVersion   uint32 // cnntime's schema version
	applicationID uint32
	validFor      uint32
}

func parseHeader(b []byte) (fileHeader, bool) {
	if len(b) < 100 || !bytes.Equal(b[:16], []byte(sqliteMagic)) {
		return fileHeader{}, false
	}
	h := fileHeader{
		pageSize:      int64(binary.BigEndian.Uint16(b[16:18])),
		changeCounter: binary.BigEndian.Uint32(b[24:28]),
		pageCount:     binary.BigEndian.Uint32(b[28:32]),
		userVersion:   binary.BigEndian.Uint32(b[60:64]),
		applicationID: binary.BigEndian.Uint32(b[68:72]),
		validFor:      binary.BigEndian.Uint32(b[92:96]),
	}
	if h.pageSize == 1 {
		h.pageSize = 65536
	}
	return h, true
}

// checkExistingFile refuses, by reading it only, a file at path that cnntime must not
// open for writing: not SQLite, truncated, another application's database, or a cache
// of a newer schema than this cnntime knows. A missing or empty file is fine: Open
// creates the cache in it.
//
// A writer that was stopped (killed, or the machine lost power) may have left commits in
// the write-ahead log, or a hot rollback journal: SQLite switches a new file to WAL mode
// in a rollback-journal transaction, so a cache whose creator was killed there has one.
// The file's own header is then stale or half-written, so the marks are read through
// SQLite, which sees the committed state (see checkMarks).
func checkExistingFile(path string) error {
	if err := checkRegular(path); err != nil {
		return err
	}
	h, size, err := readHeader(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case size == 0:
		return nil
	}
	if h.pageSize == 0 {
		return fmt.Errorf("%s is not a cnntime cache (not an SQLite database): choose another file", path)
	}
	if h.applicationID != 0 && h.applicationID != applicationID {
		return foreignDatabaseError(path, h.applicationID)
	}
	pending, err := hasPendingWrites(path)
	if err != nil {
		return err
	}
	if pending {
		return checkMarks(path)
	}
	if err := h.check(path, size); err != nil {
		return err
	}
	if h.applicationID == 0 {
		return checkMarks(path)
	}
	return nil
}

// checkRegular refuses, before anything opens it, a path that names something other
// than a regular file (or a link to one): opening a named pipe would wait for a writer
// for ever, deaf to Ctrl-C, and a device or a socket is no cache. A missing path passes.
func checkRegular(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("read cache file %s: %w", path, err)
	case st.Mode().IsRegular():
		return nil
	}
	what := "not a regular file"
	switch mode := st.Mode(); {
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("cache file %s is %s, not a file: give a cache file path (--db PATH or CNNTIME_DB)", path, what)
}

// hasPendingWrites reports whether the file at path has a write-ahead log holding
// frames, or a rollback journal that may be hot: then its header alone cannot be
// trusted. (A journal that SQLite finished with is deleted, or its first byte zeroed.)
func hasPendingWrites(path string) (bool, error) {
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return true, nil
	}
	return hasHotJournal(path)
}

// hasHotJournal reports whether the database at path has a rollback journal that may
// hold a write to undo.
func hasHotJournal(path string) (bool, error) {
	j, err := os.Open(path + "-journal")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the journal of cache file %s: %w", path, err)
	}
	defer j.Close()
	first := make([]byte, 1)
	n, err := j.Read(first)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the journal of cache file %s: %w", path, err)
	}
	return n == 1 && first[0] != 0, nil
}

// schemaMarks is what decides whether cnntime may open a SQLite database as its cache.
type schemaMarks struct {
	version, appID, tables int
}

// judge refuses the database at path unless it is a cnntime cache this cnntime can
// open, or an empty database.
func (m schemaMarks) judge(path string) error {
	switch {
	case m.appID == 0 && m.version == 0 && m.tables == 0:
		return nil // an empty database: Open makes it a cache
	case m.appID == 0:
		return fmt.Errorf("%s is an SQLite database of another program, not a cnntime cache: choose another --db file", path)
	case m.appID != applicationID:
		return foreignDatabaseError(path, uint32(m.appID))
	case m.version > latestVersion:
		return newerSchemaError(path, m.version)
	}
	return nil
}

// readMarks reads the schema marks of the database open as db.
func readMarks(ctx context.Context, db *sql.DB) (schemaMarks, error) {
	var m schemaMarks
	var err error
	m.version, m.appID, err = readSchemaMarks(ctx, db)
	if err != nil {
		return m, err
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&m.tables); err != nil {
		return m, fmt.Errorf("read the schema: %w", err)
	}
	return m, nil
}

// checkMarks judges the SQLite file at path by its committed schema marks, read through
// SQLite without changing the file.
//
// It reads them on a read-only connection, which sees the commits in the write-ahead
// log. A read-only connection cannot recover what a killed writer left in two cases: a
// hot rollback journal (SQLITE_READONLY_ROLLBACK) and a log whose index it may not
// rebuild (SQLITE_READONLY_RECOVERY, SQLITE_READONLY_CANTINIT). Then it judges a private
// copy that SQLite recovers instead, so the file itself is still not touched.
func checkMarks(path string) error {
	ctx := context.Background()
	ro, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	m, err := readMarks(ctx, ro)
	ro.Close()
	if needsRecovery(err) {
		m, err = readRecoveredCopy(ctx, path)
	}
	if err != nil {
		return fmt.Errorf("%s is not a readable SQLite database (%w): choose another file", path, err)
	}
	return m.judge(path)
}

// needsRecovery reports whether err is SQLite refusing a read-only connection because
// the file needs a recovery that writes.
func needsRecovery(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_READONLY_ROLLBACK, sqlite3.SQLITE_READONLY_RECOVERY, sqlite3.SQLITE_READONLY_CANTINIT:
		return true
	}
	return false
}

// maxRecoveryCopy bounds the bytes readRecoveredCopy copies. A cnntime cache is only
// left with a hot journal while it is being created (a single page), so a larger file
// in that state is another program's.
const maxRecoveryCopy = 256 << 20

// readRecoveredCopy copies the file at path with its journal and log (not the log's
// index, which SQLite rebuilds) to a temporary directory, lets SQLite recover the copy
// as a writer does, and reads the copy's schema marks.
func readRecoveredCopy(ctx context.Context, path string) (schemaMarks, error) {
	var total int64
	for _, suffix := range []string{"", "-journal", "-wal"} {
		if info, err := os.Stat(path + suffix); err == nil {
			total += info.Size()
		}
	}
	if total > maxRecoveryCopy {
		return schemaMarks{}, fmt.Errorf("it holds an unfinished write of a program that was stopped; open it once with that program or the sqlite3 shell to recover it, then retry; cnntime did not change it")
	}
	dir, err := os.MkdirTemp("", "cnntime-check-")
	if err != nil {
		return schemaMarks{}, fmt.Errorf("make a directory to recover a copy: %w", err)
	}
	defer os.RemoveAll(dir)
	cp := filepath.Join(dir, "cache.db")
	for _, suffix := range []string{"", "-journal", "-wal"} {
		if err := copyFile(path+suffix, cp+suffix); err != nil && !(suffix != "" && errors.Is(err, fs.ErrNotExist)) {
			return schemaMarks{}, fmt.Errorf("copy it to recover the copy: %w", err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(cp))
	if err != nil {
		return schemaMarks{}, err
	}
	defer db.Close()
	return readMarks(ctx, db)
}

// copyFile copies the file at from to a new file at to.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

func foreignDatabaseError(path string, appID uint32) error {
	return fmt.Errorf("%s is an SQLite database of another program (application id %#x), not a cnntime cache: choose another file", path, appID)
}

// readHeader reads the header and size of the file at path. A file too short to hold
// a header comes back with a zero header and its size.
func readHeader(path string) (fileHeader, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileHeader{}, 0, err
		}
		return fileHeader{}, 0, fmt.Errorf("read cache file %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fileHeader{}, 0, fmt.Errorf("read cache file %s: %w", path, err)
	}
	if info.IsDir() {
		return fileHeader{}, 0, fmt.Errorf("cache file %s is a directory: give a file path", path)
	}
	b := make([]byte, 100)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fileHeader{}, 0, fmt.Errorf("read cache file %s: %w", path, err)
	}
	h, _ := parseHeader(b[:n])
	return h, info.Size(), nil
}

// check judges a header read from a non-empty file of size bytes.
func (h fileHeader) check(path string, size int64) error {
	if h.pageSize == 0 {
		return fmt.Errorf("%s is not a cnntime cache (not an SQLite database): choose another file", path)
	}
	if h.applicationID != 0 && h.applicationID != applicationID {
		return foreignDatabaseError(path, h.applicationID)
	}
	if h.applicationID == applicationID && h.userVersion > uint32(latestVersion) {
		return newerSchemaError(path, int(h.userVersion))
	}
	if h.validFor == h.changeCounter && int64(h.pageCount)*h.pageSize > size {
		return fmt.Errorf("cache %s is truncated: its header says %d bytes, the file has %d; restore it from a copy or import what is left into a new cache",
			path, int64(h.pageCount)*h.pageSize, size)
	}
	return nil
}

func newerSchemaError(path string, version int) error {
	return fmt.Errorf("cache %s was written by a newer cnntime (schema version %d; this cnntime knows up to %d): update cnntime, or use another --db file; the file was not changed",
		path, version, latestVersion)
}
