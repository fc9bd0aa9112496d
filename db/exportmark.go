package db

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"cnntime/db/heldtemp"
)

// An export in progress is marked beside the cache it reads, as a running sweep is: a
// file "<cache>.export-<random>.lock" that the exporting process holds (flock) and that
// says where the export goes and its temporary file. A finished or failed export
// removes it; a killed one leaves it unheld, so that `cache info` can name the partial
// file the dead export left (the user does not know its hidden name), and the next
// export from this cache clears the marks of dead exports (with their partial files,
// when no one holds them). A cache in a folder this user may not write gets no mark.

// InterruptedExport is an export from this cache whose process died: where it was
// going, and the partial file it left there.
type InterruptedExport struct {
	To      string `json:"to"`
	Partial string `json:"partial"`
}

// exportMark is what an export's mark file says.
type exportMark struct {
	PID  int    `json:"pid"`
	To   string `json:"to"`
	Temp string `json:"temp"`
}

// markExport marks an export to dest through the temporary file temp as running in
// this process; nil when the mark cannot be made.
func (d *DB) markExport(dest, temp string) *os.File {
	name := d.path + ".export-" + strconv.FormatUint(rand.Uint64(), 36) + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil
	}
	text, _ := json.Marshal(exportMark{PID: os.Getpid(), To: dest, Temp: temp})
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil || writeAll(f, append(text, '\n')) != nil {
		f.Close()
		os.Remove(name)
		return nil
	}
	return f
}

func writeAll(f *os.File, b []byte) error {
	_, err := f.WriteAt(b, 0)
	return err
}

// unmarkExport removes an export's mark (nil: none was made).
func (d *DB) unmarkExport(f *os.File) {
	if f != nil {
		os.Remove(f.Name()) // while locked
		f.Close()
	}
}

// deadExportMarks calls found for each export mark of this cache whose process died,
// with its file (open, and locked when lock) and what it says.
func (d *DB) deadExportMarks(lock bool, found func(f *os.File, m exportMark)) {
	names, _ := filepath.Glob(d.path + ".export-*.lock")
	for _, name := range names {
		flags, how := os.O_RDONLY, syscall.LOCK_SH
		if lock {
			flags, how = os.O_RDWR, syscall.LOCK_EX
		}
		f, err := openLockFile(name, flags, 0)
		if err != nil {
			continue
		}
		if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
			f.Close() // held: a live export's
			continue
		}
		var m exportMark
		b := make([]byte, 8192)
		n, _ := f.ReadAt(b, 0)
		if json.Unmarshal(b[:n], &m) == nil && m.Temp != "" {
			found(f, m)
		}
		f.Close()
	}
}

// InterruptedExports are the exports from this cache whose process died and whose
// partial file is still where they left it, no one holding it.
func (d *DB) InterruptedExports() []InterruptedExport {
	var out []InterruptedExport
	d.deadExportMarks(false, func(_ *os.File, m exportMark) {
		if heldtemp.IsStale(m.Temp) {
			out = append(out, InterruptedExport{To: m.To, Partial: m.Temp})
		}
	})
	return out
}

// removeDeadExportMarks removes the marks of this cache's dead exports, with the
// partial files they left that no one holds.
func (d *DB) removeDeadExportMarks() {
	d.deadExportMarks(true, func(f *os.File, m exportMark) {
		if _, err := os.Lstat(m.Temp); err == nil {
			heldtemp.RemoveIfStale(m.Temp, exportJournals...)
		}
		if _, err := os.Lstat(m.Temp); errors.Is(err, os.ErrNotExist) {
			os.Remove(f.Name()) // while locked
		}
	})
}
