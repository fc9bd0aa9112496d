package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
	// kernels' time estimates (0: the estimates are the planner's guess from the
	// device's specifications).
	CalibratedFrom int
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
	p := SweepPlan{Request: req, Device: dev, Policy: req.Policy}
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
// took for the kernels it has measured at this precision: the planner's guess from
// specifications can be several times off (a busy CPU, a throttled GPU), while the
// same device's own medians are not. The ratio is of sums, so many small kernels and
// a few large ones weigh by their time.
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
	opts.Measured, opts.Repeats = nil, 1
	every, err := gpu.MakePlan(opts) // the estimates of what was measured too
	if err != nil {
		return nil
	}
	var guessed, took float64
	n := 0
	for _, it := range every.Items {
		if ms, ok := median[it.Key()]; ok {
			guessed += it.EstimateS / float64(1+gpu.WarmupRuns)
			took += ms / 1000
			n++
		}
	}
	if n == 0 || guessed <= 0 || took <= 0 {
		return nil
	}
	scale := took / guessed
	p.Kernels.Estimate = 0
	for i := range p.Kernels.Items {
		p.Kernels.Items[i].EstimateS *= scale
		p.Kernels.Estimate += time.Duration(p.Kernels.Items[i].EstimateS * float64(time.Second))
	}
	p.CalibratedFrom = n
	return nil
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
	job := gpu.Job{Precision: plan.Request.Precision, Policy: plan.Policy, Repeats: plan.Request.Repeats, Items: plan.Kernels.Items,
		CuDNNAPI: plan.Request.CuDNNAPI, Layout: plan.Request.Layout}
	if plan.Request.L2 != "" && plan.Request.L2 != timing.L2Cold {
		job.L2 = plan.Request.L2
	}
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
