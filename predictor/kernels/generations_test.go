package kernels

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

var (
	h100 = hw.GPU{ID: "h100-sxm", Name: "H100 SXM5 80GB", ComputeCapability: "9.0", SMs: 132, BoostClockMHz: 1980, FP32TFLOPS: 66.9,
		TF32TFLOPS: 494.7, FP16TFLOPS: 989.4, MemoryGB: 80, MemoryType: "HBM3", MemoryBandwidthGBs: 3350, TDPW: 700}
	h200 = hw.GPU{ID: "h200", Name: "H200 SXM 141GB", ComputeCapability: "9.0", SMs: 132, BoostClockMHz: 1980, FP32TFLOPS: 66.9,
		TF32TFLOPS: 494.5, FP16TFLOPS: 989, MemoryGB: 141, MemoryType: "HBM3e", MemoryBandwidthGBs: 4800, TDPW: 700}
	// b200 is a Blackwell part built here from NVIDIA's published B200 figures (148
	// SMs, 2.25 PFLOPS dense FP16, 1.1 PFLOPS dense TF32, 180 GB of HBM3e at 8 TB/s,
	// 1000 W); the catalog's row is another engineer's.
	b200 = hw.GPU{ID: "b200-test", Name: "B200 (test)", Architecture: "blackwell", ComputeCapability: "10.0", SMs: 148, BoostClockMHz: 1965,
		FP32TFLOPS: 80, TF32TFLOPS: 1100, FP16TFLOPS: 2250, MemoryGB: 180, MemoryType: "HBM3e", MemoryBandwidthGBs: 8000, TDPW: 1000}
	// rtx4090 is NVIDIA's Ada whitepaper's GeForce RTX 4090: FP16 with FP32 accumulate at
	// 165.2 TFLOPS, 1008 GB/s of GDDR6X, 72 MB of L2, 450 W.
	rtx4090 = hw.GPU{ID: "rtx-4090", Name: "GeForce RTX 4090", ComputeCapability: "8.9", SMs: 128, BoostClockMHz: 2520, FP32TFLOPS: 82.6,
		TF32TFLOPS: 82.6, FP16TFLOPS: 165.2, MemoryGB: 24, MemoryType: "GDDR6X", MemoryBandwidthGBs: 1008, L2MB: 72, TDPW: 450}
)

// TestFusedKernelIsItsTraffic: a fused memory-bound kernel (Request.FusedElems) takes
// a queued kernel's fixed cost plus its bytes at the streaming rate, is never served
// by a measurement (always Estimated), and carries its family's band.
func TestFusedKernelIsItsTraffic(t *testing.T) {
	cal := PriorCalibration()
	m := NewModel(cal, nil, nil, nil)
	bn := cnn.Config{Op: cnn.OpBatchNorm, In: cnn.Shape{C: 64, H: 56, W: 56}, Out: cnn.Shape{C: 64, H: 56, W: 56}, NumInputs: 1}
	elems := 3 * float64(bn.In.Elems())
	out := make([]Estimate, 2)
	m.Times(Device{GPU: h100}, Request{Config: bn, Phase: measure.Forward, Precision: measure.AMP, FusedElems: elems}, []int{1, 256}, out)
	for i, b := range []int{1, 256} {
		want := cal.LaunchUS/1000 + elems*float64(b)*2/(3350e9*cal.MemoryEfficiency)*1000
		if math.Abs(out[i].MS-want) > 1e-12 || out[i].Source != Estimated || !(out[i].RelErr > 0) {
			t.Errorf("batch %d: %+v, want %.6f ms estimated", b, out[i], want)
		}
	}
}

