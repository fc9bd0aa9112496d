package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// A cache is a file at a path, and an open DB holds that file: its connections read and
// write the file they opened. When another program deletes the file, moves it away or
// puts another file at its path (a backup restored with mv) while a DB holds it, the
// two part: new connections would open whatever is at the path now, while the open
// ones, and the write-ahead log they share by name, belong to the old file. SQLite
// cannot tell (https://www.sqlite.org/howtocorrupt.html, "unlinking or renaming a
// database file while in use"); mixing them corrupts the new file.
//
// So a DB remembers the identity (device and inode) of the file it opened, and checks
// it whenever a connection opens (a connection to another file is refused before it
// reads a byte) and around every write transaction, after the write lock is taken and
// after the commit. A change stops every later write with a *CacheChangedError; rows
// the DB committed to the old file are saved into a new cache beside the path (a
// "rescue", VACUUM INTO through a connection to the old file), so what a sweep
// reported measured stays in a cache. Reopen follows the new file (the window does).

// fileIdent is what makes a file itself, whatever its name: its device and inode.
type fileIdent struct{ dev, ino uint64 }

// identOf is the identity of the file at path (past symbolic links).
func identOf(path string) (fileIdent, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileIdent{}, err
	}
	return identOfInfo(fi), nil
}

func identOfInfo(fi fs.FileInfo) fileIdent {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileIdent{dev: uint64(st.Dev), ino: st.Ino}
	}
	return fileIdent{}
}

// CacheChangedError is a write (or a new connection) refused because the cache file an
// open DB holds is no longer at its path: deleted, moved away, or replaced by another
// file. Nothing was written to whatever is at the path now.
type CacheChangedError struct {
	Path string
	// What happened to the file: "deleted", "moved to PATH" or "replaced by another file".
	What string
	// Rescued is the new cache that holds everything the old file held, the rows this
	// DB wrote to it included; "" when there was nothing of this DB's to save or the
	// save failed (RescueErr).
	Rescued   string
	RescueErr error
	// Wrote is whether this DB had committed rows to the old file.
	Wrote bool
}

func (e *CacheChangedError) Error() string {
	s := fmt.Sprintf("cache %s was %s while this command had it open: nothing more was written to it", e.Path, e.What)
	switch {
	case e.Rescued != "":
		s += fmt.Sprintf("; what it held, with every row this command wrote, is saved in %s: merge it into a cache with 'cnntime cache import %s'", e.Rescued, e.Rescued)
	case e.RescueErr != nil:
		s += fmt.Sprintf("; the rows this command wrote to it could not be saved elsewhere (%v)", e.RescueErr)
	case strings.HasPrefix(e.What, "moved to "):
		s += "; what it held went with it"
	}
	return s + "; run the command again to use the cache at " + e.Path
}

// openFile is one cache file a DB holds and the connections to it.
type openFile struct {
	sql   *sql.DB
	ident fileIdent

	intactOnce sync.Once // the quick check before the first write (checkIntact)
	damage     string    // what it found

	wrote   atomic.Bool // a write was committed to this file
	lostMu  sync.Mutex
	lost    *CacheChangedError // set once the file is found changed
	settled bool               // rescue ran
}

// changed checks that the file at path is still f's; when it is not, it records and
// returns the *CacheChangedError (the first one found: later checks return it too).
func (f *openFile) changed(path string) *CacheChangedError {
	f.lostMu.Lock()
	defer f.lostMu.Unlock()
	if f.lost != nil {
		return f.lost
	}
	now, err := identOf(path)
	if err == nil && now == f.ident {
		return nil
	}
	what := "replaced by another file"
	if err != nil {
		what = "deleted"
		if to := movedTo(f.ident); to != "" {
			what = "moved to " + to
		}
	}
	f.lost = &CacheChangedError{Path: path, What: what, Wrote: f.wrote.Load()}
	return f.lost
}

// movedTo is where the file of identity id is now, found through this process's own
// open descriptors of it (Linux's /proc/self/fd); "" when it has no name any more or
// none can be found.
func movedTo(id fileIdent) string {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return ""
	}
	for _, fd := range fds {
		link := filepath.Join("/proc/self/fd", fd.Name())
		fi, err := os.Stat(link)
		if err != nil || !fi.Mode().IsRegular() || identOfInfo(fi) != id {
			continue
		}
		if to, err := os.Readlink(link); err == nil && !strings.HasSuffix(to, " (deleted)") {
			return to
		}
	}
	return ""
}

// identityConnector opens the connections of an openFile: each is refused, before it
// reads the file, when the path no longer leads to the file the DB holds.
type identityConnector struct {
	dsn  string
	path string
	file *openFile
	drv  driver.Driver
}

