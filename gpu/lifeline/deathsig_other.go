//go:build !linux

package lifeline

import "syscall"

// setDeathSignal does nothing where there is no parent-death signal: Orphaned, checked
// between measurements, is all there is.
func setDeathSignal(*syscall.SysProcAttr) {}
