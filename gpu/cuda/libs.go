//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include "libs.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// library is a shared library found by environment variable or by its usual names.
type library struct {
	what  string   // e.g. "cuDNN"
	env   string   // the variable that names its path
	names []string // sonames tried in order
	load  func(path *C.char, missing **C.char) *C.char
}

var (
	libCuDNN  = library{"cuDNN", "CNNTIME_CUDNN", []string{"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}, func(p *C.char, m **C.char) *C.char { return C.load_cudnn(p, m) }}
	libCuBLAS = library{"cuBLAS", "CNNTIME_CUBLAS", []string{"libcublas.so.12", "libcublas.so.11", "libcublas.so"}, func(p *C.char, m **C.char) *C.char { return C.load_cublas(p, m) }}
	libNVRTC  = library{"NVRTC", "CNNTIME_NVRTC", []string{"libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}, func(p *C.char, m **C.char) *C.char { return C.load_nvrtc(p, m) }}
	libNVML   = library{"NVML", "CNNTIME_NVML", []string{"libnvidia-ml.so.1", "libnvidia-ml.so"}, func(p *C.char, m **C.char) *C.char { return C.load_nvml(p, m) }}
)

// open loads the library from path, or from $env, or from its usual names.
func (l library) open(path string) (string, error) {
	candidates := l.names
	if path == "" {
		path = os.Getenv(l.env)
	}
	if path != "" {
		candidates = []string{path}
	}
	var tried []string
	for _, name := range candidates {
		cs := C.CString(name)
		var missing *C.char
		msg := l.load(cs, &missing)
		C.free(unsafe.Pointer(cs))
		if msg == nil {
			return name, nil
		}
		why := C.GoString(msg)
		if missing != nil {
			why = fmt.Sprintf("%s lacks %s (too old?)", name, C.GoString(missing))
		}
		tried = append(tried, why)
	}
	return "", fmt.Errorf("load %s: %s; install it or name its path with %s", l.what, strings.Join(tried, "; "), l.env)
}

// dev converts a device address for the libraries.
func dev(p uint64) unsafe.Pointer { return C.dptr(C.ulonglong(p)) }

// cudnnCheck turns a cuDNN status into an error naming the call.
func cudnnCheck(call string, status C.int) error {
	if status == 0 {
		return nil
	}
	return &libError{lib: "cuDNN", call: call, code: int(status), text: C.GoString(C.x_cudnnGetErrorString(status))}
}

func cublasCheck(call string, status C.int) error {
	if status == 0 {
		return nil
	}
	return &libError{lib: "cuBLAS", call: call, code: int(status)}
}

// libError is a failed library call. Allocation failures are out of memory and
// unsupported configurations are unsupported, not errors of the sweep.
type libError struct {
	lib, call, text string
	code            int
}

func (e *libError) Error() string {
	if e.text != "" {
		return fmt.Sprintf("%s %s: %s (%d)", e.lib, e.call, e.text, e.code)
	}
	return fmt.Sprintf("%s %s: status %d", e.lib, e.call, e.code)
}

const (
	cudnnStatusAllocFailed  = 2
	cudnnStatusBadParam     = 3
	cudnnStatusNotSupported = 9
	cublasStatusAllocFailed = 3
	cublasStatusNotSupport  = 15
)

func (e *libError) outOfMemory() bool {
	return (e.lib == "cuDNN" && e.code == cudnnStatusAllocFailed) || (e.lib == "cuBLAS" && e.code == cublasStatusAllocFailed)
}

func (e *libError) unsupported() bool {
	return (e.lib == "cuDNN" && (e.code == cudnnStatusNotSupported || e.code == cudnnStatusBadParam)) ||
		(e.lib == "cuBLAS" && e.code == cublasStatusNotSupport)
}
