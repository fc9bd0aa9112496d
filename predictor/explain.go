package predictor

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"cnntime/predictor/cnn"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/recipe"
)

// Explanation says why a curve's iteration time at one batch size is what it is: the
// time of every layer's kernels, the step split by phase and by kind of layer, and
// the slowest layers. Its numbers come from the same composition as Curve's (the same
// kernel timings, launch simulation, overheads, input pipeline and all-reduce), so
// its phases add up to the curve's IterMS at that batch.
type Explanation struct {
	Model    string `json:"model"`
	Machine  string `json:"machine"`
	GPU      string `json:"gpu"`
	GPUCount int    `json:"gpu_count"`       // over all nodes
	Nodes    int    `json:"nodes,omitempty"` // instances of the machine, when more than one
	// Network is the network assumed between the nodes, when more than one.
	Network     *hw.Network       `json:"network,omitempty"`
	Precision   measure.Precision `json:"precision"`
	Batch       int               `json:"batch"`         // global
	PerGPUBatch int               `json:"per_gpu_batch"` // what each GPU runs: ceil(batch / gpu_count)

	// The input: its size (pixels), the loader, its workers per GPU, its own rate
	// over all GPUs (0 for synthetic data), and the activations' layout.
	Input            int             `json:"input"`
	Loader           pipeline.Loader `json:"loader"`
	Workers          int             `json:"workers,omitempty"`
	LoaderImagesPerS float64         `json:"loader_images_per_s,omitempty"`
	Format           MemoryFormat    `json:"memory_format,omitempty"`
	// Script is the training script around the step; its cost is Phases.ScriptMS.
	Script Script `json:"script,omitempty"`
	// Framework is what runs the step; its per-tensor work is in Phases.OptimizerMS
	// (GPU) and Phases.HostMS (issuing it).
	Framework Framework `json:"framework,omitempty"`
	// Software is the release of the kernel libraries the step is predicted for.
	Software Software `json:"software"`

	// The curve's point at Batch: IterMS ± ErrorPct percent from Source (the least
	// trusted source among the step's kernels), bounded by Bound ("gpu" or "input").
	IterMS     float64 `json:"iter_ms"`
	ImagesPerS float64 `json:"images_per_s"`
	ErrorPct   float64 `json:"error_pct"`
	Source     Source  `json:"source"`
	Bound      string  `json:"bound"`
	// Host is the machine's host the loader runs on (the curve's), and HostErrorPct
	// the part of ErrorPct its assumed CPU can move (Point.HostErrorPct).
	Host         *host.Host `json:"host,omitempty"`
	HostErrorPct float64    `json:"host_error_pct,omitempty"`
	// The run: one epoch, all epochs, and their cost (when CostKnown).
	EpochS    float64 `json:"epoch_s"`
	TotalS    float64 `json:"total_s"`
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
	// Epochs is how many epochs TotalS counts and EpochsSource where they come from
	// ("fixed", or the recipe's ID). Training to a target, EpochsAt is what the
	// recipe's plan (Recipe) says at this batch: the epochs, their error, the regime
	// and, when extrapolated, why.
	Epochs       float64        `json:"epochs"`
	EpochsSource string         `json:"epochs_source"`
	EpochsAt     *recipe.Epochs `json:"epochs_at,omitempty"`
	Recipe       *recipe.Plan   `json:"recipe,omitempty"`
	// Memory per GPU at PerGPUBatch, and the largest global batch that fits (-1:
	// the GPU's memory is unknown). Fits is always true: a batch that does not fit
	// is a *FitError.
	MemoryGB float64 `json:"memory_gb"`
	MaxBatch int     `json:"max_batch"`
	Fits     bool    `json:"fits"`

	// Phases splits IterMS; they add up to it.
	Phases Phases `json:"phases"`
	// Kinds is the layers' kernel time by kind of layer, slowest kind first.
	Kinds []KindTime `json:"kinds"`
	// Slowest is the ten layers with the most kernel time (forward + backward),
	// slowest first; Layers is every layer of the network, in order.
	Slowest []LayerTime `json:"slowest"`
	Layers  []LayerTime `json:"layers"`

	// Stack is what the software stack (Framework) does to this step at the kernel
	// level: the kernels it fuses, the launches and memory traffic that saves, and what
	// every stack would take for the same step.
	Stack StackReport `json:"stack"`

	// Measured is the whole training steps of this model on this GPU at this precision
	// that the cache holds (a sweep's --step rows, a launched run's steps.csv, a
	// published figure imported), by per-GPU batch: what this prediction can be read
	// against. The caller fills it (the predictor reads no cache).
	Measured []MeasuredStep `json:"measured_steps,omitempty"`
	// AnchoredMS is the iteration at this batch on the curve that predict, best and the
	// window give where measured steps that suit the run anchor it (Request.Anchors; 0
	// where none does), AnchoredSource that point's source (measured or anchored) and
	// AnchoredTo how many measured per-GPU batches the curve passes through. The
	// explanation, its phases and layers, stays the model's own. The caller fills them.
	AnchoredMS     float64 `json:"anchored_iter_ms,omitempty"`
	AnchoredSource Source  `json:"anchored_source,omitempty"`
	AnchoredTo     int     `json:"anchored_to,omitempty"`
}

