package heldtemp

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// File is a temporary file this process holds: Name is its path. Release gives it up
// once it has been renamed into place or removed.
type File struct {
	Name string
	held *os.File
}

// Create creates a new, empty temporary file beside dest, named after it, with perm
// less the umask, and holds it until Release.
func Create(dest string, perm fs.FileMode) (*File, error) {
	for {
		name := nameFor(dest)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			os.Remove(name)
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		// A cleaner may have taken the file between its creation and the lock: the name
		// must still lead to the file held.
		held, herr := f.Stat()
		now, nerr := os.Stat(name)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return &File{Name: name, held: f}, nil
		}
		f.Close()
	}
}

// Release gives up the file's lock; call it after the file was renamed or removed.
func (f *File) Release() {
	if f != nil && f.held != nil {
		f.held.Close() // closing the descriptor drops the lock
		f.held = nil
	}
}

// nameFor is a new temporary name beside dest: ".NAME.<random>.tmp".
func nameFor(dest string) string {
	dir, base := filepath.Split(dest)
	if len(base) > 200 {
		base = base[:200] // the name must stay within a file name's 255 bytes
	}
	return filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
}

// candidates are the files beside dest named as its temporary files are.
func candidates(dest string) []string {
	dir, base := filepath.Split(dest)
	if len(base) > 200 {
		base = base[:200]
	}
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		mid, ok := strings.CutPrefix(e.Name(), "."+base+".")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		mid, ok = strings.CutSuffix(mid, ".tmp")
		if !ok || mid == "" || strings.Trim(mid, "0123456789abcdefghijklmnopqrstuvwxyz") != "" {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// IsStale reports whether the file at name is a temporary file no process holds (its
// writer died), without changing anything.
func IsStale(name string) bool {
	f, ok := lockUnheld(name)
	if !ok {
		return false
	}
	defer f.Close()
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// lockUnheld opens the file at name and takes its lock when no process holds it (its
// writer died); false, with nothing left open, when it is held or cannot be opened.
func lockUnheld(name string) (*os.File, bool) {
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false // held: a live writer's
	}
	return f, true
}

// Stale lists the temporary files beside dest that no process holds: what writers
// that died left.
func Stale(dest string) []string {
	var out []string
	for _, name := range candidates(dest) {
		if IsStale(name) {
			out = append(out, name)
		}
	}
	return out
}

// RemoveStale removes the temporary files beside dest that no process holds, each
// with the files named after it with suffixes (an SQLite journal: "-journal", "-wal",
// "-shm"), and returns the ones it removed.
func RemoveStale(dest string, suffixes ...string) []string {
	var out []string
	for _, name := range candidates(dest) {
		if RemoveIfStale(name, suffixes...) {
			out = append(out, name)
		}
	}
	return out
}

// RemoveIfStale removes the temporary file at name, with the files named after it
// with suffixes, if no process holds it, and reports whether it did.
func RemoveIfStale(name string, suffixes ...string) bool {
	f, ok := lockUnheld(name)
	if !ok {
		return false
	}
	defer f.Close()
	// Removed while locked: a writer that created it and locks it now finds its name
	// gone and makes another.
	if os.Remove(name) != nil {
		return false
	}
	for _, s := range suffixes {
		os.Remove(name + s)
	}
	return true
}
