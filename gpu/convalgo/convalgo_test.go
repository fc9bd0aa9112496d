package convalgo

import (
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// TestStart: the math and data types of each kernel precision, with cuDNN's and cuBLAS's
// enumerations of the data type (cudnn_graph.h: FLOAT 0, HALF 2, BFLOAT16 9;
// library_types.h: CUDA_R_32F 0, CUDA_R_16F 2, CUDA_R_16BF 14).
func TestStart(t *testing.T) {
	for _, c := range []struct {
		p                   measure.Precision
		math                int
		data                Data
		bytes               int64
		cudnnType, cudaType int
	}{
		{measure.FP32, FMAMath, Float, 4, 0, 0}, {measure.TF32, DefaultMath, Float, 4, 0, 0}, {measure.FP32Strict, FMAMath, Float, 4, 0, 0},
		{measure.AMP, TensorOpMath, Half, 2, 2, 2}, {measure.BF16, TensorOpMath, BFloat16, 2, 9, 14},
	} {
		m, d := Start(c.p)
		if m != c.math || d != c.data || d.Bytes() != c.bytes || d.CuDNN() != c.cudnnType || d.CUDA() != c.cudaType {
			t.Errorf("Start(%s) = %d, %v (%d bytes, cuDNN %d, CUDA %d); want %d, %v (%d, %d, %d)", c.p, m, d, d.Bytes(), d.CuDNN(), d.CUDA(),
				c.math, c.data, c.bytes, c.cudnnType, c.cudaType)
		}
		if DataOf(c.p) != c.data {
			t.Errorf("DataOf(%s) = %v, want %v", c.p, DataOf(c.p), c.data)
		}
	}
}

// TestStrides: a channels_last tensor has C varying fastest, as PyTorch's
// torch.channels_last strides (N, C, H, W) = (HWC, 1, WC, C).
func TestStrides(t *testing.T) {
	dims := [4]int64{2, 3, 4, 5}
	if got, want := Strides(dims, false), [4]int64{60, 20, 5, 1}; got != want {
		t.Errorf("NCHW strides %v, want %v", got, want)
	}
	if got, want := Strides(dims, true), [4]int64{60, 1, 15, 3}; got != want {
		t.Errorf("NHWC strides %v, want %v", got, want)
	}
}

func TestChoose(t *testing.T) {
	ranked := []Perf{
		{Algo: 7, Status: 3000, Memory: 0, MathType: TensorOpMath}, // not supported (cuDNN 9 code)
		{Algo: 1, Status: 0, Memory: 1 << 30, MathType: TensorOpMath},
		{Algo: 6, Status: 0, Memory: 64 << 20, MathType: DefaultMath},
		{Algo: 0, Status: 0, Memory: 0, MathType: FMAMath},
	}
	fits := func(limit int64) func(int64) bool { return func(b int64) bool { return b <= limit } }
	for _, c := range []struct {
		name      string
		prec      measure.Precision
		limit     int64
		algo      int
		math      int
		ok, isOOM bool
	}{
		{"amp takes the first that fits, with its math type", measure.AMP, 2 << 30, 1, TensorOpMath, true, false},
		{"workspace too big: the next one", measure.TF32, 100 << 20, 6, DefaultMath, true, false},
		{"strict skips tensor-core results", measure.FP32Strict, 2 << 30, 0, FMAMath, true, false},
		{"fp32 kernels are strict too", measure.FP32, 2 << 30, 0, FMAMath, true, false},
	} {
		got, ok, oom := Choose(ranked, c.prec, fits(c.limit))
		if ok != c.ok || oom != c.isOOM || got.Algo != c.algo || got.MathType != c.math {
			t.Errorf("%s: got algo %d math %d ok %v oom %v; want algo %d math %d ok %v oom %v", c.name, got.Algo, got.MathType, ok, oom, c.algo, c.math, c.ok, c.isOOM)
		}
	}
	if _, ok, oom := Choose(ranked[1:3], measure.TF32, fits(0)); ok || !oom {
		t.Errorf("usable algorithms whose workspace never fits: ok %v oom %v, want out of memory", ok, oom)
	}
	if _, ok, oom := Choose(ranked[:3], measure.FP32Strict, fits(2<<30)); ok || oom {
		t.Errorf("no FMA algorithm under fp32-strict: ok %v oom %v, want unsupported", ok, oom)
	}
}

func TestFindWorkspace(t *testing.T) {
	for _, c := range []struct {
		sizes      []int64
		free, want int64
	}{{[]int64{0, 10, -1, 300}, 1000, 300}, {[]int64{0, 5000}, 1000, 1000}, {[]int64{-1}, 1000, 0}, {[]int64{10}, -5, 0}} {
		if got := FindWorkspace(c.sizes, c.free); got != c.want {
			t.Errorf("FindWorkspace(%v, %d) = %d, want %d", c.sizes, c.free, got, c.want)
		}
	}
}

func TestFitsLegacyAPI(t *testing.T) {
	for _, c := range []struct {
		elems []int64
		want  bool
	}{{[]int64{1 << 20, 1<<31 - 1}, true}, {[]int64{1 << 20, 1 << 31}, false}, {[]int64{512 * 64 * 224 * 224}, true}, {[]int64{1024 * 64 * 224 * 224}, false}} {
		if got := FitsLegacyAPI(c.elems...); got != c.want {
			t.Errorf("FitsLegacyAPI(%v) = %v, want %v", c.elems, got, c.want)
		}
	}
}

// TestDepthwiseNote: a depthwise convolution runs in PyTorch's own kernel in NCHW for
// FP32, TF32 and bfloat16 data, and for FP16 below 32 channels; FP16 from 32 channels
// depends on PyTorch's workload table; channels_last and grouped (not depthwise)
// convolutions are cuDNN's, as the worker's.
func TestDepthwiseNote(t *testing.T) {
	dw := func(ch, stride int) cnn.Config {
		s := cnn.Shape{C: ch, H: 56, W: 56}
		return cnn.Config{Op: cnn.OpConv2d, In: s, Out: s, Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{stride, stride}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: ch}
	}
	grouped := dw(64, 1)
	grouped.Groups = 32
	for _, c := range []struct {
		name string
		cfg  cnn.Config
		prec measure.Precision
		nhwc bool
		want string
	}{
		{"fp32 depthwise", dw(96, 1), measure.FP32, false, NoteNativeDepthwise},
		{"tf32 depthwise", dw(96, 2), measure.TF32, false, NoteNativeDepthwise},
		{"bf16 depthwise", dw(96, 1), measure.BF16, false, NoteNativeDepthwise},
		{"amp, 16 channels", dw(16, 1), measure.AMP, false, NoteNativeDepthwise},
		{"amp, 96 channels", dw(96, 1), measure.AMP, false, NoteDepthwiseByWorkload},
		{"channels_last", dw(96, 1), measure.FP32, true, ""},
		{"grouped, not depthwise", grouped, measure.FP32, false, ""},
	} {
		if got := DepthwiseNote(c.cfg, c.prec, c.nhwc); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