// MeasuredStep is one measured whole training step beside an explanation.
type MeasuredStep struct {
	PerGPUBatch int     `json:"per_gpu_batch"`
	StepMS      float64 `json:"step_ms"`
	SpreadMS    float64 `json:"spread_ms"`
	Framework   string  `json:"framework"` // what ran it, as recorded: "pytorch 2.8.0 cnntime_train.py channels_last"
	Source      string  `json:"source"`
	MeasuredAt  string  `json:"measured_at,omitempty"` // RFC 3339 date, where known
	// PredictedMS is the predicted step at the same per-GPU batch under the same run
	// (0 where that batch cannot run it), as one GPU runs it: without the wait for the
	// loader or the all-reduce with other GPUs.
	PredictedMS float64 `json:"predicted_ms,omitempty"`
}

// StackReport is a step's software stack at the kernel level.
type StackReport struct {
	Framework   Framework `json:"framework"`
	Description string    `json:"description"`
	// CUDAGraphs: the step's kernels are replayed from CUDA graphs, not issued one by
	// one; Layout says what the convolutions see ("nhwc", or "nchw" with cuDNN's
	// transposes around each tensor-core convolution under amp, and in an eager stack
	// cuDNN's NCHW batch-norm kernels).
	CUDAGraphs bool   `json:"cuda_graphs"`
	Layout     string `json:"layout"`
	// Kernels is the kernels the step launches (layers', fused and per-tensor); Eager
	// the same step's under eager PyTorch 2 (pytorch2). MemoryMS and EagerMemoryMS are
	// the memory-bound layers' kernel time (normalisations, activations, adds,
	// pooling, ...) with this stack and unfused; HostIssueMS is the host's time to issue
	// the step's kernels one by one (0 with CUDA graphs).
	Kernels       int     `json:"kernels"`
	EagerKernels  int     `json:"eager_kernels"`
	MemoryMS      float64 `json:"memory_bound_ms"`
	EagerMemoryMS float64 `json:"eager_memory_bound_ms"`
	HostIssueMS   float64 `json:"host_issue_ms"`
	// Fused is each kernel the stack runs in place of several layers', in network
	// order; FusedKinds sums them by kind.
	Fused      []FusedKernel `json:"fused"`
	FusedKinds []FusedKind   `json:"fused_kinds"`
	// Costs is the same step (same GPU, batch, precision, layout, input and script)
	// under every stack, in Frameworks' order.
	Costs []StackCost `json:"costs"`
}

