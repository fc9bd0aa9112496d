package predictor

import (
	"errors"
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

// v100 is the catalog's Tesla V100 SXM2 16GB (assets/catalog/gpus.csv).
var v100 = hw.GPU{ID: "v100-sxm2-16gb", Name: "Tesla V100 SXM2 16GB", Architecture: "Volta", ComputeCapability: "7.0",
	SMs: 80, BoostClockMHz: 1530, FP32TFLOPS: 15.7, FP16TFLOPS: 125, MemoryGB: 16, MemoryType: "HBM2",
	MemoryBandwidthGBs: 900, L2MB: 6, PCIeGen: 3, PCIeLanes: 16, InterconnectGBs: 150, Interconnect: "NVLink", TDPW: 300}

// priorEngine is the app's engine without a cache: the prior calibration, the default
// overheads and memory model.
func priorEngine() *Engine {
	return NewEngine(kernels.NewModel(nil, []hw.GPU{v100}, nil, nil), DefaultOverheads, DefaultMemoryModel)
}

func buildNet(t *testing.T, name string) *cnn.Network {
	t.Helper()
	n, err := cnn.Build(name, cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestExplainAddsUpToTheCurve: for every kind of request (one GPU, eight, two nodes,
// amp with NCHW transposes, a loader that bounds the step, DALI's GPU decoding, no
// optimizer, the CPU's synchronous step), the phases add up to the iteration time the
// curve gives at the same batch, and the header repeats the curve's point.
func TestExplainAddsUpToTheCurve(t *testing.T) {
	resnet50, mobilenet := buildNet(t, "resnet50"), buildNet(t, "mobilenet_v2")
	p3 := hw.Machine{ID: "aws/p3.2xlarge", GPUCount: 1, VCPUs: 8, PriceUSDPerHour: 3.06}
	p316 := hw.Machine{ID: "aws/p3.16xlarge", GPUCount: 8, VCPUs: 64, PriceUSDPerHour: 24.48}
	base := Request{Network: resnet50, Machine: p3, GPU: v100, Precision: measure.FP32, Policy: measure.Heuristic,
		Run: Run{Epochs: 2, Images: 10000}}
	tests := []struct {
		name      string
		edit      func(r *Request)
		batch     int
		bound     string
		comm      bool // the all-reduce is exposed
		loader    bool // the loader's wait is part of the step
		inputWork bool // the input costs GPU-side time
		noUpdate  bool
		cpu       bool // the CPU backend's synchronous step
	}{
		{"resnet50 one V100", func(r *Request) {}, 128, "gpu", false, false, false, false, false},
		{"resnet50 batch 1 (launch-bound)", func(r *Request) {}, 1, "gpu", false, false, false, false, false},
		{"resnet50 eight V100s", func(r *Request) { r.Machine = p316 }, 256, "gpu", true, false, false, false, false},
		{"resnet50 two p3.16xlarge nodes", func(r *Request) {
			r.Machine, r.Nodes, r.NodeNetwork = p316, 2, hw.Network{Gbps: 25}
		}, 512, "gpu", true, false, false, false, false},
		{"mobilenet_v2 amp nchw", func(r *Request) {
			r.Network, r.Precision, r.MemoryFormat = mobilenet, measure.AMP, NCHW
		}, 96, "gpu", false, false, false, false, false},
		{"resnet50 slow pytorch loader", func(r *Request) {
			r.Input = pipeline.Rate{Loader: pipeline.PyTorch, Workers: 2, Input: 224, ImagesPerS: 150, HostToDeviceBytesPerImage: 4 * 3 * 224 * 224}
		}, 64, "input", false, true, true, false, false},
		{"resnet50 dali", func(r *Request) {
			r.Input = pipeline.Rate{Loader: pipeline.DALI, Workers: 4, Input: 224, GPUMSPerImage: 0.2}
		}, 64, "gpu", false, false, true, false, false},
		{"resnet50 forward+backward only", func(r *Request) { r.ForwardBackwardOnly = true }, 32, "gpu", false, false, false, true, false},
		{"resnet50 amp torch.compile", func(r *Request) { r.Precision, r.Framework = measure.AMP, Compiled }, 64, "gpu", false, false, false, false, false},
		{"resnet50 amp optimized on eight V100s", func(r *Request) {
			r.Precision, r.Framework, r.MemoryFormat, r.Machine = measure.AMP, Optimized, NHWC, p316
		}, 512, "gpu", true, false, false, false, false},
		{"mobilenet_v2 fp32 torch.compile batch 2", func(r *Request) { r.Network, r.Framework = mobilenet, Compiled }, 2, "gpu", false, false, false, false, false},
		{"resnet50 on the CPU backend", func(r *Request) {
			r.Precision, r.Policy, r.Kernels = measure.FP32, measure.NoPolicy, EveryPhaseKernels
		}, 8, "gpu", false, false, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := priorEngine()
			if tc.cpu {
				e = NewEngine(kernels.NewModel(nil, nil, nil, nil), CPUOverheads, DefaultMemoryModel)
			}
			req := base
			tc.edit(&req)
			x, err := e.Explain(req, tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			req.Batches = []int{tc.batch}
			c, err := e.Curve(req)
			if err != nil {
				t.Fatal(err)
			}
			p := c.Points[0]
			if got := x.Phases.Total(); math.Abs(got-p.IterMS) > 1e-9*p.IterMS {
				t.Errorf("phases add up to %.12f ms, the curve's iteration is %.12f ms (%+v)", got, p.IterMS, x.Phases)
			}
			if x.IterMS != p.IterMS || x.Bound != p.Bound || x.Source != p.Source || x.ErrorPct != p.ErrorPct ||
				x.ImagesPerS != p.ImagesPerS || x.MemoryGB != p.MemoryGB || x.TotalS != p.TotalS || x.MaxBatch != c.MaxBatch {
				t.Errorf("explanation %+v does not repeat the curve's point %+v", x, p)
			}
			if x.Bound != tc.bound {
				t.Errorf("bound %q, want %q", x.Bound, tc.bound)
			}
			if x.PerGPUBatch != perGPUBatch(tc.batch, c.GPUCount) || x.GPUCount != c.GPUCount {
				t.Errorf("per-GPU batch %d of %d GPUs, want %d of %d", x.PerGPUBatch, x.GPUCount, perGPUBatch(tc.batch, c.GPUCount), c.GPUCount)
			}
			ph := x.Phases
			for _, part := range ph.List() {
				if part.MS < 0 {
					t.Errorf("phase %s is negative: %g ms", part.Phase, part.MS)
				}
			}
			if (ph.CommunicationMS > 0) != tc.comm || (ph.LoaderMS > 0) != tc.loader || (ph.InputMS > 0) != tc.inputWork ||
				(ph.OptimizerMS == 0) != tc.noUpdate {
				t.Errorf("phases %+v: want communication %t, loader wait %t, input work %t, no optimizer %t", ph, tc.comm, tc.loader, tc.inputWork, tc.noUpdate)
			}
			if !(ph.ForwardMS > 0 && ph.BackwardDataMS > 0 && ph.BackwardWeightMS > 0) || ph.HostMS < e.over.stepHostMS(req.Framework)-1e-9 {
				t.Errorf("phases %+v: want forward and backward kernels and at least the per-step host time", ph)
			}
			// The layers add up to the kernel phases.
			var f, bd, bw float64
			for _, l := range x.Layers {
				f, bd, bw = f+l.ForwardMS, bd+l.BackwardDataMS, bw+l.BackwardWeightMS
			}
			if !near(f, ph.ForwardMS) || !near(bd, ph.BackwardDataMS) || !near(bw, ph.BackwardWeightMS) {
				t.Errorf("layers sum to %g/%g/%g ms, phases say %g/%g/%g", f, bd, bw, ph.ForwardMS, ph.BackwardDataMS, ph.BackwardWeightMS)
			}
			if len(x.Layers) != len(req.Network.Layers) {
				t.Errorf("%d layers, the network has %d", len(x.Layers), len(req.Network.Layers))
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestExplainResnet50 checks what the explanation says of resnet50 at batch 128 on a
// V100 in FP32: every layer in order, conv layers dominate, a known layer's forward
// time is the kernel model's for its configuration, the slowest list is sorted.
func TestExplainResnet50(t *testing.T) {
	e := priorEngine()
	net := buildNet(t, "resnet50")
	req := Request{Network: net, Machine: hw.Machine{ID: "aws/p3.2xlarge", GPUCount: 1}, GPU: v100,
		Precision: measure.FP32, Policy: measure.Heuristic, Run: Run{Epochs: 1, Images: 1000}}
	x, err := e.Explain(req, 128)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range x.Layers {
		if l.Index != i || l.Name != net.Layers[i].Name {
			t.Fatalf("layer %d is %d %q, want %q", i, l.Index, l.Name, net.Layers[i].Name)
		}
	}
	// conv1: 7×7 stride 2 on the image: no data gradient (the image needs none).
	conv1 := x.Layers[0]
	if conv1.Name != "conv1" || conv1.Kind != "conv2d" || conv1.Shape != "3x224x224→64x112x112 k7x7 s2 p3" ||
		conv1.BackwardDataMS != 0 || !(conv1.ForwardMS > 0) || !(conv1.BackwardWeightMS > 0) || conv1.Source != Estimated {
		t.Errorf("conv1 %+v: want a conv2d 3x224x224→64x112x112 k7x7 s2 p3 with forward and weight-gradient time, estimated", conv1)
	}
	// Its forward time is the kernel model's at batch 128, as the engine asks for it.
	out := make([]kernels.Estimate, 1)
	e.timer.Times(kernels.Device{GPU: v100}, kernels.Request{Config: net.Layers[0].Config, Phase: measure.Forward,
		Precision: KernelPrecision(measure.FP32, cnn.OpConv2d, v100), Policy: measure.Heuristic}, []int{128}, out)
	if conv1.ForwardMS != out[0].MS || conv1.ErrorPct <= 0 {
		t.Errorf("conv1 forward %g ms ±%.1f%%, the kernel model says %g ms", conv1.ForwardMS, conv1.ErrorPct, out[0].MS)
	}
	// The convolutions take most of the kernel time; the kinds' shares add to 100.
	share, layers := 0.0, 0
	for _, k := range x.Kinds {
		share += k.SharePct
		layers += k.Layers
	}
	if x.Kinds[0].Kind != "conv2d" || x.Kinds[0].SharePct < 60 || x.Kinds[0].Layers != 53 {
		t.Errorf("kinds %+v: want conv2d first with most of the time over resnet50's 53 convolutions", x.Kinds)
	}
	if math.Abs(share-100) > 1e-9 || layers != len(net.Layers) {
		t.Errorf("kinds cover %d layers and %.6f%% of the time, want %d and 100%%", layers, share, len(net.Layers))
	}
	kinds := map[string]bool{}
	for _, k := range x.Kinds {
		kinds[k.Kind] = true
	}
	for _, k := range []string{"conv2d", "batchnorm2d", "relu", "maxpool2d", "add", "linear", "crossentropy"} {
		if !kinds[k] {
			t.Errorf("no %s among the kinds %+v", k, x.Kinds)
		}
	}
	if len(x.Slowest) != 10 {
		t.Fatalf("%d slowest layers, want 10", len(x.Slowest))
	}
	for i := 1; i < len(x.Slowest); i++ {
		if x.Slowest[i].MS() > x.Slowest[i-1].MS() {
			t.Errorf("slowest layers out of order at %d: %+v", i, x.Slowest)
		}
	}
	for _, l := range x.Layers {
		if l.MS() > x.Slowest[9].MS() && !containsLayer(x.Slowest, l.Index) {
			t.Errorf("layer %s (%.3f ms) is slower than the tenth slowest (%.3f ms) but not listed", l.Name, l.MS(), x.Slowest[9].MS())
		}
	}
	if all := x.SlowestLayers(0); len(all) != len(net.Layers)-1 { // flatten is a view: no kernel
		t.Errorf("%d layers run kernels, want all but flatten (%d)", len(all), len(net.Layers)-1)
	}
	fl := x.Layers[len(net.Layers)-3]
	if fl.Kind != "flatten" || fl.MS() != 0 || fl.Source != "" {
		t.Errorf("flatten %+v: want a view with no kernel and no source", fl)
	}
}

func containsLayer(ls []LayerTime, index int) bool {
	for _, l := range ls {
		if l.Index == index {
			return true
		}
	}
	return false
}

// TestExplainHandCountedStep checks a hand-countable step: tinyNet's per-sample
// kernel times, no overheads, and the layers' phases as PyTorch runs them.
func TestExplainHandCountedStep(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: testGPU, Precision: measure.FP32,
		ForwardBackwardOnly: true}
	const b = 4
	x, err := e.Explain(req, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name       string
		kind       string
		f, bd, bw  float64
		wantSource Source
	}{
		{"conv1", "conv2d", 1, 0, 3, Estimated}, // on the image: no data gradient
		{"relu", "relu", 0.5, 0.5, 0, Estimated},
		{"conv2", "conv2d", 1, 2, 3, Estimated},
		{"conv3", "conv2d", 1, 2, 3, Estimated},
		{"add", "add", 0.25, 0, 0, Estimated}, // passes its gradient on without a kernel
		{"flatten", "flatten", 0, 0, 0, ""},
		{"fc", "linear", 1, 1, 1, Estimated},
		{"loss", "crossentropy", 0.1, 0.1, 0, Estimated},
	}
	for i, w := range want {
		l := x.Layers[i]
		if l.Name != w.name || l.Kind != w.kind || !near(l.ForwardMS, w.f*b) || !near(l.BackwardDataMS, w.bd*b) ||
			!near(l.BackwardWeightMS, w.bw*b) || l.Source != w.wantSource {
			t.Errorf("layer %d: %+v, want %s (%s) %g/%g/%g ms from %q", i, l, w.name, w.kind, w.f*b, w.bd*b, w.bw*b, w.wantSource)
		}
		if l.MS() > 0 && math.Abs(l.ErrorPct-10) > 1e-9 {
			t.Errorf("layer %s: ±%.3f%%, want the timer's ±10%%", l.Name, l.ErrorPct)
		}
	}
	ph := x.Phases
	if !near(ph.ForwardMS, 4.85*b) || !near(ph.BackwardDataMS+ph.BackwardWeightMS, 15.6*b) || ph.HostMS > 1e-12 ||
		ph.OptimizerMS != 0 || !near(x.IterMS, tinyPerSampleMS*b) {
		t.Errorf("phases %+v of a %.2f ms step: want forward %.2f, backward %.2f, nothing else", ph, x.IterMS, 4.85*b, 15.6*b)
	}
	if fc := x.Layers[6]; fc.Shape != "256→10" {
		t.Errorf("fc's shape %q, want 256→10", fc.Shape)
	}
	if add := x.Layers[4]; add.Shape != "4x8x8+4x8x8→4x8x8" {
		t.Errorf("add's shape %q, want 4x8x8+4x8x8→4x8x8", add.Shape)
	}
}

// TestExplainKindsAndShapes: a depthwise convolution is a kind of its own.
func TestExplainKindsAndShapes(t *testing.T) {
	net := buildNet(t, "mobilenet_v2")
	var dw *cnn.Layer
	for i := range net.Layers {
		if l := &net.Layers[i]; l.Op == cnn.OpConv2d && l.Groups > 1 {
			dw = l
			break
		}
	}
	if dw == nil {
		t.Fatal("mobilenet_v2 has no grouped convolution")
	}
	if got := LayerKind(dw); got != "conv2d-depthwise" {
		t.Errorf("%s: kind %q, want conv2d-depthwise", dw.Name, got)
	}
	if got := LayerShape(dw); got != "32x112x112 k3x3 s1 p1 g32" {
		t.Errorf("%s: shape %q, want 32x112x112 k3x3 s1 p1 g32", dw.Name, got)
	}
	rx := buildNet(t, "resnext50_32x4d")
	for i := range rx.Layers {
		if l := &rx.Layers[i]; l.Op == cnn.OpConv2d && l.Groups > 1 {
			if got := LayerKind(l); got != "conv2d-grouped" {
				t.Errorf("%s (groups %d of %d channels): kind %q, want conv2d-grouped", l.Name, l.Groups, l.In.C, got)
			}
			break
		}
	}
}

// TestExplainRefusesABatchThatDoesNotFit names the largest batch that fits.
func TestExplainRefusesABatchThatDoesNotFit(t *testing.T) {
	e := priorEngine()
	req := Request{Network: buildNet(t, "vgg16"), Machine: hw.Machine{ID: "gpu/v100-sxm2-16gb", GPUCount: 1}, GPU: v100,
		Precision: measure.FP32, Policy: measure.Heuristic}
	_, err := e.Explain(req, 4096)
	var fe *FitError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v, want a *FitError", err)
	}
	req.Batches, req.Run = []int{1}, Run{Epochs: 1, Images: 1}
	c, _ := e.Curve(req)
	if fe.MaxBatch != c.MaxBatch || fe.MaxBatch < 32 || fe.MaxBatch > 256 ||
		!strings.Contains(err.Error(), "the largest batch that fits is") || !strings.Contains(err.Error(), "vgg16") {
		t.Errorf("%v (max %d): want the curve's largest batch %d named", err, fe.MaxBatch, c.MaxBatch)
	}
	if _, err := e.Explain(req, fe.MaxBatch); err != nil {
		t.Errorf("the largest batch that fits (%d) is refused: %v", fe.MaxBatch, err)
	}
	if _, err := e.Explain(req, 0); err == nil || !strings.Contains(err.Error(), "must be positive") {
		t.Errorf("batch 0: %v, want a refusal", err)
	}
}
