package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cnntime/gpu/lifeline"
)

// A command runs in a child process of the same binary, watched by its parent, so that
// a failure the Go runtime cannot return as an error still ends in a sentence and exit
// status 1, never 2, which says the command line was wrong: running out of memory
// ("fatal error: out of memory" exits 2), a panic on any goroutine, or the kernel's
// out-of-memory killer (SIGKILL). The child writes such a crash's report to a pipe
// (debug.SetCrashOutput) as well as to stderr; the parent saves it to a file and says
// where. Standard input and output are the child's own; its standard error passes
// through the parent as it comes, up to a crash report, which is left out (hundreds of
// lines of goroutine stacks: the file has them). The child dies with its parent
// (lifeline.Tie).

// supervisedEnv marks the child process: it runs the command itself.
const supervisedEnv = "CNNTIME_SUPERVISED"

// crashFD is the child's file descriptor of the crash pipe (the first of ExtraFiles).
const crashFD = 3

// maxCrashReport bounds the crash report the parent keeps (a runtime crash lists every
// goroutine).
const maxCrashReport = 4 << 20

// Supervise runs the command args in a child process and returns its exit status, with
// ran true. In the child itself (or where no child can be started) it returns ran
// false, having set the child's crash output: the caller then runs the command.
func Supervise(args []string) (code int, ran bool) {
	if os.Getenv(supervisedEnv) == "1" {
		if f := os.NewFile(crashFD, "crash-report"); f != nil {
			_ = debug.SetCrashOutput(f, debug.CrashOptions{}) // a stale descriptor: crash reports go to stderr only
			f.Close()                                         // SetCrashOutput keeps its own copy
		}
		return 0, false
	}
	lifeline.Forget() // this process runs on its own, whoever started whatever started it
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	report, writer, err := os.Pipe()
	if err != nil {
		return 0, false
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		report.Close()
		writer.Close()
		return 0, false
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, stderrW
	cmd.Env = append(os.Environ(), supervisedEnv+"=1")
	cmd.ExtraFiles = []*os.File{writer}
	// The child dies with this process: a kill -9 of cnntime leaves no command running
	// on (a sweep measuring, an import committing) that no one waits for.
	lifeline.Tie(cmd)
	// A signal to the parent (a job scheduler's SIGTERM, Ctrl-C) is passed on: the child
	// stops as the command does when it is signalled itself.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	// Standard error's reader may stop reading (cnntime sweep … 2>&1 | head -1): the
	// child's lines then go nowhere, and this process goes on watching it. Uncaught,
	// SIGPIPE on a write to fd 2 ended this process, and the child with it (exit 141,
	// the sweep killed half-way).
	brokenPipe := make(chan os.Signal, 1)
	signal.Notify(brokenPipe, syscall.SIGPIPE)
	defer signal.Stop(brokenPipe)
	oomBefore, oomKnown := oomKills()
	if err := cmd.Start(); err != nil {
		report.Close()
		writer.Close()
		stderr.Close()
		stderrW.Close()
		return 0, false
	}
	writer.Close()
	stderrW.Close()
	passed := make(chan struct{})
	filter := &crashFilter{w: os.Stderr, atStart: true}
	go func() {
		io.Copy(filter, stderr)
		close(passed)
	}()
	crash := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(report, maxCrashReport))
		io.Copy(io.Discard, report) // the rest, so the child never blocks on a full pipe
		report.Close()
		crash <- b
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	for done := false; !done; {
		select {
		case s := <-signals:
			cmd.Process.Signal(s) // a terminal's Ctrl-C reaches the child twice: it stops once
		case werr = <-waited:
			done = true
		}
	}
	select { // what the child wrote last, before the parent speaks
	case <-passed:
	case <-time.After(2 * time.Second): // a grandchild holds the pipe open
	}
	filter.flush()
	stderr.Close()
	oomAfter, known := oomKills()
	killedBy := killerUnknown
	switch {
	case oomKnown && known && oomAfter > oomBefore:
		killedBy = killerOOM
	case oomKnown && known:
		killedBy = killerOther
	}
	return childStatus(werr, <-crash, memoryAdvice(args), killedBy, os.Stderr), true
}

