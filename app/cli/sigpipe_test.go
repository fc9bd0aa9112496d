package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/db"
)

// `cnntime sweep … 2>&1 | head -1`: head leaves after the first line, and the sweep goes
// on to its end all the same, with exit status 0 (SIGPIPE ended cnntime with 141 and
// killed the sweep with it).
func TestSweepOutlivesItsOutputsReader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in a child process")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "c.db")
	line := strings.Join([]string{"'" + self + "'", "--db", "'" + cache + "'", "sweep", "--device", "cpu", "--models", "resnet18",
		"--input", "32", "--batches", "1-2", "--repeats", "1", "2>&1", "|", "head", "-1", ";", "echo", "status=${PIPESTATUS[0]}"}, " ")
	cmd := exec.Command(bash, "-c", line)
	cmd.Env = append(os.Environ(), superviseTestEnv+"=none")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "status=0") {
		t.Errorf("the pipeline printed %q: want cnntime's status 0", out)
	}
	d, err := db.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sweeps, err := d.Sweeps(context.Background())
	if err != nil || len(sweeps) != 1 || sweeps[0].State != db.SweepDone || sweeps[0].Done != sweeps[0].Total {
		t.Errorf("sweeps %+v (%v): want one sweep done to its end", sweeps, err)
	}
}
