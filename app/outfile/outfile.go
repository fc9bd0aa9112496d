package outfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cnntime/db/heldtemp"
)

// Write writes what write produces to the file at path (see the package comment): a
// regular file through a temporary file renamed into place, anything else that may be
// written in place. A new file gets permissions 0666 less the user's umask; a replaced
// one keeps its own. On error a regular file is left as it was. The error does not
// repeat path: callers say what they were writing ("export to PATH: …").
func Write(path string, write func(io.Writer) error) error {
	return WriteMode(path, 0o666, write)
}

// WriteMode is Write with perm, before the umask, for a new file: 0o777 for a script.
func WriteMode(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return explainFull(path, writeMode(path, perm, write))
}

func writeMode(path string, perm fs.FileMode, write func(io.Writer) error) error {
	t, err := resolve(path)
	if err != nil {
		return err
	}
	switch t.kind {
	case descriptor:
		return writeDescriptor(t.fd, write)
	case inPlace:
		return writeInPlace(t.path, t.info, write)
	}
	return writeAtomic(t.path, perm, t.info, write)
}

// Check says, without writing anything, why Write would refuse path (nil: it would
// write it), so a command can refuse before the work of making what it writes.
func Check(path string) error {
	_, err := resolve(path)
	return err
}

// kind is how a target is written.
type kind int

const (
	atomic     kind = iota // a regular file, new or existing: a temporary file renamed onto it
	inPlace                // a character device or a named pipe: opened and written
	descriptor             // /dev/stdout, /dev/fd/N: this process's open file N
)

// target is where Write puts the bytes.
type target struct {
	kind kind
	path string      // the file itself, past any symbolic links (atomic, inPlace)
	info fs.FileInfo // what is there now; nil for a new file
	fd   int         // descriptor
}

// resolve finds what path names and how it may be written, or why it may not.
func resolve(path string) (target, error) {
	if strings.TrimSpace(path) == "" {
		return target{}, errors.New("no file name given")
	}
	if fd, ok := ownDescriptor(path); ok {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return target{}, fmt.Errorf("this process has no open file %d (%v)", fd, err)
		}
		return target{kind: descriptor, fd: fd}, nil
	}
	li, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return target{kind: atomic, path: path}, nil
	case err != nil:
		return target{}, err
	}
	real, info := path, li
	if li.Mode()&fs.ModeSymlink != 0 {
		if info, err = os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			to, _ := os.Readlink(path)
			return target{}, fmt.Errorf("it is a symbolic link to %s, which does not exist: an export never creates a link's target; give the target's own path, or remove the link", to)
		} else if err != nil {
			return target{}, err
		}
		if info.Mode().IsRegular() {
			if real, err = filepath.EvalSymlinks(path); err != nil {
				return target{}, err
			}
		}
	}
	mode := info.Mode()
	switch {
	case mode.IsRegular():
		if err := replaceable(real); err != nil {
			return target{}, err
		}
		return target{kind: atomic, path: real, info: info}, nil
	case mode.IsDir():
		return target{}, errors.New("it is a folder: name a file in it")
	case mode&fs.ModeNamedPipe != 0, mode&fs.ModeCharDevice != 0:
		return target{kind: inPlace, path: path, info: info}, nil
	case mode&fs.ModeDevice != 0:
		return target{}, errors.New("it is a disk (a block device): an export is written to a file, a pipe or a terminal, never onto a disk")
	case mode&fs.ModeSocket != 0:
		return target{}, errors.New("it is a socket: an export is written to a file, a pipe or a terminal")
	}
	return target{}, fmt.Errorf("it is not a file an export can be written to (%v)", mode.Type())
}

// ownDescriptor reports whether path names one of this process's open files:
// /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N. Written through the
// descriptor, output redirected to a file (even with >>) lands where the shell put it.
func ownDescriptor(path string) (int, bool) {
	switch p := filepath.Clean(path); p {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	default:
		for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
			if n, ok := strings.CutPrefix(p, dir); ok {
				fd, err := strconv.Atoi(n)
				return fd, err == nil && fd >= 0
			}
		}
	}
	return 0, false
}

// sqliteMagic opens every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// replaceable refuses a regular file an export must not replace: an SQLite database (a
// cnntime cache: a mistyped --csv must not destroy the measurements) or a file the user
// may not write (renaming over it would bypass its permissions).
func replaceable(path string) error {
	f, err := os.Open(path)
	if err == nil {
		head := make([]byte, len(sqliteMagic))
		n, _ := io.ReadFull(f, head)
		f.Close()
		if bytes.Equal(head[:n], []byte(sqliteMagic)) {
			return errors.New("it is an SQLite database (a cnntime cache?): an export never replaces one; choose another file name")
		}
	}
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return errors.New("it is read-only: an export does not replace a file you may not write; choose another file name")
	}
	return nil
}

