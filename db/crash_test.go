package db

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cnntime/predictor/measure"
)

// The crash test re-executes the test binary as a child that writes to a cache until
// it is killed. These variables tell the child what to do.
const (
	crashChildDB  = "CNNTIME_DB_TEST_CRASH_CHILD_DB"
	crashChildRun = "CNNTIME_DB_TEST_CRASH_CHILD_RUN"
	crashDevice   = "cpu:crash-test"
	crashBatch    = 25 // measurements per transaction
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildDB); path != "" {
		os.Exit(crashChild(path, os.Getenv(crashChildRun)))
	}
	if path := os.Getenv(exportChildDB); path != "" {
		os.Exit(exportChild(path, os.Getenv(exportChildTo)))
	}
	if path := os.Getenv(stepChildDB); path != "" {
		os.Exit(stepChild(path))
	}
	if path := os.Getenv(sweepChildDB); path != "" {
		os.Exit(sweepChild(path))
	}
	if name := os.Getenv(unprivilegedChildEnv); name != "" {
		os.Exit(unprivilegedChildren[name]())
	}
	os.Exit(m.Run())
}

// crashMeasurement is measurement n of child run: its config names both, its time is
// derived from n so the parent can check the value, not only the key.
func crashMeasurement(run string, n int) measure.Measurement {
	return measure.Measurement{DeviceKey: crashDevice, ConfigKey: "crash/" + run, Batch: n + 1,
		Precision: measure.FP32, Phase: measure.Forward, MedianMS: float64(n) + 0.5, Repeats: 3,
		Status: measure.OK, At: time.Unix(0, int64(n)+1).UTC()}
}

// crashChild writes transactions of crashBatch measurements in a loop and, after each
// commit, prints "committed RUN FIRST COUNT" on stdout. It never returns on its own.
func crashChild(path, run string) int {
	d, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	for n := 0; ; n += crashBatch {
		ms := make([]measure.Measurement, crashBatch)
		for i := range ms {
			ms[i] = crashMeasurement(run, n+i)
		}
		if err := d.PutMeasurements(ctx, ms); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("committed %s %d %d\n", run, n, crashBatch) // os.Stdout is unbuffered
	}
}

func TestCommittedMeasurementsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("the kill test runs child processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	const kills = 24
	var path string
	var runs []string            // the runs that wrote to the file at path
	reported := map[string]int{} // measurements each run reported committed
	reportedTotal := 0
	for i := 0; i < kills; i++ {
		var earlyWithin time.Duration // 0: kill after the first commit
		switch {
		case i%6 == 0:
			// A new file, and a kill soon enough to stop the child while it may still be
			// creating the cache.
			path = filepath.Join(dir, fmt.Sprintf("crash-%d.db", i))
			runs = nil
			earlyWithin = 20 * time.Millisecond
		case i%3 == 0:
			earlyWithin = 60 * time.Millisecond
		}
		run := strconv.Itoa(i)
		runs = append(runs, run)
		reported[run] = killChildAtRandom(t, path, run, earlyWithin, rng)
		reportedTotal += reported[run]
		left := filesLeft(path)

		d, err := Open(path)
		if err != nil {
			t.Fatalf("kill %d: open after the kill: %v", i+1, err)
		}
		problems, err := d.Check(context.Background())
		if err != nil || len(problems) > 0 {
			d.Close()
			t.Fatalf("kill %d: check after the kill: %v %v", i+1, problems, err)
		}
		for _, r := range runs { // this run's commits, and every earlier run's on this file
			if err := checkCrashRun(d, r, reported[r]); err != nil {
				d.Close()
				t.Fatalf("kill %d: run %s: %v", i+1, r, err)
			}
		}
		d.Close()
		t.Logf("kill %d: the child left %s; %d measurements reported committed, all in the cache", i+1, left, reported[run])
	}
	if reportedTotal < kills*crashBatch {
		t.Errorf("only %d measurements were committed over %d kills: the kills came too early to test much", reportedTotal, kills)
	}
}

// filesLeft describes the database files at path: their sizes, or "no file".
func filesLeft(path string) string {
	var parts []string
	for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
		if info, err := os.Stat(path + suffix); err == nil {
			parts = append(parts, fmt.Sprintf("file%s %d B", suffix, info.Size()))
		}
	}
	if len(parts) == 0 {
		return "no file"
	}
	return strings.Join(parts, ", ")
}

// checkCrashRun checks that the cache holds every measurement child run reported
// committed, with its values, and only whole transactions of the run.
func checkCrashRun(d *DB, run string, reported int) error {
	ms, err := d.Measurements(context.Background(), crashDevice, []string{"crash/" + run})
	if err != nil {
		return err
	}
	if len(ms) < reported || len(ms)%crashBatch != 0 {
		return fmt.Errorf("the cache holds %d measurements of the run, the child reported %d committed (whole transactions of %d)",
			len(ms), reported, crashBatch)
	}
	for n := 0; n < reported; n++ {
		if want := crashMeasurement(run, n); ms[n] != want {
			return fmt.Errorf("measurement %d is %+v, want %+v", n, ms[n], want)
		}
	}
	return nil
}

// killChildAtRandom starts a writing child, SIGKILLs it at a random moment (any time
// within earlyWithin of its start, while it may still be opening the cache; with
// earlyWithin 0, after its first commit) and returns how many measurements it reported
// committed.
func killChildAtRandom(t *testing.T, path, run string, earlyWithin time.Duration, rng *rand.Rand) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildDB+"="+path, crashChildRun+"="+run)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reported := 0
	first := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r string
			var n, count int
			if _, err := fmt.Sscanf(sc.Text(), "committed %s %d %d", &r, &n, &count); err != nil || r != run {
				continue
			}
			mu.Lock()
			if reported == 0 {
				close(first)
			}
			reported = n + count
			mu.Unlock()
		}
	}()
	if earlyWithin > 0 {
		time.Sleep(time.Duration(rng.Int64N(int64(earlyWithin))))
	} else {
		select {
		case <-first:
		case <-done:
		case <-time.After(20 * time.Second):
			t.Log("the child has not committed in 20 s")
		}
		time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL
	<-done             // every line the child wrote before it died
	err = cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the child ended by itself (%v): %s", err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return reported
}
