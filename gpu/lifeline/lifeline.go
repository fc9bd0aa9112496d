package lifeline

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// parentEnv carries, to a child started through Tie, the process id of its parent.
const parentEnv = "CNNTIME_PARENT_PID"

// ErrOrphaned is the error of work stopped because the process that asked for it died.
var ErrOrphaned = errors.New("the process that started this one has died: stopped so that nothing more is measured or written")

// Tie prepares cmd, before it starts, to die with this process: the kernel kills it
// (SIGKILL) when this process dies, however it dies, and it is told this process's id,
// so that Orphaned can tell it whether its parent still lives.
func Tie(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setDeathSignal(cmd.SysProcAttr)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, parentEnv+"="+strconv.Itoa(os.Getpid())) // the last of a name counts
}

// Orphaned reports whether this process was started through Tie and the process that
// started it has died since (it was given to another parent). A process not started
// through Tie (the desktop app, a command run from a shell) is never orphaned.
func Orphaned() bool {
	parent, err := strconv.Atoi(os.Getenv(parentEnv))
	if err != nil || parent <= 0 {
		return false
	}
	return os.Getppid() != parent
}

// Check is Orphaned as an error: ErrOrphaned when the parent died, else nil.
func Check() error {
	if Orphaned() {
		return ErrOrphaned
	}
	return nil
}

// Forget makes this process one not started through Tie, for itself and the processes
// it starts without Tie: a process that runs on its own (cnntime started from a shell
// that another cnntime started) must not take its grandparent's death for its parent's.
func Forget() { os.Unsetenv(parentEnv) }
