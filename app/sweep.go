package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cnntime/db"
	"cnntime/gpu"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/cpu"
	"cnntime/gpu/devicelock"
	"cnntime/gpu/lifeline"
	"cnntime/gpu/timing"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// ErrSweepPaused is the cancellation cause that pauses a sweep instead of cancelling it:
// cancel the sweep's context with context.WithCancelCause(…)(ErrSweepPaused). Either
// way what was measured stays in the cache, and the next sweep resumes from there.
var ErrSweepPaused = errors.New("sweep paused")

// MaxSweepRepeats bounds a sweep's timed runs of each kernel: more only takes longer
// (and 99999999999 ran out of memory holding the times).
const MaxSweepRepeats = 1000

// SweepRequest says what to measure.
type SweepRequest struct {
	Device  string   `json:"device"` // "cpu" or "cuda:N"
	Models  []string `json:"models"` // zoo names, model files (.json, .onnx), or custom models saved in the cache
	Batches []int    `json:"batches"`
	// Precision is what the kernels run in: fp32 as PyTorch's fp32 training runs them
	// (convolutions in TF32 on a GPU of compute capability 8.0 and later, everything
	// else in FP32), fp32-strict (FP32 everywhere), or tf32, amp or bf16 for every layer.
	Precision measure.Precision `json:"precision"`
	Policy    measure.Policy    `json:"policy"` // heuristic or fastest; ignored on the CPU
	Repeats   int               `json:"repeats"`
	Input     int               `json:"input,omitempty"` // input resolution; 0 for each model's default
	Steps     bool              `json:"steps,omitempty"` // also time whole training steps
	// CuDNNAPI is the cuDNN API a GPU's convolutions choose their algorithm through: ""
	// (legacy) or v8, the graph API PyTorch 2 uses (package gpu/convalgo).
	CuDNNAPI string `json:"cudnn_api,omitempty"`
	// Layout is the activations' layout on a GPU: "" or nchw, or nhwc (channels_last),
	// whose rows are the device's gpu.LayoutKey.
	Layout string `json:"layout,omitempty"`
	// L2 is how a GPU times a phase that fits in its L2: "" or cold, or producer-hot
	// (package gpu/timing); each row's notes say which.
	L2 string `json:"l2,omitempty"`
}

// DefaultSweepRequest is a sweep of the CPU with the usual settings; callers fill Models.
func DefaultSweepRequest() SweepRequest {
	return SweepRequest{Device: "cpu", Batches: gpu.DefaultBatches(64), Precision: measure.FP32, Policy: measure.Heuristic, Repeats: 5, CuDNNAPI: convalgo.Auto}
}

// OpenSweeper returns the device a sweep runs on: "cpu" (in this process) or "cuda:N"
// (through the cnntime-gpu worker, which must be installed).
func OpenSweeper(ctx context.Context, device string) (gpu.Sweeper, error) {
	switch {
	case device == "cpu":
		return gpu.Local{Backend: cpu.New()}, nil
	case strings.HasPrefix(device, "cuda:"):
		id := strings.TrimPrefix(device, "cuda:")
		if index, err := strconv.Atoi(id); (err != nil || index < 0) && !strings.HasPrefix(id, "GPU-") && !strings.HasPrefix(id, "MIG-") {
			return nil, Inputf("device %q: write cuda:N with N the GPU's index in nvidia-smi (0 for the first), or cuda:GPU-<uuid>", device)
		}
		path, err := gpu.FindWorker()
		if err != nil {
			return nil, err
		}
		return gpu.OpenRemoteNamed(ctx, path, device)
	}
	return nil, Inputf("unknown device %q: use cpu, cuda:N or cuda:GPU-<uuid> (cnntime devices lists them)", device)
}

