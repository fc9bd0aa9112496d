package predictor

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// a100 is the catalog's A100 SXM4 80GB (assets/catalog/gpus.csv).
var a100 = hw.GPU{ID: "a100-sxm4-80gb", Name: "A100 SXM4 80GB", Architecture: "Ampere (GA100)", ComputeCapability: "8.0",
	SMs: 108, BoostClockMHz: 1410, FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312, MemoryGB: 80, MemoryType: "HBM2e",
	MemoryBandwidthGBs: 2039, L2MB: 40, PCIeGen: 4, PCIeLanes: 16, InterconnectGBs: 300, Interconnect: "NVLink", TDPW: 400}

// fusedKinds counts a plan's fused kernels by kind.
func fusedKinds(p fusionPlan) map[string]int {
	out := map[string]int{}
	for _, k := range p.kernels {
		out[k.kind]++
	}
	return out
}

// TestFusionByStack checks which of ResNet-50's layers each stack fuses, counted by
// hand from torchvision's graph: 53 batch norms, 49 ReLUs (the stem's, two in each of
// 16 bottlenecks and one after each residual join) and 16 adds. torch.compile fuses the
// stem's BN+ReLU, 32 BN+ReLU pairs inside the bottlenecks, 12 BN+add+ReLU joins and 4
// joins whose shortcut is a projection (two batch norms); NVIDIA's optimised stack
// fuses the same chains under amp and runs the 32 inner pairs inside the convolutions
// around them; eager PyTorch and graph frameworks fuse nothing, and the optimised
// stack nothing in FP32 (its fused kernels are FP16 NHWC).
func TestFusionByStack(t *testing.T) {
	net := buildNet(t, "resnet50")
	tests := []struct {
		f     Framework
		p     measure.Precision
		kinds map[string]int
	}{
		{PyTorch2, measure.AMP, map[string]int{}},
		{PyTorch1, measure.AMP, map[string]int{}},
		{Graph, measure.AMP, map[string]int{}},
		{Optimized, measure.FP32, map[string]int{}},
		{Compiled, measure.FP32, map[string]int{"batchnorm2d+relu": 33, "batchnorm2d+add+relu": 12, "batchnorm2d+batchnorm2d+add+relu": 4}},
		{Compiled, measure.AMP, map[string]int{"batchnorm2d+relu": 33, "batchnorm2d+add+relu": 12, "batchnorm2d+batchnorm2d+add+relu": 4}},
		{Optimized, measure.AMP, map[string]int{"batchnorm2d+relu": 1, "batchnorm2d+relu (in the convolutions)": 32,
			"batchnorm2d+add+relu": 12, "batchnorm2d+batchnorm2d+add+relu": 4}},
	}
	for _, tc := range tests {
		p := fusion(&Request{Network: net, Framework: tc.f, Precision: tc.p})
		got := fusedKinds(p)
		if len(got) != len(tc.kinds) {
			t.Errorf("%s %s: fused %v, want %v", tc.f, tc.p, got, tc.kinds)
			continue
		}
		for k, n := range tc.kinds {
			if got[k] != n {
				t.Errorf("%s %s: %d %q kernels, want %d (all: %v)", tc.f, tc.p, got[k], k, n, got)
			}
		}
		absorbed := 0
		for i, a := range p.absorbed {
			if a {
				absorbed++
				if op := net.Layers[i].Op; !fusableOps[op] {
					t.Errorf("%s: layer %s (%s) fused, but only normalisations and elementwise layers fuse", tc.f, net.Layers[i].Name, op)
				}
			}
		}
		if want := 2*33 + 3*12 + 4*4; len(tc.kinds) > 0 && absorbed != want {
			t.Errorf("%s %s: %d layers absorbed, want %d", tc.f, tc.p, absorbed, want)
		}
	}
}

