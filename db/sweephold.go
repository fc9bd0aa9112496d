package db

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A running sweep is held by the process that runs it: an exclusive lock (flock) on a
// file beside the cache, "<cache>.sweep-<id>.lock", taken when the sweep is recorded and
// given up when it ends. The kernel drops the lock when that process dies however it
// dies (SIGKILL, a crash, a power-off), so a sweep recorded as running whose file no
// process holds was interrupted: Sweeps reports it so (SweepInterrupted), and running
// the same sweep again continues it, measuring only what is missing.
//
// The file says which process holds it ("pid N"), so a second sweep of the same plan
// can name the one already running. A sweep that ends when the cache cannot record its
// end (the disk is full) writes how it ended into the file instead, over bytes the file
// already has, and leaves the file: Sweeps then reports that end, and the next sweep
// recorded writes it into the cache.

// SweepInterrupted is the state Sweeps reports for a sweep recorded as running that no
// live process holds: it was killed or crashed; the same sweep run again continues it.
const SweepInterrupted = "interrupted"

// lockFileSize is the length of a sweep's lock file, written when it is taken: an end
// written over it later needs no new space on the disk.
const lockFileSize = 512

// sweepLockPath is the lock file of sweep id of the cache at path.
func sweepLockPath(path string, id int64) string {
	return fmt.Sprintf("%s.sweep-%d.lock", path, id)
}

// holdSweep takes the lock of sweep id for this DB until releaseSweep or Close, and
// writes this process's id into it. A cache in a directory this user may not write
// cannot be held; its sweep then reads as interrupted once this process's own record of
// it is all there is, which is the truth for every other process.
func (d *DB) holdSweep(id int64) {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	if _, ok := d.holds[id]; ok {
		return
	}
	f, err := openLockFile(sweepLockPath(d.path, id), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return
	}
	_ = writeLockText(f, "pid "+strconv.Itoa(os.Getpid())+"\n")
	if d.holds == nil {
		d.holds = map[int64]*os.File{}
	}
	d.holds[id] = f
}

// writeLockText writes text at the start of a lock file, padded to lockFileSize.
func writeLockText(f *os.File, text string) error {
	b := bytes.Repeat([]byte{' '}, lockFileSize)
	copy(b, text)
	_, err := f.WriteAt(b, 0)
	return err
}

// releaseSweep gives up the lock of sweep id, if this DB holds it, and removes its file.
func (d *DB) releaseSweep(id int64) {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	if f, ok := d.holds[id]; ok {
		os.Remove(f.Name()) // while locked: no other process is between its open and its lock
		f.Close()
		delete(d.holds, id)
	}
}

// leaveSweepEnd writes into the lock file of sweep id, which this DB holds, how the
// sweep ended (state and why), and gives up the lock, keeping the file: the cache could
// not record the end. It reports whether the end was written.
func (d *DB) leaveSweepEnd(id int64, state, why string) bool {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	f, ok := d.holds[id]
	if !ok {
		return false
	}
	text := fmt.Sprintf("pid %d\nended %s %s\n", os.Getpid(), state, strings.ReplaceAll(why, "\n", " "))
	if len(text) > lockFileSize {
		text = text[:lockFileSize-1] + "\n"
	}
	err := writeLockText(f, text)
	f.Close()
	delete(d.holds, id)
	return err == nil
}

// releaseSweeps gives up every lock this DB holds.
func (d *DB) releaseSweeps() {
	d.holdMu.Lock()
	ids := make([]int64, 0, len(d.holds))
	for id := range d.holds {
		ids = append(ids, id)
	}
	d.holdMu.Unlock()
	for _, id := range ids {
		d.releaseSweep(id)
	}
}

// sweepHolder is what the lock file of a sweep says: whether a live process holds it
// and which (pid), or, for one no process holds, how it ended when the cache could not
// record it (state and why; "" when it was interrupted).
type sweepHolder struct {
	held       bool
	pid        int
	state, why string
}

// sweepHeld reads the lock file of sweep id: it opens it read-only (writing nothing, so a
// read-only cache can be asked) and tries a shared lock.
func (d *DB) sweepHeld(id int64) sweepHolder {
	f, err := openLockFile(sweepLockPath(d.path, id), os.O_RDONLY, 0)
	if err != nil {
		return sweepHolder{} // no file: no holder
	}
	defer f.Close()
	var h sweepHolder
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	h.held = errors.Is(err, syscall.EWOULDBLOCK)
	if err == nil {
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	b := make([]byte, lockFileSize)
	n, _ := f.ReadAt(b, 0)
	for _, line := range strings.Split(string(b[:n]), "\n") {
		line = strings.TrimSpace(line)
		if pid, ok := strings.CutPrefix(line, "pid "); ok {
			h.pid, _ = strconv.Atoi(pid)
		} else if end, ok := strings.CutPrefix(line, "ended "); ok && !h.held {
			h.state, h.why, _ = strings.Cut(end, " ")
		}
	}
	return h
}

// removeStaleSweepLocks removes the lock files of sweeps no process holds (left by
// processes that were killed), when a writing command records a new sweep.
func (d *DB) removeStaleSweepLocks() {
	files, _ := filepath.Glob(d.path + ".sweep-*.lock")
	for _, name := range files {
		f, err := openLockFile(name, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(name)
		}
		f.Close()
	}
}

// openLockFile opens a lock file beside the cache, a name cnntime chooses: never through
// a symbolic link planted there (its target would get this process's id written over
// it), never waiting on a named pipe, and only a regular file.
func openLockFile(name string, flags int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flags|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return f, nil
}
