//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include "libs.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"cnntime/gpu/cudastatus"
	"cnntime/gpu/libfind"
)

// library is a run-time library: where to look (package libfind) and how to load it.
type library struct {
	libfind.Library
	load func(path *C.char, missing **C.char) *C.char
}

var (
	libCuDNN  = library{libfind.CuDNN, func(p *C.char, m **C.char) *C.char { return C.load_cudnn(p, m) }}
	libCuBLAS = library{libfind.CuBLAS, func(p *C.char, m **C.char) *C.char { return C.load_cublas(p, m) }}
	libNVRTC  = library{libfind.NVRTC, func(p *C.char, m **C.char) *C.char { return C.load_nvrtc(p, m) }}
	libNVML   = library{libfind.NVML, func(p *C.char, m **C.char) *C.char { return C.load_nvml(p, m) }}
)

// open loads the library from path, or from $Env, or from its usual names (and the
// standard NVIDIA install's directories). A cuDNN named by path has its sub-libraries
// preloaded from its directory first.
func (l library) open(path string) (string, error) {
	var tried []string
	for _, name := range l.Candidates(path, libfind.CUDAHome()) {
		if l.What == libCuDNN.What {
			// A sub-library that does not load is not fatal here: cuDNN loads what it
			// needs itself and says (status 1008 or 3009, a failure) when one is missing.
			cudnnPreloadErr = preloadAll(libfind.CuDNNSubLibraries(name))
		}
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
	if len(tried) > 4 { // the usual names, each under several directories: the first few say enough
		tried = append(tried[:4], fmt.Sprintf("and %d more places", len(tried)-4))
	}
	return "", fmt.Errorf("load %s: %s; install it or name its path with %s", l.What, strings.Join(tried, "; "), l.Env)
}

// cudnnPreloadErr says which of cuDNN's sub-libraries could not be preloaded, if any.
var cudnnPreloadErr error

// preloadAll opens cuDNN's sub-libraries so that cuDNN finds them by soname. One that
// fails (a dependency on another not loaded yet) is tried again after the others, until
// a round loads none; the error names those that never loaded.
func preloadAll(paths []string) error {
	left := paths
	for len(left) > 0 {
		var again, why []string
		for _, p := range left {
			cs := C.CString(p)
			msg := C.preload(cs)
			C.free(unsafe.Pointer(cs))
			if msg != nil {
				again, why = append(again, p), append(why, C.GoString(msg))
			}
		}
		if len(again) == len(left) {
			return fmt.Errorf("cuDNN's sub-libraries did not preload: %s", strings.Join(why, "; "))
		}
		left = again
	}
	return nil
}

// dev converts a device address for the libraries.
func dev(p uint64) unsafe.Pointer { return C.dptr(C.ulonglong(p)) }

// cudnnVersion is cudnnGetVersion() once cuDNN is loaded: it picks the status table.
var cudnnVersion int

// cudnnCheck turns a cuDNN status into a classified error naming the call.
func cudnnCheck(call string, status C.int) error {
	if status == 0 {
		return nil
	}
	return &cudastatus.Error{Lib: "cuDNN", Call: call, Code: int(status), Text: C.GoString(C.x_cudnnGetErrorString(status)),
		Category: cudastatus.CuDNN(cudnnVersion, int(status)), Hint: cudastatus.CuDNNHint(cudnnVersion, int(status))}
}

func cublasCheck(call string, status C.int) error {
	if status == 0 {
		return nil
	}
	return &cudastatus.Error{Lib: "cuBLAS", Call: call, Code: int(status), Category: cudastatus.CuBLAS(int(status))}
}