// FusedKernel is one kernel a stack runs in place of several memory-bound layers':
// its kind (the layers' ops joined by +; "(in the convolutions)" when the forward pass
// runs it inside the convolutions around it), the layers, its forward and backward
// time at the explained batch, and what the layers' own kernels would take unfused.
type FusedKernel struct {
	Kind       string   `json:"kind"`
	Layers     []string `json:"layers"`
	ForwardMS  float64  `json:"forward_ms"`
	BackwardMS float64  `json:"backward_ms"`
	UnfusedMS  float64  `json:"unfused_ms"`
}

// FusedKind is the fused kernels of one kind: how many, their time and their layers'
// unfused time.
type FusedKind struct {
	Kind      string  `json:"kind"`
	Count     int     `json:"count"`
	MS        float64 `json:"ms"`
	UnfusedMS float64 `json:"unfused_ms"`
}

// StackCost is the explained step under one stack.
type StackCost struct {
	Framework  Framework `json:"framework"`
	IterMS     float64   `json:"iter_ms"`
	ImagesPerS float64   `json:"images_per_s"`
	Kernels    int       `json:"kernels"`
	Fused      int       `json:"fused_kernels"`
}

// LayerTime is one layer's kernels on one GPU at the per-GPU batch, milliseconds. A
// phase the layer runs no kernel in is 0 (a view; no data gradient for a layer on
// the image; batch norm's weight gradient is fused into its data gradient).
type LayerTime struct {
	Index            int     `json:"index"` // in the network's layers
	Name             string  `json:"name"`
	Kind             string  `json:"kind"`  // LayerKind
	Shape            string  `json:"shape"` // LayerShape
	ForwardMS        float64 `json:"forward_ms"`
	BackwardDataMS   float64 `json:"backward_data_ms"`
	BackwardWeightMS float64 `json:"backward_weight_ms"`
	// Source is the least trusted source among the layer's kernels ("" when it runs
	// none), ErrorPct their expected error, ± percent, weighted by time.
	Source   Source  `json:"source"`
	ErrorPct float64 `json:"error_pct"`
	// Fused names the stack's fused kernel the layer runs in (its kind, see
	// FusedKernel); its times are then its share of that kernel's.
	Fused string `json:"fused,omitempty"`
}

// MS is the layer's kernel time: forward and backward.
func (l LayerTime) MS() float64 { return l.ForwardMS + l.BackwardDataMS + l.BackwardWeightMS }

// Phases splits an iteration's time, milliseconds. The first four are the GPU's busy
// time (the layers' kernels by phase, and the optimizer: the update and the framework's
// other per-parameter-tensor kernels, Request.Framework's zero_grad, gradient
// accumulation and batch norm's counters); Host is the rest of
// the training step (the GPU waiting for the host to issue kernels, and the host's
// per-step work: StepMS); Script is the training script's own per-step work (metrics,
// logging, .item() reads; 0 for a tight loop); Input is the input's work on the GPU side
// of the step (the host-to-device copy of the batch, a DataLoader's hand-over of it,
// DALI's decoding); Loader is the wait for a loader slower than all that (0 when the
// GPU bounds the step); Communication is what data parallelism adds (0 on one GPU): the
// gradient all-reduce the backward pass does not hide, NCCL's interference with it and
// the wait for the slowest worker (Sync).
type Phases struct {
	ForwardMS        float64 `json:"forward_ms"`
	BackwardDataMS   float64 `json:"backward_data_ms"`
	BackwardWeightMS float64 `json:"backward_weight_ms"`
	OptimizerMS      float64 `json:"optimizer_ms"`
	HostMS           float64 `json:"host_ms"`
	ScriptMS         float64 `json:"script_ms"`
	InputMS          float64 `json:"input_ms"`
	LoaderMS         float64 `json:"loader_ms"`
	CommunicationMS  float64 `json:"communication_ms"`
}

// PhaseTime is one phase of Phases.List: its name and time.
type PhaseTime struct {
	Phase string  `json:"phase"`
	MS    float64 `json:"ms"`
}

