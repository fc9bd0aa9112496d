package kernels

import (
	"math"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// GPUs with the catalog's published figures (../shared/data/gpus.csv).
var (
	v100 = hw.GPU{ID: "v100-sxm2-16gb", Architecture: "Volta", ComputeCapability: "7.0", SMs: 80, BoostClockMHz: 1530,
		FP32TFLOPS: 15.7, FP16TFLOPS: 125, MemoryBandwidthGBs: 900}
	a100 = hw.GPU{ID: "a100-sxm4-40gb", Architecture: "Ampere (GA100)", ComputeCapability: "8.0", SMs: 108, BoostClockMHz: 1410,
		FP32TFLOPS: 19.5, TF32TFLOPS: 156, FP16TFLOPS: 312, MemoryBandwidthGBs: 1555}
	p100 = hw.GPU{ID: "p100-pcie-16gb", Architecture: "Pascal", ComputeCapability: "6.0", SMs: 56, BoostClockMHz: 1303,
		FP32TFLOPS: 9.3, MemoryBandwidthGBs: 732}
	t4 = hw.GPU{ID: "t4", Architecture: "Turing", ComputeCapability: "7.5", SMs: 40, BoostClockMHz: 1590,
		FP32TFLOPS: 8.1, FP16TFLOPS: 65, MemoryBandwidthGBs: 320}
)

func conv(cin, cout, hw, k, stride int) cnn.Config {
	out := (hw+2*(k/2)-k)/stride + 1
	return cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: cin, H: hw, W: hw}, Out: cnn.Shape{C: cout, H: out, W: out},
		NumInputs: 1, Kernel: cnn.Pair{k, k}, Stride: cnn.Pair{stride, stride}, Padding: cnn.Pair{k / 2, k / 2},
		Dilation: cnn.Pair{1, 1}, Groups: 1}
}

