package kernels

import (
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Class groups layer kernels that share a fitted compute efficiency: the algorithms
// cuDNN picks differ between them (Winograd for 3×3 stride-1 convolutions, plain GEMM
// for 1×1, implicit GEMM for the rest, dedicated kernels for depthwise and grouped).
type Class int

const (
	ClassConv1x1   Class = iota // dense 1×1 stride-1 unpadded convolution: a plain GEMM
	ClassConv3x3                // dense 3×3 stride-1 convolution: Winograd-eligible
	ClassConv                   // any other dense convolution: implicit GEMM
	ClassGrouped                // grouped convolution, 1 < groups < input channels
	ClassDepthwise              // depthwise convolution, groups = input channels
	ClassLinear                 // fully connected layer: a GEMM
	ClassMemory                 // memory-bound operation: normalisation, activation, pooling, add, concat, ...
	numClasses
)

var classNames = [numClasses]string{"conv1x1", "conv3x3", "conv", "grouped", "depthwise", "linear", "memory"}

func (c Class) String() string {
	if c < 0 || c >= numClasses {
		return "unknown"
	}
	return classNames[c]
}

// ClassOf returns the kernel class of a layer configuration.
func ClassOf(c cnn.Config) Class {
	switch c.Op {
	case cnn.OpConv2d:
		g := max(c.Groups, 1)
		switch {
		case g > 1 && g == c.In.C:
			return ClassDepthwise
		case g > 1:
			return ClassGrouped
		case c.Kernel == cnn.Pair{1, 1} && c.Stride == cnn.Pair{1, 1} && c.Padding == cnn.Pair{0, 0}:
			return ClassConv1x1 // strided 1×1 convolutions gather (and scatter their gradient): not a plain GEMM
		case c.Kernel == cnn.Pair{3, 3} && c.Stride == cnn.Pair{1, 1} && dilationOne(c.Dilation):
			return ClassConv3x3
		}
		return ClassConv
	case cnn.OpLinear:
		return ClassLinear
	}
	return ClassMemory
}

func dilationOne(d cnn.Pair) bool { return (d[0] <= 1) && (d[1] <= 1) }

// gemmShape is the implicit GEMM of one phase of a layer at batch size n:
// M = m0 + mPerSample·n rows, N columns, K = k0 + kPerSample·n reduction length,
// repeated for each of Groups groups. Exactly one of mPerSample and kPerSample is
// non-zero: the batch grows the rows for forward and data-gradient GEMMs and the
// reduction for the weight-gradient GEMM.
type gemmShape struct {
	mPerSample, m0 int64
	n              int64
	kPerSample, k0 int64
	groups         int64
}

// kernelCost is what one phase of one layer configuration costs, per sample where
// the batch size enters: the GEMM (if any), the FLOPs and the bytes moved.
type kernelCost struct {
	class          Class
	phase          measure.Phase
	gemm           gemmShape
	hasGEMM        bool
	elemsPerSample float64 // tensor elements read and written per sample
	elemsFixed     float64 // elements independent of the batch (weights, their gradient)
	// freshElemsPerSample are the elements of elemsPerSample a memory-bound kernel reads
	// from the tensor the kernel before it has just written (forward: its input; backward:
	// the output gradient), and freshTensorPerSample that tensor's elements: where the
	// tensor fits in the GPU's L2 those reads hit the L2 (see l2HitShare).
	freshElemsPerSample, freshTensorPerSample float64
	aligned8                                  bool // channel dimensions are multiples of 8 (FP16 tensor cores)
	aligned4                                  bool // multiples of 4 (TF32 tensor cores)
	none                                      bool // no kernel runs in this phase (e.g. weight gradient of ReLU)
}

// costOf returns the cost description of one phase of configuration c.
func costOf(c cnn.Config, phase measure.Phase) kernelCost {
	k := kernelCost{class: ClassOf(c), phase: phase, aligned8: true, aligned4: true}
	in, out := float64(c.In.Elems()), float64(c.Out.Elems())
	switch c.Op {
	case cnn.OpConv2d:
		g := int64(max(c.Groups, 1))
		cin, cout := int64(c.In.C)/g, int64(c.Out.C)/g
		kk := int64(max(c.Kernel[0], 1)) * int64(max(c.Kernel[1], 1))
		hw := int64(c.Out.H) * int64(c.Out.W)
		hwIn := int64(c.In.H) * int64(c.In.W)
		weights := float64(g * cin * cout * kk)
		k.hasGEMM = true
		k.gemm.groups = g
		switch phase {
		case measure.Forward:
			k.gemm.mPerSample, k.gemm.n, k.gemm.k0 = hw, cout, cin*kk
		case measure.BackwardData:
			k.gemm.mPerSample, k.gemm.n, k.gemm.k0 = hwIn, cin, cout*kk
		default:
			k.gemm.m0, k.gemm.n, k.gemm.kPerSample = cout, cin*kk, hw
		}
		k.elemsPerSample, k.elemsFixed = in+out, weights
		k.aligned8 = cin%8 == 0 && cout%8 == 0
		k.aligned4 = cin%4 == 0 && cout%4 == 0
	case cnn.OpLinear:
		pos := int64(max(c.In.H, 1)) * int64(max(c.In.W, 1))
		fin, fout := int64(c.In.C), int64(c.Out.C)
		k.hasGEMM = true
		k.gemm.groups = 1
		switch phase {
		case measure.Forward:
			k.gemm.mPerSample, k.gemm.n, k.gemm.k0 = pos, fout, fin
		case measure.BackwardData:
			k.gemm.mPerSample, k.gemm.n, k.gemm.k0 = pos, fin, fout
		default:
			k.gemm.m0, k.gemm.n, k.gemm.kPerSample = fout, fin, pos
		}
		k.elemsPerSample, k.elemsFixed = in+out, float64(fin*fout)
		k.aligned8 = fin%8 == 0 && fout%8 == 0
		k.aligned4 = fin%4 == 0 && fout%4 == 0
	default:
		k.elemsPerSample, k.none = memoryTraffic(c, phase, in, out)
		if !k.none {
			k.freshElemsPerSample, k.freshTensorPerSample = freshReads(c, phase, in, out)
			k.freshElemsPerSample = min(k.freshElemsPerSample, k.elemsPerSample)
		}
	}
	return k
}

// freshReads is what of a memory-bound operation's traffic (memoryTraffic) reads the
// tensor the kernel before it has just written, per sample, and that tensor's elements.
// Forward, that is its input, which the layer before produced: a batch norm reads it
// twice (statistics, then normalise), an add one of its inputs (the other, a residual
// branch's, was written long before), anything else once. Backward, it is the output
// gradient, which the layer after has just written: a batch norm reads it twice
// (reduction, then the input gradient), anything else once; the saved activations it
// also reads were written in the forward pass, long evicted.
func freshReads(c cnn.Config, phase measure.Phase, in, out float64) (reads, tensor float64) {
	norm := c.Op == cnn.OpBatchNorm || c.Op == cnn.OpLayerNorm
	if phase == measure.Forward {
		if norm {
			return 2 * in, in
		}
		return in, in
	}
	if norm {
		return 2 * out, out
	}
	return out, out
}

// memoryTraffic is the elements a memory-bound operation reads and writes per sample
// in one phase, and whether no kernel runs at all. Backward work of operations
// without weights is all in the data-gradient phase; batch norm's weight gradient is
// computed by the same kernel as its data gradient.
func memoryTraffic(c cnn.Config, phase measure.Phase, in, out float64) (float64, bool) {
	if phase == measure.BackwardWeights {
		return 0, true
	}
	fwd := phase == measure.Forward
	switch c.Op {
	case cnn.OpBatchNorm, cnn.OpLayerNorm:
		if fwd {
			return 2*in + out, false // statistics pass, then normalise
		}
		return 2*out + 2*in, false // reductions over dY and X, then dX
	case cnn.OpFlatten:
		return 0, true // a view: no kernel
	case cnn.OpAdd:
		n := float64(max(c.NumInputs, 2))
		if fwd {
			return n*in + out, false
		}
		return out + in, false // the gradient is passed on; its accumulation at the fork costs a read and a write
	case cnn.OpMul, cnn.OpScale, cnn.OpStochasticDepth:
		if fwd {
			return 2*in + out, false
		}
		return 3*in + out, false
	case cnn.OpConcat:
		return in + out, false // a copy forward, slices backward
	case cnn.OpDropout:
		if fwd {
			return in + 1.25*out, false // output plus a byte mask
		}
		return 1.25*out + in, false
	case cnn.OpMaxPool:
		if fwd {
			return in + out, false
		}
		return 2*in + out, false // dX is cleared, then scattered into
	case cnn.OpLoss:
		if fwd {
			return 2 * in, false
		}
		return 2 * in, false
	}
	// Activations, average pooling, shuffles and permutes: read one tensor, write one;
	// backward reads the output gradient and the saved tensor, writes the input gradient.
	if fwd {
		return in + out, false
	}
	return in + 2*out, false
}
