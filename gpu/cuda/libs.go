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

	"cnntime/gpu/cudastatus"
	"cnntime/gpu/libfind"
)

// library is a run-time library: where to look (package libfind) and how to load it.
type library struct {
	libfind.Library
	load func(path *C.char, missing **C.char) *C.char
}

var (
	libCuDNN    = library{libfind.CuDNN, func(p *C.char, m **C.char) *C.char { return C.load_cudnn(p, m) }}
	libCuBLAS   = library{libfind.CuBLAS, func(p *C.char, m **C.char) *C.char { return C.load_cublas(p, m) }}
	libCuBLASLt = library{libfind.CuBLASLt, func(p *C.char, m **C.char) *C.char { return C.load_cublaslt(p, m) }}
	libNVRTC    = library{libfind.NVRTC, func(p *C.char, m **C.char) *C.char { return C.load_nvrtc(p, m) }}
	libNVML     = library{libfind.NVML, func(p *C.char, m **C.char) *C.char { return C.load_nvml(p, m) }}
)

// host is this machine for the library search: Python and the loader's cache are asked
// once for every library.
var host = libfind.System()

// loaded are the candidates the worker went through for each library, with the one it
// loaded marked (libfind.Load) and the ones that failed saying why: the self-test's
// report carries them.
var loaded []libfind.Candidate

// machine is what libraries are chosen against: the driver's CUDA version
// (cuDriverGetVersion), the oldest compute capability of its GPUs, and the CUDA major
// the loaded cuDNN was built for (cudnnGetCudartVersion), once cuDNN is loaded.
var machine struct{ driver, cc, cudnnCUDA int }

// open loads the library from path (a flag), or from $Env, or from the first place of
// libfind's search order that has a loadable one, among those of one CUDA with cuDNN
// that the driver and GPUs run (libfind.Consistent); the sub-libraries and companions a
// library opens by name are preloaded from its directory first.
func (l library) open(path string) (string, error) {
	cands := l.Search(host, path)
	if path == "" && l.What != libCuDNN.What && l.What != libNVML.What {
		cands = libfind.Consistent(cands, machine.cudnnCUDA, machine.driver, machine.cc)
	}
	return l.openFrom(cands, "")
}

// openFrom loads the first loadable candidate after the one whose path is after ("" from
// the start).
func (l library) openFrom(cands []libfind.Candidate, after string) (string, error) {
	var tried []string
	chosen := ""
	started := after == ""
	for i, c := range cands {
		if !started {
			started = c.Path == after
			continue
		}
		if !c.Loadable() {
			continue
		}
		if chosen != "" {
			cands[i].Verdict, cands[i].Why = libfind.Found, c.Why+"; not tried: "+chosen+" loaded first"
			continue
		}
		name := c.Path
		var preloadErr error
		if pre := l.Preloads(name); len(pre) > 0 {
			preloadErr = preloadAll(pre)
		}
		if l.What == libCuDNN.What {
			// A sub-library that does not load is not fatal here: cuDNN loads what it
			// needs itself and says (status 1008 or 3009, a failure) when one is missing.
			cudnnPreloadErr = preloadErr
		}
		cs := C.CString(name)
		var missing *C.char
		msg := l.load(cs, &missing)
		C.free(unsafe.Pointer(cs))
		if msg == nil {
			chosen = name
			cands[i].Verdict, cands[i].Why = libfind.Load, c.Why+"; loaded"
			continue
		}
		why := C.GoString(msg)
		if missing != nil {
			why = fmt.Sprintf("%s lacks %s (too old?)", name, C.GoString(missing))
		}
		cands[i].Verdict, cands[i].Why = libfind.Skipped, c.Why+"; did not load: "+why
		tried = append(tried, why)
	}
	loaded = append(loaded, cands...)
	if l.What == libCuBLAS.What {
		cublasCands = cands
	}
	if chosen != "" {
		return chosen, nil
	}
	if len(tried) == 0 {
		if len(cands) == 1 && (cands[0].Source == libfind.FromFlag || cands[0].Source == libfind.FromEnv) {
			return "", fmt.Errorf("load %s: %s", l.What, cands[0].Why)
		}
		return "", fmt.Errorf("load %s: found nowhere (searched %s); install it, or name its path with %s, and see cnntime devices --check", l.What, libfind.SearchOrder, l.Env)
	}
	if len(tried) > 4 { // the first few say enough
		tried = append(tried[:4], fmt.Sprintf("and %d more places", len(tried)-4))
	}
	return "", fmt.Errorf("load %s: %s; install it or name its path with %s (cnntime devices --check lists where it was looked for)", l.What, strings.Join(tried, "; "), l.Env)
}

// openCompanion loads cuBLASLt from where cuBLAS came from (the same major version
// beside it), else through $CNNTIME_CUBLASLT or its usual places.
func openCompanion(l library, of string) (string, error) {
	name := l.CompanionOf(of)
	if env := os.Getenv(l.Env); env != "" {
		name = env
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var missing *C.char
	msg := l.load(cs, &missing)
	c := libfind.Candidate{Library: l.What, Source: libfind.FromFlag, Path: name, Verdict: libfind.Load, Why: "beside the cuBLAS loaded; loaded"}
	if msg != nil {
		why := C.GoString(msg)
		if missing != nil {
			why = fmt.Sprintf("%s lacks %s (too old?)", name, C.GoString(missing))
		}
		c.Verdict, c.Why = libfind.Skipped, "beside the cuBLAS loaded; did not load: "+why
		loaded = append(loaded, c)
		return "", fmt.Errorf("load %s: %s", l.What, why)
	}
	loaded = append(loaded, c)
	return name, nil
}

// cublasCands are cuBLAS's candidates in the order tried: Open moves to the next when
// the loaded one cannot create its handle (cublasCreate fails on a driver or GPU it does
// not support).
var cublasCands []libfind.Candidate

// cudnnPreloadErr says which of cuDNN's sub-libraries could not be preloaded, if any.
var cudnnPreloadErr error

// preloadAll opens the libraries another opens by soname (cuDNN's sub-libraries,
// cuBLASLt, NVRTC's builtins). One that fails (a dependency on another not loaded yet)
// is tried again after the others, until a round loads none; the error names those
// that never loaded.
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
			return fmt.Errorf("libraries to preload did not load: %s", strings.Join(why, "; "))
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