// What killed a child that SIGKILL ended, as the out-of-memory killer's count tells.
type killer int

const (
	killerUnknown killer = iota // the count could not be read
	killerOOM                   // the out-of-memory killer killed a process meanwhile
	killerOther                 // it did not: a person or a program (kill -9)
)

// oomKills counts the processes the kernel's out-of-memory killer killed: in this
// process's memory cgroup where it says (cgroup v2's memory.events, v1's
// memory.oom_control), else on the machine (/proc/vmstat); false when none can be read.
func oomKills() (int64, bool) {
	var files []string
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				files = append(files, filepath.Join("/sys/fs/cgroup", parts[2], "memory.events"), "/sys/fs/cgroup/memory.events")
			case strings.Contains(","+parts[1]+",", ",memory,"):
				files = append(files, filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.oom_control"), "/sys/fs/cgroup/memory/memory.oom_control")
			}
		}
	}
	for _, f := range append(files, "/proc/vmstat") {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// childStatus is the exit status the parent gives for the child's end (cmd.Wait's
// error) and its crash report, with the sentence it writes to stderr for a crash;
// advice says what to do when the command ran out of memory (memoryAdvice).
func childStatus(werr error, crash []byte, advice string, killedBy killer, stderr io.Writer) int {
	var exit *exec.ExitError
	switch {
	case len(bytes.TrimSpace(crash)) > 0:
		summary := crashSummary(crash)
		if summary == outOfMemory {
			summary += ": " + advice
		}
		fmt.Fprintf(stderr, "cnntime: internal error: %s.%s\n", summary, saveCrashReport(crash))
		return 1
	case werr == nil:
		return 0
	case !errors.As(werr, &exit):
		fmt.Fprintf(stderr, "cnntime: internal error: the command's process could not be watched: %v\n", werr)
		return 1
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		switch sig := ws.Signal(); sig {
		case syscall.SIGKILL:
			switch killedBy {
			case killerOOM:
				fmt.Fprintln(stderr, "cnntime: the command was killed (SIGKILL) by the system for lack of memory: "+advice)
			case killerOther:
				fmt.Fprintln(stderr, "cnntime: the command was killed (SIGKILL) by another program or a person (kill -9), not for lack of memory (the system's out-of-memory killer killed nothing meanwhile)")
			default:
				fmt.Fprintln(stderr, "cnntime: the command was killed (SIGKILL): by the system when memory runs out (then: "+advice+"), or by kill -9")
			}
			return 1
		case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP:
			return 128 + int(sig) // stopped as asked: the shell's convention
		case syscall.SIGPIPE:
			// Standard output's reader stopped reading (cnntime models | head -1): it
			// has what it wanted, so the command ends quietly and well.
			return 0
		default:
			fmt.Fprintf(stderr, "cnntime: internal error: the command was stopped by signal %v\n", sig)
			return 1
		}
	}
	return exit.ExitCode()
}

// crashSummary says in words a user can act on what a crash report tells: the panic's
// message, or for a fatal error of the runtime, whether it was the memory allocator's
// (the runtime writes its "fatal error: out of memory" to stderr only, before the
// report: the report's first stack shows the allocator under runtime.throw).
func crashSummary(crash []byte) string {
	lines := strings.Split(string(crash), "\n")
	for _, line := range lines {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			if strings.Contains(line, "out of memory") {
				return outOfMemory
			}
			return "the command crashed (" + line + "); this is a bug in cnntime: please report it with the command you ran"
		}
	}
	// The first goroutine's stack: the one that crashed.
	stack, started := "", false
	for _, line := range lines {
		if strings.HasPrefix(line, "goroutine ") {
			if started {
				break
			}
			started = true
		}
		stack += line + "\n"
	}
	if strings.Contains(stack, "runtime.throw") {
		for _, allocator := range []string{"runtime.mallocgc", "runtime.(*mcache)", "runtime.(*mheap)", "runtime.sysAlloc", "runtime.(*pageAlloc)", "runtime.growslice", "runtime.makeslice"} {
			if strings.Contains(stack, allocator) {
				return outOfMemory
			}
		}
	}
	return "the command crashed; this is a bug in cnntime: please report it with the command you ran"
}