// TestStreamCapBindsHBM3: with the SMs' cap below the memory's rate, a streaming
// kernel on an H200 (4.8 TB/s, the H100's 132 SMs and clock) gains less over an H100
// (3.35 TB/s) than the bandwidth ratio, and without the cap exactly that ratio; a cap
// above both memories' rates changes nothing (the lower limit binds, they do not add).
func TestStreamCapBindsHBM3(t *testing.T) {
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 256, H: 56, W: 56}, Out: cnn.Shape{C: 256, H: 56, W: 56}, NumInputs: 1}
	ratio := func(cal *Calibration) float64 {
		a, _ := EstimateMS(cal, relu, measure.Forward, h100, measure.AMP, 256)
		b, _ := EstimateMS(cal, relu, measure.Forward, h200, measure.AMP, 256)
		return a / b
	}
	cal := PriorCalibration()
	if r := ratio(cal); math.Abs(r-4800.0/3350) > 0.01 {
		t.Errorf("no cap: H200/H100 %.3f, want the bandwidth ratio %.3f", r, 4800.0/3350)
	}
	cal.StreamBytesPerSMCycle = 12
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	if r := ratio(cal); !(r > 1.05 && r < 4800.0/3350-0.1) {
		t.Errorf("capped at 12 bytes per SM cycle: H200/H100 %.3f, want between 1.05 and well under the bandwidth ratio", r)
	}
	uncapped, _ := EstimateMS(PriorCalibration(), relu, measure.Forward, h100, measure.AMP, 256)
	cal.StreamBytesPerSMCycle = 64 // 132 × 1.98 GHz × 64 B = 16.7 TB/s, far above HBM3's and HBM3e's rates
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, _ := EstimateMS(cal, relu, measure.Forward, h100, measure.AMP, 256); math.Abs(got-uncapped) > 1e-9*uncapped {
		t.Errorf("a cap far above the memory's rate: H100 ReLU %.6f ms, want the uncapped %.6f ms", got, uncapped)
	}
	if r := ratio(cal); math.Abs(r-4800.0/3350) > 0.01 {
		t.Errorf("a cap far above both memories' rates: H200/H100 %.3f, want the bandwidth ratio %.3f", r, 4800.0/3350)
	}
}

// TestModernSplitK: ResNet-50's first convolution's weight gradient (64 × 147 outputs,
// a reduction of 12544 per image) has too few output tiles to fill a GPU; cuDNN 8
// splits its reduction until one wave fills the SMs, where cuDNN 7 stopped at 8 ways,
// so it is several times faster at batch 256, and more so on more SMs.
func TestModernSplitK(t *testing.T) {
	conv1 := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: 3, H: 224, W: 224}, Out: cnn.Shape{C: 64, H: 112, W: 112}, NumInputs: 1,
		Kernel: cnn.Pair{7, 7}, Stride: cnn.Pair{2, 2}, Padding: cnn.Pair{3, 3}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	cal := PriorCalibration()
	legacy, _ := EstimateMS(cal, conv1, measure.BackwardWeights, h100, measure.AMP, 256)
	cal.SplitKMax = ModernSplitK
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	modern, _ := EstimateMS(cal, conv1, measure.BackwardWeights, h100, measure.AMP, 256)
	if !(legacy > 3*modern) {
		t.Errorf("conv1 weight gradient on an H100 at batch 256: %.2f ms split 8 ways, %.2f ms split to fill the GPU; want ≥ 3× faster", legacy, modern)
	}
	if cal.SplitKMaxOrLegacy() != ModernSplitK || PriorCalibration().SplitKMaxOrLegacy() != LegacySplitK {
		t.Errorf("split caps: %d and %d", cal.SplitKMaxOrLegacy(), PriorCalibration().SplitKMaxOrLegacy())
	}
}

