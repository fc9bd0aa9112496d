package cnn

import "cnntime/predictor/measure"

// Costs of the kernels a layer runs in a training step, for the roofline model, the
// sweep planner and the memory model.
//
// Conventions, shared by every method here:
//   - batch is the number of samples in the step; elemBytes the size of one activation
//     or weight element (4 for FP32 and TF32, 2 under AMP).
//   - FLOPs count a multiply-accumulate as 2 operations; elementwise ops count their
//     arithmetic per element (an exp or a comparison is 1).
//   - Bytes are DRAM traffic assuming each tensor is streamed once per pass a kernel
//     makes over it, without cache reuse between kernels.
//   - Which kernels exist follows PyTorch's autograd: see Phases.

// Work is what one kernel phase of a layer does at a batch size.
type Work struct {
	FLOPs      float64 // floating-point operations
	ReadBytes  int64   // bytes read from memory
	WriteBytes int64   // bytes written to memory
}

// Bytes is the total memory traffic.
func (w Work) Bytes() int64 { return w.ReadBytes + w.WriteBytes }

// imageOnly reports whether every input of the layer is the network's input image, whose
// gradient PyTorch never computes.
func (l *Layer) imageOnly() bool {
	for _, in := range l.Inputs {
		if in != image {
			return false
		}
	}
	return len(l.Inputs) > 0
}

// Phases lists the kernels the layer runs in a training step, in execution order:
//   - Forward, for every op except flatten and slice (views: no kernel at all).
//   - BackwardData (the gradient with respect to the inputs) unless the layer's only
//     input is the image (PyTorch computes no gradient for it), and except for add and
//     concat, whose backward passes the output gradient through as views.
//     Batch norm's backward is one fused kernel (cudnnBatchNormalizationBackward) that
//     also computes the gradients of its scale and shift: it is BackwardData, always.
//   - BackwardWeights for conv2d, linear, layer norm and scale, the layers whose
//     parameter gradients are their own kernels.
//
// The list is shared (PhaseList): read it, never change it.
func (l *Layer) Phases() []measure.Phase {
	switch l.Op {
	case OpFlatten, OpSlice:
		return nil
	case OpAdd, OpConcat:
		return PhaseList(false, false)
	case OpBatchNorm:
		return PhaseList(true, false)
	}
	return PhaseList(!l.imageOnly(), l.Params > 0)
}

// phaseLists are PhaseList's lists, indexed by data + 2×weights.
var phaseLists = [4][]measure.Phase{
	{measure.Forward},
	{measure.Forward, measure.BackwardData},
	{measure.Forward, measure.BackwardWeights},
	{measure.Forward, measure.BackwardData, measure.BackwardWeights},
}

// PhaseList is the forward pass followed, where asked, by the data gradient and the
// weight gradient. The list is shared, not a copy (a step's plan asks for every
// layer's): read it, never change it; an append makes a copy.
func PhaseList(data, weights bool) []measure.Phase {
	i := 0
	if data {
		i++
	}
	if weights {
		i += 2
	}
	l := phaseLists[i]
	return l[:len(l):len(l)]
}

// HasPhase reports whether the layer runs a kernel for phase p.
func (l *Layer) HasPhase(p measure.Phase) bool {
	for _, q := range l.Phases() {
		if q == p {
			return true
		}
	}
	return false
}

// elementFLOPs is the arithmetic per output element of an elementwise op's forward and
// backward kernels.
func elementFLOPs(op Op) (fwd, bwd float64) {
	switch op {
	case OpReLU:
		return 1, 1
	case OpReLU6:
		return 2, 2
	case OpSigmoid:
		return 4, 2 // 1/(1+exp(-x)); dy·s·(1-s)
	case OpHardsigmoid:
		return 3, 2
	case OpHardswish:
		return 5, 4
	case OpSiLU:
		return 5, 7
	case OpGELU:
		return 8, 12 // erf form
	case OpDropout:
		return 2, 1 // random draw and scale; scale by the mask
	case OpStochasticDepth:
		return 1, 1
	}
	return 0, 0
}

