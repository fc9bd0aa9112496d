package outfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A name cnntime chooses itself (first-run.txt in a folder the user gave) is never
// written through a symbolic link planted there, nor opened when it is a named pipe
// (which would wait for a reader for ever): both are refused with the reason, and the
// link's target keeps its bytes. A regular file there is replaced.
func TestWriteFixedNeverFollowsALinkOrOpensAPipe(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("system file"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "first-run.txt")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "first-run.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	regular := filepath.Join(dir, "old.txt")
	os.WriteFile(regular, []byte("old"), 0o644)

	for _, c := range []struct {
		path string
		why  string
	}{{link, "is a symbolic link (to " + victim + ")"}, {pipe, "is a named pipe"}, {dir, "is a folder"}} {
		if err := WriteFixed(c.path, 0o666, writeText("report")); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("WriteFixed(%s): %v, want a refusal saying it %s", c.path, err, c.why)
		}
		if f, err := CreateFixed(c.path, 0o666); err == nil || !strings.Contains(err.Error(), c.why) {
			f.Close()
			t.Errorf("CreateFixed(%s): %v, want a refusal saying it %s", c.path, err, c.why)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "system file" {
		t.Errorf("the link's target holds %q", b)
	}
	if err := WriteFixed(regular, 0o666, writeText("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(regular); string(b) != "new" {
		t.Errorf("the regular file holds %q, want new", b)
	}
	f, err := CreateFixed(regular, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "log")
	f.Close()
	if b, _ := os.ReadFile(regular); string(b) != "log" {
		t.Errorf("after CreateFixed the file holds %q, want log", b)
	}
}
