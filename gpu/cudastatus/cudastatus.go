package cudastatus

import "fmt"

// Category is what a failed library call means for a sweep.
type Category int

const (
	OK            Category = iota
	OutOfMemory            // the configuration does not fit: a measurement with status oom
	Unsupported            // the library cannot run it: a measurement with status unsupported
	BadParameter           // the worker passed a wrong argument: an error naming the layer
	Failed                 // anything else: an error
	BrokenInstall          // the library cannot run anything here as installed: an error about the machine, not the item
	// MaybeOutOfMemory is a failure that is often out of memory in disguise (an internal
	// error or a failed execution when a library's own allocation failed,
	// CUBLAS_STATUS_NOT_INITIALIZED when cublasCreate could not allocate): Resolve decides
	// it by the memory left.
	MaybeOutOfMemory
)

func (c Category) String() string {
	switch c {
	case OK:
		return "ok"
	case OutOfMemory:
		return "out of memory"
	case Unsupported:
		return "unsupported"
	case BadParameter:
		return "bad parameter"
	case BrokenInstall:
		return "broken install"
	case MaybeOutOfMemory:
		return "failed, perhaps out of memory"
	}
	return "failed"
}

// cuDNN 8's flat status codes (cudnn_ops_infer.h of 8.x).
const (
	cudnn8AllocFailed        = 2
	cudnn8BadParam           = 3
	cudnn8InvalidValue       = 5
	cudnn8ArchMismatch       = 6
	cudnn8NotSupported       = 9
	cudnn8PrerequisiteMissng = 11
)

// cuDNN 9's categorised status codes (cudnn_graph.h of 9.x).
const (
	cudnn9NotInitialized        = 1001
	cudnn9SublibraryVersion     = 1002
	cudnn9SublibraryLoading     = 1008
	cudnn9IncompatibleDriver    = 3005
	cudnn9IncompatibleCudart    = 3006
	cudnn9PrerequisiteMissing   = 3008
	cudnn9SublibraryUnavailable = 3009
	cudnn9InternalError         = 4000
	cudnn9HostAllocFailed       = 4003
	cudnn9DeviceAllocFailed     = 4004
	cudnn9ExecutionFailed       = 5000
	cudnn9ExecFailedDriver      = 5001
	cudnn9ExecFailedCuBLAS      = 5002
	cudnn9ExecFailedCUDART      = 5003
	cudnn9ExecFailedCURAND      = 5004
	cudnn8InternalError         = 4
	cudnn8ExecutionFailed       = 8
)

// brokenInstall is what to do about a cuDNN that cannot run anything here.
const brokenInstall = "cuDNN cannot run on this machine as installed (a driver or CUDA runtime it does not accept, or a library it needs missing): install the cuDNN built for this CUDA with all its sub-libraries, or name it with CNNTIME_CUDNN, and run cnntime devices --check"

// CuDNNHint says what to do about a cuDNN status that means the install is broken,
// rather than that one configuration is unsupported; "" for any other status.
func CuDNNHint(version, code int) string {
	if version >= cudnn9Major {
		switch code {
		case cudnn9IncompatibleDriver, cudnn9IncompatibleCudart, cudnn9PrerequisiteMissing, cudnn9SublibraryUnavailable,
			cudnn9NotInitialized, cudnn9SublibraryVersion, cudnn9SublibraryLoading:
			return brokenInstall
		}
		return ""
	}
	if code == cudnn8PrerequisiteMissng {
		return brokenInstall
	}
	return ""
}

// cudnn9Major is the first cudnnGetVersion() of cuDNN 9 (9.0.0 = 90000); cuDNN 8
// reports 8xyz.
const cudnn9Major = 90000