// TestBlackwellFromItsNeighbour: a Blackwell GPU, a family no published training
// figure covers, is predicted from its own specifications with Hopper's fitted scales
// (never another GPU's times), at twice Hopper's error band; a calibration that fits
// Blackwell itself keeps its own.
func TestBlackwellFromItsNeighbour(t *testing.T) {
	if hw.FamilyOf(b200) != hw.FamilyBlackwell {
		t.Fatalf("B200 (compute capability 10.0) is in family %v", hw.FamilyOf(b200))
	}
	cal := PriorCalibration()
	cal.FamilyScale = map[string]float64{"hopper/fp16": 0.6, "hopper/tf32": 0.5}
	cal.NetworkRelErr = map[string]float64{"hopper/fp16": 0.08}
	cal.NetworkRelErrOther = 0.12
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := cal.FamilyScaleOf(hw.FamilyBlackwell, ArithFP16); got != 0.6 || !cal.Inherited(hw.FamilyBlackwell) {
		t.Errorf("Blackwell FP16 scale %v (inherited %t), want Hopper's 0.6", got, cal.Inherited(hw.FamilyBlackwell))
	}
	if got := cal.EstimateRelErrOf(hw.FamilyBlackwell, ArithFP16); got != 0.16 {
		t.Errorf("Blackwell FP16 band %v, want twice Hopper's 0.08", got)
	}
	conv := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: 256, H: 14, W: 14}, Out: cnn.Shape{C: 256, H: 14, W: 14}, NumInputs: 1,
		Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	bMS, bErr := EstimateMS(cal, conv, measure.Forward, b200, measure.AMP, 256)
	hMS, _ := EstimateMS(cal, conv, measure.Forward, h100, measure.AMP, 256)
	if !(bMS > 0 && bMS < hMS) || bErr < 0.16 {
		t.Errorf("a compute-bound convolution: B200 %.4f ms ±%.0f%%, H100 %.4f ms; want the B200 faster by its specifications, with the wider band", bMS, 100*bErr, hMS)
	}
	// The same convolution with Blackwell's scale at 1 is faster by Hopper's 0.6.
	own := PriorCalibration()
	own.FamilyScale = map[string]float64{"hopper/fp16": 0.6, "blackwell/fp16": 1}
	if err := own.Validate(); err != nil {
		t.Fatal(err)
	}
	if own.Inherited(hw.FamilyBlackwell) || own.FamilyScaleOf(hw.FamilyBlackwell, ArithFP16) != 1 {
		t.Errorf("a fitted Blackwell scale is replaced by Hopper's")
	}
}

// TestUntunedBandFloor: a family predicted from its neighbour's scales takes at least
// the largest error of its own held-out rows as its band (the calibration's floor), and
// says there is no tuning measurement for it; a tuned family says nothing and keeps its
// own band; a floor for an unknown family is refused.
func TestUntunedBandFloor(t *testing.T) {
	cal := PriorCalibration()
	cal.FamilyScale = map[string]float64{"hopper/fp16": 0.6, "ada/fp16": 1.1}
	cal.NetworkRelErr = map[string]float64{"hopper/fp16": 0.08, "ada/fp16": 0.16}
	cal.NetworkRelErrOther = 0.28
	cal.UntunedBandFloor = map[string]float64{"blackwell": 0.58}
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gpu  hw.GPU
		band float64
		note string
	}{
		{b200, 0.58, "no tuning measurement for this GPU family (blackwell: predicted from hopper's scales)"},
		{hw.GPU{ComputeCapability: "12.0"}, 0.32, "no tuning measurement for this GPU family (gb20x: predicted from ada's scales)"},
		{h100, 0.08, ""},
	} {
		f := hw.FamilyOf(tc.gpu)
		if got := cal.EstimateRelErrOf(f, ArithFP16); math.Abs(got-tc.band) > 1e-12 {
			t.Errorf("%v FP16 band %v, want %v", f, got, tc.band)
		}
		if got := cal.UntunedNote(tc.gpu); got != tc.note {
			t.Errorf("%v: note %q, want %q", f, got, tc.note)
		}
	}
	cal.UntunedBandFloor = map[string]float64{"pascal": 0.5}
	if err := cal.Validate(); err == nil || !strings.Contains(err.Error(), "untuned band floor") {
		t.Errorf("a floor for an unknown family: %v", err)
	}
}