// SweepPlan is a planned sweep: the networks, the kernels still to measure, and the
// steps (when asked for) still to time.
type SweepPlan struct {
	Request  SweepRequest
	Device   measure.Device
	Networks []*cnn.Network
	Kernels  gpu.Plan
	Steps    []StepItem
	Policy   measure.Policy // the policy recorded: none for the CPU
	// CalibratedFrom is how many of this device's cached measurements scaled the
	// kernels' time estimates (0: none; see Probed).
	CalibratedFrom int
	// Probed is how many kernels of the plan were timed on the device just now to
	// scale the estimates where the cache had none of its own (ProbeSweepPace; 0: none).
	// With neither, the estimates are the planner's guess from the device's
	// specifications.
	Probed int
	// Pace is the factor the planner's guesses were scaled by (1: none), over the
	// whole plan; classScale the factor of each class of kernel.
	Pace       float64
	classScale [numClasses]float64
}

// StepItem is one whole training step to time.
type StepItem struct {
	Model string `json:"model"`
	Batch int    `json:"batch"`
}

// Total is how many results the plan produces.
func (p SweepPlan) Total() int { return len(p.Kernels.Items) + len(p.Steps) }

// PlanSweep builds the requested networks and plans what the cache lacks for the device.
func PlanSweep(ctx context.Context, cache *db.DB, dev measure.Device, req SweepRequest) (SweepPlan, error) {
	if len(req.Models) == 0 {
		return SweepPlan{}, Inputf("no models to sweep: name some, e.g. resnet18,mobilenet_v2")
	}
	if req.Repeats < 1 {
		return SweepPlan{}, Inputf("%d repeats: measure each kernel at least once", req.Repeats)
	}
	if req.Repeats > MaxSweepRepeats {
		return SweepPlan{}, Inputf("%d repeats: measure each kernel at most %d times (the median of 5 is steady)", req.Repeats, MaxSweepRepeats)
	}
	if _, err := measure.ParsePrecision(string(req.Precision)); err != nil {
		return SweepPlan{}, Inputf("%v", err)
	}
	if err := gpu.CheckLayout(req.Layout); err != nil {
		return SweepPlan{}, Inputf("%v", err)
	}
	if err := timing.CheckL2Mode(req.L2); err != nil {
		return SweepPlan{}, Inputf("%v", err)
	}
	p := SweepPlan{Request: req, Device: dev, Policy: req.Policy, Pace: 1, classScale: [numClasses]float64{1, 1, 1}}
	if dev.Backend == "cpu" {
		if req.Precision != measure.FP32 && req.Precision != measure.FP32Strict {
			return SweepPlan{}, Inputf("the CPU measures fp32 only, not %s", req.Precision)
		}
		if req.Layout == gpu.NHWC {
			return SweepPlan{}, Inputf("the CPU backend measures NCHW only: --memory-format nhwc applies to a GPU sweep")
		}
		if req.L2 != "" && req.L2 != timing.L2Cold {
			return SweepPlan{}, Inputf("the CPU backend has no L2 modes: --l2 %s applies to a GPU sweep", req.L2)
		}
		p.Policy = measure.NoPolicy
	} else if _, err := measure.ParsePolicy(string(req.Policy)); err != nil {
		return SweepPlan{}, Inputf("%v", err)
	}
	api, err := convalgo.ParseAPI(req.CuDNNAPI)
	if err != nil {
		return SweepPlan{}, Inputf("%v", err)
	}
	if dev.Backend == "cpu" && api == convalgo.V8 {
		return SweepPlan{}, Inputf("the CPU has no cuDNN: --cudnn-api %s applies to a GPU sweep", req.CuDNNAPI)
	}
	if api == convalgo.Auto { // what PyTorch uses with this GPU's cuDNN
		api = convalgo.Legacy
		if dev.Backend == "cuda" {
			api = convalgo.DefaultAPI(dev.CuDNN)
		}
	}
	if api == convalgo.Legacy {
		api = "" // legacy, as requests have always said it
	}
	req.CuDNNAPI, p.Request.CuDNNAPI = api, api
	for _, name := range req.Models {
		net, err := LoadNamedModel(ctx, cache, name, req.Input, 0)
		if err != nil {
			return SweepPlan{}, err
		}
		p.Networks = append(p.Networks, net)
	}
	kernelPrec := KernelPrecisions(dev, req.Precision)
	precOf := map[string]measure.Precision{} // configuration key → the precision it is measured in
	for _, n := range p.Networks {
		for i := range n.Layers {
			precOf[n.Layers[i].Config.Key()] = kernelPrec(&n.Layers[i])
		}
	}
	measured, unsettled := map[gpu.Key]bool{}, map[gpu.Key]bool{}
	have := 0
	for _, prec := range distinctPrecisions(precOf) {
		rows, err := cache.MeasuredSet(ctx, p.MeasuredKey(), prec, p.Policy)
		if err != nil {
			return SweepPlan{}, err
		}
		for k, c := range rows {
			if precOf[k.Config] != prec {
				continue // another layer's precision (a convolution's FP32 row in a TF32 sweep)
			}
			have++
			key := gpu.Key{Config: k.Config, Batch: k.Batch, Phase: k.Phase}
			if gpu.Settled(dev.Backend, c.Status) && (dev.Backend != "cuda" || gpu.SameAPI(c.Algorithm, req.CuDNNAPI)) {
				measured[key] = true
			} else {
				unsettled[key] = true
			}
		}
	}
	opts := gpu.PlanOptions{Networks: p.Networks, Batches: req.Batches, Repeats: req.Repeats, Rate: gpu.RateOf(dev), Measured: measured, Unsettled: unsettled,
		Precision: kernelPrec}
	if dev.Backend == "cpu" {
		opts.Phases = predictor.EveryPhaseKernels.Phases // what the CPU predicts its own steps from
	}
	if p.Kernels, err = gpu.MakePlan(opts); err != nil {
		return SweepPlan{}, Inputf("%v", err)
	}
	if have > 0 && len(p.Kernels.Items) > 0 {
		if err := calibrateEstimate(ctx, cache, dev, &p, opts); err != nil {
			return SweepPlan{}, err
		}
	}
	if req.Steps {
		steps, err := cache.Steps(ctx, db.StepFilter{DeviceKey: dev.Key, Precision: req.Precision, Framework: stepFramework(dev)})
		if err != nil {
			return SweepPlan{}, err
		}
		done := map[StepItem]bool{}
		for _, s := range steps {
			done[StepItem{Model: s.Model, Batch: s.Batch}] = true
		}
		for _, net := range p.Networks {
			for _, b := range req.Batches {
				if it := (StepItem{Model: net.Name, Batch: b}); !done[it] {
					p.Steps = append(p.Steps, it)
				}
			}
		}
	}
	return p, nil
}

