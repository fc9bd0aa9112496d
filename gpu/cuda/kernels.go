//go:build cuda

package cuda

/*
#include <cuda.h>
#include "libs.h"

static int module_load(const void* image, CUmodule* m) { return (int)cuModuleLoadData(m, image); }
static int module_function(CUmodule m, const char* name, CUfunction* f) { return (int)cuModuleGetFunction(f, m, name); }
static const char* cuda_error_name(int r) { const char* s = NULL; if (cuGetErrorName((CUresult)r, &s) != CUDA_SUCCESS || !s) s = "an unknown CUDA error"; return s; }

// launch_kernel launches f with n 8-byte arguments read from args during the call (the
// driver copies them), on the default stream: no allocation per launch.
static int launch_kernel(CUfunction f, unsigned grid, unsigned block, const unsigned long long* args, int n) {
	void* params[32];
	if (n > 32) return (int)CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) params[i] = (void*)&args[i];
	return (int)cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"cnntime/gpu/convalgo"
	"cnntime/gpu/cudakern"
	"cnntime/gpu/libfind"
)

// kernels is the compiled kernel set for one element type (package cudakern's source).
type kernels struct {
	fn map[string]C.CUfunction
}

// cudaErr names a failed driver call.
func cudaErr(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s (%d)", call, C.GoString(C.cuda_error_name(r)), int(r))
}

// compileKernels compiles the source with NVRTC to a CUBIN for the device's own
// architecture (no JIT: an NVRTC newer than the driver still works), falling back to PTX
// at the oldest ISA this NVRTC accepts for a device it does not know, and loads it.
func compileKernels(dt convalgo.Data, cc [2]int) (*kernels, error) {
	targets := libfind.KernelTargets(cc[0], cc[1], nvrtcMajor)
	if len(targets) == 0 {
		return nil, fmt.Errorf("NVRTC %d.%d cannot compile for compute capability %d.%d: install the NVRTC of an older CUDA (CNNTIME_NVRTC names it)", nvrtcMajor, nvrtcMinor, cc[0], cc[1])
	}
	var errs []string
	for _, t := range targets {
		image, err := nvrtcCompile(t, dt)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		var mod C.CUmodule
		if err := cudaErr("cuModuleLoadData", C.module_load(unsafe.Pointer(&image[0]), &mod)); err != nil {
			errs = append(errs, fmt.Sprintf("load the %s image into the GPU: %v", t.Option, err))
			continue
		}
		return kernelsOf(mod)
	}
	return nil, fmt.Errorf("cnntime's kernels could not be built: %s", strings.Join(errs, "; "))
}

// nvrtcCompile compiles the kernel source for one target and returns its image: a CUBIN,
// or NUL-terminated PTX.
func nvrtcCompile(t libfind.Target, dt convalgo.Data) ([]byte, error) {
	src := C.CString(cudakern.Source)
	defer C.free(unsafe.Pointer(src))
	name := C.CString("cnntime_kernels.cu")
	defer C.free(unsafe.Pointer(name))
	var prog unsafe.Pointer
	if r := C.x_nvrtcCreateProgram(&prog, src, name, 0, nil, nil); r != 0 {
		return nil, fmt.Errorf("NVRTC create program: status %d", r)
	}
	defer C.x_nvrtcDestroyProgram(&prog)
	opts := []string{t.Option, "--use_fast_math"}
	switch dt {
	case convalgo.Half:
		opts = append(opts, "-DUSE_HALF")
	case convalgo.BFloat16:
		opts = append(opts, "-DUSE_BF16")
	}
	copts := make([]*C.char, len(opts))
	for i, o := range opts {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	copt := (**C.char)(C.malloc(C.size_t(len(copts)) * C.size_t(unsafe.Sizeof(copts[0]))))
	defer C.free(unsafe.Pointer(copt))
	copy(unsafe.Slice(copt, len(copts)), copts)
	if r := C.x_nvrtcCompileProgram(prog, C.int(len(opts)), copt); r != 0 {
		var n C.size_t
		C.x_nvrtcGetProgramLogSize(prog, &n)
		log := make([]byte, int(n)+1)
		C.x_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&log[0])))
		return nil, fmt.Errorf("NVRTC could not compile cnntime's kernels with %s (status %d): %s", t.Option, r, strings.TrimRight(string(log[:n]), "\x00\n"))
	}
	var n C.size_t
	if t.CUBIN {
		if r := C.x_nvrtcGetCUBINSize(prog, &n); r != 0 || n == 0 {
			return nil, fmt.Errorf("NVRTC gave no CUBIN for %s (status %d)", t.Option, r)
		}
		image := make([]byte, int(n))
		C.x_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&image[0])))
		return image, nil
	}
	C.x_nvrtcGetPTXSize(prog, &n)
	ptx := make([]byte, int(n))
	C.x_nvrtcGetPTX(prog, (*C.char)(unsafe.Pointer(&ptx[0])))
	return ptx[:max(len(ptx)-1, 0)], nil
}

// kernelsOf finds the kernels in a loaded module.
func kernelsOf(mod C.CUmodule) (*kernels, error) {
	k := &kernels{fn: map[string]C.CUfunction{}}
	for _, name := range cudakern.Names {
		cs := C.CString(name)
		var f C.CUfunction
		err := cudaErr("cuModuleGetFunction", C.module_function(mod, cs, &f))
		C.free(unsafe.Pointer(cs))
		if err != nil {
			return nil, fmt.Errorf("find kernel %s: %w", name, err)
		}
		k.fn[name] = f
	}
	return k, nil
}

// launch runs kernel name on grid blocks of block threads with its arguments, each an
// 8-byte word (package cudakern's Instance makes them once); nothing is allocated.
func (k *kernels) launch(name string, grid, block int, args []uint64) error {
	f, ok := k.fn[name]
	if !ok {
		return fmt.Errorf("no kernel %s", name)
	}
	if len(args) == 0 {
		return fmt.Errorf("kernel %s launched without arguments", name)
	}
	return cudaErr("cuLaunchKernel", C.launch_kernel(f, C.uint(grid), C.uint(block), (*C.ulonglong)(unsafe.Pointer(&args[0])), C.int(len(args))))
}
