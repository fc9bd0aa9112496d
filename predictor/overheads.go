package predictor

import (
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
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
	// GraphLaunchUS is the host time to replay one captured CUDA graph, the framework's
	// wrapper around cudaGraphLaunch included (torch.compile's CUDA-graph trees check
	// their inputs in Python). A stack that replays graphs pays it per graph instead of
	// a launch per kernel: torch.compile's reduce-overhead mode two per step (forward and
	// backward), NVIDIA's optimised implementations one (the whole step).
	GraphLaunchUS float64
	// CompiledCallMS is the host time of one call of a graph torch.compile compiled in
	// its default mode (Dynamo's guards, AOTAutograd's runtime wrapper, the generated
	// wrapper's setup), paid twice a step (forward and backward) while the GPU waits.
	// On our H200 (PyTorch 2.11, ResNet-50 amp channels_last at batch 256, the profile
	// in docs/accuracy.md) the compiled step spent 4.5 ms outside kernels where the eager
	// step spent 2.4 ms: 1.05 ms per call. Not fitted to the public rows.
	CompiledCallMS float64
	// GeneratedKernelEfficiency is the share of a library kernel's streaming rate that
	// torch.compile's generated (Triton) kernels reach: its fused normalisation and
	// element-wise kernels take their traffic ÷ this. In the same H200 profile the fused
	// batch-norm chains took 0.76 of the eager batch norm, activation, add and pooling
	// time where their traffic alone gives 0.64: 0.84. Not fitted to the public rows.
	GeneratedKernelEfficiency float64
	// UpdateIssueUSPerTensor is the host time per parameter tensor of a foreach
	// optimizer step (PyTorch 2's SGD groups the tensors into few launches but walks
	// their lists in C++, and zero_grad sets each gradient to None in Python).
	UpdateIssueUSPerTensor float64
	// UpdateBytesPerParam is what a fused SGD with momentum moves per FP32 parameter
	// (a compiled step's one kernel per tensor): read the weight, its gradient and the
	// momentum, write the weight and the momentum.
	UpdateBytesPerParam float64
	// SGDBytesPerParam is what PyTorch's unfused SGD with momentum and weight decay
	// moves per parameter, loop or foreach alike: grad.add(p) (read 8, write 4),
	// buf.mul_ (read 4, write 4), buf.add_(grad) (read 8, write 4), p.add_(buf) (read
	// 8, write 4).
	SGDBytesPerParam float64
	// SmallKernelUS is the GPU time of a kernel over a handful of elements, queued
	// behind others: the fixed part of every kernel of the framework's per-tensor work
	// (the calibration's per-kernel launch cost, kernels.PriorCalibration's LaunchUS).
	SmallKernelUS float64
	// EagerOpUS is the host time to issue one small operator from Python on a GPU
	// tensor: the Python call, PyTorch's dispatcher and the kernel launch. PyTorch 1's
	// optimizer loop, zero_grad and batch norm's counters pay it once per operator.
	// Fitted (20 µs since forward and data-gradient GEMMs split their reduction at small
	// grids; 8 µs with the maturity term's cost per convolution before that) with
	// pipeline.DataLoaderHandoffMS on the tuning sources of the
	// one-GPU step-time series (validate table 8), over a range from what
	// scripts/step_host_cost.py measures of the Python loop on a CPU plus a launch
	// (about 8 µs) to NVIDIA's ~20 µs per PyTorch elementwise operator on a V100, host
	// call to kernel start (Nsight Systems user guide).
	EagerOpUS float64
	// AMPBytesPerParam is amp's extra traffic per parameter and step: autocast's FP16
	// copy of each weight (read 4, write 2 bytes) and the gradient scaler's unscale
	// and finiteness check (read and write 4 bytes).
	AMPBytesPerParam float64
	// BF16BytesPerParam is bf16 autocast's extra traffic per parameter and step: the
	// BF16 copy of each weight (read 4, write 2 bytes). BF16 keeps FP32's exponent
	// range, so no gradient scaler unscales or checks the gradients.
	BF16BytesPerParam float64
	// MemoryEfficiency is the fraction of the specified memory bandwidth streaming
	// kernels reach (measured V100 ≈ 0.82, T4 ≈ 0.75, P100 ≈ 0.68 of spec).
	MemoryEfficiency float64
	// FallbackBandwidthGBs is used for a device whose memory bandwidth and memory type
	// are unknown (a GPU of unknown memory type gets its type's typical bandwidth).
	FallbackBandwidthGBs float64
	// OverheadRelErr is the relative error assumed for the host and update part of a step.
	OverheadRelErr float64

	// NVLinkAllReduceEfficiency and PCIeAllReduceEfficiency are the bus bandwidth
	// NCCL's all-reduce reaches within a node (nccl-tests' busbw at large messages),
	// as a share of the link's bandwidth per direction (hw.GPU.InterconnectGBs):
	//   - NVLink: 8 A100-SXM4-80GB on NVSwitch reach a busbw of ~200 GB/s of 300
	//     (NVIDIA/nccl-tests issue 149); on H100, NCCL's ring gets "an effective NVLink
	//     bandwidth of 370GB/s" of the 450 line rate (NVIDIA's reply in
	//     NVIDIA/nccl-tests issue 212): 0.67 and 0.82, 0.75 taken;
	//   - PCIe: 4 GPUs over PCIe without peer-to-peer (GeForce cards, most VMs) reach a
	//     busbw of 4.87 GB/s of PCIe 3.0 ×16's 16 (NVIDIA/nccl issue 445): 0.3.
	NVLinkAllReduceEfficiency float64
	PCIeAllReduceEfficiency   float64
	// AllReduceLatencyUS is the latency of one ring step.
	AllReduceLatencyUS float64
	// OverlapFraction is the part of the backward pass the all-reduce can hide under:
	// PyTorch DDP reduces 25 MB gradient buckets as soon as each is ready, so all but
	// the last bucket overlap with the rest of the backward pass.
	OverlapFraction float64
	// BucketBytes is DDP's gradient bucket size; the last bucket's reduction is never hidden.
	BucketBytes float64
	// CommInterference is the share of the hidden all-reduce time that still slows
	// the backward pass: NCCL's kernels run on the SMs and memory the backward
	// kernels use. StepJitter is the relative spread of one worker's step time (its
	// loader, host and clocks); every step waits for the slowest of N workers, on
	// average StepJitter × sqrt(2 ln N) steps more than the mean (over several nodes
	// NetworkModel.NodeJitter adds the slowest node's wait). Both are fitted on the
	// tuning sources of the scaling table (`cnntime validate` table 5,
	// app/validate.FitScaling) with NetworkModel.Efficiency and NodeJitter: the
	// published runs show 2% jitter and no interference beyond it (the fit's best is 0
	// on a grid to 0.5).
	CommInterference float64
	StepJitter       float64

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
// other sources held out (see docs/accuracy.md), and refitted on the same rows when
// split-K made their small convolutions faster on the GPU: 25 and 18 µs (were 20 and
// 12), the rows' MAPE 10.8% (11.4% at 20 and 12, 15.5% before split-K), the best of a
// grid of 20–30 and 12–24 µs, where 25 and 15 tie and 18 gives the batch curve's
// tuning series (validate table 10) 8.7% rather than 9.5%; the rest are physical
// figures or PyTorch's own settings (DDP's 25 MB buckets).
var DefaultOverheads = Overheads{
	LaunchForwardUS:           25,
	LaunchBackwardUS:          18,
	StepMS:                    1.0,
	GraphLaunchUS:             20,
	CompiledCallMS:            1.05,
	GeneratedKernelEfficiency: 0.84,
	UpdateIssueUSPerTensor:    1.5,
	UpdateBytesPerParam:       20,
	SGDBytesPerParam:          44,
	SmallKernelUS:             5,
	EagerOpUS:                 20,
	AMPBytesPerParam:          14,
	BF16BytesPerParam:         6,
	MemoryEfficiency:          0.78,
	FallbackBandwidthGBs:      50,
	OverheadRelErr:            0.3,
	NVLinkAllReduceEfficiency: 0.75,
	PCIeAllReduceEfficiency:   0.3,
	CommInterference:          0,
	StepJitter:                0.02,
	AllReduceLatencyUS:        10,
	OverlapFraction:           0.8,
	BucketBytes:               25 << 20,
	PowerIdleFraction:         0.3,
	PowerBusyFraction:         0.55,
	MaxSweetSpots:             5,
	SweetSpotJumpPct:          3,
}

// stepHostMS is the host work once per step of framework f: StepMS for a stack that
// runs a Python training loop around the step (eager PyTorch, graph frameworks, and
// torch.compile, whose optimizer and loop stay eager) plus, for torch.compile, the calls
// of its two compiled graphs (forward and backward: guards and the runtime wrapper, or
// the CUDA-graph replays); one graph replay and nothing else for NVIDIA's optimised
// implementations, which capture the whole step.
func (o Overheads) stepHostMS(f Framework) float64 {
	switch f.orDefault() {
	case Compiled:
		return o.StepMS + 2*o.CompiledCallMS
	case CompiledGraphs:
		return o.StepMS + 2*o.GraphLaunchUS/1000
	case Optimized:
		return o.GraphLaunchUS / 1000
	}
	return o.StepMS
}

// streamGBs is the bandwidth streaming kernels reach on req's GPU, GB/s: its memory
// bandwidth (or its memory type's typical one, or FallbackBandwidthGBs) times
// MemoryEfficiency.
func (o Overheads) streamGBs(req *Request) float64 {
	bw := req.GPU.MemoryBandwidthGBs
	if !(bw > 0) && req.GPU.MemoryType != "" {
		bw, _ = kernels.BandwidthGBs(req.GPU) // the typical bandwidth of its memory type
	}
	if !(bw > 0) {
		bw = o.FallbackBandwidthGBs
	}
	return bw * o.MemoryEfficiency
}

// allReduceEfficiency is the share of gpu's link bandwidth per direction that NCCL's
// all-reduce reaches as bus bandwidth: NVLinkAllReduceEfficiency over NVLink,
// PCIeAllReduceEfficiency otherwise.
func (o Overheads) allReduceEfficiency(gpu hw.GPU) float64 {
	if gpu.Interconnect == "NVLink" {
		return o.NVLinkAllReduceEfficiency
	}
	return o.PCIeAllReduceEfficiency
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
