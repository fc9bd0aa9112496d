package db

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/predictor/measure"
)

// A cache deleted, moved away or replaced by another file (a backup restored with mv)
// while another process writes to it: the writer stops at its next write with an error
// that says what happened, writes nothing to the file now at the path, and every row it
// reported committed is in a cache (the rescue beside the path, or the moved file).
func TestWriterStopsWhenItsCacheIsDeletedMovedOrReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	cases := []struct {
		name   string
		change func(t *testing.T, path, dir string) (movedTo string)
		says   string
	}{
		{"deleted", func(t *testing.T, path, dir string) string {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			return ""
		}, "was deleted"},
		{"moved", func(t *testing.T, path, dir string) string {
			to := filepath.Join(dir, "moved.db")
			if err := os.Rename(path, to); err != nil {
				t.Fatal(err)
			}
			return to
		}, "was moved to " + "MOVED"},
		{"replaced", func(t *testing.T, path, dir string) string {
			backup := filepath.Join(dir, "backup.db")
			b, err := Open(backup)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.PutMeasurements(context.Background(), []measure.Measurement{backupRow}); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(backup, path); err != nil { // restore the backup, as mv does
				t.Fatal(err)
			}
			return ""
		}, "was replaced by another file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "cache.db")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), stepChildDB+"="+path)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			sc := bufio.NewScanner(out)
			reported := 0
			write := func() bool { // one transaction; whether the child reported it committed
				fmt.Fprintln(in, "write")
				if !sc.Scan() {
					return false
				}
				var r string
				var n, count int
				if _, err := fmt.Sscanf(sc.Text(), "committed %s %d %d", &r, &n, &count); err != nil {
					t.Fatalf("the child said %q", sc.Text())
				}
				reported = n + count
				return true
			}
			for i := 0; i < 3; i++ {
				if !write() {
					t.Fatalf("the child stopped before its third commit: %s", stderr.String())
				}
			}
			movedTo := c.change(t, path, dir)
			if write() {
				t.Fatalf("the writer committed a transaction after its cache was %s", c.name)
			}
			in.Close()
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("the writer ended with %v, want exit status 1; stderr: %s", err, stderr.String())
			}
			says := strings.Replace(c.says, "MOVED", movedTo, 1)
			if !strings.Contains(stderr.String(), "cache "+path+" "+says) {
				t.Errorf("the writer said %q, want it to say the cache %s", stderr.String(), says)
			}

			// Where the rows went: the rescue, or the moved file.
			holder := movedTo
			if holder == "" {
				holder = filepath.Join(dir, "cache.rescued-1.db")
				if !strings.Contains(stderr.String(), "saved in "+holder) {
					t.Errorf("the writer did not name the rescue %s: %s", holder, stderr.String())
				}
			}
			d, err := Open(holder)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkCrashRun(d, "r", reported); err != nil {
				t.Errorf("%s: %v", holder, err)
			}
			d.Close()
			if movedTo != "" {
				if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
					t.Errorf("the moved cache's log was left under the old name, %s-wal (%d B)", path, fi.Size())
				}
			}
			if c.name == "deleted" {
				if _, err := os.Stat(path); err == nil {
					t.Error("the writer made the deleted cache again")
				}
			}

			// The file at the path now got nothing of the writer's.
			if c.name == "replaced" {
				now, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer now.Close()
				if problems, err := now.Check(context.Background()); err != nil || len(problems) > 0 {
					t.Fatalf("the restored backup is damaged: %v %v", problems, err)
				}
				if ms, err := now.Measurements(context.Background(), crashDevice, []string{"crash/r"}); err != nil || len(ms) != 0 {
					t.Errorf("the restored backup holds %d of the writer's rows (%v), want none", len(ms), err)
				}
				if ms, err := now.Measurements(context.Background(), backupRow.DeviceKey, []string{backupRow.ConfigKey}); err != nil || len(ms) != 1 {
					t.Errorf("the restored backup lost its own row: %d rows (%v)", len(ms), err)
				}
			}
		})
	}
}

// stepChildDB tells the test binary to run stepChild on the cache it names.
const stepChildDB = "CNNTIME_DB_TEST_STEP_CHILD_DB"

// stepChild writes one transaction of crashBatch measurements (crashMeasurement, run
// "r") for each line it reads, and prints "committed r FIRST COUNT" after each commit;
// the first failed write is printed on stderr and ends it with status 1.
func stepChild(path string) int {
	d, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sc := bufio.NewScanner(os.Stdin)
	for n := 0; sc.Scan(); n += crashBatch {
		ms := make([]measure.Measurement, crashBatch)
		for i := range ms {
			ms[i] = crashMeasurement("r", n+i)
		}
		if err := d.PutMeasurements(context.Background(), ms); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("committed r %d %d\n", n, crashBatch)
	}
	return 0
}

// backupRow is the one row of the backup that replaces a cache in the tests.
var backupRow = measure.Measurement{DeviceKey: "cpu:backup", ConfigKey: "backup/1", Batch: 1, Precision: measure.FP32,
	Phase: measure.Forward, MedianMS: 1.5, Repeats: 3, Status: measure.OK}

// A DB that only read its cache before it was replaced writes nothing to either file,
// says so, and, reopened, follows the new file; one that wrote gets its rows rescued.
func TestReopenFollowsAReplacedCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mine := crashMeasurement("mine", 0)
	if err := d.PutMeasurements(ctx, []measure.Measurement{mine}); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.Reopen(ctx); ok || err != nil {
		t.Fatalf("Reopen of an unchanged cache = %v, %v; want false, nil", ok, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	var changed *CacheChangedError
	if err := d.PutMeasurements(ctx, []measure.Measurement{crashMeasurement("mine", 1)}); !errors.As(err, &changed) || changed.What != "deleted" {
		t.Fatalf("a write after the delete: %v, want a CacheChangedError saying deleted", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a write after the delete created the cache again")
	}
	if ok, err := d.Reopen(ctx); ok || err != nil {
		t.Fatalf("Reopen with no file = %v, %v; want false, nil", ok, err)
	}
	other, err := Open(path) // another program makes a new cache there
	if err != nil {
		t.Fatal(err)
	}
	if err := other.PutMeasurements(ctx, []measure.Measurement{backupRow}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	if ok, err := d.Reopen(ctx); !ok || err != nil {
		t.Fatalf("Reopen of a recreated cache = %v, %v; want true, nil", ok, err)
	}
	if ms, err := d.Measurements(ctx, backupRow.DeviceKey, []string{backupRow.ConfigKey}); err != nil || len(ms) != 1 {
		t.Errorf("after Reopen the DB reads %d rows of the new file (%v), want 1", len(ms), err)
	}
	if err := d.PutMeasurements(ctx, []measure.Measurement{crashMeasurement("again", 0)}); err != nil {
		t.Errorf("a write after Reopen: %v", err)
	}
	rescued, err := Open(filepath.Join(dir, "cache.rescued-1.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer rescued.Close()
	if ms, err := rescued.Measurements(ctx, crashDevice, []string{"crash/mine"}); err != nil || len(ms) != 1 || ms[0] != mine {
		t.Errorf("the rescue holds %v (%v), want the row written before the delete", ms, err)
	}
}
