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
func TestReadStopsEarlyOnAPipe(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	writer := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err != nil {
			writer <- nil
			return
		}
		w.WriteString("wrong,header\n1,2\n") // and never closes while Read runs
		writer <- w
	}()
	got := make(chan error, 1)
	go func() { _, err := Read(context.Background(), pipe, spec); got <- err }()
	select {
	case err := <-got:
		if err == nil || !strings.Contains(err.Error(), "lacks the columns") {
			t.Errorf("a wrong header on a pipe: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Read waited for the end of a pipe whose header was wrong")
	}
	if w := <-writer; w != nil {
		w.Close()
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err == nil {
			w.WriteString("a,b\n1,2\n")
			defer w.Close()
		}
		cancel(errors.New("terminated"))
		time.Sleep(time.Minute) // keeps the pipe open: only the context ends the read
	}()
	go func() { _, err := Read(ctx, pipe, spec); got <- err }()
	select {
	case err := <-got:
		if err == nil || !strings.Contains(err.Error(), "terminated") {
			t.Errorf("a read cancelled while it waits on a pipe: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Read went on waiting on a pipe after its context ended")
	}
}
