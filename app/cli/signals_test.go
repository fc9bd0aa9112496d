package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/db"
)

// SIGTERM or SIGINT while an import runs ends the command with the shell's status for
// the signal, 143 or 130 (it exited 1 with "context canceled"), naming the signal, and
// the cache keeps nothing of the import. The import reads a named pipe that the test
// keeps open, so the signal comes while it waits for more.
func TestSignalDuringAnImportExitsAsTheShellSays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{{syscall.SIGTERM, 143, "stopped by SIGTERM"}, {syscall.SIGINT, 130, "stopped by SIGINT"}} {
		dir := t.TempDir()
		pipe := filepath.Join(dir, "vms.csv")
		if err := syscall.Mkfifo(pipe, 0o600); err != nil {
			t.Fatal(err)
		}
		cache := filepath.Join(dir, "c.db")
		cmd := exec.Command(self, "--db", cache, "prices", "import", "--cloud", "aws", "--date", "2026-11-01", pipe)
		cmd.Env = append(os.Environ(), superviseTestEnv+"=none")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The open for writing returns once the import has opened the pipe to read it.
		w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n")
		cmd.Process.Signal(c.sig)
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err = <-waited:
		case <-time.After(60 * time.Second):
			w.Close()
			err = <-waited
			t.Errorf("%v: the import went on until the pipe ended", c.sig)
		}
		w.Close()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.code || !strings.Contains(stderr.String(), c.says) {
			t.Errorf("%v: %v, stderr %q; want exit %d saying %q", c.sig, err, stderr.String(), c.code, c.says)
		}
		if _, err := os.Stat(cache); err == nil {
			d, err := db.Open(cache)
			if err != nil {
				t.Fatal(err)
			}
			if cats, err := d.PriceCatalogs(context.Background()); err != nil || len(cats) != 0 {
				t.Errorf("%v: the cache holds %d clouds of prices after the stopped import (%v)", c.sig, len(cats), err)
			}
			d.Close()
		}
	}
}
