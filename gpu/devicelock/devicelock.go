package devicelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cnntime/predictor/measure"
)

// Lock is a device's lock, held until Release.
type Lock struct{ f *os.File }

// Holder is what a device's lock file says of the sweep that holds it.
type Holder struct {
	PID   int
	Cache string
}

func (h Holder) String() string {
	who := "another process"
	if h.PID > 0 {
		who = "process " + strconv.Itoa(h.PID)
	}
	if h.Cache != "" {
		who += ", into cache " + h.Cache
	}
	return who
}

// pollEvery is how often a waiting sweep tries the lock again.
const pollEvery = 250 * time.Millisecond

// Acquire takes the lock of dev for a sweep into cache, waiting while another sweep
// holds it: waiting is called once, with that sweep's holder, when it has to wait.
// It returns when the lock is taken, or with ctx's error when ctx ends first.
func Acquire(ctx context.Context, dev measure.Device, cache string, waiting func(Holder)) (*Lock, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName(dev))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock of device %s, %s: %w", dev.Key, path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("the lock of device %s, %s, is not a regular file: remove it", dev.Key, path)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock device %s (%s): %w", dev.Key, path, err)
		}
		if !told && waiting != nil {
			waiting(readHolder(f))
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	text := fmt.Sprintf("pid %d\ncache %s\n", os.Getpid(), strings.ReplaceAll(cache, "\n", " "))
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(text), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close() // closing the descriptor drops the lock; the file stays for the next sweep
		l.f = nil
	}
}

// readHolder reads what the lock file f says of its holder.
func readHolder(f *os.File) Holder {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	var h Holder
	for _, line := range strings.Split(string(b[:n]), "\n") {
		if pid, ok := strings.CutPrefix(line, "pid "); ok {
			h.PID, _ = strconv.Atoi(pid)
		} else if c, ok := strings.CutPrefix(line, "cache "); ok {
			h.Cache = c
		}
	}
	return h
}

// FileName is the name of dev's lock file: its GPU's UUID, or "cpu" for this
// computer's processor (all its cores are one device).
func FileName(dev measure.Device) string {
	id := dev.UUID
	switch {
	case dev.Backend == "cpu":
		return "cpu.lock"
	case id == "":
		id = dev.Key
	}
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return "gpu-" + b.String() + ".lock"
}

// Dir is the folder of the device locks: $XDG_RUNTIME_DIR/cnntime, else cnntime-UID in
// the system's temporary folder; made when missing, this user's own and no one
// else's (a folder another user made, or a symbolic link, is refused).
func Dir() (string, error) {
	dir := filepath.Join(os.TempDir(), "cnntime-"+strconv.Itoa(os.Getuid()))
	if run := os.Getenv("XDG_RUNTIME_DIR"); run != "" {
		if fi, err := os.Stat(run); err == nil && fi.IsDir() {
			dir = filepath.Join(run, "cnntime")
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("make the folder of the device locks %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("the folder of the device locks %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || (ok && int(st.Uid) != os.Getuid()) || fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("the folder of the device locks %s is not a folder of yours that only you may write: remove it, and the next sweep makes it again", dir)
	}
	return dir, nil
}
