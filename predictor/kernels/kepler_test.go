package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// TestKeplerRunsAtItsIssueRate checks that a Kepler GPU is its own family and that
// its FP32 peak is scaled by KeplerIssueFactor, while a Pascal GPU's is not.
func TestKeplerRunsAtItsIssueRate(t *testing.T) {
	for _, tc := range []struct {
		gpu        hw.GPU
		family     Family
		wantTFLOPS float64
	}{
		{hw.GPU{ID: "k80", ComputeCapability: "3.7", FP32TFLOPS: 4.37, SMs: 13, MemoryBandwidthGBs: 240}, FamilyKepler, 4.37 / 1.35},
		{hw.GPU{ID: "k40", ComputeCapability: "3.5", FP32TFLOPS: 4.29, SMs: 15, MemoryBandwidthGBs: 288}, FamilyKepler, 4.29 / 1.35},
		{hw.GPU{ID: "p100", ComputeCapability: "6.0", FP32TFLOPS: 9.3, SMs: 56, MemoryBandwidthGBs: 732}, FamilyUnknown, 9.3},
	} {
		if f := FamilyOf(tc.gpu); f != tc.family {
			t.Errorf("FamilyOf(%s) = %v, want %v", tc.gpu.ID, f, tc.family)
		}
		r := ratesFor(tc.gpu, measure.FP32)
		if got := r.peakFLOPS / 1e12; math.Abs(got-tc.wantTFLOPS) > 1e-9 {
			t.Errorf("%s: FP32 peak %.4f TFLOPS, want %.4f", tc.gpu.ID, got, tc.wantTFLOPS)
		}
	}
	if FamilyKepler.String() != "kepler" {
		t.Errorf("FamilyKepler.String() = %q", FamilyKepler.String())
	}
}
