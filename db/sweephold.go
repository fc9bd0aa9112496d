package db

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// A running sweep is held by the process that runs it: an exclusive lock (flock) on a
// file beside the cache, "<cache>.sweep-<id>.lock", taken when the sweep is recorded and
// given up when it ends. The kernel drops the lock when that process dies however it
// dies (SIGKILL, a crash, a power-off), so a sweep recorded as running whose file no
// process holds was interrupted: Sweeps reports it so (SweepInterrupted), and running
// the same sweep again continues it, measuring only what is missing.

// SweepInterrupted is the state Sweeps reports for a sweep recorded as running that no
// live process holds: it was killed or crashed; the same sweep run again continues it.
const SweepInterrupted = "interrupted"

// sweepLockPath is the lock file of sweep id of the cache at path.
func sweepLockPath(path string, id int64) string {
	return fmt.Sprintf("%s.sweep-%d.lock", path, id)
}

// holdSweep takes the lock of sweep id for this DB until releaseSweep or Close. A cache
// in a directory this user may not write cannot be held; its sweep then reads as
// interrupted once this process's own record of it is all there is, which is the truth
// for every other process.
func (d *DB) holdSweep(id int64) {
	d.holdMu.Lock()
	defer d.holdMu.Unlock()
	if _, ok := d.holds[id]; ok {
		return
	}
	f, err := os.OpenFile(sweepLockPath(d.path, id), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return
	}
	if d.holds == nil {
		d.holds = map[int64]*os.File{}
	}
	d.holds[id] = f
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

// sweepHeld reports whether a live process holds sweep id: it opens the lock file
// read-only (writing nothing, so a read-only cache can be asked) and tries a shared lock.
func (d *DB) sweepHeld(id int64) bool {
	f, err := os.Open(sweepLockPath(d.path, id))
	if err != nil {
		return false // no file: no holder
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true
	}
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	}
	return false
}

// removeStaleSweepLocks removes the lock files of sweeps no process holds (left by
// processes that were killed), when a writing command records a new sweep.
func (d *DB) removeStaleSweepLocks() {
	files, _ := filepath.Glob(d.path + ".sweep-*.lock")
	for _, name := range files {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.Remove(name)
		}
		f.Close()
	}
}
