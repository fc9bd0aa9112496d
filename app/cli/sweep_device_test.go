package cli

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Two sweeps of the CPU into two caches (--db, a shard, a first-run folder) never
// measure at once: the second waits, saying for which process and cache, and measures
// once the first has ended. (Before, each ran at once and spoiled the other's timings:
// the lock was the cache's.)
func TestSweepsIntoTwoCachesTakeTheDeviceInTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two sweeps in child processes")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.db"), filepath.Join(dir, "second.db")
	sweep := func(path string) *exec.Cmd {
		cmd := exec.Command(self, "--db", path, "sweep", "--device", "cpu", "--models", "resnet18,vgg11", "--input", "32", "--batches", "1-64", "--repeats", "2")
		cmd.Env = append(os.Environ(), superviseTestEnv+"=none")
		return cmd
	}
	a := sweep(first)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Process.Kill()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(first); err == nil && len(measurementsByKey(t, first)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first sweep measured nothing in 60 s")
		}
	}

	b := sweep(second)
	stderr, err := b.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Process.Kill()
	said := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stderr)
		for {
			line, err := r.ReadString('\n')
			if strings.Contains(line, "waits for it to end") {
				said <- line
				io.Copy(io.Discard, r)
				return
			}
			if err != nil {
				close(said)
				return
			}
		}
	}()
	var line string
	select {
	case line = <-said:
	case <-time.After(60 * time.Second):
		t.Fatal("the second sweep did not say it waits for the first")
	}
	if !strings.Contains(line, "process ") || !strings.Contains(line, "into cache "+first) {
		t.Errorf("the second sweep said %q: want the first's process and cache", line)
	}
	if _, err := os.Stat(second); err == nil {
		if ms := measurementsByKey(t, second); len(ms) > 0 {
			t.Fatalf("the second sweep measured %d kernels while the first ran", len(ms))
		}
	}

	a.Process.Signal(syscall.SIGTERM) // the first ends; the second takes the CPU
	a.Wait()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if len(measurementsByKey(t, second)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second sweep measured nothing in 60 s after the first ended")
		}
	}
}