// List is the phases in order, named forward, backward-data, backward-weight,
// optimizer, host, script, input, loader and communication.
func (p Phases) List() []PhaseTime {
	return []PhaseTime{
		{"forward", p.ForwardMS}, {"backward-data", p.BackwardDataMS}, {"backward-weight", p.BackwardWeightMS},
		{"optimizer", p.OptimizerMS}, {"host", p.HostMS}, {"script", p.ScriptMS}, {"input", p.InputMS}, {"loader", p.LoaderMS},
		{"communication", p.CommunicationMS},
	}
}

// Total is the sum of the phases: the iteration time.
func (p Phases) Total() float64 {
	s := 0.0
	for _, x := range p.List() {
		s += x.MS
	}
	return s
}

// KindTime is the kernel time of the layers of one kind: how many layers, their
// forward and backward milliseconds, and their share of all the layers' kernel time.
type KindTime struct {
	Kind     string  `json:"kind"`
	Layers   int     `json:"layers"`
	MS       float64 `json:"ms"`
	SharePct float64 `json:"share_pct"`
}

// FitError is a batch that does not fit in the GPU's memory.
type FitError struct {
	Model, Machine string
	Batch          int     // global
	MemoryGB       float64 // needed per GPU
	CapacityGB     float64 // usable per GPU
	MaxBatch       int     // the largest global batch that fits; 0 when none does
}

func (e *FitError) Error() string {
	s := fmt.Sprintf("batch %d of %s does not fit in %s's GPU memory (%.1f GB needed per GPU, %.1f GB usable)",
		e.Batch, e.Model, e.Machine, e.MemoryGB, e.CapacityGB)
	if e.MaxBatch <= 0 {
		return s + ": not even one image per GPU fits"
	}
	return fmt.Sprintf("%s: the largest batch that fits is %d", s, e.MaxBatch)
}

// slowestLayers is how many layers Explanation.Slowest lists.
const slowestLayers = 10

