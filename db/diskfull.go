package db

import (
	"errors"
	"fmt"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// IsDiskFull reports whether err is a write that found no space left: SQLite's
// "database or disk is full", its log index that could not grow (SQLITE_IOERR_SHMSIZE,
// "disk I/O error (4874)": opening a cache on a full disk), or the system's ENOSPC or
// EDQUOT (the user's quota).
func IsDiskFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_FULL || se.Code() == sqlite3.SQLITE_IOERR_SHMSIZE) {
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// IsDamaged reports whether err is SQLite finding a cache file damaged.
func IsDamaged(err error) bool { return isCorrupt(err) }

// diskFullError is a write to the cache at path that found the disk full.
type diskFullError struct {
	path string
	err  error
	what string // what to do; "" for nothing saved, free some space, run it again
}

func (e *diskFullError) Error() string {
	what := e.what
	if what == "" {
		what = "nothing of this was saved; free some space there, then run it again"
	}
	return fmt.Sprintf("the disk holding %s is full: %s (%v)", e.path, what, e.err)
}

func (e *diskFullError) Unwrap() error { return e.err }

// damagedError is a read of the cache at path that found it damaged.
type damagedError struct {
	path string
	err  error
}

func (e *damagedError) Error() string {
	return fmt.Sprintf("cache %s is damaged (%v): restore it from a copy, or export what still reads ('cnntime cache export') into a new cache; 'cnntime cache check' lists every problem", e.path, e.err)
}

func (e *damagedError) Unwrap() error { return e.err }

// Explain puts a sentence a user can act on in front of an error of the cache at path
// that found the disk full or the file damaged (SQLite says only "database or disk is
// full (13)" or "database disk image is malformed (11)"); any other error, and one
// explained already, comes back as it is.
func Explain(path string, err error) error {
	var full *diskFullError
	var damaged *damagedError
	var named interface{ DiskFullPath() string } // another file's full disk (an export's), said already
	switch {
	case err == nil || errors.As(err, &full) || errors.As(err, &damaged) || errors.As(err, &named):
		return err
	case IsDiskFull(err):
		return &diskFullError{path: path, err: err}
	case IsDamaged(err):
		return &damagedError{path, err}
	}
	return err
}