// CuDNN classifies a cuDNN status for the library whose cudnnGetVersion() is version.
func CuDNN(version, code int) Category {
	if code == 0 {
		return OK
	}
	if CuDNNHint(version, code) != "" {
		return BrokenInstall // not a configuration the library lacks
	}
	if version >= cudnn9Major {
		// cuDNN 9's categories (cudnn_graph.h): 1xxx not initialised, 2xxx bad parameter,
		// 3xxx not supported, 4xxx internal error, 5xxx execution failed.
		switch code {
		case cudnn9HostAllocFailed, cudnn9DeviceAllocFailed:
			return OutOfMemory
		case cudnn9InternalError, cudnn9ExecutionFailed, cudnn9ExecFailedCuBLAS, cudnn9ExecFailedCUDART:
			return MaybeOutOfMemory // cuDNN's own allocation, or cuBLAS's, failed inside
		case cudnn9ExecFailedDriver, cudnn9ExecFailedCURAND:
			return Failed
		}
		switch code / 1000 {
		case 2:
			return BadParameter
		case 3:
			return Unsupported
		}
		return Failed
	}
	switch code {
	case cudnn8AllocFailed:
		return OutOfMemory
	case cudnn8InternalError, cudnn8ExecutionFailed:
		return MaybeOutOfMemory
	case cudnn8BadParam, cudnn8InvalidValue:
		return BadParameter
	case cudnn8NotSupported, cudnn8ArchMismatch:
		return Unsupported
	}
	return Failed
}

// cuBLAS statuses (cublas_api.h of 11, 12 and 13 agree).
const (
	cublasNotInitialized  = 1
	cublasExecutionFailed = 13
	cublasInternalError   = 14
	cublasAllocFailed     = 3
	cublasInvalidValue    = 7
	cublasArchMismatch    = 8
	cublasNotSupported    = 15
)

// CuBLAS classifies a cuBLAS status.
func CuBLAS(code int) Category {
	switch code {
	case 0:
		return OK
	case cublasAllocFailed:
		return OutOfMemory
	case cublasNotInitialized, cublasExecutionFailed, cublasInternalError:
		return MaybeOutOfMemory // cublasCreate or its workspace could not allocate, as PyTorch often reports it
	case cublasInvalidValue:
		return BadParameter
	case cublasNotSupported, cublasArchMismatch:
		return Unsupported
	}
	return Failed
}

// LowMemory is the free device memory below which a failure that may be out of memory
// in disguise is taken for one: 256 MiB, or 1/32 of the GPU's memory if more.
func LowMemory(totalBytes int64) int64 { return max(256<<20, totalBytes/32) }

// Resolve decides a MaybeOutOfMemory failure by the device memory free when it
// happened: out of memory when little is left (LowMemory), a failure otherwise. Any
// other category stands.
func Resolve(c Category, freeBytes, totalBytes int64) Category {
	if c != MaybeOutOfMemory {
		return c
	}
	if freeBytes >= 0 && freeBytes < LowMemory(totalBytes) {
		return OutOfMemory
	}
	return Failed
}

// Error is a failed library call, classified.
type Error struct {
	Lib, Call, Text string
	Code            int
	Category        Category
	Hint            string // what to do, when the status says (CuDNNHint)
}

// InstallFault reports whether the call failed because of how the library is installed
// here (not because of the item): a sweep does not quarantine such an item, since it
// runs once the install is fixed.
func (e *Error) InstallFault() bool { return e.Category == BrokenInstall }

func (e *Error) Error() string {
	what := fmt.Sprintf("status %d", e.Code)
	if e.Text != "" {
		what = fmt.Sprintf("%s (%d)", e.Text, e.Code)
	}
	if e.Category == BadParameter {
		return fmt.Sprintf("%s %s: %s: a bad parameter, a bug in cnntime-gpu; please report it with the output of cnntime-gpu -selftest", e.Lib, e.Call, what)
	}
	if e.Hint != "" {
		return fmt.Sprintf("%s %s: %s: %s", e.Lib, e.Call, what, e.Hint)
	}
	return fmt.Sprintf("%s %s: %s", e.Lib, e.Call, what)
}