func TestClassOf(t *testing.T) {
	dw := conv(64, 64, 56, 3, 1)
	dw.Groups = 64
	grouped := conv(128, 128, 28, 3, 1)
	grouped.Groups = 32
	dilated := conv(64, 64, 56, 3, 1)
	dilated.Dilation = cnn.Pair{2, 2}
	tests := []struct {
		name string
		c    cnn.Config
		want Class
	}{
		{"1x1", conv(256, 64, 56, 1, 1), ClassConv1x1},
		{"3x3 stride 1", conv(64, 64, 56, 3, 1), ClassConv3x3},
		{"3x3 stride 2", conv(64, 128, 56, 3, 2), ClassConv},
		{"3x3 dilated", dilated, ClassConv},
		{"7x7", conv(3, 64, 224, 7, 2), ClassConv},
		{"depthwise", dw, ClassDepthwise},
		{"grouped", grouped, ClassGrouped},
		{"linear", cnn.Config{Op: cnn.OpLinear, In: cnn.Shape{C: 2048, H: 1, W: 1}, Out: cnn.Shape{C: 1000, H: 1, W: 1}}, ClassLinear},
		{"relu", cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 64, H: 56, W: 56}, Out: cnn.Shape{C: 64, H: 56, W: 56}}, ClassMemory},
	}
	for _, tc := range tests {
		if got := ClassOf(tc.c); got != tc.want {
			t.Errorf("%s: class %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A single 128×128 tile shape on a 10-SM GPU: a 1×1 convolution with 16×16 outputs
// and 256 output channels has 2·2 = 4 tiles per sample, so waves = ceil(4n/10) and the
// time must stay flat within a wave and step by exactly one wave's time between waves.
func TestTileAndWaveQuantization(t *testing.T) {
	cal := PriorCalibration()
	g := hw.GPU{ComputeCapability: "6.1", SMs: 10, FP32TFLOPS: 10, MemoryBandwidthGBs: 1e6}
	e := newEstimator(cal, conv(256, 256, 16, 1, 1), measure.Forward, g, measure.FP32, 0)
	e.setTiles([]tile{{128, 128, 1}})
	oneWave := 2 * 128 * 128 * 256 / e.perSMRate
	tests := []struct {
		batch int
		waves float64
	}{
		{1, 1}, {2, 1}, {3, 2}, {5, 2}, {6, 3}, {7, 3}, {8, 4}, {10, 4}, {11, 5}, {100, 40}, {101, 41},
	}
	for _, tc := range tests {
		m := float64(tc.batch * 256)
		got := e.tiledSeconds(m, 256, 0)
		if want := tc.waves * oneWave; math.Abs(got-want) > 1e-12*want {
			t.Errorf("batch %d: %.6g s, want %v waves = %.6g s", tc.batch, got, tc.waves, want)
		}
	}
	// Partly filled tiles cost full ones: 129 rows cost as much as 256.
	if a, b := e.tiledSeconds(129, 256, 0), e.tiledSeconds(256, 256, 0); a != b {
		t.Errorf("129 rows cost %g s, 256 rows %g s: a partial tile must cost a full one", a, b)
	}
}

// With the real tile shapes the time still rises in steps: per-sample time just past
// a wave boundary is higher than at the boundary.
func TestEstimateStepsWithBatch(t *testing.T) {
	cal := PriorCalibration()
	c := conv(512, 512, 7, 3, 1) // 49 outputs per sample: few tiles, wave-dominated
	var prev, jumps int
	var prevPer float64
	for n := 1; n <= 256; n++ {
		ms, _ := EstimateMS(cal, c, measure.Forward, v100, measure.FP32, n)
		per := ms / float64(n)
		if n > 1 && per > prevPer*1.02 {
			jumps++
		}
		prev, prevPer = n, per
	}
	_ = prev
	if jumps < 3 {
		t.Errorf("per-sample time jumped %d times over batches 1–256: wave quantization should make steps", jumps)
	}
	small, _ := EstimateMS(cal, c, measure.Forward, v100, measure.FP32, 1)
	big, _ := EstimateMS(cal, c, measure.Forward, v100, measure.FP32, 256)
	if !(big > 10*small) {
		t.Errorf("batch 256 takes %.4g ms, batch 1 %.4g ms: time must grow with batch", big, small)
	}
}

func TestArithmeticFor(t *testing.T) {
	tests := []struct {
		gpu  hw.GPU
		p    measure.Precision
		want Arithmetic
	}{
		{v100, measure.TF32, ArithFP32}, // no TF32 below compute capability 8.0
		{t4, measure.TF32, ArithFP32},
		{a100, measure.TF32, ArithTF32},
		{a100, measure.FP32, ArithFP32},
		{v100, measure.AMP, ArithFP16},
		{p100, measure.AMP, ArithFP16SIMT}, // no tensor cores below 7.0
		{hw.GPU{}, measure.AMP, ArithFP16SIMT},
		{hw.GPU{ComputeCapability: "9.0"}, measure.TF32, ArithTF32},
	}
	for _, tc := range tests {
		if got := ArithmeticFor(tc.gpu, tc.p); got != tc.want {
			t.Errorf("%s (cc %q) %s: %v, want %v", tc.gpu.ID, tc.gpu.ComputeCapability, tc.p, got, tc.want)
		}
	}
	// A TF32 request on a V100 costs exactly what FP32 costs there; on an A100 it is faster.
	cal := PriorCalibration()
	c := conv(256, 256, 28, 3, 1)
	for _, g := range []hw.GPU{v100, a100} {
		f32, _ := EstimateMS(cal, c, measure.Forward, g, measure.FP32, 64)
		tf, _ := EstimateMS(cal, c, measure.Forward, g, measure.TF32, 64)
		if g.ID == v100.ID && f32 != tf {
			t.Errorf("V100: tf32 %.4g ms ≠ fp32 %.4g ms: TF32 must not be used below cc 8.0", tf, f32)
		}
		if g.ID == a100.ID && !(tf < f32) {
			t.Errorf("A100: tf32 %.4g ms not below fp32 %.4g ms", tf, f32)
		}
	}
}

func TestTensorCoreAlignment(t *testing.T) {
	cal := PriorCalibration()
	aligned := conv(64, 64, 56, 3, 1)
	unaligned := conv(60, 64, 56, 3, 1)
	a, errA := EstimateMS(cal, aligned, measure.Forward, v100, measure.AMP, 64)
	u, errU := EstimateMS(cal, unaligned, measure.Forward, v100, measure.AMP, 64)
	if !(u > 2*a*60/64) {
		t.Errorf("unaligned channels %.4g ms vs aligned %.4g ms: expected a tensor-core penalty", u, a)
	}
	if !(errU > errA) {
		t.Errorf("unaligned error band %.3g should be wider than aligned %.3g", errU, errA)
	}
	// FP32 has no alignment penalty: the 60-channel layer costs at most the 64-channel one.
	a32, _ := EstimateMS(cal, aligned, measure.Forward, v100, measure.FP32, 64)
	u32, _ := EstimateMS(cal, unaligned, measure.Forward, v100, measure.FP32, 64)
	if u32 > a32 {
		t.Errorf("fp32: 60 channels %.4g ms > 64 channels %.4g ms", u32, a32)
	}
}

func TestUnknownGPUFigures(t *testing.T) {
	cal := PriorCalibration()
	layers := []cnn.Config{
		conv(64, 64, 56, 3, 1),
		{Op: cnn.OpReLU, In: cnn.Shape{C: 64, H: 56, W: 56}, Out: cnn.Shape{C: 64, H: 56, W: 56}, NumInputs: 1},
		{Op: cnn.OpLinear, In: cnn.Shape{C: 2048, H: 1, W: 1}, Out: cnn.Shape{C: 1000, H: 1, W: 1}, NumInputs: 1},
	}
	gpus := []hw.GPU{
		{},                         // nothing known
		{ComputeCapability: "8.6"}, // architecture only
		{FP32TFLOPS: 31.5, MemoryBandwidthGBs: 600, ComputeCapability: "8.6"}, // A10G: no SMs, no tensor figures
		{SMs: 13, BoostClockMHz: 875},                                         // derive FP32 from SMs × clock
	}
	_, knownErr := EstimateMS(cal, layers[0], measure.Forward, v100, measure.AMP, 32)
	for gi, g := range gpus {
		for _, c := range layers {
			for _, p := range []measure.Precision{measure.FP32, measure.TF32, measure.AMP} {
				for _, ph := range measure.Phases {
					ms, rel := EstimateMS(cal, c, ph, g, p, 32)
					if math.IsNaN(ms) || math.IsInf(ms, 0) || ms < 0 || math.IsNaN(rel) || math.IsInf(rel, 0) {
						t.Fatalf("gpu %d %s %s %s: %v ms ± %v", gi, c.Op, p, ph, ms, rel)
					}
					if ms > 0 && !(rel > knownErr) {
						t.Errorf("gpu %d %s %s %s: error band %.3g not wider than a known GPU's %.3g", gi, c.Op, p, ph, rel, knownErr)
					}
				}
			}
		}
	}
}

func TestMemoryBoundOps(t *testing.T) {
	cal := PriorCalibration()
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 256, H: 56, W: 56}, Out: cnn.Shape{C: 256, H: 56, W: 56}, NumInputs: 1}
	ms, _ := EstimateMS(cal, relu, measure.Forward, v100, measure.FP32, 64)
	// 2 tensors × 64 × 256 × 56 × 56 × 4 bytes at 900 GB/s × memory efficiency, plus launch.
	want := 2*64*256*56*56*4/(900e9*cal.MemoryEfficiency)*1000 + cal.LaunchUS/1000
	if math.Abs(ms-want) > 1e-9 {
		t.Errorf("relu fwd %.6g ms, want %.6g ms", ms, want)
	}
	half, _ := EstimateMS(cal, relu, measure.Forward, v100, measure.AMP, 64)
	if wantHalf := (want-cal.LaunchUS/1000)/2 + cal.LaunchUS/1000; math.Abs(half-wantHalf) > 1e-9 {
		t.Errorf("relu fwd amp %.6g ms, want %.6g ms (half the bytes)", half, wantHalf)
	}
	if w, _ := EstimateMS(cal, relu, measure.BackwardWeights, v100, measure.FP32, 64); w != 0 {
		t.Errorf("relu has no weight gradient, got %g ms", w)
	}
}

func meas(dev, cfg string, batch int, ms float64) measure.Measurement {
	return measure.Measurement{DeviceKey: dev, ConfigKey: cfg, Batch: batch, Precision: measure.FP32, Phase: measure.Forward,
		Policy: measure.Heuristic, MedianMS: ms, SpreadMS: ms * 0.01, Repeats: 10, Status: measure.OK, At: time.Unix(1_700_000_000, 0)}
}

func TestModelSourcePriority(t *testing.T) {
	measured := conv(128, 128, 28, 3, 1)
	other := conv(256, 256, 14, 3, 1)
	key := measured.Key()
	devices := []measure.Device{
		{Key: "cuda:v100", Backend: "cuda", GPUID: v100.ID},
		{Key: "cuda:t4", Backend: "cuda", GPUID: t4.ID},
		{Key: "cpu:host", Backend: "cpu"},
	}
	ms := []measure.Measurement{
		meas("cuda:v100", key, 8, 0.20), meas("cuda:v100", key, 16, 0.30), meas("cuda:v100", key, 32, 0.50),
		meas("cuda:t4", key, 16, 0.90),
		meas("cpu:host", key, 16, 40), // never transferred to a GPU
		{DeviceKey: "cuda:v100", ConfigKey: key, Batch: 64, Precision: measure.FP32, Phase: measure.Forward, Policy: measure.Heuristic, Status: measure.OutOfMemory},
	}
	m := NewModel(PriorCalibration(), []hw.GPU{v100, t4, a100}, devices, ms)
	est := func(g hw.GPU, c cnn.Config, b int) float64 {
		x, _ := EstimateMS(m.Calibration(), c, measure.Forward, g, measure.FP32, b)
		return x
	}
	tests := []struct {
		name   string
		dev    Device
		c      cnn.Config
		batch  int
		source Source
		ms     float64
	}{
		{"measured here", Device{v100, "cuda:v100"}, measured, 16, Measured, 0.30},
		{"measured point exact", Device{v100, "cuda:v100"}, measured, 8, Measured, 0.20},
		{"between measured points", Device{v100, "cuda:v100"}, measured, 24, Interpolated, 0.40},
		{"between measured points, quarter", Device{v100, "cuda:v100"}, measured, 10, Interpolated, 0.225},
		{"beyond measured range", Device{v100, "cuda:v100"}, measured, 128, Interpolated, 0.50 * est(v100, measured, 128) / est(v100, measured, 32)},
		{"own T4 measurement beats the V100's", Device{t4, "cuda:t4"}, measured, 16, Measured, 0.90},
		{"A100 transferred from the V100 (more points, Volta closer than Turing? equal: most points)", Device{a100, ""}, measured, 16, Transferred,
			0.30 * est(a100, measured, 16) / est(v100, measured, 16)},
		{"nothing measured", Device{v100, "cuda:v100"}, other, 16, Estimated, est(v100, other, 16)},
	}
	for _, tc := range tests {
		out := make([]Estimate, 1)
		m.Times(tc.dev, Request{Config: tc.c, Phase: measure.Forward, Precision: measure.FP32, Policy: measure.Heuristic}, []int{tc.batch}, out)
		if out[0].Source != tc.source {
			t.Errorf("%s: source %s, want %s", tc.name, out[0].Source, tc.source)
		}
		if math.Abs(out[0].MS-tc.ms) > 1e-9*tc.ms {
			t.Errorf("%s: %.6g ms, want %.6g ms", tc.name, out[0].MS, tc.ms)
		}
		if !(out[0].RelErr > 0) {
			t.Errorf("%s: error band %v must be positive", tc.name, out[0].RelErr)
		}
	}
}

func TestErrorBandsGrowWithDistrust(t *testing.T) {
	c := conv(128, 128, 28, 3, 1)
	ms := []measure.Measurement{meas("cuda:v100", c.Key(), 8, 0.2), meas("cuda:v100", c.Key(), 32, 0.5)}
	m := NewModel(PriorCalibration(), []hw.GPU{v100}, []measure.Device{{Key: "cuda:v100", Backend: "cuda", GPUID: v100.ID}}, ms)
	r := Request{Config: c, Phase: measure.Forward, Precision: measure.FP32, Policy: measure.Heuristic}
	var own, moved [3]Estimate
	m.Times(Device{v100, "cuda:v100"}, r, []int{8, 16, 256}, own[:])
	m.Times(Device{a100, ""}, r, []int{8, 16, 256}, moved[:])
	if !(own[0].RelErr < own[1].RelErr && own[1].RelErr < own[2].RelErr) {
		t.Errorf("own device: measured %.3g, interpolated %.3g, extrapolated %.3g: bands must widen", own[0].RelErr, own[1].RelErr, own[2].RelErr)
	}
	if !(moved[0].RelErr > own[0].RelErr) {
		t.Errorf("transferred band %.3g not wider than measured %.3g", moved[0].RelErr, own[0].RelErr)
	}
	// The other policy's measurements serve, with a wider band.
	var fast [1]Estimate
	m.Times(Device{v100, "cuda:v100"}, Request{Config: c, Phase: measure.Forward, Precision: measure.FP32, Policy: measure.Fastest}, []int{8}, fast[:])
	if fast[0].Source != Measured || !(fast[0].RelErr > own[0].RelErr) {
		t.Errorf("fastest-policy request: %+v; want the heuristic measurement with a wider band than %.3g", fast[0], own[0].RelErr)
	}
}

func TestTimesBatchEdgeCases(t *testing.T) {
	m := NewModel(PriorCalibration(), nil, nil, nil)
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 8, H: 4, W: 4}, Out: cnn.Shape{C: 8, H: 4, W: 4}, NumInputs: 1}
	out := make([]Estimate, 3)
	m.Times(Device{GPU: v100}, Request{Config: relu, Phase: measure.Forward, Precision: measure.FP32}, []int{0, -3, 1}, out)
	if out[0].MS != 0 || out[1].MS != 0 || !(out[2].MS > 0) {
		t.Errorf("batches 0, -3, 1: %+v; want 0, 0 and a positive time", out)
	}
}