// Explain explains req's iteration time at the global batch size batch (req.Batches
// is not used; a zero req.Run is one epoch of one batch). The request is checked as
// Curve checks it; a batch that does not fit in memory is a *FitError that says the
// largest that does.
func (e *Engine) Explain(req Request, batch int) (Explanation, error) {
	req.Batches = []int{batch}
	if req.Run == (Run{}) {
		req.Run = Run{Epochs: 1, Images: batch}
	}
	c, err := e.Curve(req)
	if err != nil {
		return Explanation{}, err
	}
	pt := c.Points[0]
	if !pt.Fits {
		return Explanation{}, &FitError{Model: c.Model, Machine: c.Machine, Batch: batch, MemoryGB: pt.MemoryGB,
			CapacityGB: e.mem.Capacity(req.GPU) / 1e9, MaxBatch: max(c.MaxBatch, 0)}
	}
	n := c.GPUCount
	b := perGPUBatch(batch, n)
	x := Explanation{
		Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: n, Nodes: c.Nodes, Network: c.Network, Precision: c.Precision,
		Batch: batch, PerGPUBatch: b,
		Input: c.Input, Loader: c.Loader, Workers: c.Workers, LoaderImagesPerS: c.LoaderImagesPerS, Format: c.Format, Script: c.Script, Framework: c.Framework,
		Software: c.Software,
		IterMS:   pt.IterMS, ImagesPerS: pt.ImagesPerS, ErrorPct: pt.ErrorPct, Source: pt.Source, Bound: pt.Bound,
		Host: c.Host, HostErrorPct: pt.HostErrorPct,
		EpochS: pt.EpochS, TotalS: pt.TotalS, CostUSD: pt.CostUSD, CostKnown: c.CostKnown,
		MemoryGB: pt.MemoryGB, MaxBatch: c.MaxBatch, Fits: true,
		Epochs: pt.Epochs, EpochsSource: c.EpochsSource,
	}
	if m := c.Recipe; m != nil {
		at := m.At(batch)
		x.EpochsAt, x.Recipe = &at, m
	}

	// The step as the curve composed it: the table's entry at b.
	tab := e.tableAt(req, []int{b})
	i := tab.entry(b)
	stepMS, backwardMS, last := tab.stepMS[i], tab.backwardMS[i], tab.probe

	// Its kernels, planned as the table's fill plans them: at batch 1 and at the
	// table's last batch too, where fill decides which phases run a kernel.
	p := e.plan(&req, []int{1, b, last})
	const at = 1 // b's place in p.batches
	x.Layers = make([]LayerTime, len(req.Network.Layers))
	errMS := make([]float64, len(x.Layers)) // Σ kernel time × its relative error
	for i := range req.Network.Layers {
		l := &req.Network.Layers[i]
		x.Layers[i] = LayerTime{Index: i, Name: l.Name, Kind: LayerKind(l), Shape: LayerShape(l)}
	}
	for _, k := range p.seq {
		est := p.estimate(k.timing, at)
		if k.layer < 0 {
			continue // the framework's per-tensor work of no layer: in the optimizer phase
		}
		switch k.phase {
		case measure.Forward:
			x.Phases.ForwardMS += est.MS
		case measure.BackwardData:
			x.Phases.BackwardDataMS += est.MS
		default:
			x.Phases.BackwardWeightMS += est.MS
		}
		for _, share := range p.layerShares(req.Network, k) {
			lt := &x.Layers[share.layer]
			ms := est.MS * share.frac
			switch k.phase {
			case measure.Forward:
				lt.ForwardMS += ms
			case measure.BackwardData:
				lt.BackwardDataMS += ms
			default:
				lt.BackwardWeightMS += ms
			}
			errMS[share.layer] += ms * est.RelErr
			if lt.Source == "" || sourceRank(est.Source) > sourceRank(lt.Source) {
				lt.Source = est.Source
			}
		}
	}
	for _, fk := range p.fusion.kernels {
		for _, i := range fk.layers {
			x.Layers[i].Fused = fk.kind
		}
	}
	for i := range x.Layers {
		if ms := x.Layers[i].MS(); ms > 0 {
			x.Layers[i].ErrorPct = 100 * errMS[i] / ms
		}
	}

	ph := &x.Phases
	ph.OptimizerMS = p.update + p.bookkeepingMS
	// The step less its kernels; where the step is its kernels alone (a CPU backend's),
	// the subtraction leaves a rounding residue of either sign, which is no host time.
	ph.HostMS = stepMS - (ph.ForwardMS + ph.BackwardDataMS + ph.BackwardWeightMS + ph.OptimizerMS)
	if math.Abs(ph.HostMS) < 1e-9*stepMS {
		ph.HostMS = 0
	}
	ph.ScriptMS = pt.ScriptMS
	noLoader := req
	noLoader.Input.ImagesPerS = 0
	gpuSide, _ := noLoader.inputStepMS(b, stepMS+ph.ScriptMS)
	inputStep, _ := req.inputStepMS(b, stepMS+ph.ScriptMS)
	ph.InputMS = gpuSide - stepMS - ph.ScriptMS
	ph.LoaderMS = inputStep - gpuSide
	ph.CommunicationMS = e.over.syncMS(4*float64(req.Network.Params()), &req, inputStep, backwardMS)

	x.Kinds = kindTimes(x.Layers)
	x.Slowest = x.SlowestLayers(slowestLayers)
	x.Stack, err = e.stackReport(req, &p, at, b)
	p.release()
	if err != nil {
		return Explanation{}, err
	}
	return x, nil
}

// layerShare is the part of one launch's time a layer is charged in an explanation.
type layerShare struct {
	layer int
	frac  float64
}

