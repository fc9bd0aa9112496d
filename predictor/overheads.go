package predictor

import (
	"math"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// Overheads is the part of the step model outside the layers' kernels: the host's
// cost of issuing work, the optimizer update, the gradient all-reduce between GPUs,
// power draw, and how curves are summarised.
type Overheads struct {
	// LaunchForwardUS and LaunchBackwardUS are the host time to issue one kernel in
	// the forward pass (Python module call, dispatcher, launch) and in the backward
	// pass (C++ autograd engine, launch), microseconds.
	LaunchForwardUS  float64
	LaunchBackwardUS float64
	// Synchronous devices run each kernel on the issuing thread (the CPU backend): the
	// step is the sum of every kernel's issue cost and time, with no overlap.
	Synchronous bool
	// StepMS is host work once per step: the optimizer's loop over parameter groups,
	// zeroing gradients, the loss's synchronisation.
	StepMS float64
	// UpdateIssueUSPerTensor is the host time per parameter tensor of the optimizer
	// step (PyTorch's foreach SGD groups tensors into few launches).
	UpdateIssueUSPerTensor float64
	// UpdateBytesPerParam is what SGD with momentum moves per FP32 parameter: read the
	// weight, its gradient and the momentum, write the weight and the momentum.
	UpdateBytesPerParam float64
	// AMPBytesPerParam is amp's extra traffic per parameter and step: autocast's FP16
	// copy of each weight (read 4, write 2 bytes) and the gradient scaler's unscale
	// and finiteness check (read and write 4 bytes).
	AMPBytesPerParam float64
	// MemoryEfficiency is the fraction of the specified memory bandwidth streaming
	// kernels reach (measured V100 ≈ 0.82, T4 ≈ 0.75, P100 ≈ 0.68 of spec).
	MemoryEfficiency float64
	// FallbackBandwidthGBs is used for a device whose memory bandwidth and memory type
	// are unknown (a GPU of unknown memory type gets its type's typical bandwidth).
	FallbackBandwidthGBs float64
	// OverheadRelErr is the relative error assumed for the host and update part of a step.
	OverheadRelErr float64

	// AllReduceEfficiency is the fraction of the link bandwidth NCCL's ring reaches.
	AllReduceEfficiency float64
	// AllReduceLatencyUS is the latency of one ring step.
	AllReduceLatencyUS float64
	// OverlapFraction is the part of the backward pass the all-reduce can hide under:
	// PyTorch DDP reduces 25 MB gradient buckets as soon as each is ready, so all but
	// the last bucket overlap with the rest of the backward pass.
	OverlapFraction float64
	// BucketBytes is DDP's gradient bucket size; the last bucket's reduction is never hidden.
	BucketBytes float64

	// A GPU draws TDP × (PowerIdleFraction + PowerBusyFraction × busy), busy being the
	// fraction of the step its kernels run.
	PowerIdleFraction float64
	PowerBusyFraction float64

	// MaxSweetSpots is how many sweet spots a curve reports; SweetSpotJumpPct is how
	// much the time per image must rise from one batch to the next to count as a jump.
	MaxSweetSpots    int
	SweetSpotJumpPct float64
}

// DefaultOverheads are the figures the predictor uses, for PyTorch eager training on
// a current GPU. The launch costs were tuned on one part of the published
// whole-network measurements (dmikushin's V100 rows at batch ≤ 8, launch-bound), the
// other sources held out (see the README's accuracy section); the rest are physical
// figures or PyTorch's own settings (DDP's 25 MB buckets).
var DefaultOverheads = Overheads{
	LaunchForwardUS:        20,
	LaunchBackwardUS:       12,
	StepMS:                 1.0,
	UpdateIssueUSPerTensor: 1.5,
	UpdateBytesPerParam:    20,
	AMPBytesPerParam:       14,
	MemoryEfficiency:       0.78,
	FallbackBandwidthGBs:   50,
	OverheadRelErr:         0.3,
	AllReduceEfficiency:    0.8,
	AllReduceLatencyUS:     10,
	OverlapFraction:        0.8,
	BucketBytes:            25 << 20,
	PowerIdleFraction:      0.3,
	PowerBusyFraction:      0.55,
	MaxSweetSpots:          5,
	SweetSpotJumpPct:       3,
}

// updateMS is the GPU time of the optimizer step: memory-bound over the parameters.
func (o Overheads) updateMS(net *cnn.Network, req Request) float64 {
	bytes := o.UpdateBytesPerParam
	if req.Precision == measure.AMP {
		bytes += o.AMPBytesPerParam
	}
	bw := req.GPU.MemoryBandwidthGBs
	if !(bw > 0) && req.GPU.MemoryType != "" {
		bw, _ = kernels.BandwidthGBs(req.GPU) // the typical bandwidth of its memory type
	}
	if !(bw > 0) {
		bw = o.FallbackBandwidthGBs
	}
	return float64(net.Params()) * bytes / (bw * 1e9 * o.MemoryEfficiency) * 1000
}

// updateIssueMS is the host time to issue the optimizer step.
func (o Overheads) updateIssueMS(net *cnn.Network) float64 {
	return float64(paramTensors(net)) * o.UpdateIssueUSPerTensor / 1000
}

// paramTensors counts the network's parameter tensors: a weight per layer with
// parameters, and a bias where it has one (normalisations have two).
func paramTensors(net *cnn.Network) int {
	n := 0
	for i := range net.Layers {
		l := &net.Layers[i]
		if l.Params == 0 {
			continue
		}
		n++
		if l.Bias || l.Op == cnn.OpBatchNorm || l.Op == cnn.OpLayerNorm {
			n++
		}
	}
	return n
}

// exposedAllReduceMS is the part of the gradient all-reduce over n GPUs that the
// backward pass does not hide: the ring's time minus OverlapFraction of the backward
// kernels' time, but at least the reduction of the last bucket.
func (o Overheads) exposedAllReduceMS(gradBytes float64, n int, gpu hw.GPU, backwardMS float64) float64 {
	if n <= 1 {
		return 0
	}
	gbps := interconnectGBs(gpu) * o.AllReduceEfficiency
	total := ringAllReduceMS(gradBytes, n, gbps, o.AllReduceLatencyUS)
	last := ringAllReduceMS(math.Min(gradBytes, o.BucketBytes), n, gbps, o.AllReduceLatencyUS)
	return math.Max(total-o.OverlapFraction*backwardMS, last)
}

// interconnectGBs is the GPU-to-GPU bandwidth per direction: the catalog's figure,
// else PCIe from its generation and lanes, else PCIe 3.0 ×16.
func interconnectGBs(gpu hw.GPU) float64 {
	if gpu.InterconnectGBs > 0 {
		return gpu.InterconnectGBs
	}
	perLane := map[int]float64{3: 0.985, 4: 1.969, 5: 3.938}[gpu.PCIeGen]
	lanes := gpu.PCIeLanes
	if perLane == 0 {
		perLane = 0.985
	}
	if lanes <= 0 {
		lanes = 16
	}
	return perLane * float64(lanes)
}