func TestCalibrationRoundTrip(t *testing.T) {
	c := PriorCalibration()
	c.Accuracy = []GPUAccuracy{{GPU: "V100", Sheet: "fp32", Rows: 10, EstimateMAPE: 12.5, TransferMAPE: 9, TransferRows: 10}}
	data, err := c.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCalibration(data)
	if err != nil {
		t.Fatalf("parse what MarshalIndent wrote: %v", err)
	}
	again, err := back.MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("round trip changed the JSON:\n%s\nvs\n%s", again, data)
	}
	if back.Efficiency(ClassConv3x3, ArithFP16, measure.BackwardData) != c.Efficiency(ClassConv3x3, ArithFP16, measure.BackwardData) {
		t.Error("round trip changed an efficiency")
	}
}

func TestParseCalibrationRejects(t *testing.T) {
	good, err := PriorCalibration().MarshalIndent()
	if err != nil {
		t.Fatal(err)
	}
	g := string(good)
	tests := []struct {
		name, json, wantErr string
	}{
		{"empty", "", "read calibration JSON"},
		{"not JSON", "{version: 1", "read calibration JSON"},
		{"wrong type", strings.Replace(g, `"version": 1`, `"version": "one"`, 1), "read calibration JSON"},
		{"old version", strings.Replace(g, `"version": 1`, `"version": 0`, 1), "version 0"},
		{"unknown field", strings.Replace(g, `"version": 1`, `"version": 1, "bogus": 2`, 1), "unknown field"},
		{"missing efficiency", strings.Replace(g, `"conv/fp16/bwd_data"`, `"conv/fp16/bwd_dat"`, 1), "lacks"},
		{"negative efficiency", strings.Replace(g, `"conv1x1/fp32/fwd": `, `"conv1x1/fp32/fwd": -`, 1), "conv1x1/fp32/fwd"},
		{"zero memory efficiency", strings.Replace(g, `"memory_efficiency": 0.78`, `"memory_efficiency": 0`, 1), "memory efficiency"},
		{"no estimate error", strings.Replace(g, `"tf32": 0.5`, `"tf33": 0.5`, 1), "estimate error for tf32"},
	}
	for _, tc := range tests {
		if tc.json == g {
			t.Fatalf("%s: the replacement did not apply", tc.name)
		}
		_, err := ParseCalibration([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.wantErr)
		}
	}
}

