package lifeline

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// roleEnv makes this test binary a parent that starts a tied child and waits, or that
// child: "sleeper" waits to be killed; "watcher" (started without the death signal)
// waits until Orphaned says its parent died and writes what it saw to its file.
const roleEnv = "CNNTIME_LIFELINE_TEST_ROLE"

func TestMain(m *testing.M) {
	switch role := os.Getenv(roleEnv); role {
	case "parent-of-sleeper", "parent-of-watcher":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), roleEnv+"="+strings.TrimPrefix(role, "parent-of-"))
		Tie(child)
		if role == "parent-of-watcher" {
			child.SysProcAttr.Pdeathsig = 0 // only Orphaned tells it
		}
		if err := child.Start(); err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		time.Sleep(time.Hour) // until killed (select {} would end it: every goroutine asleep)
		os.Exit(1)
	case "sleeper":
		time.Sleep(time.Hour)
		os.Exit(1)
	case "watcher":
		if Orphaned() {
			os.WriteFile(os.Getenv("CNNTIME_LIFELINE_TEST_FILE"), []byte("orphaned at start"), 0o644)
			os.Exit(1)
		}
		for !Orphaned() {
			time.Sleep(10 * time.Millisecond)
		}
		os.WriteFile(os.Getenv("CNNTIME_LIFELINE_TEST_FILE"), []byte("orphaned"), 0o644)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// alive reports whether process pid runs: it exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return after != "" && after[0] != 'Z' && after[0] != 'X'
}

// startParent starts this binary as a parent of role and returns it and its child's pid.
func startParent(t *testing.T, role string, env ...string) (*exec.Cmd, int) {
	t.Helper()
	parent := exec.Command(os.Args[0])
	parent.Env = append(append(os.Environ(), roleEnv+"="+role), env...)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	child, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		parent.Process.Kill()
		t.Fatalf("the parent said %q (%v)", line, err)
	}
	return parent, child
}

// A child started through Tie is killed with its parent: 2 s after a kill -9 of the
// parent it is gone.
func TestTiedChildDiesWithItsParent(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	parent, child := startParent(t, "parent-of-sleeper")
	defer syscall.Kill(child, syscall.SIGKILL)
	if !alive(child) {
		t.Fatal("the child is not running")
	}
	parent.Process.Kill()
	parent.Wait()
	for deadline := time.Now().Add(2 * time.Second); alive(child) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child) {
		t.Errorf("the child %d is alive 2 s after its parent was killed", child)
	}
}

// Without the death signal a tied child still learns, from Orphaned, that its parent
// died; a process not started through Tie never reads as orphaned.
func TestOrphanedSaysTheParentDied(t *testing.T) {
	file := filepath.Join(t.TempDir(), "seen")
	parent, child := startParent(t, "parent-of-watcher", "CNNTIME_LIFELINE_TEST_FILE="+file)
	defer syscall.Kill(child, syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(file); err == nil {
		b, _ := os.ReadFile(file)
		t.Fatalf("the child read as orphaned while its parent lived: %s", b)
	}
	parent.Process.Kill()
	parent.Wait()
	var seen []byte
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if seen, _ = os.ReadFile(file); len(seen) > 0 {
			break
		}
	}
	if string(seen) != "orphaned" {
		t.Errorf("the child saw %q, want that it was orphaned", seen)
	}
	if Orphaned() {
		t.Error("this test, not started through Tie, reads as orphaned")
	}
}
