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

// TestFamilyMemoryScale checks that a family's memory scale multiplies the memory
// efficiency of that family only, and that bad keys and values are refused.
func TestFamilyMemoryScale(t *testing.T) {
	cal := PriorCalibration()
	cal.FamilyMemoryScale = map[string]float64{"ga100": 0.8}
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    Family
		want float64
	}{{FamilyGA100, 0.78 * 0.8}, {FamilyVolta, 0.78}, {FamilyUnknown, 0.78}} {
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
