package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// superviseTestEnv makes this test binary act as cnntime's main: Supervise, then in the
// child the failure the variable names, or the command line.
const superviseTestEnv = "CNNTIME_TEST_SUPERVISE"

// supervisedTestMain is main's start under Supervise; the child fails as asked.
func supervisedTestMain() int {
	args := os.Args[1:]
	if code, ran := Supervise(args); ran {
		return code
	}
	switch os.Getenv(superviseTestEnv) {
	case "out-of-memory":
		// An address-space limit makes the allocator fail as a full machine does.
		syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 1 << 30, Max: 1 << 30})
		var keep [][]byte
		for {
			keep = append(keep, make([]byte, 64<<20))
			keep[len(keep)-1][0] = 1
		}
	case "panic":
		done := make(chan bool)
		go func() { // a panic on another goroutine than the command's: no recover reaches it
			var m map[string]int
			m["x"]++
			done <- true
		}()
		<-done
	case "killed":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	ctx, stop := SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM) // as main
	defer stop()
	return RunCLI(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// A command that runs out of memory, panics or is killed ends with a sentence and exit
// status 1, never the Go runtime's 2, which says the command line was wrong; the
// command line's own statuses pass through.
func TestSuperviseTurnsCrashesIntoStatusOne(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		failure  string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"out-of-memory", []string{"version"}, 1, "cnntime: internal error: the command ran out of memory: give it more memory"},
		{"out-of-memory", []string{"model", "import", "big.onnx"}, 1, "the command ran out of memory: the file it read needs more memory than this computer gave it"},
		{"out-of-memory", []string{"predict", "--model", "resnet50"}, 1, "the command ran out of memory: ask for fewer models, machines or batch sizes"},
		{"panic", []string{"version"}, 1, "cnntime: internal error: the command crashed (panic: assignment to entry in nil map"},
		{"killed", []string{"version"}, 1, "cnntime: the command was killed (SIGKILL) by another program or a person (kill -9), not for lack of memory"},
		{"none", []string{"version"}, 0, ""},
		{"none", []string{"predict", "--nodel", "x"}, 2, "flag provided but not defined: -nodel"},
	}
	for _, tc := range tests {
		t.Run(tc.failure+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(exe, tc.args...)
			cmd.Env = append(os.Environ(), superviseTestEnv+"="+tc.failure, "TMPDIR="+t.TempDir())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if exit, ok := err.(*exec.ExitError); ok {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("exit %d, stderr ending %q; want exit %d and %q", code, tail(stderr.String()), tc.wantCode, tc.wantErr)
			}
			if tc.wantCode == 1 && tc.failure != "killed" && !strings.Contains(stderr.String(), "Details: ") {
				t.Errorf("the crash report's file is not named: %q", tail(stderr.String()))
			}
			if tc.wantCode == 1 && (strings.Contains(stderr.String(), "goroutine ") || strings.Count(stderr.String(), "\n") > 1) {
				t.Errorf("stderr holds more than the one sentence (a goroutine dump?): %q", tail(stderr.String()))
			}
		})
	}
}

// tail is the last 300 bytes of s.
func tail(s string) string {
	if len(s) > 300 {
		return s[len(s)-300:]
	}
	return s
}

// A reader of standard output that stops early (cnntime predict … | head -1) ends the
// command quietly with status 0; it was "internal error: the command was stopped by
// signal broken pipe" and status 1.
func TestSuperviseEndsQuietlyOnABrokenPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(exe, "--db", dir+"/cache.db", "predict", "--model", "resnet18", "--machine", "aws/p3.2xlarge", "--batches", "1-1024", "--csv")
	cmd.Env = append(os.Environ(), superviseTestEnv+"=none", "TMPDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 10)
	if _, err := out.Read(line); err != nil {
		t.Fatal(err)
	}
	out.Close() // as head does after its line: the rest of 300 kB of CSV meets a closed pipe
	err = cmd.Wait()
	if err != nil || stderr.Len() > 0 {
		t.Errorf("exit %v, stderr %q; want status 0 and nothing said", err, stderr.String())
	}
}

// The filter of the child's standard error passes everything through as it comes (a
// progress bar's \r lines, a line that merely starts like a crash report's) and leaves
// out a crash report from its first line on, however the writes split it.
func TestCrashFilter(t *testing.T) {
	text := "sweep of resnet18\n\r[###...] 1/9\r[######] 9/9\npancake: not a panic\nruntime is not a crash either\n" +
		"runtime: out of memory: cannot allocate 4194304-byte block\nfatal error: out of memory\n\ngoroutine 1 [running]:\nmain.main()\n"
	want := text[:strings.Index(text, "runtime: out")]
	for _, size := range []int{1, 2, 3, 7, 64, len(text)} {
		var out bytes.Buffer
		f := &crashFilter{w: &out, atStart: true}
		for i := 0; i < len(text); i += size {
			f.Write([]byte(text[i:min(i+size, len(text))]))
		}
		f.flush()
		if out.String() != want {
			t.Errorf("writes of %d bytes: passed %q, want %q", size, out.String(), want)
		}
	}
	var out bytes.Buffer
	f := &crashFilter{w: &out, atStart: true}
	f.Write([]byte("cnntime sweep: done\npan"))
	f.flush()
	if out.String() != "cnntime sweep: done\npan" {
		t.Errorf("a last line that only began like a crash's was not passed: %q", out.String())
	}
}
