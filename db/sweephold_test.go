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
	"syscall"
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

// A second sweep on the same device, of the same plan or another, is refused while a
// live process runs the first, naming it and its process; another device may run.
// Once the first is interrupted, the same sweep again continues it, and when that one
// is done it closes the interrupted one: cache info stops saying it was interrupted.
func TestSweepsOfOnePlanRunOneAtATime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	first, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(path) // another process, as far as locks go: its own open files
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	const plan = `{"models":["resnet18"],"batches":[1,2]}`
	running, err := first.CreateSweep(ctx, "cpu:box", plan, 10)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.CreateSweep(ctx, "cpu:box", plan, 10)
	want := fmt.Sprintf("sweep %d, of the same plan on cpu:box, is running in process %d", running, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a second sweep of the same plan: %v, want %q", err, want)
	}
	// Another plan on the same device is refused too (two sweeps on one device spoil each
	// other's timings), naming the running sweep, what it measures and how to stop it.
	_, err = other.CreateSweep(ctx, "cpu:box", `{"models":["vgg11"],"batches":[4]}`, 10)
	want = fmt.Sprintf("sweep %d, of another plan (resnet18 at 2 batch sizes from 1 to 2) on cpu:box, is running in process %d", running, os.Getpid())
	var busy *SweepRunningError
	if !errors.As(err, &busy) || busy.SamePlan || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), fmt.Sprintf("kill %d", os.Getpid())) {
		t.Errorf("a sweep of another plan on the same device: %v, want %q and how to stop it", err, want)
	}
	// Another device may run beside it.
	if id, err := other.CreateSweep(ctx, "cpu:other", plan, 1); err != nil {
		t.Errorf("the same plan on another device: %v", err)
	} else if err := other.UpdateSweep(ctx, id, SweepDone, 1); err != nil {
		t.Fatal(err)
	}

	// The first sweep's process dies: its sweep is interrupted; the same sweep again
	// continues it and, done, closes it.
	first.holdMu.Lock()
	for _, f := range first.holds {
		f.Close() // as a killed process's locks go: the file stays, no one holds it
	}
	first.holds = nil
	first.holdMu.Unlock()
	first.Close()
	info, err := other.Info(ctx)
	if err != nil || info.InterruptedSweeps != 1 {
		t.Fatalf("Info = %+v, %v; want 1 interrupted sweep", info, err)
	}
	again, err := other.CreateSweep(ctx, "cpu:box", plan, 4)
	if err != nil {
		t.Fatalf("the same sweep after the first was interrupted: %v", err)
	}
	if err := other.UpdateSweep(ctx, again, SweepDone, 4); err != nil {
		t.Fatal(err)
	}
	info, err = other.Info(ctx)
	if err != nil || info.InterruptedSweeps != 0 {
		t.Errorf("after the rerun finished: Info = %+v, %v; want no interrupted sweep", info, err)
	}
	sweeps, _ := other.Sweeps(ctx)
	for _, s := range sweeps {
		if s.ID == running && s.State != SweepDone {
			t.Errorf("the interrupted sweep the rerun continued is %q, want done", s.State)
		}
	}
}

// A sweep whose end the cache cannot record (the disk is full) leaves it in its lock
// file: Sweeps and Info say how it ended and why, not that its process died, and the
// next sweep recorded writes that end into the cache.
func TestSweepEndLeftInTheLockFile(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	id, err := d.CreateSweep(ctx, "cpu:box", "{}", 10)
	if err != nil {
		t.Fatal(err)
	}
	if !d.leaveSweepEnd(id, SweepFailed, "the disk holding the cache was full") {
		t.Fatal("the end was not written")
	}
	sweeps, err := d.Sweeps(ctx)
	if err != nil || len(sweeps) != 1 || sweeps[0].State != SweepFailed || sweeps[0].Note != "the disk holding the cache was full" {
		t.Fatalf("Sweeps = %+v, %v; want it failed because the disk was full", sweeps, err)
	}
	info, err := d.Info(ctx)
	wantNote := fmt.Sprintf("sweep %d of cpu:box failed: the disk holding the cache was full; running the same sweep again continues it", id)
	if err != nil || info.InterruptedSweeps != 0 || len(info.StoppedSweeps) != 1 || !strings.HasPrefix(info.StoppedSweeps[0], wantNote) {
		t.Errorf("Info = %+v, %v; want no interrupted sweep and %q", info, err, wantNote)
	}
	next, err := d.CreateSweep(ctx, "cpu:box", `{"models":["x"]}`, 1)
	if err != nil {
		t.Fatal(err)
	}
	var state string
	if err := d.sqldb().QueryRow(`SELECT state FROM sweeps WHERE id = ?`, id).Scan(&state); err != nil || state != SweepFailed {
		t.Errorf("the cache records the sweep as %q (%v), want failed", state, err)
	}
	if left, _ := filepath.Glob(d.path + ".sweep-*.lock"); len(left) != 1 || left[0] != sweepLockPath(d.path, next) {
		t.Errorf("lock files %q, want the running sweep's alone", left)
	}
}

// A sweep's lock file is a name cnntime chooses beside the cache: a symbolic link
// planted there is never written through (the sweep's "pid N" and 512 bytes went over
// its target), and a named pipe there never makes a command wait.
func TestSweepLockNeverFollowsALink(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	if err := os.Symlink(victim, sweepLockPath(path, 1)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(sweepLockPath(path, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := d.CreateSweep(ctx, "cpu:test", "{}", 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Sweeps(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target holds %q", b)
	}
}