func (c *identityConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		if lost := c.file.changed(c.path); lost != nil {
			return nil, lost
		}
		return nil, err
	}
	if lost := c.file.changed(c.path); lost != nil {
		conn.Close()
		return nil, lost
	}
	return conn, nil
}

func (c *identityConnector) Driver() driver.Driver { return c.drv }

// sqliteDriver is the registered "sqlite" driver.
var sqliteDriver = sync.OnceValue(func() driver.Driver {
	db, _ := sql.Open("sqlite", "")
	return db.Driver()
})

// openPool opens the connections to the cache file at abs, which exists, for f; the
// connections open it read-write without ever creating it (a deleted cache is not
// recreated empty by the next connection).
func openPool(abs string, f *openFile) {
	f.sql = sql.OpenDB(&identityConnector{dsn: poolDSN(abs), path: abs, file: f, drv: sqliteDriver()})
}

// checkSame checks, with a connection to f open (in a write transaction, or just after
// its commit), that f is still the file at the path; when it is not, the rows this DB
// wrote to it are rescued through conn and the error says where.
func (d *DB) checkSame(ctx context.Context, f *openFile, conn *sql.Conn) error {
	lost := f.changed(d.path)
	if lost == nil {
		return nil
	}
	if conn != nil {
		d.rescue(ctx, f, conn)
	}
	return lost
}

// rescue saves, once, what the file f held into a new cache beside the path, through
// conn (a connection to f), when this DB wrote to f, and records where in f.lost. Then
// it folds f's write-ahead log into f and empties it: the log keeps the cache's name,
// and a program that opens the file now at the path (a restored backup, a new cache)
// would otherwise read the old file's pages in it as its own. A moved file needs no
// rescue: it is the cache, under its new name, and its log goes into it.
func (d *DB) rescue(ctx context.Context, f *openFile, conn *sql.Conn) {
	f.lostMu.Lock()
	defer f.lostMu.Unlock()
	lost := f.lost
	if lost == nil || f.settled {
		return
	}
	f.settled = true
	ctx = context.WithoutCancel(ctx)
	defer conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	if !f.wrote.Load() || strings.HasPrefix(lost.What, "moved to ") {
		return
	}
	lost.Wrote = true
	to, err := rescuePath(d.path)
	if err == nil {
		// Not in a transaction (VACUUM refuses one): conn's is rolled back or committed.
		if _, err = conn.ExecContext(ctx, "VACUUM INTO ?", to); err != nil {
			os.Remove(to)
		}
	}
	if err != nil {
		lost.RescueErr = Explain(filepath.Dir(d.path), err)
		return
	}
	lost.Rescued = to
}

// rescuePath is a new file name beside the cache at path for a rescue: "NAME.rescued-N.EXT".
func rescuePath(path string) (string, error) {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	for n := 1; n < 1000; n++ {
		p := stem + ".rescued-" + strconv.Itoa(n) + ext
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no free name %s.rescued-N%s beside the cache", stem, ext)
}

// Changed reports, without writing anything, whether the cache file this DB holds is
// still at its path; a *CacheChangedError when it is not (see Reopen).
func (d *DB) Changed() error {
	if lost := d.current().changed(d.path); lost != nil {
		return lost
	}
	return nil
}

// Reopen follows a cache file that was replaced at the DB's path, or created there again
// after it was deleted (the window does when it sees the file change): it saves what
// this DB wrote to the old file (see CacheChangedError), closes the old file's
// connections and opens the new file, checked and migrated as Open does. It reports
// whether it reopened: false, with no error, when the file at the path is still the
// DB's, or there is none yet (writes fail until there is).
func (d *DB) Reopen(ctx context.Context) (bool, error) {
	d.reopenMu.Lock()
	defer d.reopenMu.Unlock()
	old := d.current()
	lost := old.changed(d.path)
	if lost == nil {
		return false, nil
	}
	if _, err := os.Stat(d.path); err != nil {
		return false, nil
	}
	if old.wrote.Load() {
		if conn, err := old.sql.Conn(ctx); err == nil {
			d.rescue(ctx, old, conn)
			conn.Close()
		}
	}
	if err := checkExistingFile(d.path); err != nil {
		return false, err
	}
	d.releaseSweeps()
	// The old file's connections close first: the last one folds the log the two
	// files' names share into the old file and removes it, so the new file is read
	// without it.
	old.sql.Close()
	var f *openFile
	if d.readOnly { // read as Open read it: without writing in or beside it
		ro, err := openReadOnly(d.path)
		if err != nil {
			return false, err
		}
		f = ro.current()
	} else {
		var err error
		if f, err = d.openFile(ctx); err != nil {
			return false, err
		}
	}
	d.file.Store(f)
	return true, nil
}
