package infile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var spec = Spec{What: "test CSV", Max: 1 << 20, Start: CSVHeader("a", "b")}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	sparse := filepath.Join(dir, "nuls")
	f, _ := os.Create(sparse)
	f.Truncate(300 << 20) // 300 MB of NULs, on no disk
	f.Close()
	bigGood := filepath.Join(dir, "big.csv")
	f, _ = os.Create(bigGood)
	f.WriteString("a,b\n")
	f.Truncate(2 << 20)
	f.Close()
	for _, c := range []struct {
		path, want string
	}{
		{write("good.csv", "a,b,c\n1,2,3\n"), ""},
		{write("bom.csv", "\ufeffb , a\r\n1,2\r\n"), ""},
		{write("wrong.csv", "x,y\n1,2\n"), "its header lacks the columns a, b"},
		{sparse, "larger than 1 MB"}, // a regular file: its size says so before a byte is read
		{bigGood, "larger than 1 MB"},
		{"/dev/zero", "holds the control byte 0x00"},
		{dir, "it is a folder"},
		{filepath.Join(dir, "absent.csv"), "no such file"},
	} {
		data, err := Read(context.Background(), c.path, spec)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.path, err)
		case c.want == "" && len(data) == 0:
			t.Errorf("%s: nothing read", c.path)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	if _, err := Read(context.Background(), write("x.json", "  [1,2]"), Spec{What: "model", Max: 100, Start: JSONObject}); err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("a JSON array as a model: %v", err)
	}
}

// A pipe is read as far as its first line, checked, and refused without waiting for
// its end; a read waiting on a pipe stops when the context ends.
//
// The test holds the pipe's write end open with O_RDWR, which Linux opens at once:
// a writer that opened in a goroutine could be interrupted by a signal in its open
// (Go's preemption sends them) after the reader had seen it, and leave the reader an
// end of file before any line was written.
func TestReadStopsEarlyOnAPipe(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	hold := func(text string) *os.File { // a writer that never closes while Read runs
		w, err := os.OpenFile(pipe, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString(text); err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, tc := range []struct {
		name, text string
		cancel     bool
		want       string
	}{
		{"a wrong header on a pipe", "wrong,header\n1,2\n", false, "lacks the columns"},
		{"a read cancelled while it waits on a pipe", "a,b\n1,2\n", true, "terminated"},
	} {
		w := hold(tc.text)
		ctx, cancel := context.WithCancelCause(context.Background())
		got := make(chan error, 1)
		go func() { _, err := Read(ctx, pipe, spec); got <- err }()
		if tc.cancel { // most often once Read waits for more than the pipe holds
			time.AfterFunc(50*time.Millisecond, func() { cancel(errors.New("terminated")) })
		}
		select {
		case err := <-got:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: Read waited for the end of a pipe that never ends", tc.name)
		}
		cancel(nil)
		w.Close()
	}
}