// Work returns the FLOPs and memory traffic of the layer's kernel for phase p at the
// batch size, or the zero Work when the layer runs no such kernel (see Phases).
func (l *Layer) Work(p measure.Phase, batch, elemBytes int) Work {
	if !l.HasPhase(p) {
		return Work{}
	}
	n, eb := int64(batch), int64(elemBytes)
	in := n * l.In.Elems()      // input elements (for concat, all inputs together)
	out := n * l.Out.Elems()    // output elements
	params := l.Params * eb     // weight bytes
	macs := float64(n * l.MACs) // forward multiply-accumulates
	w := Work{}
	switch l.Op {
	case OpConv2d, OpLinear:
		switch p {
		case measure.Forward:
			w = Work{2 * macs, (in * eb) + params, out * eb}
			if l.Bias {
				w.FLOPs += float64(out)
			}
		case measure.BackwardData:
			w = Work{2 * macs, (out * eb) + params, in * eb}
		case measure.BackwardWeights:
			w = Work{2 * macs, (in + out) * eb, params}
			if l.Bias {
				w.FLOPs += float64(out)
			}
		}
	case OpBatchNorm:
		// Training mode: one pass for the batch statistics, one to normalize; the
		// backward reduces dy and dy·x̂, then computes dx.
		switch p {
		case measure.Forward:
			w = Work{6 * float64(in), 2*in*eb + params, out * eb}
		case measure.BackwardData:
			w = Work{10 * float64(in), 2*(in+out)*eb + params, in*eb + params}
		}
	case OpLayerNorm:
		positions := n * int64(l.In.H) * int64(l.In.W)
		switch p {
		case measure.Forward:
			w = Work{6 * float64(in), in*eb + params, out*eb + 2*4*positions}
		case measure.BackwardData:
			w = Work{10 * float64(in), (in+out)*eb + params + 2*4*positions, in * eb}
		case measure.BackwardWeights:
			w = Work{4 * float64(in), (in+out)*eb + 2*4*positions, params}
		}
	case OpScale:
		switch p {
		case measure.Forward:
			w = Work{float64(out), in*eb + params, out * eb}
		case measure.BackwardData:
			w = Work{float64(out), out*eb + params, in * eb}
		case measure.BackwardWeights:
			w = Work{2 * float64(out), (in + out) * eb, params}
		}
	case OpMaxPool, OpAvgPool:
		window := float64(l.Kernel[0] * l.Kernel[1])
		switch p {
		case measure.Forward:
			w = Work{window * float64(out), in * eb, out * eb}
			if l.Op == OpMaxPool {
				w.WriteBytes += 8 * out // int64 indices of the maxima
			}
		case measure.BackwardData:
			w = Work{window * float64(out), out * eb, in * eb}
			if l.Op == OpMaxPool {
				w = Work{float64(out), out*eb + 8*out, in * eb}
			}
		}
	case OpAdaptiveAvg:
		switch p {
		case measure.Forward:
			w = Work{float64(in), in * eb, out * eb}
		case measure.BackwardData:
			w = Work{float64(in), out * eb, in * eb}
		}
	case OpAdd:
		k := int64(max(l.NumInputs, 1))
		w = Work{float64((k - 1) * out), k * out * eb, out * eb}
	case OpMul:
		gate := n * l.InShapes[len(l.InShapes)-1].Elems()
		switch p {
		case measure.Forward:
			w = Work{float64(out), (in + gate) * eb, out * eb}
		case measure.BackwardData: // dx = dy·s and ds = Σ dy·x
			w = Work{3 * float64(out), (2*out + in + gate) * eb, (in + gate) * eb}
		}
	case OpConcat, OpChannelShuffle, OpPermute:
		w = Work{0, in * eb, out * eb} // a copy either way
	case OpLoss:
		k := int64(max(l.NumInputs, 1))
		switch p {
		case measure.Forward: // log-softmax, then the negative log-likelihood
			w = Work{4 * float64(k*in), 2 * k * in * eb, k * in * eb}
		case measure.BackwardData:
			w = Work{3 * float64(k*in), k * in * eb, k * in * eb}
		}
	default: // elementwise activations, dropout, stochastic depth
		fwd, bwd := elementFLOPs(l.Op)
		switch p {
		case measure.Forward:
			w = Work{fwd * float64(out), in * eb, out * eb}
			if l.Op == OpDropout {
				w.WriteBytes += out // the mask, one byte per element
			}
		case measure.BackwardData: // reads dy and the saved tensor (or the mask)
			saved := out * eb
			if l.Op == OpDropout {
				saved = out
			}
			w = Work{bwd * float64(out), out*eb + saved, in * eb}
		}
	}
	return w
}

// GEMM is the matrix-multiply view of a conv2d or linear kernel (implicit GEMM): Groups
// independent products of an M×K by a K×N matrix. Tile and wave quantization act on M
// and N; K sets the work per tile.
type GEMM struct {
	M, N, K int64
	Groups  int64
}

// MACs is the GEMM's multiply-accumulates, Groups·M·N·K.
func (g GEMM) MACs() int64 { return g.Groups * g.M * g.N * g.K }