// TestPowerClockExponent: a power-capped part's sustained clock follows its power per
// SM to the calibration's exponent: the 350 W H100 PCIe holds 94% of its boost clock
// under the cube-root law and less under a square root; a family's reference holds
// its boost clock under any exponent.
func TestPowerClockExponent(t *testing.T) {
	pcie := hw.GPU{ComputeCapability: "9.0", SMs: 114, BoostClockMHz: 1755, TDPW: 350}
	cube := SustainedClockFactorExp(pcie, 1.0/3)
	sq := SustainedClockFactorExp(pcie, 0.5)
	if math.Abs(cube-SustainedClockFactor(pcie)) > 1e-12 || !(cube > 0.93 && cube < 0.95) || !(sq < cube) {
		t.Errorf("H100 PCIe: %.3f under the cube root, %.3f under the square root", cube, sq)
	}
	if SustainedClockFactorExp(h100, 0.5) != 1 {
		t.Errorf("the H100 SXM, Hopper's reference, does not hold its boost clock")
	}
	cal := PriorCalibration()
	if cal.PowerClockExponentOrLegacy() != LegacyPowerClockExponent {
		t.Errorf("prior exponent %v", cal.PowerClockExponentOrLegacy())
	}
}

// TestNCHWBatchNormChannelWaves: cuDNN's NCHW batch norm gives each channel one block
// on one SM, so the channels set how many SMs work (channelSMShare). A 64-channel
// batch norm keeps 64 SMs busy on an H200 (132 SMs) and on a B200 (148) alike and
// takes as long on both, though the B200's memory is 1.67× the H200's; a 2048-channel
// one runs in 16 waves of 128 channels on the H200 and 14 of about 146 on the B200,
// 1.14× faster; channels_last's NHWC batch norm follows the memory.
func TestNCHWBatchNormChannelWaves(t *testing.T) {
	for _, tc := range []struct {
		channels, sms int
		want          float64
	}{
		{64, 132, 64.0 / 132},
		{132, 132, 1},
		{133, 132, 133.0 / 264},
		{256, 132, 256.0 / 264},
		{2048, 132, 2048.0 / (16 * 132)},
		{2048, 148, 2048.0 / (14 * 148)},
		{0, 132, 1},  // unknown channels: every SM
		{64, 0, 1},   // unknown SMs: no share
		{-3, 132, 1}, // never a negative share
	} {
		if got := channelSMShare(tc.channels, tc.sms); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("channelSMShare(%d, %d) = %.6f, want %.6f", tc.channels, tc.sms, got, tc.want)
		}
	}

	cal := PriorCalibration()
	cal.NCHWNormBytesPerSMCycle = 4
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	m := NewModel(cal, []hw.GPU{h200, b200}, nil, nil)
	at := func(g hw.GPU, channels, side int, nchw bool) float64 {
		bn := cnn.Config{Op: cnn.OpBatchNorm, In: cnn.Shape{C: channels, H: side, W: side}, Out: cnn.Shape{C: channels, H: side, W: side}, NumInputs: 1}
		out := make([]Estimate, 1)
		m.Times(Device{GPU: g}, Request{Config: bn, Phase: measure.Forward, Precision: measure.AMP, Policy: measure.Heuristic, NCHWNorm: nchw}, []int{256}, out)
		return out[0].MS
	}
	for _, tc := range []struct {
		channels, side int
		want           float64 // H200 time ÷ B200 time
	}{
		{64, 112, 1965.0 / 1980}, // 64 SMs on both, at each one's clock
		{256, 56, 1965.0 / 1980}, // 2 waves on both: 128 SMs busy on average
		{2048, 7, 0},             // checked below: more SMs, faster
	} {
		h, b := at(h200, tc.channels, tc.side, true), at(b200, tc.channels, tc.side, true)
		launch := cal.LaunchUS / 1000
		ratio := (h - launch) / (b - launch)
		switch {
		case tc.want > 0 && math.Abs(ratio-tc.want) > 0.01*tc.want:
			t.Errorf("%d-channel NCHW batch norm: H200 %.3f ms, B200 %.3f ms (ratio %.3f), want ratio %.3f (the clocks' ratio)", tc.channels, h, b, ratio, tc.want)
		case tc.want == 0 && !(ratio > 1.1 && ratio < 1.2):
			t.Errorf("2048-channel NCHW batch norm: H200/B200 %.3f, want about 1.14 (14 waves on 148 SMs, 16 on 132)", ratio)
		}
		if nh, nb := at(h200, tc.channels, tc.side, false), at(b200, tc.channels, tc.side, false); !(nh > 1.3*nb) {
			t.Errorf("%d-channel NHWC batch norm: H200 %.3f ms, B200 %.3f ms; want the B200 faster by its memory", tc.channels, nh, nb)
		}
	}
}

