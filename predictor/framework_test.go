package predictor

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

func TestParseFramework(t *testing.T) {
	tests := []struct {
		in   string
		want Framework
		ok   bool
	}{
		{"", PyTorch2, true}, {"pytorch2", PyTorch2, true}, {" PyTorch1 ", PyTorch1, true}, {"graph", Graph, true},
		{"tensorflow", "", false}, {"pytorch3", "", false},
	}
	for _, tc := range tests {
		got, err := ParseFramework(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseFramework(%q) = %q, %v; want %q, ok %t", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestFrameworkOf(t *testing.T) {
	tests := []struct {
		desc string
		want Framework
	}{
		{"PyTorch 1.13 (NGC 22.10)", PyTorch1},
		{"PyTorch (NGC 21.03)", PyTorch1},
		{"PyTorch 0.3.0", PyTorch1},
		{"PyTorch 2.1 (torch.compile off)", PyTorch2},
		{"TensorFlow 1.15 (tf_cnn_benchmarks)", Graph},
		{"Caffe2 + Gloo", Graph},
		{"Torch7 + cuDNN 5.1", Graph},
		{"MXNet", Graph},
	}
	for _, tc := range tests {
		if got := FrameworkOf(tc.desc); got != tc.want {
			t.Errorf("FrameworkOf(%q) = %q, want %q", tc.desc, got, tc.want)
		}
	}
}

// TestParamTensorSizes checks the tensors against torchvision's: ResNet-50 has 161
// parameter tensors (53 convolutions without bias, 53 batch norms with two each, the
// classifier's weight and bias), and they hold every parameter.
func TestParamTensorSizes(t *testing.T) {
	net, err := cnn.Build("resnet50", cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sizes := paramTensorSizes(net)
	sum := 0.0
	for _, s := range sizes {
		sum += s
	}
	if len(sizes) != 161 || sum != float64(net.Params()) {
		t.Errorf("resnet50: %d tensors holding %.0f parameters, want 161 holding %d", len(sizes), sum, net.Params())
	}
}

// TestFrameworkPerTensorWork counts the operators each framework adds to a ResNet-50
// step and checks the GPU time they add when the GPU bounds the step.
func TestFrameworkPerTensorWork(t *testing.T) {
	net, err := cnn.Build("resnet50", cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	over := DefaultOverheads
	gpu := hw.GPU{ID: "g", MemoryGB: 80, MemoryBandwidthGBs: 1000}
	e := NewEngine(newLinearTimer(1), over, DefaultMemoryModel)
	count := func(f Framework) (bn, zero, accum, opt int, p stepPlan) {
		req := Request{Network: net, GPU: gpu, Precision: measure.FP32, Framework: f}
		bk := over.bookkeeping(&req, over.streamGBs(&req))
		for _, ops := range bk.forwardAfter {
			bn += len(ops)
		}
		for _, ops := range bk.backwardAfter {
			accum += len(ops)
		}
		return bn, len(bk.zeroGrad), accum, len(bk.optimizer), e.plan(&req, []int{1, 64})
	}
	tests := []struct {
		f                      Framework
		bn, zero, accum, opt   int
		updateIssue, updateGPU bool // a fused or foreach update outside the operator list
	}{
		{PyTorch1, 53, 161, 161, 4 * 161, false, false},
		{PyTorch2, 53, 0, 0, 0, true, true},
		{Graph, 0, 0, 0, 0, false, true},
	}
	for _, tc := range tests {
		bn, zero, accum, opt, p := count(tc.f)
		if bn != tc.bn || zero != tc.zero || accum != tc.accum || opt != tc.opt {
			t.Errorf("%s: %d batch-norm counters, %d zero_, %d accumulations, %d optimizer operators; want %d, %d, %d, %d",
				tc.f, bn, zero, accum, opt, tc.bn, tc.zero, tc.accum, tc.opt)
		}
		if (p.updateIssue > 0) != tc.updateIssue || (p.update > 0) != tc.updateGPU {
			t.Errorf("%s: update %g ms on the GPU, %g ms to issue; want GPU %t, issue %t", tc.f, p.update, p.updateIssue, tc.updateGPU, tc.updateIssue)
		}
	}
	// PyTorch 1's operators each cost a small kernel plus their bytes at the streaming
	// bandwidth: zero_ writes 4, accumulation moves 12, the optimizer 12+8+12+12 bytes
	// per parameter.
	req := Request{Network: net, GPU: gpu, Precision: measure.FP32, Framework: PyTorch1}
	gbs := over.streamGBs(&req)
	want := float64(161*(1+1+4))*over.SmallKernelUS/1000 + float64(net.Params())*(4+12+44)/(gbs*1e9)*1000
	_, _, _, _, p := count(PyTorch1)
	if math.Abs(p.bookkeepingMS-want) > 1e-9*want {
		t.Errorf("PyTorch 1's per-tensor kernels take %.6f ms, want %.6f", p.bookkeepingMS, want)
	}
}

// TestSyncAfterForwardExposesTheHost checks the examples script's mid-step read: the
// GPU, done with the forward pass, waits for the host to zero every gradient and issue
// the first backward kernel. With tinyNet's five parameter tensors, each zero_ taking
// EagerOpUS to issue and SmallKernelUS to run, the step grows by exactly
// 5 × (EagerOpUS − SmallKernelUS) + LaunchBackwardUS over the reference script's.
func TestSyncAfterForwardExposesTheHost(t *testing.T) {
	over := noOverheads()
	over.EagerOpUS, over.SmallKernelUS, over.LaunchBackwardUS = 40, 5, 30
	e := NewEngine(newLinearTimer(1), over, DefaultMemoryModel)
	step := func(s Script) float64 {
		gpu := testGPU
		gpu.MemoryBandwidthGBs = 1e9 // the zero_ kernels' bytes take no time
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: gpu,
			Precision: measure.FP32, Batches: []int{8}, Run: Run{Epochs: 1, Images: 8}, Framework: PyTorch1, Script: s})
		if err != nil {
			t.Fatal(err)
		}
		return c.Points[0].IterMS - c.Points[0].ScriptMS
	}
	got := step(Examples) - step(Reference)
	want := (5*(over.EagerOpUS-over.SmallKernelUS) + over.LaunchBackwardUS) / 1000
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("the read after the forward pass adds %.6f ms, want %.6f ms", got, want)
	}
}