// layerShares splits launch k among the layers it runs: all of it to its layer, or for
// a fused kernel to each fused layer in proportion to what that layer's own kernel
// would move in the same phase.
func (p *stepPlan) layerShares(net *cnn.Network, k kernelSeq) []layerShare {
	if k.fused < 0 {
		return []layerShare{{k.layer, 1}}
	}
	fk := &p.fusion.kernels[k.fused]
	total := fk.eagerFwd
	if k.phase != measure.Forward {
		total = fk.eagerBwd
	}
	out := make([]layerShare, 0, len(fk.layers))
	for _, i := range fk.layers {
		fwd, bwd := eagerTraffic(&net.Layers[i])
		own := fwd
		if k.phase != measure.Forward {
			own = bwd
		}
		out = append(out, layerShare{i, own / total})
	}
	return out
}

// stackReport describes req's stack at per-GPU batch b, from the plan p of the
// explained step (b at index at of p's batches), and costs the same step under every
// stack.
func (e *Engine) stackReport(req Request, p *stepPlan, at, b int) (StackReport, error) {
	f := req.Framework.orDefault()
	r := StackReport{Framework: f, Description: f.Description(), CUDAGraphs: f.CUDAGraphs(), Layout: string(req.MemoryFormat)}
	switch {
	case f.ConvertsLayout(req.Precision):
		r.Layout = "nhwc throughout (the stack converts the layout)"
	case req.MemoryFormat == NCHW && HalfPrecision(req.Precision):
		r.Layout = "nchw: cuDNN transposes around every tensor-core convolution"
		if f.Eager() {
			r.Layout += " and runs its NCHW batch norm, bound by the SMs"
		}
	case r.Layout == "":
		r.Layout = "the kernels' own"
	}
	r.Kernels, r.MemoryMS, r.HostIssueMS = p.launchSummary(req.Network, at)
	eagerReq := req
	eagerReq.Framework = PyTorch2
	eager := e.plan(&eagerReq, []int{1, b, p.batches[len(p.batches)-1]})
	r.EagerKernels, r.EagerMemoryMS, _ = eager.launchSummary(req.Network, 1)
	// The unfused time of each fused kernel's layers, from the eager plan's timings.
	unfused := map[int]float64{} // layer → its own kernels' time, forward and backward
	for _, k := range eager.seq {
		if k.layer >= 0 {
			unfused[k.layer] += eager.ms[k.timing][1]
		}
	}
	eager.release()
	kinds := map[string]int{}
	for ki, fk := range p.fusion.kernels {
		out := FusedKernel{Kind: fk.kind}
		for _, i := range fk.layers {
			out.Layers = append(out.Layers, req.Network.Layers[i].Name)
			out.UnfusedMS += unfused[i]
		}
		for _, k := range p.seq {
			if k.fused != ki {
				continue
			}
			if ms := p.ms[k.timing][at]; k.phase == measure.Forward {
				out.ForwardMS += ms
			} else {
				out.BackwardMS += ms
			}
		}
		r.Fused = append(r.Fused, out)
		j, ok := kinds[fk.kind]
		if !ok {
			j = len(r.FusedKinds)
			kinds[fk.kind] = j
			r.FusedKinds = append(r.FusedKinds, FusedKind{Kind: fk.kind})
		}
		r.FusedKinds[j].Count++
		r.FusedKinds[j].MS += out.ForwardMS + out.BackwardMS
		r.FusedKinds[j].UnfusedMS += out.UnfusedMS
	}
	for _, fw := range Frameworks {
		q := req
		q.Framework = fw
		q.Batches = []int{req.Batches[0]}
		c, err := e.Curve(q)
		if err != nil {
			return StackReport{}, err
		}
		pt := c.Points[0]
		qp := e.plan(&q, []int{1, b, p.batches[len(p.batches)-1]})
		n, _, _ := qp.launchSummary(req.Network, 1)
		r.Costs = append(r.Costs, StackCost{Framework: fw, IterMS: pt.IterMS, ImagesPerS: pt.ImagesPerS, Kernels: n, Fused: len(qp.fusion.kernels)})
		qp.release()
	}
	return r, nil
}