// TestGeForceBoost: a GeForce board runs its arithmetic at GeForceBoostFactor × its
// rated boost clock (GPU Boost goes past a GeForce's rated clock under load), every other
// board at most its rated boost: the same RTX 4090 figures under a non-GeForce name take
// 1.08× as long on a compute-bound convolution, and its memory-bound kernels the same time.
// A Pascal or older GeForce is not boosted: the per-layer efficiencies its steps rest on
// were fitted on such boards as they ran.
func TestGeForceBoost(t *testing.T) {
	for _, tc := range []struct {
		name, cc string
		want     float64
	}{
		{"GeForce RTX 4090", "8.9", GeForceBoostFactor},
		{"NVIDIA GeForce RTX 3080 Ti", "8.6", GeForceBoostFactor}, // as nvidia-smi names it
		{"GeForce RTX 5090", "12.0", GeForceBoostFactor},
		{"GeForce RTX 2080 Ti", "7.5", GeForceBoostFactor},
		{"GeForce GTX 1080 Ti", "6.1", 1},
		{"GeForce GTX TITAN", "3.5", 1},
		{"RTX A6000", "8.6", 1},
		{"NVIDIA L40S", "8.9", 1},
		{"H100 SXM5 80GB", "9.0", 1},
		{"", "", 1},
	} {
		if got := BoardBoostFactor(hw.GPU{Name: tc.name, ComputeCapability: tc.cc}); got != tc.want {
			t.Errorf("BoardBoostFactor(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	geforce := rtx4090
	other := geforce
	other.Name = "AD102 board (test)"
	conv := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: 256, H: 56, W: 56}, Out: cnn.Shape{C: 256, H: 56, W: 56}, NumInputs: 1,
		Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 256, H: 56, W: 56}, Out: cnn.Shape{C: 256, H: 56, W: 56}, NumInputs: 1}
	cal := PriorCalibration()
	launch := cal.LaunchUS / 1000
	g, _ := EstimateMS(cal, conv, measure.Forward, geforce, measure.AMP, 256)
	o, _ := EstimateMS(cal, conv, measure.Forward, other, measure.AMP, 256)
	if r := (o - launch) / (g - launch); math.Abs(r-GeForceBoostFactor) > 1e-9 {
		t.Errorf("3×3 convolution: %.4f ms as a GeForce, %.4f ms otherwise (ratio %.4f), want %.2f", g, o, r, GeForceBoostFactor)
	}
	g, _ = EstimateMS(cal, relu, measure.Forward, geforce, measure.AMP, 256)
	o, _ = EstimateMS(cal, relu, measure.Forward, other, measure.AMP, 256)
	if g != o {
		t.Errorf("ReLU: %.4f ms as a GeForce, %.4f ms otherwise; the memory's clock is not boosted", g, o)
	}
}

// containsFold finds a lower-case word in any case, as Contains of the lowered text.
func TestContainsFoldIsContainsOfToLower(t *testing.T) {
	for _, s := range []string{"", "NVIDIA GeForce RTX 4090", "GEFORCE", "geforc", "xgEfOrCe", "NVIDIA A100", "GeForcé", "Ǧeforce",
		"ge\u212Aforce", "NVIDIA\u00a0GeForce", "日本GeForce語", "GeFo", "rce GeFo"} {
		if got, want := containsFold(s, "geforce"), strings.Contains(strings.ToLower(s), "geforce"); got != want {
			t.Errorf("containsFold(%q, geforce) = %t, Contains(ToLower) says %t", s, got, want)
		}
	}
}
