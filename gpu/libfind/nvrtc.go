package libfind

import "fmt"

// Target is one way to compile the worker's kernels with NVRTC.
type Target struct {
	Option string // the --gpu-architecture option
	CUBIN  bool   // true: machine code for the device (nvrtcGetCUBIN); false: PTX the driver JIT-compiles
}

// oldestArch is the oldest compute capability an NVRTC major version compiles for:
// CUDA 13 dropped Maxwell, Pascal and Volta, CUDA 12 Kepler.
func oldestArch(nvrtcMajor int) int {
	switch {
	case nvrtcMajor >= 13:
		return 75
	case nvrtcMajor == 12:
		return 50
	}
	return 35
}

// KernelTargets lists the targets to try for a device of compute capability
// major.minor with an NVRTC of major version nvrtcMajor: first a CUBIN for the device
// itself (no JIT, so an NVRTC newer than the driver still works: PTX from it would fail
// with CUDA error 222, unsupported PTX version), then PTX at the oldest ISA this NVRTC
// accepts, for a device it does not know yet. None when this NVRTC cannot compile for
// the device at all.
func KernelTargets(major, minor, nvrtcMajor int) []Target {
	arch := major*10 + minor
	oldest := oldestArch(nvrtcMajor)
	if arch < oldest {
		return nil
	}
	return []Target{
		{Option: fmt.Sprintf("--gpu-architecture=sm_%d", arch), CUBIN: true},
		{Option: fmt.Sprintf("--gpu-architecture=compute_%d", oldest)},
	}
}
