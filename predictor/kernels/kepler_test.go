package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// TestKeplerRunsAtItsIssueRate checks that a Kepler GPU is its own family and that
// its FP32 peak is scaled by KeplerIssueFactor, while a Pascal GPU's is not.
func TestKeplerRunsAtItsIssueRate(t *testing.T) {
	for _, tc := range []struct {
		gpu        hw.GPU
		family     hw.Family
		wantTFLOPS float64
	}{
		{hw.GPU{ID: "k80", ComputeCapability: "3.7", FP32TFLOPS: 4.37, SMs: 13, MemoryBandwidthGBs: 240}, hw.FamilyKepler, 4.37 / 1.35},
		{hw.GPU{ID: "k40", ComputeCapability: "3.5", FP32TFLOPS: 4.29, SMs: 15, MemoryBandwidthGBs: 288}, hw.FamilyKepler, 4.29 / 1.35},
		{hw.GPU{ID: "p100", ComputeCapability: "6.0", FP32TFLOPS: 9.3, SMs: 56, MemoryBandwidthGBs: 732}, hw.FamilyUnknown, 9.3},
	} {
		if f := hw.FamilyOf(tc.gpu); f != tc.family {
			t.Errorf("hw.FamilyOf(%s) = %v, want %v", tc.gpu.ID, f, tc.family)
		}
		r := ratesFor(tc.gpu, measure.FP32, nil)
		if got := r.peakFLOPS / 1e12; math.Abs(got-tc.wantTFLOPS) > 1e-9 {
			t.Errorf("%s: FP32 peak %.4f TFLOPS, want %.4f", tc.gpu.ID, got, tc.wantTFLOPS)
		}
	}
	if hw.FamilyKepler.String() != "kepler" {
		t.Errorf("hw.FamilyKepler.String() = %q", hw.FamilyKepler.String())
	}
}

// TestFamilyMemoryScale checks that a family's memory scale multiplies the memory
// efficiency of that family only, and that bad keys and values are refused.
func TestFamilyMemoryScale(t *testing.T) {
	cal := PriorCalibration()
	cal.FamilyMemoryScale = map[string]float64{"ga100": 0.8}
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    hw.Family
		want float64
	}{{hw.FamilyGA100, 0.78 * 0.8}, {hw.FamilyVolta, 0.78}, {hw.FamilyUnknown, 0.78}} {
		if got := cal.MemoryEfficiencyOf(tc.f); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("MemoryEfficiencyOf(%v) = %v, want %v", tc.f, got, tc.want)
		}
	}
	for _, bad := range []map[string]float64{{"pascal": 1}, {"volta": 0}, {"volta": 3}} {
		c := PriorCalibration()
		c.FamilyMemoryScale = bad
		if err := c.Validate(); err == nil {
			t.Errorf("Validate accepted family memory scale %v", bad)
		}
	}
}

// TestDepthwiseRunsOnCUDACores checks that a depthwise convolution gains no
// tensor-core speed under amp, only its halved bytes per tap (twice the FP32 rate:
// amp ÷ fp32 just above one half, the launch cost being the same), while a dense 5×5
// convolution of the same size gains the tensor cores' rate.
func TestDepthwiseRunsOnCUDACores(t *testing.T) {
	cal := PriorCalibration()
	a100 := hw.GPU{ID: "a100", ComputeCapability: "8.0", FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312, SMs: 108, MemoryBandwidthGBs: 2039}
	shape := cnn.Shape{C: 384, H: 28, W: 28}
	conv := func(groups int) cnn.Config {
		return cnn.Config{Op: cnn.OpConv2d, In: shape, Out: shape, NumInputs: 1, Kernel: cnn.Pair{5, 5}, Stride: cnn.Pair{1, 1},
			Padding: cnn.Pair{2, 2}, Dilation: cnn.Pair{1, 1}, Groups: groups}
	}
	for _, tc := range []struct {
		name     string
		groups   int
		min, max float64 // amp time ÷ fp32 time
	}{
		{"depthwise", 384, 0.5, 0.55},
		{"dense", 1, 0, 0.5},
	} {
		fp32, _ := EstimateMS(cal, conv(tc.groups), measure.Forward, a100, measure.FP32, 128)
		amp, _ := EstimateMS(cal, conv(tc.groups), measure.Forward, a100, measure.AMP, 128)
		if r := amp / fp32; r < tc.min || r > tc.max {
			t.Errorf("%s: amp %.4f ms ÷ fp32 %.4f ms = %.2f, want within [%.2f, %.2f]", tc.name, amp, fp32, r, tc.min, tc.max)
		}
	}
}