// calibrateEstimate scales the plan's time estimates by how long this device really
// took for the kernels of the plan's layers it has measured at this precision, at
// the plan's batch sizes or others: the planner's guess from
// specifications can be several times off (a busy CPU, a throttled GPU), while the
// same device's own medians are not. The ratio is of sums, so many small kernels and
// a few large ones weigh by their time. A sweep costs more than its kernels' runs
// (each measurement's tensors, the cache's write, runs slower than the median): the
// time between consecutive measurements of the device's earlier sweeps over their runs'
// medians scales the estimates too (sweepOverhead).
func calibrateEstimate(ctx context.Context, cache *db.DB, dev measure.Device, p *SweepPlan, opts gpu.PlanOptions) error {
	configs := map[string]bool{}
	for _, n := range p.Networks {
		for _, l := range n.Layers {
			configs[l.Config.Key()] = true
		}
	}
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	ms, err := cache.Measurements(ctx, p.MeasuredKey(), keys) // this plan's layers only, however big the cache
	if err != nil {
		return err
	}
	kernelPrec := opts.Precision
	if kernelPrec == nil {
		kernelPrec = KernelPrecisions(dev, p.Request.Precision)
	}
	precOf := map[string]measure.Precision{}
	for _, n := range p.Networks {
		for i := range n.Layers {
			precOf[n.Layers[i].Config.Key()] = kernelPrec(&n.Layers[i])
		}
	}
	median := map[gpu.Key]float64{}
	for _, m := range ms {
		if m.Precision == precOf[m.ConfigKey] && m.Policy == p.Policy && m.Status == measure.OK && m.MedianMS > 0 {
			median[gpu.Key{Config: m.ConfigKey, Batch: m.Batch, Phase: m.Phase}] = m.MedianMS
		}
	}
	if len(median) == 0 {
		return nil
	}
	var batches []int // the batch sizes measured: the plan's or others
	for k := range median {
		batches = append(batches, k.Batch)
	}
	slices.Sort(batches)
	opts.Batches = slices.Compact(batches)
	opts.Measured, opts.Repeats = nil, 1
	every, err := gpu.MakePlan(opts) // the estimates of what was measured
	if err != nil {
		return nil
	}
	var pace classPace
	n := 0
	for _, it := range every.Items {
		if ms, ok := median[it.Key()]; ok {
			pace.add(it, it.EstimateS/float64(1+gpu.WarmupRuns), ms/1000)
			n++
		}
	}
	scale, ok := pace.scales()
	if !ok {
		return nil
	}
	if overhead, pairs := sweepOverhead(ms); pairs > 0 {
		for k := range scale {
			scale[k] *= overhead
		}
	}
	p.scaleEstimates(scale)
	p.CalibratedFrom = n
	return nil
}

