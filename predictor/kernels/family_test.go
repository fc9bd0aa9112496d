package kernels

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

func TestBandwidthGBs(t *testing.T) {
	tests := []struct {
		name      string
		g         hw.GPU
		want      float64
		wantKnown bool
	}{
		{"given", hw.GPU{MemoryBandwidthGBs: 936, MemoryType: "GDDR6X"}, 936, true},
		{"by memory type", hw.GPU{MemoryType: "HBM2e", ComputeCapability: "8.0"}, 2000, false},
		{"by family", hw.GPU{ComputeCapability: "9.0"}, 2000, false},
		{"nothing known", hw.GPU{}, fallbackBandwidthGBs, false},
	}
	for _, tc := range tests {
		got, known := BandwidthGBs(tc.g)
		if got != tc.want || known != tc.wantKnown {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, known, tc.want, tc.wantKnown)
		}
	}
}

// A GPU known only by its compute capability is estimated from its family's typical
// figures: a Hopper part is not predicted as slow as a 10-TFLOPS fallback.
func TestUnknownHopperUsesFamilyFigures(t *testing.T) {
	r := ratesFor(hw.GPU{ComputeCapability: "9.0", MemoryGB: 94}, measure.AMP, nil)
	if r.peakFLOPS != 756e12 || r.bandwidth != 2000e9 || r.sms != 114 {
		t.Errorf("rates %+v: want the H100 PCIe's 756 TFLOPS, 2000 GB/s, 114 SMs", r)
	}
	if r := ratesFor(hw.GPU{ComputeCapability: "9.0"}, measure.TF32, nil); r.peakFLOPS != 378e12 {
		t.Errorf("TF32 peak %v, want 378e12", r.peakFLOPS)
	}
}

func TestFamilyScale(t *testing.T) {
	cal := PriorCalibration()
	conv := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: 256, H: 14, W: 14}, Out: cnn.Shape{C: 256, H: 14, W: 14},
		NumInputs: 1, Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	h100 := hw.GPU{ComputeCapability: "9.0", SMs: 132, FP32TFLOPS: 66.9, FP16TFLOPS: 989.4, MemoryBandwidthGBs: 3350}
	before, _ := EstimateMS(cal, conv, measure.Forward, h100, measure.AMP, 256)
	cal.FamilyScale = map[string]float64{"hopper/fp16": 0.5}
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	after, _ := EstimateMS(cal, conv, measure.Forward, h100, measure.AMP, 256)
	if !(after > 1.5*before) {
		t.Errorf("halving hopper/fp16 efficiency: %.3f ms → %.3f ms, want a compute-bound layer ~2× slower", before, after)
	}
	if got := cal.FamilyScaleOf(hw.FamilyHopper, ArithTF32); got != 1 {
		t.Errorf("unfitted hopper/tf32 scale %v, want 1", got)
	}
	for _, tc := range []struct {
		scale map[string]float64
		want  string
	}{
		{map[string]float64{"pascal/fp16": 1}, "family/arithmetic"},
		{map[string]float64{"hopper/int8": 1}, "family/arithmetic"},
		{map[string]float64{"hopper/fp16": 0}, "must be in (0, 4]"},
		{map[string]float64{"hopper/fp16": 9}, "must be in (0, 4]"},
	} {
		c := PriorCalibration()
		c.FamilyScale = tc.scale
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.scale, err, tc.want)
		}
	}
}

// A board whose power per SM is below its family reference's holds a lower clock,
// by the cube root of the power ratio; a reference part, an unknown power and an
// unknown family keep the boost clock.
func TestSustainedClockFactor(t *testing.T) {
	tests := []struct {
		name string
		g    hw.GPU
		want float64
	}{
		{"T4 70 W", hw.GPU{ComputeCapability: "7.5", SMs: 40, BoostClockMHz: 1590, TDPW: 70}, 1545 * math.Cbrt(70.0/250*68/40) / 1590},
		{"A10 150 W", hw.GPU{ComputeCapability: "8.6", SMs: 72, BoostClockMHz: 1695, TDPW: 150}, math.Cbrt(150.0 / 350 * 82 / 72)},
		{"RTX 3090 (reference)", hw.GPU{ComputeCapability: "8.6", SMs: 82, BoostClockMHz: 1695, TDPW: 350}, 1},
		{"more power than the reference", hw.GPU{ComputeCapability: "9.0", SMs: 132, BoostClockMHz: 1980, TDPW: 1000}, 1},
		{"power unknown", hw.GPU{ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410}, 1},
		{"family unknown", hw.GPU{ComputeCapability: "6.0", SMs: 56, BoostClockMHz: 1303, TDPW: 50}, 1},
	}
	for _, tc := range tests {
		if got := SustainedClockFactor(tc.g); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	t4 := hw.GPU{ComputeCapability: "7.5", SMs: 40, BoostClockMHz: 1590, FP32TFLOPS: 8.1, FP16TFLOPS: 65, MemoryBandwidthGBs: 320, TDPW: 70}
	if r := ratesFor(t4, measure.AMP, nil); math.Abs(r.peakFLOPS-65e12*SustainedClockFactor(t4)) > 1 || r.bandwidth != 320e9 {
		t.Errorf("T4 rates %+v: want the FP16 peak at the sustained clock and the full bandwidth", r)
	}
}

// The rates ratesFor remembers are those ratesOf works out, asked again and again, for
// GPUs that share an id but not their figures (a GPU edited in a session), at every
// precision and under calibrations of other clock exponents.
func TestRatesForRemembersRatesOf(t *testing.T) {
	edited := h100
	edited.SMs, edited.MemoryBandwidthGBs, edited.TDPW = 100, 2500, 500
	geforce := rtx4090
	geforce.Name = "RTX 4090"
	cals := []*Calibration{nil, {PowerClockExponent: 0.5}, {PowerClockExponent: 0.25}}
	for round := range 3 {
		for _, g := range []hw.GPU{h100, edited, h200, b200, rtx4090, geforce, {}, {ID: "h100-sxm"}} {
			for _, p := range []measure.Precision{measure.FP32, measure.TF32, measure.AMP, measure.BF16, measure.FP32Strict} {
				for _, cal := range cals {
					if got, want := ratesFor(g, p, cal), ratesOf(g, p, cal.PowerClockExponentOrLegacy()); got != want {
						t.Fatalf("round %d, %s (%d SMs) %s, exponent %v: remembered %+v, worked out %+v", round, g.ID, g.SMs, p, cal.PowerClockExponentOrLegacy(), got, want)
					}
				}
			}
		}
	}
}
