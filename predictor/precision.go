package predictor

import (
	"fmt"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// TrainingPrecisions are the precisions a training step can be predicted in, as
// PyTorch names them: fp32 (its default), fp32-strict and amp.
var TrainingPrecisions = []measure.Precision{measure.FP32, measure.FP32Strict, measure.AMP}

// ParseTrainingPrecision accepts fp32, fp32-strict or amp. (tf32 is a kernel
// precision: a training run asks for fp32, which uses TF32 convolutions where the GPU
// has them.)
func ParseTrainingPrecision(s string) (measure.Precision, error) {
	for _, p := range TrainingPrecisions {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown training precision %q: use fp32, fp32-strict or amp", s)
}

// KernelPrecision is the arithmetic a layer of the given op runs in when a network
// trains in the training precision p on gpu:
//   - fp32 is PyTorch's default: convolutions in TF32 on compute capability 8.0 and
//     later (torch.backends.cudnn.allow_tf32 is true), matrix multiplies in strict FP32
//     (torch.backends.cuda.matmul.allow_tf32 is false), everything else FP32;
//   - fp32-strict runs everything in FP32;
//   - amp (autocast to FP16) runs convolutions and linear layers on FP16 tensor cores,
//     the memory-bound layers on FP16 activations, and the loss in FP32.
func KernelPrecision(p measure.Precision, op cnn.Op, gpu hw.GPU) measure.Precision {
	switch p {
	case measure.AMP:
		if op == cnn.OpLoss {
			return measure.FP32
		}
		return measure.AMP
	case measure.FP32:
		if op == cnn.OpConv2d && hasTF32(gpu) {
			return measure.TF32
		}
	}
	return measure.FP32
}

// hasTF32 reports whether gpu has TF32 tensor cores: compute capability 8.0 or later.
func hasTF32(gpu hw.GPU) bool {
	return gpu.TF32TFLOPS > 0 || hw.ParseComputeCapability(gpu.ComputeCapability) >= 80
}
