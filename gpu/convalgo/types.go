package convalgo

import (
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Data is a tensor's element type on the GPU.
type Data int

const (
	Float    Data = iota // FP32
	Half                 // FP16: amp
	BFloat16             // bfloat16: bf16
)

// DataOf is the element type of the tensors of a kernel precision: FP16 under amp,
// bfloat16 under bf16, FP32 otherwise (tf32 reads FP32 tensors).
func DataOf(p measure.Precision) Data {
	switch p {
	case measure.AMP:
		return Half
	case measure.BF16:
		return BFloat16
	}
	return Float
}

// Bytes is the size of one element.
func (d Data) Bytes() int64 {
	if d == Float {
		return 4
	}
	return 2
}

// CuDNN is the element type as cuDNN's cudnnDataType_t names it, the same in its legacy
// and graph APIs (cudnn_graph.h of cuDNN 9, cudnn_ops_infer.h of 8): CUDNN_DATA_FLOAT 0,
// CUDNN_DATA_HALF 2, CUDNN_DATA_BFLOAT16 9.
func (d Data) CuDNN() int {
	switch d {
	case Half:
		return 2
	case BFloat16:
		return 9
	}
	return 0
}

// CUDA is the element type as cuBLAS's cudaDataType_t names it (library_types.h):
// CUDA_R_32F 0, CUDA_R_16F 2, CUDA_R_16BF 14.
func (d Data) CUDA() int {
	switch d {
	case Half:
		return 2
	case BFloat16:
		return 14
	}
	return 0
}

// cuDNN's cudnnTensorFormat_t: CUDNN_TENSOR_NCHW 0, CUDNN_TENSOR_NHWC 1.
const (
	FormatNCHW = 0
	FormatNHWC = 1
)

// Strides are the element strides of a tensor of dims (N, C, H, W), or a filter's
// (K, C, R, S), in memory: packed NCHW, or channels-last NHWC (C varies fastest), as
// cuDNN's graph API takes them for PyTorch's contiguous and channels_last tensors.
func Strides(dims [4]int64, nhwc bool) [4]int64 {
	c, h, w := dims[1], dims[2], dims[3]
	if nhwc {
		return [4]int64{h * w * c, 1, w * c, c}
	}
	return [4]int64{c * h * w, h * w, w, 1}
}

// BatchNormOnCuDNN says whether PyTorch runs a training batch norm of kernel precision
// p through cuDNN: not on bfloat16 data, which its backend choice
// (aten/src/ATen/native/Normalization.cpp, _select_batch_norm_backend) leaves to its own
// CUDA kernels; FP32 and FP16 data with FP32 weights (autocast's) go to cuDNN.
func BatchNormOnCuDNN(p measure.Precision) bool { return p != measure.BF16 }

// ConvPhaseBytes is the working set of a convolution phase at a batch size with elem-byte
// tensors and a workspace: the tensors it reads and writes (forward x, w, y and the bias;
// data gradient w, dy, dx; weight gradient x, dy, dw and the bias gradient) and the
// workspace. It decides whether the phase fits in the L2 (package timing).
func ConvPhaseBytes(c cnn.Config, batch int, p measure.Phase, elem, workspace int64) int64 {
	n := int64(batch)
	x, y := n*c.In.Elems()*elem, n*c.Out.Elems()*elem
	w := int64(c.Out.C) * int64(c.In.C/max(c.Groups, 1)) * int64(c.Kernel[0]*c.Kernel[1]) * elem
	bias := int64(0)
	if c.Bias {
		bias = int64(c.Out.C) * elem
	}
	switch p {
	case measure.Forward:
		return x + w + y + bias + workspace
	case measure.BackwardData:
		return w + y + x + workspace
	}
	return x + y + w + bias + workspace
}

// Notes on a depthwise convolution's row where PyTorch would not run it through cuDNN,
// as the worker does: the row is cuDNN's time, not PyTorch's kernel's.
const (
	// NoteNativeDepthwise: PyTorch runs its own depthwise kernel here (conv_depthwise2d).
	NoteNativeDepthwise = "pytorch-native-depthwise"
	// NoteDepthwiseByWorkload: PyTorch picks cuDNN or its own kernel by a table of
	// channels, size, stride and batch (check_cudnn_depthwise_workload).
	NoteDepthwiseByWorkload = "pytorch-depthwise-by-workload"
)

// IsDepthwise reports whether PyTorch treats c as a depthwise convolution: one group per
// input channel, more than one, and output channels a multiple of the input's
// (aten/src/ATen/native/Convolution.cpp, ConvParams::is_depthwise).
func IsDepthwise(c cnn.Config) bool {
	return c.Op == cnn.OpConv2d && c.Groups > 1 && c.Groups == c.In.C && c.Out.C%c.In.C == 0
}

// DepthwiseNote says how PyTorch's backend choice for a depthwise convolution differs
// from the worker's cuDNN (ConvParams::use_cudnn_depthwise): channels_last goes to cuDNN
// as here (""); in NCHW, FP32, TF32 and bfloat16 data go to PyTorch's own kernel
// (NoteNativeDepthwise), FP16 to cuDNN only for some shapes (NoteDepthwiseByWorkload:
// at least 32 channels, no dilation, square strides, then a workload table). "" for a
// convolution that is not depthwise.
func DepthwiseNote(c cnn.Config, p measure.Precision, nhwc bool) string {
	if !IsDepthwise(c) || nhwc {
		return ""
	}
	if p != measure.AMP {
		return NoteNativeDepthwise
	}
	if c.In.C < 32 || max(c.Dilation[0], 1) > 1 || max(c.Dilation[1], 1) > 1 || (c.Stride[0] != c.Stride[1] && c.In.H != 1) {
		return NoteNativeDepthwise
	}
	return NoteDepthwiseByWorkload
}
