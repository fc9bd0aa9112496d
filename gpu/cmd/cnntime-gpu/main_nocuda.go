//go:build !cuda

// Command cnntime-gpu is cnntime's CUDA sweep worker. Built without the cuda tag it can
// only say how to build it properly.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "cnntime-gpu: this build has no CUDA support; build the worker with 'make gpu-worker' (go build -tags cuda ./gpu/cmd/cnntime-gpu).")
	os.Exit(2)
}