// GEMM returns the implicit-GEMM view of a conv2d or linear layer's kernel for phase p
// at the batch size, and false for other ops or phases the layer does not run:
//
//	conv fwd:         M = batch·Ho·Wo, N = Cout/g, K = Cin/g·kh·kw
//	conv bwd_data:    M = batch·H·W,   N = Cin/g,  K = Cout/g·kh·kw
//	conv bwd_weights: M = Cout/g,      N = Cin/g·kh·kw, K = batch·Ho·Wo
//
// linear is a 1×1 conv over its H×W positions with one group.
func (l *Layer) GEMM(p measure.Phase, batch int) (GEMM, bool) {
	if (l.Op != OpConv2d && l.Op != OpLinear) || !l.HasPhase(p) {
		return GEMM{}, false
	}
	g := int64(max(l.Groups, 1))
	kArea := int64(1)
	if l.Op == OpConv2d {
		kArea = int64(l.Kernel[0]) * int64(l.Kernel[1])
	}
	n := int64(batch)
	cin, cout := int64(l.In.C)/g, int64(l.Out.C)/g
	outPos := n * int64(l.Out.H) * int64(l.Out.W)
	inPos := n * int64(l.In.H) * int64(l.In.W)
	switch p {
	case measure.Forward:
		return GEMM{M: outPos, N: cout, K: cin * kArea, Groups: g}, true
	case measure.BackwardData:
		return GEMM{M: inPos, N: cin, K: cout * kArea, Groups: g}, true
	default:
		return GEMM{M: cout, N: cin * kArea, K: outPos, Groups: g}, true
	}
}

// saved says which tensors a layer keeps from forward to backward, as PyTorch's autograd does.
type saved struct {
	inputs bool  // its input tensors (every one of them)
	output bool  // its output tensor
	extra  int64 // bytes per sample of other state: max-pool indices, dropout mask, norm statistics
}

func (l *Layer) saves(elemBytes int) saved {
	switch l.Op {
	case OpConv2d, OpLinear, OpBatchNorm, OpScale, OpSiLU, OpHardswish, OpHardsigmoid, OpGELU, OpMul:
		return saved{inputs: true}
	case OpLayerNorm:
		return saved{inputs: true, extra: 2 * 4 * int64(l.In.H) * int64(l.In.W)} // FP32 mean and rstd per position
	case OpReLU, OpSigmoid:
		return saved{output: true}
	case OpReLU6:
		// In place, ReLU6 (hardtanh_) keeps a clone of its input for backward: PyTorch's
		// derivative of hardtanh reads self, so autograd copies self before overwriting it
		// (pytorch/pytorch#95432, PyTorch 1.10 on); the result it writes is not saved.
		if l.InPlace {
			return saved{extra: l.In.Elems() * int64(elemBytes)}
		}
		return saved{inputs: true}
	case OpStochasticDepth:
		// torchvision's StochasticDepth multiplies by a per-sample noise tensor and
		// saves it: one element per sample.
		return saved{extra: int64(elemBytes)}
	case OpAvgPool:
		return saved{inputs: true} // avg_pool2d_backward reads the input
	case OpAdaptiveAvg:
		// A 1×1 output is a mean over H×W, whose backward needs only the shape; any other
		// size runs _adaptive_avg_pool2d, whose backward reads the input.
		if l.Out.H == 1 && l.Out.W == 1 {
			return saved{}
		}
		return saved{inputs: true}
	case OpMaxPool:
		return saved{inputs: true, extra: 8 * l.Out.Elems()}
	case OpDropout:
		return saved{extra: l.Out.Elems()}
	case OpLoss:
		// FP32 log-probabilities: cross-entropy is on autocast's float32 list, so also under amp.
		return saved{extra: int64(max(l.NumInputs, 1)) * l.In.Elems() * 4}
	}
	return saved{}
}

// Under amp (elemBytes below 4) PyTorch's autocast chooses each op's precision (its op
// lists in ATen's autocast_mode.cpp), and autograd saves a tensor in the precision of
// the op that saves it:
//   - convolutions and linear layers are on its lower-precision list: they cast their
//     inputs to FP16 and save the FP16 copy;
//   - layer norm is on its float32 list: it casts its input to FP32, saves the FP32
//     copy and writes FP32 (so ConvNeXt's layer norms keep FP32 activations); so is
//     cross-entropy, whose saved log-probabilities are FP32;
//   - every other op runs in its inputs' precision, the widest when they differ. Batch
//     norm takes FP16 input (cuDNN) and writes FP16, its statistics in FP32 (per
//     channel, not per sample: not counted here); a layer scale multiplies by an FP32
//     parameter, which promotes its output to FP32.
//
// A cast of an activation is a new tensor for each op that casts it (autocast caches
// only its casts of weights). In FP32 nothing is cast and every element is elemBytes.

// fp32Bytes is the size of an FP32 element.
const fp32Bytes = 4

// precisionRule is how autocast sets the precision an op runs in.
type precisionRule int

const (
	followInputs  precisionRule = iota // the widest of its inputs' precisions
	castToReduced                      // autocast's lower-precision list: inputs cast to FP16
	castToFP32                         // autocast's float32 list: inputs cast to FP32
	promoteToFP32                      // an FP32 parameter in the op promotes it to FP32
)