// outOfMemory is what the parent says when the command ran out of memory, before the
// advice of memoryAdvice.
const outOfMemory = "the command ran out of memory"

// memoryAdvice is what to do when the command args ran out of memory: fewer
// predictions for the commands that predict, a smaller file for those that read one.
func memoryAdvice(args []string) string {
	command := ""
	if g, err := ParseGlobals(args); err == nil && len(g.Rest) > 0 {
		command = g.Rest[0]
	}
	switch command {
	case "predict", "best", "export", "explain":
		return "ask for fewer models, machines or batch sizes, or give it more memory"
	case "model", "cache", "prices":
		return "the file it read needs more memory than this computer gave it: give it more memory, or a smaller file"
	}
	return "give it more memory"
}

// crashFilter passes the child's standard error on to w as it comes, byte for byte (a
// progress bar's \r-ended lines too), until a line starts as the Go runtime starts a
// crash report (crashStarts): the report, every goroutine's stack, is left out; the
// parent says in one sentence what happened and saves the report to a file.
type crashFilter struct {
	w       io.Writer
	held    []byte // the start of the current line, while it may begin a crash report
	atStart bool   // the next byte starts a line
	crashed bool   // a crash report began: the rest is left out
}

// crashStarts are how the lines that begin a Go crash report start.
var crashStarts = []string{"panic: ", "fatal error: ", "runtime: ", "unexpected fault address", "SIGQUIT: ", "SIGABRT: "}

func (f *crashFilter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !f.crashed {
		if !f.atStart {
			i := bytes.IndexAny(p, "\n\r")
			if i < 0 {
				f.w.Write(p)
				break
			}
			f.w.Write(p[:i+1])
			p, f.atStart = p[i+1:], true
			continue
		}
		f.held, p = append(f.held, p[0]), p[1:]
		switch crashLine(f.held) {
		case 1:
			f.crashed, f.held = true, nil
		case -1:
			last := f.held[len(f.held)-1]
			f.w.Write(f.held)
			f.held, f.atStart = f.held[:0], last == '\n' || last == '\r'
		}
	}
	return n, nil
}

// flush writes what the filter holds: the start of a last line that did not go on to
// begin a crash report.
func (f *crashFilter) flush() {
	if !f.crashed && len(f.held) > 0 {
		f.w.Write(f.held)
	}
	f.held = f.held[:0]
}

// crashLine says whether a line starting with b begins a crash report: 1 yes, -1 no,
// 0 not yet known.
func crashLine(b []byte) int {
	maybe := false
	for _, s := range crashStarts {
		switch {
		case bytes.HasPrefix(b, []byte(s)):
			return 1
		case strings.HasPrefix(s, string(b)):
			maybe = true
		}
	}
	if maybe {
		return 0
	}
	return -1
}

// saveCrashReport writes a crash report to a file and returns " Details: FILE", or
// "" when it cannot be saved.
func saveCrashReport(crash []byte) string {
	f, err := os.CreateTemp("", "cnntime-crash-*.txt")
	if err != nil {
		return ""
	}
	_, werr := f.Write(crash)
	if cerr := f.Close(); werr != nil || cerr != nil {
		os.Remove(f.Name())
		return ""
	}
	return " Details: " + filepath.ToSlash(f.Name())
}
