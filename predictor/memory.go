package predictor

import (
	"math"
	"sort"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// MemoryModel holds the parts of a GPU's memory use that do not come from the network.
// Each figure is a published measurement; see docs/predicting.md, "How a step is composed".
type MemoryModel struct {
	// ContextBytes is what the process holds outside PyTorch's allocator: the CUDA
	// context with the cuDNN and cuBLAS kernels it has loaded. PyTorch 2 with CUDA's lazy
	// module loading reports 0.42–0.58 GiB of "non-PyTorch memory" in its out-of-memory
	// messages on Ampere, Ada and Hopper; we take 0.5 GiB. (PyTorch 1.x on CUDA 11
	// loaded every kernel eagerly: about 1.2 GiB.)
	ContextBytes float64
	// Fragmentation multiplies the batch-dependent bytes: the caching allocator rounds
	// blocks up and cannot return a segment that still holds a live block. At an
	// out-of-memory error PyTorch reports 0.1–7% of its reserved memory unallocated;
	// we take 3%.
	Fragmentation float64
	// UsableFraction is the part of the GPU's nominal memory (GiB) that the driver
	// reports as total: 15.78 of 16 on a V100, 23.64–23.70 of 24 on an RTX 3090 or
	// 4090, 39.59 of 40 and 79.15–79.35 of 80 on an A100.
	UsableFraction float64
}

// DefaultMemoryModel is what the predictor uses unless told otherwise.
var DefaultMemoryModel = MemoryModel{
	ContextBytes:   0.5 * (1 << 30),
	Fragmentation:  1.03,
	UsableFraction: 0.987,
}

// Memory is a network's memory use on one GPU at one precision, split into the part
// that does not depend on the batch size and the part that grows with it.
type Memory struct {
	// Fixed bytes: weights, gradients and SGD momentum in FP32 (and, for amp, the FP16
	// copies of the weights that autocast keeps for the step), plus the context.
	WeightsBytes   float64
	GradsBytes     float64
	OptimizerBytes float64
	CastBytes      float64
	ContextBytes   float64
	// Per-sample bytes. InputPerSample is the FP32 image batch, on the GPU for the whole
	// step. SavedPerSample is every activation autograd keeps for the backward pass (and
	// autocast's FP16 copy of the image): what is live when the backward pass starts.
	// PeakPerSample is the most activation memory live at any moment of the step: the
	// saved tensors not yet released plus the activation gradients in flight (at least
	// SavedPerSample).
	InputPerSample float64
	SavedPerSample float64
	PeakPerSample  float64
	Fragmentation  float64
}

// Bytes is the peak memory at per-GPU batch size b.
func (m Memory) Bytes(b int) float64 {
	return m.fixed() + float64(b)*m.perSample()
}

func (m Memory) fixed() float64 {
	return m.WeightsBytes + m.GradsBytes + m.OptimizerBytes + m.CastBytes + m.ContextBytes
}

func (m Memory) perSample() float64 {
	return (m.InputPerSample + m.PeakPerSample) * m.Fragmentation
}

// MaxBatch is the largest per-GPU batch size that fits in capacity bytes: 0 if not
// even one sample fits, -1 if the capacity is unknown (zero).
func (m Memory) MaxBatch(capacity float64) int {
	if capacity <= 0 {
		return -1
	}
	free := capacity - m.fixed()
	if free < m.perSample() || m.perSample() <= 0 {
		if free >= 0 && m.perSample() <= 0 {
			return math.MaxInt32
		}
		return 0
	}
	return int(math.Floor(free / m.perSample()))
}

// Capacity is the memory the model may fill on gpu, in bytes; 0 when the GPU's memory
// is unknown.
func (mm MemoryModel) Capacity(gpu hw.GPU) float64 {
	return gpu.MemoryGB * (1 << 30) * mm.UsableFraction
}

// NetworkMemory is net's memory on one GPU when it trains with SGD with momentum in
// training precision p.
//
// Saved activations are what PyTorch's autograd keeps (cnn.Network.SavedBytes: every
// saved tensor once, in-place layers sharing their input's storage, max-pool indices,
// dropout masks); under amp they are FP16 and the first convolution keeps an FP16 copy
// of the image. The peak follows the backward pass (activationPeak): autograd releases
// a layer's saved tensors once the layer's backward has run, so the gradient buffers of
// the large early layers coexist with few saved tensors. Convolution workspace is not
// counted: PyTorch offers cuDNN only algorithms whose workspace fits in the largest free
// block (getMaxWorkspaceSize in ATen's cudnn/Conv_v7.cpp), so it never causes the
// out-of-memory error.
func (mm MemoryModel) NetworkMemory(net *cnn.Network, p measure.Precision) Memory {
	actBytes := 4
	if HalfPrecision(p) {
		actBytes = 2
	}
	params := float64(net.Params())
	m := Memory{
		WeightsBytes:   4 * params,
		GradsBytes:     4 * params,
		OptimizerBytes: 4 * params,
		ContextBytes:   mm.ContextBytes,
		Fragmentation:  mm.Fragmentation,
		InputPerSample: 4 * float64(net.Input.Elems()),
	}
	if HalfPrecision(p) {
		m.CastBytes = 2 * params
	}
	var imageCopy float64 // autocast's FP16 copy of the image, kept by a convolution on it
	if HalfPrecision(p) {
		for i := range net.Layers {
			if l := &net.Layers[i]; l.SavedBytes(1) > 0 && !needsDataGradient(l) {
				imageCopy = 2 * float64(net.Input.Elems())
				break
			}
		}
	}
	m.SavedPerSample = float64(net.SavedBytes(actBytes)) + imageCopy
	m.PeakPerSample = activationPeak(net, actBytes) + imageCopy
	return m
}

// activationPeak is the most activation memory per sample (bytes, elements of
// elemBytes) live at any point of a training step, the image excluded.
//
// While layer k runs its backward pass, the live tensors are those saved by layers
// 0..k (autograd frees what a layer saved once its backward has run; a tensor several
// layers save lives until the earliest of them has run), the gradients of layer
// outputs produced by later layers and not yet consumed (those of layers j ≤ k with a
// consumer after k), and the gradients layer k produces for inputs that nothing later
// has produced a gradient for. The forward pass at layer k holds the tensors saved so
// far and the layer's new output.
func activationPeak(net *cnn.Network, elemBytes int) float64 {
	n := len(net.Layers)
	if n == 0 {
		return 0
	}
	eb := float64(elemBytes)
	outBytes := func(j int) float64 { return float64(net.Layers[j].Out.Elems()) * eb }

	lastUse := make([]int, n) // the last layer that consumes layer j's output; j if none
	for j := range lastUse {
		lastUse[j] = j
	}
	for k := range net.Layers {
		for _, in := range net.Layers[k].Inputs {
			if in >= 0 && k > lastUse[in] {
				lastUse[in] = k
			}
		}
	}
	// pending[k]: gradients of outputs of layers j ≤ k whose last consumer is after k.
	delta := make([]float64, n+1)
	for j, last := range lastUse {
		if last > j {
			delta[j] += outBytes(j)
			delta[last] -= outBytes(j)
		}
	}
	type step struct {
		layer     int
		transient float64 // bytes on top of the saved tensors of layers 0..layer
		upper     float64 // a bound on the step's total: transient + bound(layer)
	}
	steps := make([]step, 0, 2*n)
	var pending float64
	for k := range net.Layers {
		pending += delta[k]
		l := &net.Layers[k]
		produced := 0.0
		if needsDataGradient(l) {
			for _, in := range l.Inputs {
				if in >= 0 && lastUse[in] == k {
					produced += outBytes(in)
				}
			}
		}
		steps = append(steps, step{layer: k, transient: pending + produced})
		if !l.InPlace && l.Op != cnn.OpFlatten && l.Op != cnn.OpSlice {
			steps = append(steps, step{layer: k, transient: outBytes(k)}) // the forward pass writing layer k's output
		}
	}
	// The saved bytes of layers 0..k only grow with k, so those at every c-th layer
	// bound the steps between; a step's exact figure is computed only if its bound
	// could beat the best found so far (a few dozen prefix counts in all).
	prefixSaved := make(map[int]float64)
	saved := func(k int) float64 {
		v, ok := prefixSaved[k]
		if !ok {
			prefix := cnn.Network{Input: net.Input, Layers: net.Layers[:k+1]}
			v = float64(prefix.SavedBytes(elemBytes))
			prefixSaved[k] = v
		}
		return v
	}
	c := max(1, int(math.Sqrt(float64(n))))
	bound := func(k int) float64 { return saved(min(n-1, (k/c+1)*c-1)) }
	for i := range steps {
		steps[i].upper = steps[i].transient + bound(steps[i].layer)
	}
	sort.Slice(steps, func(a, b int) bool { return steps[a].upper > steps[b].upper })
	best := saved(n - 1)
	for _, s := range steps {
		if s.upper <= best {
			break // no later step can beat best
		}
		best = math.Max(best, s.transient+saved(s.layer))
	}
	return best
}