// Kernel classes whose guesses are scaled apart: a device misses the planner's guess of
// a dense convolution's or a matrix product's arithmetic (gemmClass) by another factor
// than its guess of a grouped or depthwise convolution (groupedClass) or of a pass
// over memory (memoryClass). On this project's 2-core CPU a sweep of mobilenet_v2 took
// 5.3 times the planner's guess of its dense convolutions, 15 times its grouped ones
// and 7 times the rest.
const (
	gemmClass = iota
	groupedClass
	memoryClass
	numClasses
)

// kernelClass is an item's class.
func kernelClass(it gpu.Item) int {
	switch {
	case it.Config.Op == cnn.OpConv2d && it.Config.Groups > 1:
		return groupedClass
	case it.Config.Op == cnn.OpConv2d || it.Config.Op == cnn.OpLinear:
		return gemmClass
	}
	return memoryClass
}

// classPace sums, per kernel class, the planner's guesses and what the device took.
type classPace struct {
	guessed, took [numClasses]float64
}

func (c *classPace) add(it gpu.Item, guessedS, tookS float64) {
	k := kernelClass(it)
	c.guessed[k] += guessedS
	c.took[k] += tookS
}

// scales are the seconds taken per second guessed of each class; a class with none
// of its own takes the classes' together. ok is false when none has any.
func (c *classPace) scales() (scale [numClasses]float64, ok bool) {
	var took, guessed float64
	for k := range scale {
		if c.guessed[k] > 0 && c.took[k] > 0 {
			scale[k], ok = c.took[k]/c.guessed[k], true
			took, guessed = took+c.took[k], guessed+c.guessed[k]
		}
	}
	if !ok {
		return scale, false
	}
	for k := range scale {
		if scale[k] == 0 {
			scale[k] = took / guessed
		}
	}
	return scale, true
}

// scaleEstimates multiplies the plan's kernel time estimates by the scale of each one's
// class, and sets Pace to what the whole plan's estimate was multiplied by.
func (p *SweepPlan) scaleEstimates(scale [numClasses]float64) {
	before := p.Kernels.Estimate.Seconds()
	p.Kernels.Estimate = 0
	for i := range p.Kernels.Items {
		p.Kernels.Items[i].EstimateS *= scale[kernelClass(p.Kernels.Items[i])]
		p.Kernels.Estimate += time.Duration(p.Kernels.Items[i].EstimateS * float64(time.Second))
	}
	if before > 0 {
		p.Pace *= p.Kernels.Estimate.Seconds() / before
	}
	for k := range scale {
		p.classScale[k] *= scale[k]
	}
}

// maxSweepGap is the longest time between two measurements of one sweep that counts as
// the second one's measuring: a longer one was a pause (or one kernel of no use to
// an estimate of many).
const maxSweepGap = 30 * time.Second

