package app

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/db"
	"cnntime/gpu"
	"cnntime/gpu/cpu"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

func TestSweepPausesAndRecordsSteps(t *testing.T) {
	ctx := context.Background()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	sw, err := OpenSweeper(ctx, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats, req.Steps = []string{"resnet18"}, 32, []int{2}, 1, true
	plan, err := PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 1 || plan.Policy != measure.NoPolicy {
		t.Fatalf("plan has %d steps and policy %q; want 1 and none for the CPU", len(plan.Steps), plan.Policy)
	}
	pctx, pause := context.WithCancelCause(ctx)
	defer pause(nil)
	var seen []SweepProgress
	res, err := RunSweep(pctx, cache, sw, plan, func(p SweepProgress) {
		seen = append(seen, p)
		if p.Done == 10 {
			pause(ErrSweepPaused)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != db.SweepPaused || res.Done != 10 {
		t.Fatalf("paused sweep: state %s after %d results; want paused after 10", res.State, res.Done)
	}
	for i, p := range seen {
		if p.Done != i+1 || p.Total != plan.Total() || p.Measurement == nil {
			t.Fatalf("progress %d = %+v", i, p)
		}
	}
	sweeps, err := cache.Sweeps(ctx)
	if err != nil || len(sweeps) != 1 || sweeps[0].State != db.SweepPaused || sweeps[0].Done != 10 {
		t.Fatalf("recorded sweeps %+v, %v", sweeps, err)
	}
	// Resume to the end: the rest of the kernels, then the step.
	plan, err = PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	var last SweepProgress
	res, err = RunSweep(ctx, cache, sw, plan, func(p SweepProgress) { last = p })
	if err != nil || res.State != db.SweepDone {
		t.Fatalf("resumed: %+v, %v", res, err)
	}
	if last.Step == nil || last.Step.Status != measure.OK || last.Step.MedianMS <= 0 {
		t.Fatalf("last result %+v, want the timed step", last)
	}
	steps, err := cache.Steps(ctx, db.StepFilter{DeviceKey: sw.Device().Key})
	if err != nil || len(steps) != 1 || steps[0].Model != "resnet18" || steps[0].Batch != 2 {
		t.Fatalf("cached steps %+v, %v", steps, err)
	}
}

// failingBackend is the CPU backend with one item (batch 2) returning an error.
type failingBackend struct{ gpu.Backend }

func (b failingBackend) TimeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error) {
	if batch == 2 {
		return measure.Measurement{}, errors.New("cuDNN cudnnConvolutionForward: CUDNN_STATUS_EXECUTION_FAILED (5000)")
	}
	return b.Backend.TimeLayer(ctx, cfg, batch, phase, prec, policy, repeats)
}

// TestSweepRecordsAFailedItemAndGoesOn: an item whose measurement fails is in the
// result's failures with its reason, the progress log says so, and the other items are
// measured into the cache.
func TestSweepRecordsAFailedItemAndGoesOn(t *testing.T) {
	ctx := context.Background()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	s := cnn.Shape{C: 4, H: 4, W: 4}
	relu := cnn.Config{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1}
	var items []gpu.Item
	for b := 1; b <= 3; b++ {
		items = append(items, gpu.Item{Config: relu, Batch: b, Phase: measure.Forward})
	}
	req := DefaultSweepRequest()
	req.Models, req.Repeats = []string{"stand-in"}, 1
	plan := SweepPlan{Request: req, Kernels: gpu.Plan{Items: items}, Policy: measure.NoPolicy}
	sw := gpu.Local{Backend: failingBackend{cpu.New()}}
	var messages []string
	res, err := RunSweep(ctx, cache, sw, plan, func(p SweepProgress) {
		if p.Message != "" {
			messages = append(messages, p.Message)
		}
	})
	if err != nil || res.State != db.SweepDone {
		t.Fatalf("sweep with a failed item: %+v, %v; want done", res, err)
	}
	want := "relu:in=4x4x4,out=4x4x4 at batch 2 (fwd) failed: measure relu:in=4x4x4,out=4x4x4 at batch 2 (fwd): cuDNN cudnnConvolutionForward: CUDNN_STATUS_EXECUTION_FAILED (5000)"
	if len(res.Failures) != 1 || res.Failures[0] != want || len(messages) != 1 || messages[0] != want {
		t.Errorf("failures %q, messages %q; want %q once each", res.Failures, messages, want)
	}
	ms, err := cache.Measurements(ctx, sw.Device().Key, nil)
	if err != nil || len(ms) != 2 || ms[0].Batch == 2 || ms[1].Batch == 2 {
		t.Errorf("cached %+v, %v; want batches 1 and 3", ms, err)
	}
}

// The time left starts at the plan's estimate and follows the device's measured pace as
// the sweep goes: one slow first kernel does not multiply it.
func TestSweepETA(t *testing.T) {
	const plan = 708.0 // 11m48s planned
	for _, tc := range []struct {
		name             string
		elapsed          time.Duration
		done             float64
		wantMin, wantMax time.Duration
	}{
		{"at the start, the plan", 0, 0, 11*time.Minute + 40*time.Second, 11*time.Minute + 50*time.Second},
		// The first kernel took 20 s for a planned 2 s (a warm-up): the bare ratio
		// says 117 min left; the plan still weighs most.
		{"a slow first kernel", 20 * time.Second, 2, 12 * time.Minute, 16 * time.Minute},
		// Half the plan (5m54s) done in twice its time: nearly twice as slow from now on.
		{"half done, twice as slow", 708 * time.Second, 354, 10 * time.Minute, 12 * time.Minute},
	} {
		got := sweepETA(tc.elapsed, tc.done, plan)
		if got < tc.wantMin || got > tc.wantMax {
			t.Errorf("%s: %v left, want %v to %v", tc.name, got, tc.wantMin, tc.wantMax)
		}
	}
}

// TestPlanSweepRetriesWhatAGPUCouldNotRun: a GPU's cached out-of-memory and unsupported
// rows are planned again (another process held the memory; NVRTC or a cuDNN library was
// missing then), a time is not; on the CPU all three stand.
// resnet18Cache is an empty cache and the key of resnet18's (at 32 px) first layer of
// each kind.
func resnet18Cache(t *testing.T) (*db.DB, map[cnn.Op]string) {
	t.Helper()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	net, err := cnn.Build("resnet18", cnn.Options{Resolution: 32})
	if err != nil {
		t.Fatal(err)
	}
	first := map[cnn.Op]string{}
	for _, l := range net.Layers {
		if _, ok := first[l.Config.Op]; !ok {
			first[l.Config.Op] = l.Config.Key()
		}
	}
	return cache, first
}

func TestPlanSweepRetriesWhatAGPUCouldNotRun(t *testing.T) {
	ctx := context.Background()
	cache, first := resnet18Cache(t)
	relu, conv, pool := first[cnn.OpReLU], first[cnn.OpConv2d], first[cnn.OpMaxPool]
	for _, dev := range []measure.Device{
		{Key: "cuda:GPU-1", Backend: "cuda", Name: "NVIDIA A100", SMs: 108, ClockMHz: 1410},
		{Key: "cpu:host:cpu", Backend: "cpu", Name: "a CPU", SMs: 2},
	} {
		policy := measure.Heuristic
		if dev.Backend == "cpu" {
			policy = measure.NoPolicy
		}
		row := func(config string, status measure.Status) measure.Measurement {
			m := measure.Measurement{DeviceKey: dev.Key, ConfigKey: config, Batch: 2, Precision: measure.FP32, Phase: measure.Forward,
				Policy: policy, Status: status, Repeats: 1}
			if status == measure.OK {
				m.MedianMS = 0.5
			}
			return m
		}
		if err := cache.PutMeasurements(ctx, []measure.Measurement{
			row(conv, measure.OK), row(relu, measure.Unsupported), row(pool, measure.OutOfMemory)}); err != nil {
			t.Fatal(err)
		}
		req := DefaultSweepRequest()
		req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18"}, 32, []int{2}, 1
		plan, err := PlanSweep(ctx, cache, dev, req)
		if err != nil {
			t.Fatal(err)
		}
		planned := map[string]bool{}
		for _, it := range plan.Kernels.Items {
			if it.Phase == measure.Forward && it.Batch == 2 {
				planned[it.Config.Key()] = true
			}
		}
		wantRetry := dev.Backend == "cuda"
		if planned[conv] || planned[relu] != wantRetry || planned[pool] != wantRetry {
			t.Errorf("%s: planned again: a measured conv %v, an unsupported relu %v, an out-of-memory pool %v; want false, %v, %v",
				dev.Key, planned[conv], planned[relu], planned[pool], wantRetry, wantRetry)
		}
		wantCached, wantRetried := 3, 0
		if wantRetry {
			wantCached, wantRetried = 1, 2
		}
		if plan.Kernels.Cached != wantCached || plan.Kernels.Retried != wantRetried {
			t.Errorf("%s: %d cached and %d retried, want %d and %d", dev.Key, plan.Kernels.Cached, plan.Kernels.Retried, wantCached, wantRetried)
		}
	}
}

// TestWorkerRowsPredictAGPUBeforePyTorchs: a GPU measured both by cnntime's worker and
// by pytorch_sweep.py --layers (under its own key) is predicted from the worker's rows,
// whichever key sorts first; PyTorch's serve a GPU the worker never measured.
func TestWorkerRowsPredictAGPUBeforePyTorchs(t *testing.T) {
	ctx := context.Background()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	for _, dev := range []measure.Device{
		{Key: "cuda:GPU-0a" + measure.PyTorchGPUSuffix, Backend: "cuda", Name: "NVIDIA A100-SXM4-80GB", GPUID: "a100-sxm4-80gb"},
		{Key: "cuda:GPU-9f", Backend: "cuda", Name: "NVIDIA A100-SXM4-80GB", GPUID: "a100-sxm4-80gb"},
		{Key: "cuda:GPU-77" + measure.PyTorchGPUSuffix, Backend: "cuda", Name: "NVIDIA H100 80GB HBM3", GPUID: "h100-sxm5-80gb"},
	} {
		if err := cache.PutDevice(ctx, dev); err != nil {
			t.Fatal(err)
		}
	}
	e, err := NewEngine(ctx, cache)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.MeasuredDevice("a100-sxm4-80gb"); got != "cuda:GPU-9f" {
		t.Errorf("the A100 is predicted from %q, want the worker's cuda:GPU-9f", got)
	}
	if got := e.MeasuredDevice("h100-sxm5-80gb"); got != "cuda:GPU-77:pytorch" {
		t.Errorf("the H100 is predicted from %q, want PyTorch's rows, the only ones", got)
	}
}

// TestPlanSweepRemeasuresConvolutionsOfTheOtherAPI: a GPU's convolutions measured through
// cuDNN's legacy API are measured again by a v8 sweep (and the reverse); layers no cuDNN
// API chooses for (cnntime's kernels) stand.
func TestPlanSweepRemeasuresConvolutionsOfTheOtherAPI(t *testing.T) {
	ctx := context.Background()
	cache, first := resnet18Cache(t)
	conv, relu := first[cnn.OpConv2d], first[cnn.OpReLU]
	dev := measure.Device{Key: "cuda:GPU-1", Backend: "cuda", Name: "NVIDIA A100", SMs: 108, ClockMHz: 1410}
	row := func(config, algorithm string) measure.Measurement {
		return measure.Measurement{DeviceKey: dev.Key, ConfigKey: config, Batch: 2, Precision: measure.FP32, Phase: measure.Forward,
			Policy: measure.Heuristic, Algorithm: algorithm, Status: measure.OK, MedianMS: 0.5, Repeats: 1}
	}
	if err := cache.PutMeasurements(ctx, []measure.Measurement{row(conv, "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM"), row(relu, "cnntime-kernel")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		api       string
		convAgain bool
	}{{"", false}, {"legacy", false}, {"v8", true}} {
		req := DefaultSweepRequest()
		req.Models, req.Input, req.Batches, req.Repeats, req.CuDNNAPI = []string{"resnet18"}, 32, []int{2}, 1, c.api
		plan, err := PlanSweep(ctx, cache, dev, req)
		if err != nil {
			t.Fatal(err)
		}
		planned := map[string]bool{}
		for _, it := range plan.Kernels.Items {
			if it.Phase == measure.Forward {
				planned[it.Config.Key()] = true
			}
		}
		if planned[conv] != c.convAgain || planned[relu] {
			t.Errorf("--cudnn-api %q: the legacy-measured convolution planned %v, the kernel's relu %v; want %v, false", c.api, planned[conv], planned[relu], c.convAgain)
		}
	}
	req := DefaultSweepRequest()
	req.Models, req.CuDNNAPI = []string{"resnet18"}, "v9"
	if _, err := PlanSweep(ctx, cache, dev, req); err == nil {
		t.Error("a sweep through cuDNN API v9 was planned")
	}
	// The default is what PyTorch 2 uses: the graph API on cuDNN 9, so the legacy rows'
	// convolution is measured again; the legacy calls where the cuDNN is unknown.
	for _, c := range []struct {
		cudnn, api string
		again      bool
	}{{"9.19.0", "v8", true}, {"", "", false}} {
		d := dev
		d.CuDNN = c.cudnn
		req := DefaultSweepRequest()
		req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18"}, 32, []int{2}, 1
		plan, err := PlanSweep(ctx, cache, d, req)
		if err != nil {
			t.Fatal(err)
		}
		again := false
		for _, it := range plan.Kernels.Items {
			again = again || (it.Config.Key() == conv && it.Phase == measure.Forward)
		}
		if plan.Request.CuDNNAPI != c.api || again != c.again {
			t.Errorf("cuDNN %q by default: API %q, convolution planned again %v; want %q, %v", c.cudnn, plan.Request.CuDNNAPI, again, c.api, c.again)
		}
	}
}

// TestPlanSweepMeasuresWhatPyTorchRuns: a GPU sweep plans each layer in the kernel
// precision PyTorch runs it in (fp32 training: TF32 convolutions from compute capability
// 8.0, FP32 elsewhere; fp32-strict: FP32 everywhere; bf16 everywhere), finds what the
// cache holds at that precision only, and a channels_last sweep reads and writes the
// device's ":nhwc" rows. The CPU refuses nhwc and measures fp32-strict as fp32.
func TestPlanSweepMeasuresWhatPyTorchRuns(t *testing.T) {
	ctx := context.Background()
	cache, first := resnet18Cache(t)
	conv, relu := first[cnn.OpConv2d], first[cnn.OpReLU]
	h100 := measure.Device{Key: "cuda:GPU-h", Backend: "cuda", Name: "NVIDIA H100", ComputeCapability: "9.0", SMs: 132, ClockMHz: 1980}
	v100 := measure.Device{Key: "cuda:GPU-v", Backend: "cuda", Name: "Tesla V100", ComputeCapability: "7.0", SMs: 80, ClockMHz: 1530}
	cpuDev := measure.Device{Key: "cpu:host:cpu", Backend: "cpu", Name: "a CPU", SMs: 2}
	// The H100 holds a TF32 convolution and an FP32 relu (an fp32 sweep's), and an NHWC
	// bf16 convolution under its channels_last key.
	row := func(key, config string, p measure.Precision) measure.Measurement {
		return measure.Measurement{DeviceKey: key, ConfigKey: config, Batch: 2, Precision: p, Phase: measure.Forward,
			Policy: measure.Heuristic, Status: measure.OK, MedianMS: 0.5, Repeats: 1}
	}
	if err := cache.PutMeasurements(ctx, []measure.Measurement{
		row(h100.Key, conv, measure.TF32), row(h100.Key, relu, measure.FP32), row(h100.Key+gpu.NHWCSuffix, conv, measure.BF16)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		dev            measure.Device
		prec           measure.Precision
		layout         string
		convAt, reluAt measure.Precision
		convPlanned    bool // the forward of the first convolution at batch 2
		reluPlanned    bool
		measuredKey    string
		refused        string
	}{
		{name: "fp32 on Hopper", dev: h100, prec: measure.FP32, convAt: measure.TF32, reluAt: measure.FP32, measuredKey: h100.Key},
		{name: "fp32-strict on Hopper", dev: h100, prec: measure.FP32Strict, convAt: measure.FP32, reluAt: measure.FP32, convPlanned: true, measuredKey: h100.Key},
		{name: "fp32 on Volta", dev: v100, prec: measure.FP32, convAt: measure.FP32, reluAt: measure.FP32, convPlanned: true, reluPlanned: true, measuredKey: v100.Key},
		{name: "bf16 channels_last", dev: h100, prec: measure.BF16, layout: gpu.NHWC, convAt: measure.BF16, reluAt: measure.BF16, reluPlanned: true, measuredKey: h100.Key + ":nhwc"},
		{name: "bf16 nchw", dev: h100, prec: measure.BF16, convAt: measure.BF16, reluAt: measure.BF16, convPlanned: true, reluPlanned: true, measuredKey: h100.Key},
		{name: "fp32-strict on the CPU", dev: cpuDev, prec: measure.FP32Strict, convAt: measure.FP32, reluAt: measure.FP32, convPlanned: true, reluPlanned: true, measuredKey: cpuDev.Key},
		{name: "nhwc on the CPU", dev: cpuDev, prec: measure.FP32, layout: gpu.NHWC, refused: "NCHW only"},
		{name: "bf16 on the CPU", dev: cpuDev, prec: measure.BF16, refused: "fp32 only"},
	} {
		req := DefaultSweepRequest()
		req.Models, req.Input, req.Batches, req.Repeats, req.Precision, req.Layout = []string{"resnet18"}, 32, []int{2}, 1, c.prec, c.layout
		plan, err := PlanSweep(ctx, cache, c.dev, req)
		if c.refused != "" {
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: planned (%v), want a refusal saying %q", c.name, err, c.refused)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := plan.MeasuredKey(); got != c.measuredKey {
			t.Errorf("%s: measured under %q, want %q", c.name, got, c.measuredKey)
		}
		planned := map[string]bool{}
		for _, it := range plan.Kernels.Items {
			want := c.reluAt
			if it.Config.Op == cnn.OpConv2d {
				want = c.convAt
			}
			if it.Config.Op == cnn.OpConv2d || it.Config.Op == cnn.OpReLU {
				if it.Precision != want {
					t.Errorf("%s: %s planned in %q, want %q", c.name, it.Config.Op, it.Precision, want)
				}
			}
			if it.Phase == measure.Forward && it.Batch == 2 {
				planned[it.Config.Key()] = true
			}
		}
		if planned[conv] != c.convPlanned || planned[relu] != c.reluPlanned {
			t.Errorf("%s: planned the cached convolution %v and relu %v, want %v and %v", c.name, planned[conv], planned[relu], c.convPlanned, c.reluPlanned)
		}
	}
}
