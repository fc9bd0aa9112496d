//go:build cuda

package precheck

/*
#cgo CFLAGS: -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcuda
#include <cuda.h>
static int check(int* count, const char** name) {
	CUresult r = cuInit(0);
	if (r == CUDA_SUCCESS) r = cuDeviceGetCount(count);
	if (r != CUDA_SUCCESS && cuGetErrorName(r, name) != CUDA_SUCCESS) *name = "unknown CUDA error";
	return (int)r;
}
*/
import "C"

import (
	"fmt"
	"os"

	"cnntime/gpu/protofd"
)

// ExitNoGPU is the worker's exit status when there is no usable GPU.
const ExitNoGPU = 3

func init() {
	if _, err := protofd.Claim(); err != nil {
		fmt.Fprintln(os.Stderr, "cnntime-gpu:", err)
	}
	var count C.int
	var name *C.char
	if r := C.check(&count, &name); r != 0 {
		fail(fmt.Sprintf("no usable NVIDIA GPU on this machine: the CUDA driver could not start (%s)", C.GoString(name)))
	}
	if count == 0 {
		fail("no usable NVIDIA GPU on this machine: the CUDA driver found no device")
	}
}

// fail tells both the app (a protocol error line on stdout) and a person (stderr).
func fail(sentence string) {
	fmt.Fprintf(protofd.Out(), "{\"type\":\"error\",\"message\":%q}\n", sentence)
	fmt.Fprintln(os.Stderr, "cnntime-gpu:", sentence+".")
	os.Exit(ExitNoGPU)
}