// sweepOverhead is how much longer ms's sweeps took than the runs of their kernels:
// over consecutive measurements of one sweep (a measurement's time is when it began),
// the time from one to the next over the first's runs, (repeats + warm-up) × its
// median. It returns 1 and 0 pairs where no sweep has two consecutive measurements.
func sweepOverhead(ms []measure.Measurement) (factor float64, pairs int) {
	bySweep := map[int64][]measure.Measurement{}
	for _, m := range ms {
		if m.SweepID > 0 && !m.At.IsZero() {
			bySweep[m.SweepID] = append(bySweep[m.SweepID], m)
		}
	}
	var took, runs float64
	for _, list := range bySweep {
		slices.SortStableFunc(list, func(a, b measure.Measurement) int { return a.At.Compare(b.At) })
		for i := 1; i < len(list); i++ {
			m := list[i-1]
			gap := list[i].At.Sub(m.At)
			if m.Status != measure.OK || !(m.MedianMS > 0) || gap <= 0 || gap > maxSweepGap {
				continue
			}
			took += gap.Seconds()
			runs += m.MedianMS / 1000 * float64(max(m.Repeats, 1)+gpu.WarmupRuns)
			pairs++
		}
	}
	if pairs == 0 || !(runs > 0) {
		return 1, 0
	}
	return took / runs, pairs
}

// probePerClass is how many of a plan's kernels of each class (gemmClass,
// groupedClass, memoryClass) ProbeSweepPace times, and probeBudget how long it may take.
const (
	probePerClass = 3
	probeBudget   = 2 * time.Second
)

// ProbeSweepPace times a few of p's kernels on sw as the sweep would (the plan's
// repeats, warm-up and precision; nothing is written to the cache) and scales p's
// estimates by how long they took against the planner's guesses, each class of kernel
// (dense convolutions and matrix products; grouped ones; passes over memory) by its
// own: a device whose
// cache holds none of its own measurements (CalibratedFrom 0) then gets an estimate at
// its own pace, load included, rather than its specifications'. The kernels are a few
// of each class at the middle of the plan's guesses, after one untimed (the process's
// first allocations), within probeBudget; it leaves p as it was when none was timed.
func ProbeSweepPace(ctx context.Context, sw gpu.Sweeper, p *SweepPlan) error {
	items := probeItems(p.Kernels.Items)
	if len(items) < 3 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeBudget)
	defer cancel()
	var got []measure.Measurement
	job := sweepJob(*p, items)
	err := sw.Sweep(ctx, job, gpu.Sink{Measured: func(m measure.Measurement) error { got = append(got, m); return nil }, Warning: func(string) {}})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("time a few kernels of the plan on %s: %w", sw.Device().Name, err)
	}
	pace, n := probePace(items, got)
	scale, ok := pace.scales()
	if !ok {
		return nil
	}
	p.scaleEstimates(scale)
	p.Probed = n
	return nil
}

// probeItems picks the kernels ProbeSweepPace times: the plan's smallest first (its
// time is not counted), then up to probePerClass of each class at a spread of that
// class's guesses around their median, the classes taking turns, smaller first.
func probeItems(items []gpu.Item) []gpu.Item {
	if len(items) == 0 {
		return nil
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b gpu.Item) int { return cmp.Compare(a.EstimateS, b.EstimateS) })
	var byClass [numClasses][]gpu.Item
	for _, it := range sorted[1:] {
		k := kernelClass(it)
		byClass[k] = append(byClass[k], it)
	}
	var picks [numClasses][]gpu.Item
	for k, list := range byClass {
		if len(list) <= probePerClass {
			picks[k] = list
			continue
		}
		for i := range probePerClass {
			q := 0.3 + 0.4*float64(i)/float64(probePerClass-1)
			picks[k] = append(picks[k], list[int(q*float64(len(list)-1))])
		}
	}
	out := []gpu.Item{sorted[0]}
	for i := range probePerClass {
		for k := range picks {
			if i < len(picks[k]) {
				out = append(out, picks[k][i])
			}
		}
	}
	return out
}

// probePace sums per class the guesses and the times of the measurements got of items
// (in items' order, as a sweep reports them, each timed from when it began to when the
// next one did), leaving out the first, the process's warm-up; n counts those summed.
func probePace(items []gpu.Item, got []measure.Measurement) (pace classPace, n int) {
	for i := 2; i < len(got) && i < len(items); i++ {
		gap := got[i].At.Sub(got[i-1].At)
		if got[i-1].Status != measure.OK || gap <= 0 || !(items[i-1].EstimateS > 0) {
			continue
		}
		pace.add(items[i-1], items[i-1].EstimateS, gap.Seconds())
		n++
	}
	return pace, n
}

