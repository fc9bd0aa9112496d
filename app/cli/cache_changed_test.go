package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"cnntime/db"
	"cnntime/gpu/cpu"
	"cnntime/predictor/hw"
)

// A sweep whose cache is deleted, or replaced by a restored backup, while it runs stops
// at its next measurement, exits 1 naming what happened, writes nothing to the file now
// at the path, and every measurement it reported is in the rescue it names. (Before, it
// went on to "sweep 1 done" with exit 0: after a delete every measurement was gone, and
// a restored backup read the sweep's pages as its own.)
func TestSweepStopsWhenItsCacheIsDeletedOrReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in a child process")
	}
	for _, change := range []string{"deleted", "replaced"} {
		t.Run(change, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "cache.db")
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			// Far more than the test waits for: it stops once its cache is gone.
			cmd := exec.Command(self, "--db", path, "sweep", "--device", "cpu", "--models", "resnet18,vgg11", "--input", "32", "--batches", "1-64", "--repeats", "2")
			cmd.Env = append(os.Environ(), superviseTestEnv+"=none")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			var seen map[string]time.Time
			for deadline := time.Now().Add(60 * time.Second); len(seen) < 3; time.Sleep(50 * time.Millisecond) {
				if _, err := os.Stat(path); err == nil {
					seen = measurementsByKey(t, path)
				}
				if time.Now().After(deadline) {
					t.Fatalf("the sweep stored only %d measurements in 60 s", len(seen))
				}
			}
			backupMachine := hw.Machine{ID: "user/backup", Provider: "user", Instance: "backup", GPUID: "t4", GPUCount: 1}
			if change == "deleted" {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else {
				backup := filepath.Join(dir, "backup.db")
				b, err := db.Open(backup)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.PutUserMachine(context.Background(), backupMachine); err != nil {
					t.Fatal(err)
				}
				b.Close()
				if err := os.Rename(backup, path); err != nil {
					t.Fatal(err)
				}
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err = <-waited:
			case <-time.After(120 * time.Second): // its plan takes far longer
				cmd.Process.Kill()
				<-waited
				t.Fatalf("the sweep went on measuring after its cache was %s; stdout %q", change, stdout.String())
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("the sweep ended with %v, want exit 1; stdout %q, stderr %q", err, stdout.String(), tail(stderr.String()))
			}
			rescue := filepath.Join(dir, "cache.rescued-1.db")
			what := map[string]string{"deleted": "was deleted", "replaced": "was replaced by another file"}[change]
			if !strings.Contains(stderr.String(), "cache "+path+" "+what) || !strings.Contains(stderr.String(), "saved in "+rescue) {
				t.Errorf("stderr %q: want it to say the cache %s and name %s", tail(stderr.String()), what, rescue)
			}
			m := regexp.MustCompile(`sweep \d+ failed: (\d+) of \d+ measured .*; the cache file was \w+.*: they are saved in (\S+)`).FindStringSubmatch(stdout.String())
			if m == nil || m[2] != rescue {
				t.Fatalf("stdout %q: want the failed sweep's count and the rescue %s", stdout.String(), rescue)
			}
			reported, _ := strconv.Atoi(m[1])
			saved := measurementsByKey(t, rescue)
			if len(saved) < reported || len(saved) < len(seen) {
				t.Errorf("the rescue holds %d measurements; the sweep reported %d and the test saw %d", len(saved), reported, len(seen))
			}
			for k := range seen {
				if _, ok := saved[k]; !ok {
					t.Errorf("measurement %s, in the cache before the %s, is not in the rescue", k, change)
				}
			}
			if change == "deleted" {
				if _, err := os.Stat(path); err == nil {
					t.Error("the sweep made the deleted cache again")
				}
				return
			}
			now, err := db.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer now.Close()
			if problems, err := now.Check(context.Background()); err != nil || len(problems) > 0 {
				t.Errorf("cache check of the restored backup: %v %v", problems, err)
			}
			if ms, err := now.Measurements(context.Background(), cpu.New().Device().Key, nil); err != nil || len(ms) != 0 {
				t.Errorf("the restored backup holds %d of the sweep's measurements (%v), want none", len(ms), err)
			}
			if ms, err := now.UserMachines(context.Background()); err != nil || len(ms) != 1 || ms[0].ID != backupMachine.ID {
				t.Errorf("the restored backup's machines: %v (%v), want its own", ms, err)
			}
		})
	}
}
