package lifeline

import "syscall"

// setDeathSignal asks the kernel to kill the child when its parent dies. Go arms it in
// the child before exec and kills the child at once if the parent died meanwhile.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