// MeasuredKey is the device key the plan's measurements are stored under: the device's,
// with gpu.NHWCSuffix for a sweep in channels_last.
func (p SweepPlan) MeasuredKey() string { return gpu.LayoutKey(p.Device.Key, p.Request.Layout) }

// KernelPrecisions says which kernel precision each layer of a sweep in precision p is
// measured in on dev: PyTorch's fp32 training runs convolutions in TF32 on a GPU of
// compute capability 8.0 and later (torch.backends.cudnn.allow_tf32 is true) and
// everything else in strict FP32 (predictor.KernelPrecision); fp32-strict is FP32
// everywhere, as is any precision on the CPU; tf32, amp and bf16 apply to every layer.
func KernelPrecisions(dev measure.Device, p measure.Precision) func(l *cnn.Layer) measure.Precision {
	switch {
	case dev.Backend != "cuda" || p == measure.FP32Strict:
		return func(*cnn.Layer) measure.Precision { return measure.FP32 }
	case p == measure.FP32:
		g := hw.GPU{ComputeCapability: dev.ComputeCapability}
		return func(l *cnn.Layer) measure.Precision { return predictor.KernelPrecision(measure.FP32, l.Op, g) }
	}
	return func(*cnn.Layer) measure.Precision { return p }
}

// distinctPrecisions lists the precisions of a plan's configurations, each once, sorted.
func distinctPrecisions(of map[string]measure.Precision) []measure.Precision {
	seen := map[measure.Precision]bool{}
	var out []measure.Precision
	for _, p := range of {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// sweepJob is the job that measures items of plan as its sweep does.
func sweepJob(plan SweepPlan, items []gpu.Item) gpu.Job {
	job := gpu.Job{Precision: plan.Request.Precision, Policy: plan.Policy, Repeats: plan.Request.Repeats, Items: items,
		CuDNNAPI: plan.Request.CuDNNAPI, Layout: plan.Request.Layout}
	if plan.Request.L2 != "" && plan.Request.L2 != timing.L2Cold {
		job.L2 = plan.Request.L2
	}
	return job
}

func stepFramework(dev measure.Device) string {
	if dev.Backend == "cpu" {
		return cpu.Framework
	}
	return "cnntime-cuda"
}

// SweepProgress reports a running sweep after each result.
type SweepProgress struct {
	Done    int           `json:"done"`   // results of this run so far
	Total   int           `json:"total"`  // results this run plans
	Cached  int           `json:"cached"` // kernels left out because the cache had them
	Elapsed time.Duration `json:"elapsed_ns"`
	ETA     time.Duration `json:"eta_ns"` // estimated time left; 0 when unknown or done
	// What just happened: a measurement, a step, or a line for the log (warnings).
	Measurement *measure.Measurement `json:"measurement,omitempty"`
	Step        *measure.Step        `json:"step,omitempty"`
	Message     string               `json:"message,omitempty"`
}

// SweepResult is how a sweep ended.
type SweepResult struct {
	SweepID  int64         `json:"sweep_id"`
	State    string        `json:"state"` // done, paused, cancelled or failed (db.Sweep*)
	Done     int           `json:"done"`
	Total    int           `json:"total"`
	Cached   int           `json:"cached"`
	OOM      int           `json:"out_of_memory"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Device   string        `json:"device"`
	Failures []string      `json:"failures,omitempty"` // items that failed (the sweep went on), and why a failed sweep stopped
}

// RunSweep runs a plan on a sweeper and writes each result to the cache the moment it
// arrives, so a kill at any point loses at most the measurement in flight and the next
// sweep resumes from the cache. progress (may be nil) is called after each result.
// Cancelling ctx stops the sweep cleanly (paused when the cause is ErrSweepPaused); the
// error is then nil and the result's state says how it ended.
func RunSweep(ctx context.Context, cache *db.DB, sw gpu.Sweeper, plan SweepPlan, progress func(SweepProgress)) (SweepResult, error) {
	dev := sw.Device()
	res := SweepResult{Total: plan.Total(), Cached: plan.Kernels.Cached, Device: dev.Key}
	if err := cache.PutDevice(ctx, dev); err != nil {
		return res, err
	}
	if key := gpu.LayoutKey(dev.Key, plan.Request.Layout); key != dev.Key { // the device's channels_last rows: the same GPU
		layoutDev := dev
		layoutDev.Key = key
		if err := cache.PutDevice(ctx, layoutDev); err != nil {
			return res, err
		}
	}
	seen := map[string]bool{}
	for _, it := range plan.Kernels.Items {
		key := it.Config.Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		desc, err := json.Marshal(it.Config)
		if err != nil {
			return res, fmt.Errorf("describe layer configuration %s: %w", key, err)
		}
		if err := cache.PutConfig(ctx, key, string(desc)); err != nil {
			return res, err
		}
	}
	planJSON, err := json.Marshal(plan.Request)
	if err != nil {
		return res, fmt.Errorf("record the sweep request: %w", err)
	}
	if res.SweepID, err = cache.CreateSweep(ctx, dev.Key, string(planJSON), res.Total); err != nil {
		return res, err
	}
	start := time.Now()
	// One sweep at a time on the device, whatever cache each writes to (the cache's own
	// record refuses a second sweep into the same cache at once, above).
	lock, err := devicelock.Acquire(ctx, dev, cache.Path(), func(h devicelock.Holder) {
		if progress != nil {
			progress(SweepProgress{Total: res.Total, Cached: res.Cached, Message: fmt.Sprintf(
				"another sweep measures %s (%s): this one waits for it to end, as two sweeps on one device spoil each other's timings", dev.Name, h)})
		}
	})
	if err != nil {
		return res, endSweep(ctx, cache, &res, start, err)
	}
	defer lock.Release()
	var estTotal, estDone float64
	for _, it := range plan.Kernels.Items {
		estTotal += it.EstimateS
	}
	report := func(p SweepProgress) {
		res.Done++
		p.Done, p.Total, p.Cached, p.Elapsed = res.Done, res.Total, res.Cached, time.Since(start)
		if res.Done < res.Total && estTotal > 0 {
			p.ETA = sweepETA(p.Elapsed, estDone, estTotal)
		}
		if res.Done%16 == 0 || res.Done == res.Total {
			_ = cache.UpdateSweep(context.WithoutCancel(ctx), res.SweepID, db.SweepRunning, res.Done)
		}
		if progress != nil {
			progress(p)
		}
	}
	estimate := map[gpu.Key]float64{}
	for _, it := range plan.Kernels.Items {
		estimate[it.Key()] = it.EstimateS
	}
	sink := gpu.Sink{
		Measured: func(m measure.Measurement) error {
			if err := lifeline.Check(); err != nil { // whoever asked for the sweep is gone
				return err
			}
			m.SweepID = res.SweepID
			if err := cache.PutMeasurements(context.WithoutCancel(ctx), []measure.Measurement{m}); err != nil {
				return err
			}
			if m.Status == measure.OutOfMemory {
				res.OOM++
			}
			estDone += estimate[gpu.Key{Config: m.ConfigKey, Batch: m.Batch, Phase: m.Phase}]
			report(SweepProgress{Measurement: &m})
			return nil
		},
		Warning: func(w string) {
			if progress != nil {
				progress(SweepProgress{Done: res.Done, Total: res.Total, Cached: res.Cached, Elapsed: time.Since(start), Message: w})
			}
		},
		// An item that failed is recorded (and, on a GPU, quarantined) and the sweep goes on.
		Failed: func(f gpu.Failure) error {
			res.Failures = append(res.Failures, f.String())
			estDone += estimate[f.Item.Key()]
			report(SweepProgress{Message: f.String()})
			return nil
		},
	}
	job := sweepJob(plan, plan.Kernels.Items)
	err = sw.Sweep(ctx, job, sink)
	if err == nil {
		err = runSteps(ctx, cache, sw, plan, &res, report)
	}
	if errors.Is(err, lifeline.ErrOrphaned) {
		res.Elapsed = time.Since(start)
		return res, err // nothing more is written: the sweep reads as interrupted, as it was
	}
	return res, endSweep(ctx, cache, &res, start, err)
}

// endSweep records how the sweep res ended, with err what stopped it (nil: nothing),
// and returns the sweep's error: none when it was paused or cancelled.
func endSweep(ctx context.Context, cache *db.DB, res *SweepResult, start time.Time, err error) error {
	res.Elapsed = time.Since(start)
	res.State = db.SweepDone
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrSweepPaused):
		res.State, err = db.SweepPaused, nil
	case ctx.Err() != nil:
		res.State, err = db.SweepCancelled, nil
	case err != nil:
		res.State = db.SweepFailed
		res.Failures = append(res.Failures, err.Error())
	}
	if uerr := cache.UpdateSweep(context.WithoutCancel(ctx), res.SweepID, res.State, res.Done); uerr != nil && err == nil {
		err = uerr
	}
	return err
}

// sweepETA is the time a sweep has left: the plan's estimate of what is left, scaled by
// how much slower or faster than planned the device went so far. The scale starts at
// the plan's own and moves to the measured one as the sweep goes: the plan weighs as
// much as etaPrior of planned work (or a quarter of the plan, if less), so the first
// few kernels — a warm-up, a cold cache — do not swing it 22 → 14 → 48 minutes.
func sweepETA(elapsed time.Duration, estDone, estTotal float64) time.Duration {
	prior := math.Min(etaPrior, estTotal/4)
	scale := (elapsed.Seconds() + prior) / (estDone + prior)
	return time.Duration((estTotal - estDone) * scale * float64(time.Second))
}

// etaPrior is how many seconds of planned work the plan's own pace weighs in sweepETA.
const etaPrior = 60.0

// runSteps times the plan's whole training steps on a local backend.
func runSteps(ctx context.Context, cache *db.DB, sw gpu.Sweeper, plan SweepPlan, res *SweepResult, report func(SweepProgress)) error {
	if len(plan.Steps) == 0 {
		return nil
	}
	local, ok := sw.(gpu.Local)
	if !ok {
		return fmt.Errorf("whole-step timing runs on the CPU backend only; for a GPU, run scripts/pytorch_sweep.py and import its CSV with cnntime cache import")
	}
	nets := map[string]*cnn.Network{}
	for _, n := range plan.Networks {
		nets[n.Name] = n
	}
	for _, it := range plan.Steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := lifeline.Check(); err != nil {
			return err
		}
		s, err := local.Backend.RunStep(ctx, nets[it.Model], it.Batch, plan.Request.Precision, plan.Request.Repeats)
		if err != nil {
			return err
		}
		if err := cache.PutSteps(context.WithoutCancel(ctx), []measure.Step{s}); err != nil {
			return err
		}
		if s.Status == measure.OutOfMemory {
			res.OOM++
		}
		report(SweepProgress{Step: &s})
	}
	return nil
}

// DeviceHoldings is what the cache holds for one measured device.
type DeviceHoldings struct {
	Device      measure.Device `json:"device"`
	Kernels     int            `json:"kernels"`       // kernel measurements of any status
	OutOfMemory int            `json:"out_of_memory"` // of which did not fit
	Steps       int            `json:"steps"`
	LastSweep   string         `json:"last_sweep,omitempty"` // the state of its newest sweep
}

// SweepStateText is a sweep's state as the app shows it: an interrupted sweep (its
// process died) says how to continue it.
func SweepStateText(state string) string {
	if state == db.SweepInterrupted {
		return "interrupted (resume continues it)"
	}
	return state
}

// CacheHoldings summarises the cache per device; the database counts the rows.
func CacheHoldings(ctx context.Context, cache *db.DB) ([]DeviceHoldings, error) {
	devs, err := cache.Devices(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := cache.CountsByDevice(ctx)
	if err != nil {
		return nil, err
	}
	sweeps, err := cache.Sweeps(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]DeviceHoldings, 0, len(devs))
	for _, d := range devs {
		c := counts[d.Key]
		h := DeviceHoldings{Device: d, Kernels: c.Kernels, OutOfMemory: c.OutOfMemory, Steps: c.Steps}
		for _, s := range sweeps { // newest first
			if s.DeviceKey == d.Key {
				h.LastSweep = s.State
				break
			}
		}
		out = append(out, h)
	}
	return out, nil
}