// TestFusedTraffic checks the traffic of the fused kernels against the eager layers'
// (elements per sample, in units of one activation x): a batch norm alone moves what
// its eager kernel moves (3 forward: the statistics pass and normalise; 4 backward);
// BN+ReLU fused reads x twice and writes once forward (3, eager 5) and backward reads
// dY, x and the output as a mask, writes dX and reads x once more for the statistics
// (5, eager 7); BN+add+ReLU reads x, the shortcut and x again and writes once (4, eager
// 8), backward 6 (eager 9); the optimised stack gathers the statistics in the
// producing convolution (one pass less each way) and, between two convolutions, runs
// the forward pass in them (0) and the backward as one pass over dY, x and dX (3).
func TestFusedTraffic(t *testing.T) {
	x := cnn.Shape{C: 64, H: 8, W: 8}
	e := float64(x.Elems())
	conv := func(name string, in int) cnn.Layer {
		return cnn.Layer{Name: name, Config: cnn.Config{Op: cnn.OpConv2d, In: x, Out: x, NumInputs: 1, Kernel: cnn.Pair{1, 1},
			Stride: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}, Inputs: []int{in}, InShapes: []cnn.Shape{x}}
	}
	op := func(name string, o cnn.Op, ins ...int) cnn.Layer {
		shapes := make([]cnn.Shape, len(ins))
		for i := range shapes {
			shapes[i] = x
		}
		return cnn.Layer{Name: name, Config: cnn.Config{Op: o, In: x, Out: x, NumInputs: len(ins)}, Inputs: ins, InShapes: shapes}
	}
	// 0 conv → 1 bn → 2 relu → 3 conv → 4 bn → 5 add(4, 2) → 6 relu → 7 conv
	net := &cnn.Network{Name: "t", Layers: []cnn.Layer{
		conv("c0", -1), op("bn1", cnn.OpBatchNorm, 0), op("relu1", cnn.OpReLU, 1), conv("c1", 2),
		op("bn2", cnn.OpBatchNorm, 3), op("add", cnn.OpAdd, 4, 2), op("relu2", cnn.OpReLU, 5), conv("c2", 6),
	}}
	consumers := make([][]int, len(net.Layers))
	for i, l := range net.Layers {
		for _, in := range l.Inputs {
			if in >= 0 {
				consumers[in] = append(consumers[in], i)
			}
		}
	}
	tests := []struct {
		name     string
		g        []int
		conv     bool
		fwd, bwd float64
		prologue bool
	}{
		{"lone bn (eager traffic)", []int{1}, false, 3, 4, false},
		{"bn+relu compiled", []int{1, 2}, false, 3, 5, false},
		{"bn+add+relu compiled", []int{4, 5, 6}, false, 4, 6, false},
		{"bn+add+relu optimised", []int{4, 5, 6}, true, 3, 5, false},
		{"bn+relu optimised (relu1 also feeds the add)", []int{1, 2}, true, 2, 4, false},
	}
	for _, tc := range tests {
		k := fusedTraffic(net, consumers, tc.g, tc.conv)
		if k.fwdElems != tc.fwd*e || k.bwdElems != tc.bwd*e || k.prologue != tc.prologue {
			t.Errorf("%s: %g/%g elements (prologue %t), want %g/%g (%t)", tc.name, k.fwdElems/e, k.bwdElems/e, k.prologue, tc.fwd, tc.bwd, tc.prologue)
		}
	}
	// A BN+ReLU between two convolutions only: in the convolutions.
	net.Layers[5].Inputs = []int{4, 0}
	consumers[2] = []int{3}
	k := fusedTraffic(net, consumers, []int{1, 2}, true)
	if !k.prologue || k.fwdElems != 0 || k.bwdElems != 3*e || !strings.Contains(k.kind, "in the convolutions") {
		t.Errorf("bn+relu between convolutions: %+v, want no forward kernel and 3 elements backward", k)
	}
	// Every single layer's eager traffic matches the kernel model's, which times the
	// unfused kernels.
	for _, l := range net.Layers {
		if l.Op == cnn.OpConv2d {
			continue
		}
		fwd, bwd := eagerTraffic(&l)
		g := []int{indexOf(net, l.Name)}
		lone := fusedTraffic(net, consumers, g, false)
		if l.Op == cnn.OpBatchNorm && (lone.fwdElems != fwd || lone.bwdElems != bwd) {
			t.Errorf("%s alone: %g/%g, eager %g/%g", l.Name, lone.fwdElems, lone.bwdElems, fwd, bwd)
		}
	}
}

