package predictor

import (
	"math"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// MemoryModel holds the parts of a GPU's memory use that do not come from the network.
type MemoryModel struct {
	// ContextBytes is the CUDA context with cuDNN and cuBLAS loaded and their handles'
	// workspaces: memory the framework never sees but the GPU loses (0.3–0.5 GiB on
	// current drivers; we take 0.45 GiB).
	ContextBytes float64
	// Fragmentation multiplies the batch-dependent bytes: PyTorch's caching allocator
	// rounds blocks up and cannot always reuse freed ones.
	Fragmentation float64
	// UsableFraction is the part of the GPU's nominal memory that cudaMemGetInfo reports
	// as total (a "16 GB" V100 has 15.78 GiB; ECC and the driver keep some).
	UsableFraction float64
}

// DefaultMemoryModel is what the predictor uses unless told otherwise.
var DefaultMemoryModel = MemoryModel{
	ContextBytes:   0.45 * (1 << 30),
	Fragmentation:  1.10,
	UsableFraction: 0.985,
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
	// Per-sample bytes: activations kept for the backward pass, and the largest
	// transient (a gradient buffer pair plus convolution workspace) on top of them.
	SavedPerSample     float64
	TransientPerSample float64
	Fragmentation      float64
}

// Bytes is the peak memory at per-GPU batch size b.
func (m Memory) Bytes(b int) float64 {
	return m.fixed() + float64(b)*m.perSample()
}

func (m Memory) fixed() float64 {
	return m.WeightsBytes + m.GradsBytes + m.OptimizerBytes + m.CastBytes + m.ContextBytes
}

func (m Memory) perSample() float64 {
	return (m.SavedPerSample + m.TransientPerSample) * m.Fragmentation
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
// dropout masks), plus the FP32 input image where a layer on it saves it. Under amp
// activations are FP16.
func (mm MemoryModel) NetworkMemory(net *cnn.Network, p measure.Precision) Memory {
	actBytes := 4.0
	if p == measure.AMP {
		actBytes = 2
	}
	params := float64(net.Params())
	m := Memory{
		WeightsBytes:   4 * params,
		GradsBytes:     4 * params,
		OptimizerBytes: 4 * params,
		ContextBytes:   mm.ContextBytes,
		Fragmentation:  mm.Fragmentation,
	}
	if p == measure.AMP {
		m.CastBytes = 2 * params
	}

	m.SavedPerSample = float64(net.SavedBytes(int(actBytes)))
	var largest float64 // the largest activation of one sample, bytes
	imageSaved := false
	for i := range net.Layers {
		l := &net.Layers[i]
		largest = math.Max(largest, float64(l.Out.Elems())*actBytes)
		if l.SavedBytes(1) > 0 && !needsDataGradient(l) {
			imageSaved = true // a convolution on the image keeps it for its weight gradient
		}
	}
	if imageSaved {
		img := float64(net.Input.Elems())
		m.SavedPerSample += 4 * img
		if p == measure.AMP {
			m.SavedPerSample += 2 * img // autocast's FP16 copy for the first convolution
		}
	}
	// During the backward pass the gradient flowing in and the one flowing out of the
	// largest layer coexist with the saved activations, and a convolution may use a
	// workspace of about that size.
	m.TransientPerSample = 3 * largest
	return m
}
