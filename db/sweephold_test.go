package db

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sweepChildDB makes this test binary a child that records a running sweep in the
// cache it names, says "holding", and waits to be killed.
const sweepChildDB = "CNNTIME_DB_TEST_SWEEP_CHILD_DB"

func sweepChild(path string) int {
	d, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := d.CreateSweep(context.Background(), "cpu:child", "{}", 10); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("holding")
	select {}
}

// A sweep whose process was killed is reported interrupted once no live process holds
// it; while its process lives, or in the process itself, it is running; one that ended
// is as it was recorded.
func TestSweepsLeftRunningByADeadProcessAreInterrupted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), sweepChildDB+"="+path)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || strings.TrimSpace(line) != "holding" {
		t.Fatalf("the child said %q, %v", line, err)
	}
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	state := func() string {
		t.Helper()
		sweeps, err := d.Sweeps(ctx)
		if err != nil || len(sweeps) == 0 {
			t.Fatalf("Sweeps = %+v, %v", sweeps, err)
		}
		return sweeps[0].State
	}
	if got := state(); got != SweepRunning {
		t.Errorf("while its process lives the sweep is %q, want running", got)
	}
	child.Process.Kill() // SIGKILL: no chance to record anything
	child.Wait()
	if got := state(); got != SweepInterrupted {
		t.Errorf("after its process was killed the sweep is %q, want %q", got, SweepInterrupted)
	}

	// This process's own sweeps: running while held, as recorded once ended.
	id, err := d.CreateSweep(ctx, "cpu:here", "{}", 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := state(); got != SweepRunning {
		t.Errorf("a sweep this process runs is %q, want running", got)
	}
	if err := d.UpdateSweep(ctx, id, SweepDone, 4); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != SweepDone {
		t.Errorf("a finished sweep is %q, want done", got)
	}
	if left, _ := filepath.Glob(path + ".sweep-*.lock"); len(left) != 0 { // the killed sweep's went when this one started
		t.Errorf("lock files left after every sweep ended: %q", left)
	}
	sweeps, err := d.Sweeps(ctx)
	if err != nil || len(sweeps) != 2 || sweeps[1].State != SweepInterrupted {
		t.Errorf("Sweeps = %+v, %v; want the killed sweep still interrupted", sweeps, err)
	}
	if _, err := d.CreateSweep(ctx, "cpu:here", "{}", 4); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(path + ".sweep-*.lock"); len(left) != 1 {
		t.Errorf("lock files while a sweep runs: %q, want its own", left)
	}
}