func precisionOf(op Op) precisionRule {
	switch op {
	case OpConv2d, OpLinear:
		return castToReduced
	case OpLayerNorm:
		return castToFP32
	case OpScale:
		return promoteToFP32
	}
	return followInputs
}

// savedElemBytes is the element size of the inputs a layer saves, given the element
// size of those inputs (inputBytes) and the activations' elemBytes.
func (l *Layer) savedElemBytes(inputBytes, elemBytes int) int {
	switch precisionOf(l.Op) {
	case castToReduced:
		return elemBytes
	case castToFP32:
		return max(elemBytes, fp32Bytes)
	}
	return inputBytes
}

// outElemBytes is the element size of a layer's output, given the widest element size of
// its inputs.
func (l *Layer) outElemBytes(inputBytes, elemBytes int) int {
	switch precisionOf(l.Op) {
	case castToReduced:
		return elemBytes
	case castToFP32, promoteToFP32:
		return max(elemBytes, fp32Bytes)
	}
	return inputBytes
}

// SavedBytes is the memory per sample the layer keeps for its backward pass, counted on
// its own: saved inputs or output plus extra state such as max-pool indices. Tensors that
// several layers save (a conv's input that is also a ReLU's output) are counted by each;
// Network.SavedBytes counts them once. On its own a layer does not know its inputs'
// precision: it takes them to be elemBytes, and applies its own precision rule (a layer
// norm under amp saves FP32); Network.SavedBytes follows the precisions through the graph.
func (l *Layer) SavedBytes(elemBytes int) int64 {
	s := l.saves(elemBytes)
	b := s.extra
	if s.inputs {
		eb := int64(l.savedElemBytes(elemBytes, elemBytes))
		for _, sh := range l.InShapes {
			b += sh.Elems() * eb
		}
	}
	if s.output {
		b += l.Out.Elems() * int64(l.outElemBytes(elemBytes, elemBytes))
	}
	return b
}

// aliases reports whether the layer's output shares its input's storage: in-place ops
// and views (flatten, slice).
func (l *Layer) aliases() bool { return l.InPlace || l.Op == OpFlatten || l.Op == OpSlice }

// storage returns the layer whose output buffer holds layer i's output (image for the
// input batch), following in-place ops and views back to the tensor's owner.
func (n *Network) storage(i int) int {
	for i >= 0 && n.Layers[i].aliases() {
		i = n.Layers[i].Inputs[0]
	}
	return i
}

// outputElemBytes is the element size of every layer's output when activations are
// elemBytes (see the precision rules above); the input image is FP32.
func (n *Network) outputElemBytes(elemBytes int) []int {
	out := make([]int, len(n.Layers))
	for i := range n.Layers {
		l := &n.Layers[i]
		widest := 0
		for _, in := range l.Inputs {
			b := fp32Bytes
			if in != image {
				b = out[in]
			}
			widest = max(widest, b)
		}
		if elemBytes >= fp32Bytes || widest == 0 {
			widest = elemBytes // no autocast: everything is elemBytes
		}
		out[i] = l.outElemBytes(widest, elemBytes)
	}
	return out
}

// SavedBytes is the activation memory per sample that a training step keeps from
// forward to backward: every tensor some layer saves, counted once however many layers
// save it (an in-place ReLU after batch norm shares its storage, as in PyTorch), plus
// each layer's extra state. Under amp each tensor is counted in the precision it is
// saved in, and a layer that casts its input saves a copy of its own (see the precision
// rules above). The input batch itself, and any cast of it, is not included.
func (n *Network) SavedBytes(elemBytes int) int64 {
	outBytes := n.outputElemBytes(elemBytes)
	// A saved tensor is a layer output's storage, or a cast copy of it made by one layer.
	type tensor struct{ storage, castBy int }
	counted := make(map[tensor]bool, len(n.Layers))
	var total int64
	count := func(i, castBy, bytes int) {
		owner := n.storage(i)
		if owner == image {
			return
		}
		t := tensor{storage: owner, castBy: -1}
		if bytes != outBytes[owner] {
			t.castBy = castBy
		}
		if counted[t] {
			return
		}
		counted[t] = true
		total += n.Layers[owner].Out.Elems() * int64(bytes)
	}
	for i := range n.Layers {
		l := &n.Layers[i]
		s := l.saves(elemBytes)
		total += s.extra
		if s.inputs {
			for _, in := range l.Inputs {
				inBytes := fp32Bytes
				if in != image {
					inBytes = outBytes[in]
				}
				count(in, i, l.savedElemBytes(inBytes, elemBytes))
			}
		}
		if s.output {
			count(i, i, outBytes[i])
		}
	}
	return total
}
