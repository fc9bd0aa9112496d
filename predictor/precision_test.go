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

func TestParseTrainingPrecision(t *testing.T) {
	for _, s := range []string{"fp32", "fp32-strict", "tf32", "amp", "bf16"} {
		if p, err := ParseTrainingPrecision(s); err != nil || string(p) != s {
			t.Errorf("ParseTrainingPrecision(%q) = %q, %v", s, p, err)
		}
	}
	if _, err := ParseTrainingPrecision("fp16"); err == nil || !strings.Contains(err.Error(), "use fp32, fp32-strict, tf32, amp or bf16") {
		t.Errorf("fp16: error %v, want the list of training precisions", err)
	}
}

// TestTF32SpeedsUpTheMatmulShare: training in tf32 instead of PyTorch's default fp32
// changes only the linear layers' kernels (TF32 instead of strict FP32 matrix
// multiplies), so ConvNeXt-Tiny, whose MLP blocks are linear layers, gets faster by
// exactly its linear layers' saving, while ResNet-50 (one small linear layer) hardly
// moves.
func TestTF32SpeedsUpTheMatmulShare(t *testing.T) {
	e := NewEngine(kernels.NewModel(nil, []hw.GPU{a100}, nil, nil), DefaultOverheads, DefaultMemoryModel)
	step := func(net *cnn.Network, p measure.Precision) Explanation {
		t.Helper()
		req := Request{Network: net, Machine: hw.Machine{ID: "gpu/a100", GPUCount: 1}, GPU: a100, Precision: p,
			Policy: measure.Heuristic, Run: Run{Epochs: 1, Images: 1 << 20}}
		x, err := e.Explain(req, 128)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		model          string
		minGain, maxGn float64 // fp32 ÷ tf32 step time
	}{
		{"convnext_tiny", 1.3, 4},
		{"resnet50", 1, 1.02},
	} {
		net := buildNet(t, tc.model)
		fp32, tf32 := step(net, measure.FP32), step(net, measure.TF32)
		var linearSaving, otherChange float64
		for i := range fp32.Layers {
			d := fp32.Layers[i].MS() - tf32.Layers[i].MS()
			if net.Layers[i].Op == cnn.OpLinear {
				linearSaving += d
			} else {
				otherChange += math.Abs(d)
			}
		}
		if otherChange > 1e-9*fp32.IterMS {
			t.Errorf("%s: layers other than linear changed by %g ms between fp32 and tf32", tc.model, otherChange)
		}
		kernelsFP32 := fp32.Phases.ForwardMS + fp32.Phases.BackwardDataMS + fp32.Phases.BackwardWeightMS
		kernelsTF32 := tf32.Phases.ForwardMS + tf32.Phases.BackwardDataMS + tf32.Phases.BackwardWeightMS
		if math.Abs((kernelsFP32-kernelsTF32)-linearSaving) > 1e-6*kernelsFP32 {
			t.Errorf("%s: the kernels gained %g ms, the linear layers %g ms", tc.model, kernelsFP32-kernelsTF32, linearSaving)
		}
		if gain := fp32.IterMS / tf32.IterMS; gain < tc.minGain || gain > tc.maxGn {
			t.Errorf("%s: fp32 step %.2f ms ÷ tf32 step %.2f ms = %.3f, want within [%g, %g]", tc.model, fp32.IterMS, tf32.IterMS, gain, tc.minGain, tc.maxGn)
		}
	}
}

// TestBF16IsAMPWithoutTheScaler: bf16 runs the kernels amp runs at the same tensor-core
// rate and the same 16-bit activations, so its layers and memory are amp's; the
// optimizer saves the gradient scaler's unscale pass (8 of amp's 14 bytes per
// parameter, at the streaming bandwidth). On a V100, which has no BF16 tensor cores, bf16 is far slower than amp.
func TestBF16IsAMPWithoutTheScaler(t *testing.T) {
	e := NewEngine(kernels.NewModel(nil, []hw.GPU{a100, v100}, nil, nil), DefaultOverheads, DefaultMemoryModel)
	net := buildNet(t, "resnet50")
	explain := func(g hw.GPU, p measure.Precision) Explanation {
		t.Helper()
		x, err := e.Explain(Request{Network: net, Machine: hw.Machine{ID: "gpu/" + g.ID, GPUCount: 1}, GPU: g, Precision: p,
			Policy: measure.Heuristic, MemoryFormat: NHWC, Run: Run{Epochs: 1, Images: 1 << 20}}, 64)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	amp, bf16 := explain(a100, measure.AMP), explain(a100, measure.BF16)
	for i := range amp.Layers {
		if amp.Layers[i].MS() != bf16.Layers[i].MS() {
			t.Fatalf("layer %s: amp %g ms, bf16 %g ms", amp.Layers[i].Name, amp.Layers[i].MS(), bf16.Layers[i].MS())
		}
	}
	if amp.MemoryGB != bf16.MemoryGB {
		t.Errorf("memory: amp %g GB, bf16 %g GB", amp.MemoryGB, bf16.MemoryGB)
	}
	saved := float64(net.Params()) * (DefaultOverheads.AMPBytesPerParam - DefaultOverheads.BF16BytesPerParam) / (a100.MemoryBandwidthGBs * DefaultOverheads.MemoryEfficiency * 1e9) * 1000
	if got := amp.Phases.OptimizerMS - bf16.Phases.OptimizerMS; !(saved > 0) || math.Abs(got-saved) > 0.05*saved {
		t.Errorf("bf16's optimizer saves %g ms over amp's, want the scaler's %g ms", got, saved)
	}
	if v100amp, v100bf16 := explain(v100, measure.AMP), explain(v100, measure.BF16); v100bf16.IterMS < 2*v100amp.IterMS {
		t.Errorf("V100: bf16 %.1f ms, amp %.1f ms: bf16 has no tensor cores before Ampere", v100bf16.IterMS, v100amp.IterMS)
	}
}
