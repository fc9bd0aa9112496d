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
// While the file's write-ahead log holds commits (a writer is running, or was killed)
// the header in the file itself may be stale, so the marks are then read through SQLite,
// read-only, which sees the log.
func checkExistingFile(path string) error {
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
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		if h.applicationID == applicationID {
			return nil // ours; Open reads the schema version through the log
		}
		err := checkMarksReadOnly(path)
		if err != nil && h.pageCount <= 1 && h.validFor == h.changeCounter {
			// A new cache whose first writer was killed before its first checkpoint:
			// a read-only reader cannot recover the log. Open recovers it and refuses
			// it then if the schema is another program's.
			return nil
		}
		return err
	}
	if err := h.check(path, size); err != nil {
		return err
	}
	if h.applicationID == 0 {
		return checkMarksReadOnly(path)
	}
	return nil
}

// checkMarksReadOnly opens the SQLite file at path read-only and refuses it unless it
// is a cnntime cache this cnntime can open, or an empty database.
func checkMarksReadOnly(path string) error {
	ro, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer ro.Close()
	ctx := context.Background()
	version, appID, err := readSchemaMarks(ctx, ro)
	if err != nil {
		return fmt.Errorf("%s is not a readable SQLite database (%v): choose another file", path, err)
	}
	var tables int
	if err := ro.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return fmt.Errorf("%s is not a readable SQLite database (%v): choose another file", path, err)
	}
	switch {
	case appID == 0 && version == 0 && tables == 0:
		return nil // an empty database: Open makes it a cache
	case appID == 0:
		return fmt.Errorf("%s is an SQLite database of another program, not a cnntime cache: choose another --db file", path)
	case appID != applicationID:
		return foreignDatabaseError(path, uint32(appID))
	case version > latestVersion:
		return newerSchemaError(path, version)
	}
	return nil
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
