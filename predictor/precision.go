package predictor

import (
	"fmt"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// TrainingPrecisions are the precisions a training step can be predicted in, as
// PyTorch names them: fp32 (its default), fp32-strict, tf32, amp and bf16.
var TrainingPrecisions = []measure.Precision{measure.FP32, measure.FP32Strict, measure.TF32, measure.AMP, measure.BF16}

// ParseTrainingPrecision accepts fp32, fp32-strict, tf32, amp or bf16.
func ParseTrainingPrecision(s string) (measure.Precision, error) {
	for _, p := range TrainingPrecisions {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown training precision %q: use fp32, fp32-strict, tf32, amp or bf16", s)
}

// KernelPrecision is the arithmetic a layer of the given op runs in when a network
// trains in the training precision p on gpu:
//   - fp32 is PyTorch's default: convolutions in TF32 on compute capability 8.0 and
//     later (torch.backends.cudnn.allow_tf32 is true), matrix multiplies in strict FP32
//     (torch.backends.cuda.matmul.allow_tf32 is false), everything else FP32;
//   - tf32 is TF32 everywhere it applies: convolutions and matrix multiplies (linear
//     layers) in TF32 (torch.set_float32_matmul_precision("high") on top of the
//     default), everything else FP32; without TF32 tensor cores it is fp32;
//   - fp32-strict runs everything in FP32;
//   - amp (autocast to FP16 with a gradient scaler) runs convolutions and linear layers
//     on FP16 tensor cores, the memory-bound layers on FP16 activations, and the loss in
//     FP32;
//   - bf16 (autocast to BF16, no gradient scaler) runs the same kernels in BF16, which
//     tensor cores run at the FP16 rate on compute capability 8.0 and later; the loss
//     in FP32.
func KernelPrecision(p measure.Precision, op cnn.Op, gpu hw.GPU) measure.Precision {
	switch p {
	case measure.AMP, measure.BF16:
		if op == cnn.OpLoss {
			return measure.FP32
		}
		return p
	case measure.TF32:
		if (op == cnn.OpConv2d || op == cnn.OpLinear) && hasTF32(gpu) {
			return measure.TF32
		}
	case measure.FP32:
		if op == cnn.OpConv2d && hasTF32(gpu) {
			return measure.TF32
		}
	}
	return measure.FP32
}

// HalfPrecision reports whether training precision p keeps activations in 16 bits
// (autocast to FP16 or BF16): the layers' tensors are half the size, tensor cores run
// the convolutions, and each weight gets a 16-bit copy every step.
func HalfPrecision(p measure.Precision) bool { return p == measure.AMP || p == measure.BF16 }

// hasTF32 reports whether gpu has TF32 tensor cores: compute capability 8.0 or later.
func hasTF32(gpu hw.GPU) bool {
	return gpu.TF32TFLOPS > 0 || hw.ParseComputeCapability(gpu.ComputeCapability) >= 80
}