func allBatches() []int {
	b := make([]int, 1024)
	for i := range b {
		b[i] = i + 1
	}
	return b
}

// BenchmarkTimesEstimated is one configuration × phase over batch sizes 1–1024 with
// nothing measured; ns/op ÷ 1024 is the cost of one estimate.
func BenchmarkTimesEstimated(b *testing.B) {
	m := NewModel(PriorCalibration(), nil, nil, nil)
	r := Request{Config: conv(128, 128, 28, 3, 1), Phase: measure.BackwardWeights, Precision: measure.AMP, Policy: measure.Heuristic}
	batches, out := allBatches(), make([]Estimate, 1024)
	b.ReportAllocs()
	for b.Loop() {
		m.Times(Device{GPU: v100}, r, batches, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/estimate")
}

// BenchmarkTimesInterpolated: the device has measurements every 8th batch size.
func BenchmarkTimesInterpolated(b *testing.B) {
	c := conv(128, 128, 28, 3, 1)
	var ms []measure.Measurement
	for n := 8; n <= 512; n += 8 {
		ms = append(ms, meas("cuda:v100", c.Key(), n, 0.01*float64(n)))
	}
	m := NewModel(PriorCalibration(), []hw.GPU{v100}, []measure.Device{{Key: "cuda:v100", Backend: "cuda", GPUID: v100.ID}}, ms)
	r := Request{Config: c, Phase: measure.Forward, Precision: measure.FP32, Policy: measure.Heuristic}
	batches, out := allBatches(), make([]Estimate, 1024)
	b.ReportAllocs()
	for b.Loop() {
		m.Times(Device{GPU: v100, Key: "cuda:v100"}, r, batches, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/estimate")
}
