package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cnntime/db"
)

// smallDisk mounts a file system of its own (a 2 MB tmpfs) for a test to fill, or skips
// where this user may not mount one (it needs root).
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	os.Mkdir(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a small file system to fill (%v): needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill takes every free block of the file system at dir.
func fill(t *testing.T, dir string) {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, int64(fs.Bavail)*fs.Bsize))
	f.Close()
}

// A full disk is said as such, naming the disk that is full: the cache's when the cache
// is opened on it (SQLite said "disk I/O error (4874)": its log index could not grow),
// an export's own when the export is written to it (it blamed the cache's disk).
func TestAFullDiskIsNamed(t *testing.T) {
	disk := smallDisk(t)
	ctx := context.Background()
	run := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := RunCLI(ctx, args, nil, &out, &errOut)
		return code, errOut.String()
	}

	// A cache on the full disk.
	onFull := filepath.Join(disk, "cache.db")
	d, err := db.Open(onFull)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	// Exports from a cache elsewhere to the full disk.
	cache := filepath.Join(t.TempDir(), "cache.db")
	if d, err := db.Open(cache); err != nil {
		t.Fatal(err)
	} else {
		d.Close()
	}
	fill(t, disk)

	for _, c := range []struct {
		args []string
		full string // the disk the error must name
	}{
		{[]string{"--db", onFull, "machine", "add", "--name", "box", "--gpu", "t4", "--price", "1"}, "the disk holding " + onFull + " is full"},
		{[]string{"--db", onFull, "predict", "--model", "resnet18", "--gpu", "t4", "--batch", "32"}, "the disk holding " + onFull + " is full"},
		{[]string{"--db", cache, "cache", "export", filepath.Join(disk, "copy.db")}, "the disk holding " + filepath.Join(disk, "copy.db") + " is full"},
		{[]string{"--db", cache, "export", "--model", "resnet18", "--gpu", "t4", "--csv", filepath.Join(disk, "results.csv")}, "the disk holding " + filepath.Join(disk, "results.csv") + " is full"},
	} {
		code, errOut := run(c.args...)
		if code != 1 || !strings.Contains(errOut, c.full) {
			t.Errorf("%s: exit %d, %q; want exit 1 saying %q", strings.Join(c.args[2:], " "), code, errOut, c.full)
		}
		if !strings.Contains(c.full, onFull) && strings.Contains(errOut, cache) {
			t.Errorf("%s: %q blames the cache %s", strings.Join(c.args[2:], " "), errOut, cache)
		}
	}
}
