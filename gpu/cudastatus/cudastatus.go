package cudastatus

import "fmt"

// Category is what a failed library call means for a sweep.
type Category int

const (
	OK           Category = iota
	OutOfMemory           // the configuration does not fit: a measurement with status oom
	Unsupported           // the library cannot run it: a measurement with status unsupported
	BadParameter          // the worker passed a wrong argument: an error naming the layer
	Failed                // anything else: an error
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
	cudnn9HostAllocFailed   = 4003
	cudnn9DeviceAllocFailed = 4004
)

// cudnn9Major is the first cudnnGetVersion() of cuDNN 9 (9.0.0 = 90000); cuDNN 8
// reports 8xyz.
const cudnn9Major = 90000

// CuDNN classifies a cuDNN status for the library whose cudnnGetVersion() is version.
func CuDNN(version, code int) Category {
	if code == 0 {
		return OK
	}
	if version >= cudnn9Major {
		switch code {
		case cudnn9HostAllocFailed, cudnn9DeviceAllocFailed:
			return OutOfMemory
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
	case cudnn8BadParam, cudnn8InvalidValue:
		return BadParameter
	case cudnn8NotSupported, cudnn8ArchMismatch, cudnn8PrerequisiteMissng:
		return Unsupported
	}
	return Failed
}

// cuBLAS statuses (cublas_api.h of 11, 12 and 13 agree).
const (
	cublasAllocFailed  = 3
	cublasInvalidValue = 7
	cublasArchMismatch = 8
	cublasNotSupported = 15
)

// CuBLAS classifies a cuBLAS status.
func CuBLAS(code int) Category {
	switch code {
	case 0:
		return OK
	case cublasAllocFailed:
		return OutOfMemory
	case cublasInvalidValue:
		return BadParameter
	case cublasNotSupported, cublasArchMismatch:
		return Unsupported
	}
	return Failed
}

// Error is a failed library call, classified.
type Error struct {
	Lib, Call, Text string
	Code            int
	Category        Category
}

func (e *Error) Error() string {
	what := fmt.Sprintf("status %d", e.Code)
	if e.Text != "" {
		what = fmt.Sprintf("%s (%d)", e.Text, e.Code)
	}
	if e.Category == BadParameter {
		return fmt.Sprintf("%s %s: %s: a bad parameter, a bug in cnntime-gpu; please report it with the output of cnntime-gpu -selftest", e.Lib, e.Call, what)
	}
	return fmt.Sprintf("%s %s: %s", e.Lib, e.Call, what)
}