func indexOf(net *cnn.Network, name string) int {
	for i := range net.Layers {
		if net.Layers[i].Name == name {
			return i
		}
	}
	return -1
}

// stepMS is req's predicted step at per-GPU batch b on the prior calibration.
func stepMS(t *testing.T, e *Engine, req Request, b int) float64 {
	t.Helper()
	req.Batches = []int{b}
	req.Run = Run{Epochs: 1, Images: b}
	c, err := e.Curve(req)
	if err != nil {
		t.Fatal(err)
	}
	return c.Points[0].IterMS
}

// TestStackGainFollowsTheLayerMix: what torch.compile saves follows from the network's
// own kernels. On an A100 under amp at 32 images per GPU, MobileNetV3 and
// EfficientNet-B0 (hundreds of small depthwise, activation and squeeze-excitation
// kernels, whose launches the host issues one by one in eager PyTorch) gain more than
// ResNet-50 (fewer, larger kernels) from reduce-overhead mode, much of it from the CUDA
// graphs; at 256 images, where the GPU bounds every step, ResNet-50 gains from the
// fused batch norms alone, and less from compiling than from NVIDIA's optimised stack,
// whose batch norms move into the convolutions. ResNet-50's compiled gain grows with
// the batch: at 32 images much of an activation stays in the A100's L2 from one eager
// kernel to the next, so fusing the kernels saves less DRAM traffic than at 256. The
// default mode gains less than reduce-overhead at every batch (it still issues each
// kernel and pays its graphs' calls), and at 32 images it loses to eager PyTorch, as
// on an H200 we measured torch.compile's default mode at 0.94× eager channels_last at
// batch 128 and 1.10× at 256.
func TestStackGainFollowsTheLayerMix(t *testing.T) {
	e := NewEngine(kernels.NewModel(nil, []hw.GPU{a100}, nil, nil), DefaultOverheads, DefaultMemoryModel)
	gain := func(model string, f Framework, b int) float64 {
		req := Request{Network: buildNet(t, model), GPU: a100, Machine: hw.Machine{ID: "a", GPUCount: 1}, Precision: measure.AMP,
			Policy: measure.Heuristic, MemoryFormat: NHWC}
		eager := stepMS(t, e, req, b)
		req.Framework = f
		return eager / stepMS(t, e, req, b)
	}
	rn, eff, mb := gain("resnet50", CompiledGraphs, 32), gain("efficientnet_b0", CompiledGraphs, 32), gain("mobilenet_v3_large", CompiledGraphs, 32)
	if !(rn > 1 && eff > rn && mb > rn) {
		t.Errorf("reduce-overhead's gain at batch 32: resnet50 ×%.3f, efficientnet_b0 ×%.3f, mobilenet_v3_large ×%.3f; want the elementwise-heavy networks' gains above ResNet-50's", rn, eff, mb)
	}
	big, opt := gain("resnet50", CompiledGraphs, 256), gain("resnet50", Optimized, 256)
	if !(big > rn && opt > big) {
		t.Errorf("ResNet-50 at batch 256 gains ×%.3f compiled (×%.3f at 32), ×%.3f optimised; want a larger compiled gain than at 32, and the optimised stack ahead", big, rn, opt)
	}
	small, large := gain("resnet50", Compiled, 32), gain("resnet50", Compiled, 256)
	if !(small < 1 && small < rn && large > 1 && large < big) {
		t.Errorf("default mode: ResNet-50 ×%.3f at 32, ×%.3f at 256 (reduce-overhead ×%.3f, ×%.3f); want a loss at 32, a gain at 256, both below reduce-overhead's", small, large, rn, big)
	}
}

