package convalgo

import "cnntime/predictor/measure"

// cuDNN's cudnnMathType_t (the same in cuDNN 7, 8 and 9).
const (
	DefaultMath         = 0 // tensor cores allowed; TF32 for FP32 data on Ampere and later
	TensorOpMath        = 1 // tensor cores
	TensorOpMathConvert = 2 // tensor cores, converting FP32 data down
	FMAMath             = 3 // no tensor cores: strict FP32
	cudnnStatusSuccess  = 0
)

// Start is the math type and data type a convolution descriptor is created with.
// Kernel precision fp32 (and fp32-strict) is strict IEEE FP32: no tensor cores; tf32
// allows them (cuDNN's default math); amp runs FP16 data and bf16 bfloat16 data on
// tensor cores, accumulating in FP32.
func Start(p measure.Precision) (mathType int, data Data) {
	switch p {
	case measure.TF32:
		return DefaultMath, Float
	case measure.AMP, measure.BF16:
		return TensorOpMath, DataOf(p)
	}
	return FMAMath, Float
}

// strict reports whether a kernel precision forbids tensor cores.
func strict(p measure.Precision) bool { return p == measure.FP32 || p == measure.FP32Strict }

// Perf is one entry of cuDNN's ranking (cudnnConvolution*AlgoPerf_t).
type Perf struct {
	Algo, Status int
	Memory       int64
	MathType     int
}

// Usable says whether an algorithm's result may be run under precision p: it succeeded
// and, for fp32 and fp32-strict, it does not use tensor cores (only FMA math is strict).
func Usable(p Perf, prec measure.Precision) bool {
	if p.Status != cudnnStatusSuccess {
		return false
	}
	if strict(prec) && p.MathType != FMAMath {
		return false
	}
	return true
}

// Choose walks cuDNN's ranking and returns the first usable entry whose workspace alloc
// obtains (alloc returns false when the memory is not there), as PyTorch does; ok is
// false when none is usable, and outOfMemory true when usable ones existed but
// none got its workspace (out of memory rather than unsupported).
func Choose(ranked []Perf, prec measure.Precision, alloc func(bytes int64) bool) (chosen Perf, ok, outOfMemory bool) {
	usable := 0
	for _, p := range ranked {
		if !Usable(p, prec) {
			continue
		}
		usable++
		if alloc(p.Memory) {
			return p, true, false
		}
	}
	return Perf{}, false, usable > 0
}

// FindWorkspace is the workspace to hand cudnnFind*AlgorithmEx: the largest any
// algorithm asks for (sizes, one per algorithm, negative when cuDNN would not say),
// capped at free, the device memory left after the layer's tensors; PyTorch caps it the
// same way so the search never claims memory the run could not have.
func FindWorkspace(sizes []int64, free int64) int64 {
	var most int64
	for _, s := range sizes {
		most = max(most, s)
	}
	return max(min(most, free), 0)
}

// legacyMaxElems is the most elements a tensor of cuDNN's legacy (non-graph) API may
// have: its descriptors take int sizes and strides.
const legacyMaxElems = 1<<31 - 1

// FitsLegacyAPI reports whether every tensor (given by element counts) fits cuDNN's
// legacy API. One that does not is unsupported there (PyTorch splits the batch), not a
// bad parameter to stop the sweep on.
func FitsLegacyAPI(elems ...int64) bool {
	for _, e := range elems {
		if e > legacyMaxElems {
			return false
		}
	}
	return true
}