// launchSummary counts p's launches, sums its memory-bound kernels' time (layers of the
// memory class and fused kernels) and the host's issue time, at index at of its
// batches.
func (p *stepPlan) launchSummary(net *cnn.Network, at int) (launches int, memoryMS, issueMS float64) {
	for _, k := range p.seq {
		launches++
		issueMS += k.issueUS / 1000
		if k.layer < 0 {
			continue
		}
		if k.fused >= 0 || kernels.ClassOf(net.Layers[k.layer].Config) == kernels.ClassMemory {
			memoryMS += p.ms[k.timing][at]
		}
	}
	return launches, memoryMS, issueMS
}

// SlowestLayers is the n layers with the most kernel time, slowest first (all the
// layers that run a kernel when n ≤ 0).
func (x *Explanation) SlowestLayers(n int) []LayerTime {
	var out []LayerTime
	for _, l := range x.Layers {
		if l.MS() > 0 {
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MS() > out[j].MS() })
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// kindTimes sums the layers' kernel time by kind, slowest kind first.
func kindTimes(layers []LayerTime) []KindTime {
	var out []KindTime
	index := map[string]int{}
	total := 0.0
	for _, l := range layers {
		i, ok := index[l.Kind]
		if !ok {
			i = len(out)
			index[l.Kind] = i
			out = append(out, KindTime{Kind: l.Kind})
		}
		out[i].Layers++
		out[i].MS += l.MS()
		total += l.MS()
	}
	for i := range out {
		if total > 0 {
			out[i].SharePct = 100 * out[i].MS / total
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MS > out[j].MS })
	return out
}

// LayerKind is the kind of layer l: its op (conv2d, batchnorm2d, relu, linear, ...),
// with a convolution over channel groups told apart as conv2d-depthwise (one group
// per input channel) or conv2d-grouped.
func LayerKind(l *cnn.Layer) string {
	if l.Op == cnn.OpConv2d && l.Groups > 1 {
		if l.Groups == l.In.C {
			return "conv2d-depthwise"
		}
		return "conv2d-grouped"
	}
	return string(l.Op)
}

// LayerShape describes l's shapes briefly: input → output per sample (C×H×W, or
// features for a vector), the input alone when the op keeps it, the inputs joined
// by + for add, mul and concat; and for a convolution or pooling its kernel (k),
// stride (s), padding (p), and for a convolution its groups (g) and dilation (d)
// where not 1. E.g. "64x56x56→256x56x56 k1x1 s1 p0", "2048→1000".
func LayerShape(l *cnn.Layer) string {
	shape := func(s cnn.Shape) string {
		if s.H == 1 && s.W == 1 {
			return fmt.Sprint(s.C)
		}
		return s.String()
	}
	in := shape(l.In)
	if len(l.InShapes) > 1 {
		parts := make([]string, len(l.InShapes))
		for i, s := range l.InShapes {
			parts[i] = shape(s)
		}
		in = strings.Join(parts, "+")
	}
	var b strings.Builder
	b.WriteString(in)
	if out := shape(l.Out); out != in {
		b.WriteString("→" + out)
	}
	switch l.Op {
	case cnn.OpConv2d, cnn.OpMaxPool, cnn.OpAvgPool:
		fmt.Fprintf(&b, " k%s s%s p%s", l.Kernel, pairText(l.Stride), pairText(l.Padding))
		if l.Op != cnn.OpConv2d {
			break
		}
		if l.Groups > 1 {
			fmt.Fprintf(&b, " g%d", l.Groups)
		}
		if l.Dilation[0] > 1 || l.Dilation[1] > 1 {
			fmt.Fprintf(&b, " d%s", pairText(l.Dilation))
		}
	}
	return b.String()
}

// pairText writes a pair as one number when both are equal (stride 2), else as HxW.
func pairText(p cnn.Pair) string {
	if p[0] == p[1] {
		return fmt.Sprint(p[0])
	}
	return p.String()
}
