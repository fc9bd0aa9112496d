package protofd

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

var (
	mu      sync.Mutex
	claimed *os.File
)

// Claim moves the protocol off fd 1 (see the package comment) and returns the protocol's
// file; later calls return the same file.
func Claim() (*os.File, error) {
	mu.Lock()
	defer mu.Unlock()
	if claimed != nil {
		return claimed, nil
	}
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("duplicate stdout for the worker protocol: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("point stdout at stderr: %w", err)
	}
	claimed = os.NewFile(uintptr(fd), "protocol")
	return claimed, nil
}

// Out is where protocol lines and a person's output go: the claimed file, or stdout
// when nothing claimed it.
func Out() *os.File {
	mu.Lock()
	defer mu.Unlock()
	if claimed != nil {
		return claimed
	}
	return os.Stdout
}