// TestStacksConvertLayout: under amp an NCHW network pays cuDNN's transposes around
// its tensor-core convolutions in eager PyTorch and under torch.compile, not in a
// graph framework (its layout optimizer) or NVIDIA's optimised stack (NHWC throughout).
func TestStacksConvertLayout(t *testing.T) {
	e := NewEngine(kernels.NewModel(nil, []hw.GPU{a100}, nil, nil), DefaultOverheads, DefaultMemoryModel)
	net := buildNet(t, "resnet18")
	for _, tc := range []struct {
		f    Framework
		pays bool
	}{{PyTorch2, true}, {PyTorch1, true}, {Compiled, true}, {CompiledGraphs, true}, {Graph, false}, {Optimized, false}} {
		req := Request{Network: net, GPU: a100, Machine: hw.Machine{ID: "a", GPUCount: 1}, Precision: measure.AMP, Policy: measure.Heuristic, Framework: tc.f}
		req.MemoryFormat = NHWC
		nhwc := stepMS(t, e, req, 64)
		req.MemoryFormat = NCHW
		nchw := stepMS(t, e, req, 64)
		if pays := nchw > nhwc*1.001; pays != tc.pays {
			t.Errorf("%s: NCHW %.3f ms, NHWC %.3f ms; want transposes paid: %t", tc.f, nchw, nhwc, tc.pays)
		}
	}
}

// TestExplainStackReport: the explanation names the stack, lists every fused kernel
// with the layers it replaces and costs the step under every stack, the explained
// stack's cost being the explanation's own iteration.
func TestExplainStackReport(t *testing.T) {
	e := NewEngine(kernels.NewModel(nil, []hw.GPU{a100}, nil, nil), DefaultOverheads, DefaultMemoryModel)
	req := Request{Network: buildNet(t, "resnet50"), GPU: a100, Machine: hw.Machine{ID: "a", GPUCount: 1}, Precision: measure.AMP,
		Policy: measure.Heuristic, MemoryFormat: NHWC, Framework: Optimized}
	x, err := e.Explain(req, 256)
	if err != nil {
		t.Fatal(err)
	}
	s := x.Stack
	if s.Framework != Optimized || !s.CUDAGraphs || len(s.Fused) != 49 || s.HostIssueMS != 0 || !(s.Kernels < s.EagerKernels) ||
		!(s.MemoryMS < s.EagerMemoryMS) || !strings.Contains(s.Layout, "nhwc") {
		t.Fatalf("stack report %+v: want optimized, CUDA graphs, 49 fused kernels, fewer launches and memory-bound time than eager", s)
	}
	var sum int
	for _, k := range s.FusedKinds {
		sum += k.Count
		if !(k.MS < k.UnfusedMS) {
			t.Errorf("%s: fused %.3f ms, unfused %.3f ms; want a saving", k.Kind, k.MS, k.UnfusedMS)
		}
	}
	if sum != len(s.Fused) || len(s.Fused[0].Layers) < 2 {
		t.Errorf("kinds count %d of %d kernels; first fused kernel %+v", sum, len(s.Fused), s.Fused[0])
	}
	if len(s.Costs) != len(Frameworks) {
		t.Fatalf("%d stack costs, want one per framework", len(s.Costs))
	}
	for _, c := range s.Costs {
		if c.Framework == Optimized && math.Abs(c.IterMS-x.IterMS) > 1e-9*x.IterMS {
			t.Errorf("optimized costs %.4f ms in the table, the explanation says %.4f", c.IterMS, x.IterMS)
		}
		if c.Framework == PyTorch2 && !(c.IterMS > x.IterMS) {
			t.Errorf("eager %.3f ms is not slower than optimized %.3f ms", c.IterMS, x.IterMS)
		}
	}
	fused := 0
	for _, l := range x.Layers {
		if l.Fused != "" {
			fused++
		}
	}
	if fused != 2*33+3*12+4*4 {
		t.Errorf("%d layers marked fused, want 118", fused)
	}
}
