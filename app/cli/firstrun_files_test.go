package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/app/firstrun"
)

// devices --first-run DIR never writes through a symbolic link planted at one of its
// fixed names (as root it overwrote any file the link named), nor waits on a named pipe
// there (it blocked for ever): it refuses at once with the reason, and writes nothing.
func TestFirstRunRefusesLinksAndPipesAtItsNames(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	victim := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(victim, []byte("root:x:0:0"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, why string
		plant     func(path string) error
	}{
		{firstrun.TextFile, "is a symbolic link (to " + victim + ")", func(p string) error { return os.Symlink(victim, p) }},
		{firstrun.JSONFile, "is a named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"pytorch.log", "is a symbolic link", func(p string) error { return os.Symlink(victim, p) }},
		{"quarantine.json", "is a symbolic link", func(p string) error { return os.Symlink(victim, p) }},
	} {
		dir := t.TempDir()
		if err := c.plant(filepath.Join(dir, c.name)); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() {
			var out, errOut bytes.Buffer
			code := RunCLI(context.Background(), []string{"--db", filepath.Join(t.TempDir(), "c.db"), "devices", "--first-run", dir}, nil, &out, &errOut)
			done <- strings.Join([]string{string(rune('0' + code)), errOut.String()}, " ")
		}()
		var got string
		select {
		case got = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the first run still waits on what is at %s", c.name, c.name)
		}
		if !strings.HasPrefix(got, "1 ") || !strings.Contains(got, filepath.Join(dir, c.name)+" "+c.why) || strings.Contains(got, "the report is in") {
			t.Errorf("%s: %q; want exit 1 saying it %s, and no report claimed", c.name, got, c.why)
		}
		if b, _ := os.ReadFile(victim); string(b) != "root:x:0:0" {
			t.Fatalf("%s: the link's target now holds %q", c.name, b)
		}
	}
}

// The first run says where its report is only for the files it wrote: on a full disk
// it wrote none, and said "the report is in …" all the same.
func TestFirstRunOnAFullDiskClaimsNoReport(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	disk := smallDisk(t)
	dir := filepath.Join(disk, "first-run")
	os.Mkdir(dir, 0o755)
	fill(t, disk)
	var out, errOut bytes.Buffer
	code := RunCLI(context.Background(), []string{"--db", filepath.Join(t.TempDir(), "c.db"), "devices", "--first-run", dir}, nil, &out, &errOut)
	if code == 0 || strings.Contains(errOut.String(), "the report is in") || !strings.Contains(errOut.String(), "the disk holding "+filepath.Join(dir, firstrun.JSONFile)+" is full") {
		t.Errorf("exit %d, stderr %q: want a failure naming the full disk and no report claimed", code, errOut.String())
	}
}
