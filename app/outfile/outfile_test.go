package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"cnntime/db/heldtemp"
)

func writeText(text string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}
}

// withUmask runs f with the process's umask set to mask.
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// A new file gets 0666 less the umask (os.CreateTemp's 0600 did not), a script 0777
// less it; a replaced file keeps its own permissions.
func TestWriteFollowsTheUmask(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		umask int
		perm  fs.FileMode
		want  fs.FileMode
	}{
		{0o022, 0o666, 0o644},
		{0o002, 0o666, 0o664},
		{0o077, 0o666, 0o600},
		{0o022, 0o777, 0o755},
	}
	for i, tc := range tests {
		path := filepath.Join(dir, "new"+strconv.Itoa(i)+".csv")
		withUmask(tc.umask, func() {
			if err := WriteMode(path, tc.perm, writeText("a,b\n")); err != nil {
				t.Fatal(err)
			}
		})
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != tc.want {
			t.Errorf("umask %03o, perm %03o: mode %v (err %v), want %v", tc.umask, tc.perm, st.Mode().Perm(), err, tc.want)
		}
	}

	kept := filepath.Join(dir, "kept.csv")
	if err := os.WriteFile(kept, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(kept, 0o640)
	withUmask(0o022, func() {
		if err := Write(kept, writeText("new")); err != nil {
			t.Fatal(err)
		}
	})
	if st, _ := os.Stat(kept); st.Mode().Perm() != 0o640 {
		t.Errorf("a replaced file's mode became %v, want its own 0640", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(kept); string(b) != "new" {
		t.Errorf("replaced file holds %q", b)
	}
}

// What is not a regular file is written where it is and keeps its type: a named pipe,
// a character device (/dev/null, and one made with mknod where this user may), a link
// to either, and this process's own descriptor through /dev/fd/N.
func TestWriteKeepsSpecialFiles(t *testing.T) {
	dir := t.TempDir()

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := Write(fifo, writeText("through the pipe\n")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe\n" {
		t.Errorf("the pipe's reader got %q", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe became %v", st.Mode())
	}

	devices := []string{"/dev/null"}
	null := filepath.Join(dir, "null")
	if syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3) == nil { // char 1,3: null
		devices = append(devices, null)
	}
	link := filepath.Join(dir, "link-to-null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	devices = append(devices, link)
	for _, dev := range devices {
		if err := Write(dev, writeText("x,y\n")); err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
		if st, err := os.Stat(dev); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("%s is now %v (err %v), want a character device", dev, st.Mode(), err)
		}
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link became %v", st.Mode())
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write("/dev/fd/"+strconv.Itoa(int(w.Fd())), writeText("to the descriptor\n")); err != nil {
		t.Fatal(err)
	}
	w.Close() // Write wrote through a duplicate: this is the last writer
	if b, _ := io.ReadAll(r); string(b) != "to the descriptor\n" {
		t.Errorf("the descriptor got %q", b)
	}
}

// A link to a regular file: the file it points to is replaced, the link stays. A
// dangling link is refused and its target not created.
func TestWriteThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.csv")
	os.WriteFile(real, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.csv")
	os.Symlink(real, link)
	if err := Write(link, writeText("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link became %v", st.Mode())
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's target holds %q", b)
	}

	dangling := filepath.Join(dir, "dangling.csv")
	missing := filepath.Join(dir, "elsewhere", "..", "missing.csv")
	os.Symlink(missing, dangling)
	err := Write(dangling, writeText("x"))
	if err == nil || !strings.Contains(err.Error(), "which does not exist") {
		t.Errorf("dangling link: err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.csv")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created (%v)", err)
	}
}

// What an export must not replace is refused, and is left as it was, with no
// temporary file beside it.
func TestWriteRefuses(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.db")
	os.WriteFile(cache, append([]byte(sqliteMagic), make([]byte, 84)...), 0o644)
	folder := filepath.Join(dir, "folder")
	os.Mkdir(folder, 0o755)
	readOnly := filepath.Join(dir, "read-only.csv")
	os.WriteFile(readOnly, []byte("keep"), 0o444)
	tests := []struct {
		path, want string
	}{
		{cache, "SQLite database"},
		{folder, "is a folder"},
		{filepath.Join(dir, "no", "such", "folder.csv"), "is the folder there and writable?"},
		{"", "no file name"},
	}
	if os.Geteuid() != 0 { // root may write any file
		tests = append(tests, struct{ path, want string }{readOnly, "read-only"})
	}
	for _, tc := range tests {
		err := Write(tc.path, writeText("x"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want one mentioning %q", tc.path, err, tc.want)
		}
		if err := Check(tc.path); err == nil && tc.path != filepath.Join(dir, "no", "such", "folder.csv") {
			t.Errorf("Check(%q) passed what Write refuses", tc.path)
		}
	}
	if b, _ := os.ReadFile(cache); string(b[:len(sqliteMagic)]) != sqliteMagic {
		t.Error("the cache was replaced")
	}

	// A write that fails leaves the old file and no temporary file.
	old := filepath.Join(dir, "old.csv")
	os.WriteFile(old, []byte("old"), 0o644)
	err := Write(old, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("out of ideas")
	})
	if err == nil || !strings.Contains(err.Error(), "out of ideas") {
		t.Errorf("err %v", err)
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Errorf("a failed write left %q", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

// A killed export leaves its temporary file; the next write to the same file removes
// it, and never the temporary file of a write still running (held by its process).
func TestWriteRemovesLeftoversOfDeadWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.csv")
	dead := filepath.Join(dir, ".results.csv.k1ll3d.tmp") // no process holds it
	if err := os.WriteFile(dead, []byte("half a CSV"), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := heldtemp.Create(path, 0o644) // a write in progress
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "a,b\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead write's %s: %v; want it removed", dead, err)
	}
	if _, err := os.Stat(live.Name); err != nil {
		t.Errorf("the live write's %s was removed: %v", live.Name, err)
	}
}