// writeAtomic writes a regular file through a temporary file in its folder, synced and
// renamed onto path: path holds the whole new file or what it held before. The
// temporary file is held by this process until then (heldtemp): the leftovers of
// writes to path whose process died are removed first, never a live write's file.
func writeAtomic(path string, perm fs.FileMode, old fs.FileInfo, write func(io.Writer) error) error {
	heldtemp.RemoveStale(path)
	held, err := heldtemp.Create(path, perm) // perm less the umask (os.CreateTemp's files are 0600 whatever the umask)
	if err != nil {
		return fmt.Errorf("%w (is the folder there and writable?)", err)
	}
	defer held.Release()
	defer os.Remove(held.Name) // after a successful rename there is nothing left to remove
	tmp, err := os.OpenFile(held.Name, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	if old != nil {
		// A replaced file keeps its permissions (the temporary file was made with the umask).
		if err := tmp.Chmod(old.Mode().Perm()); err != nil {
			tmp.Close()
			return err
		}
	}
	err = writeBuffered(tmp, write)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(held.Name, path)
}

// writeBuffered runs write on f through a buffer.
func writeBuffered(f *os.File, write func(io.Writer) error) error {
	w := bufio.NewWriterSize(f, 64<<10)
	if err := write(w); err != nil {
		return err
	}
	return w.Flush()
}

// writeInPlace writes a character device (a terminal, /dev/null) or a named pipe where
// it is: it keeps its type and its permissions.
func writeInPlace(path string, info fs.FileInfo, write func(io.Writer) error) error {
	f, err := openInPlace(path, info.Mode()&fs.ModeNamedPipe != 0)
	if err != nil {
		return err
	}
	err = writeBuffered(f, write)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openInPlace opens a device or a named pipe for writing. Opening a named pipe waits
// for a program to read it; the wait ends at SIGINT or SIGTERM (a blocked open(2)
// would ignore both).
func openInPlace(path string, pipe bool) (*os.File, error) {
	if !pipe {
		return os.OpenFile(path, os.O_WRONLY, 0)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if !errors.Is(err, syscall.ENXIO) { // ENXIO: no reader yet
			return f, err
		}
		select {
		case s := <-stop:
			return nil, fmt.Errorf("stopped (%v) while waiting for a program to read the named pipe", s)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writeDescriptor writes to this process's open file fd, through a duplicate so that
// closing it leaves fd open.
func writeDescriptor(fd int, write func(io.Writer) error) error {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return fmt.Errorf("open file %d: %w", fd, err)
	}
	f := os.NewFile(uintptr(dup), "/dev/fd/"+strconv.Itoa(fd))
	err = writeBuffered(f, write)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFixed writes what write produces to path, a name cnntime chooses itself (a
// report in a folder the user gave: first-run.txt), through a temporary file renamed
// into place. Unlike Write it never follows a symbolic link and never opens what is
// not a regular file: whatever is at path is replaced whole by the rename (a link
// planted there after CheckFixed, not its target), and a link, a named pipe, a device
// or a folder found there first is refused (CheckFixed says why). A new file gets perm
// less the umask.
func WriteFixed(path string, perm fs.FileMode, write func(io.Writer) error) error {
	if err := CheckFixed(path); err != nil {
		return err
	}
	return explainFull(path, writeAtomic(path, perm, nil, write))
}

// DiskFullError is a write of the file at Path that found its disk full. It says which
// disk: the file's, not the cache's (db.Explain leaves it as it is).
type DiskFullError struct {
	Path string
	Err  error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("the disk holding %s is full: it was not written; free some space there, or write it to another disk, then run it again (%v)", e.Path, e.Err)
}

func (e *DiskFullError) Unwrap() error { return e.Err }

// DiskFullPath is the file whose disk is full.
func (e *DiskFullError) DiskFullPath() string { return e.Path }

// explainFull makes err, a write of path, a *DiskFullError when the disk was full
// (ENOSPC, or the user's quota: EDQUOT).
func explainFull(path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &DiskFullError{Path: path, Err: err}
	}
	return err
}

// CheckFixed says why WriteFixed or CreateFixed would refuse path (nil: nothing is
// there, or a regular file they replace), without writing anything.
func CheckFixed(path string) error {
	li, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case li.Mode().IsRegular():
		return nil
	}
	what := "not a regular file"
	switch mode := li.Mode(); {
	case mode&fs.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		what = "a symbolic link (to " + to + ")"
	case mode.IsDir():
		what = "a folder"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case mode&fs.ModeDevice != 0:
		what = "a device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("%s is %s: cnntime writes a file of this name itself and never writes through a link or into what is not a regular file; remove it, or choose another folder", path, what)
}

// CreateFixed creates path, a name cnntime chooses itself, for writing as it goes (a
// log): a regular file there is removed first; a link, a named pipe, a device or a
// folder is refused (CheckFixed). The file is created exclusively, never through a
// link, so one planted in between makes it fail rather than write elsewhere.
func CreateFixed(path string, perm fs.FileMode) (*os.File, error) {
	if err := CheckFixed(path); err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
}
