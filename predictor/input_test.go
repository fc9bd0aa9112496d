package predictor

import (
	"math"
	"testing"
	"time"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

func TestInputPipelineBoundsTheStep(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	// tinyNet's GPU step is 20.45 ms per image; a loader of 40 images/s takes 25 ms
	// per image: it sets the pace. PCIe 3.0 ×16 at 78%: 12.29 GB/s for the 3×8×8×4-byte
	// images (768 B each).
	gpu := testGPU
	gpu.PCIeGen, gpu.PCIeLanes = 3, 16
	link := 0.985 * 16 * HostLinkEfficiency
	for _, tc := range []struct {
		name      string
		in        pipeline.Rate
		batch     int
		wantMS    float64
		wantBound string
		wantRate  float64
	}{
		{"synthetic", pipeline.Rate{}, 4, 4 * tinyPerSampleMS, "gpu", 0},
		{"slow loader", pipeline.Rate{Loader: pipeline.PyTorch, Workers: 2, ImagesPerS: 40, HostToDeviceBytesPerImage: 768}, 4, 100, "input", 40},
		{"fast loader: the GPU and the batch copy", pipeline.Rate{Loader: pipeline.PyTorch, Workers: 2, ImagesPerS: 1000, HostToDeviceBytesPerImage: 768}, 4,
			4*tinyPerSampleMS + 4*768/(link*1e9)*1000, "gpu", 1000},
	} {
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: gpu,
			Precision: measure.FP32, Batches: []int{tc.batch}, Run: Run{Epochs: 1, Images: 100}, Input: tc.in})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p := c.Points[0]
		if p.Bound != tc.wantBound || c.LoaderImagesPerS != tc.wantRate || c.Input != 8 || math.Abs(p.IterMS-tc.wantMS) > 1e-9 {
			t.Errorf("%s: step %v ms, bound %q, loader %v images/s, input %d; want %v ms, %q, %v, 8",
				tc.name, p.IterMS, p.Bound, c.LoaderImagesPerS, c.Input, tc.wantMS, tc.wantBound, tc.wantRate)
		}
	}
	// Two GPUs: each has its own workers; the loader's rate is the machine's.
	c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 2}, GPU: gpu,
		Precision: measure.FP32, Batches: []int{8}, Run: Run{Epochs: 1, Images: 100}, Input: pipeline.Rate{Loader: pipeline.PyTorch, Workers: 3, ImagesPerS: 40}})
	if err != nil {
		t.Fatal(err)
	}
	if c.LoaderImagesPerS != 80 || c.Workers != 3 || c.Loader != pipeline.PyTorch || c.Points[0].Bound != "input" {
		t.Errorf("two GPUs: loader %s × %d workers at %v images/s, bound %q; want pytorch × 3 at 80, input", c.Loader, c.Workers, c.LoaderImagesPerS, c.Points[0].Bound)
	}
}

func TestNCHWPaysTransposesUnderAMP(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	run := func(p measure.Precision, f MemoryFormat, cc string) float64 {
		gpu := testGPU
		gpu.ComputeCapability = cc
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: gpu,
			Precision: p, Batches: []int{10}, Run: Run{Epochs: 1, Images: 10}, MemoryFormat: f})
		if err != nil {
			t.Fatal(err)
		}
		return c.Points[0].IterMS
	}
	// tinyNet's convolutions: conv1 (3+4)×64 elements, conv2 and conv3 (4+4)×64. Its
	// phases: conv1 forward and weight gradient (2), conv2 and conv3 three each: 2×448 +
	// 6×512 = 3968 elements transposed per image, 4 bytes each (read and write FP16),
	// at 1000 GB/s: 1.5872e-5 ms per image, ×10 images.
	want := 3968.0 * 4 / 1e12 * 1000 * 10
	for _, tc := range []struct {
		name  string
		p     measure.Precision
		f     MemoryFormat
		cc    string
		extra float64
	}{
		{"amp nchw on tensor cores", measure.AMP, NCHW, "7.0", want},
		{"amp nhwc", measure.AMP, NHWC, "7.0", 0},
		{"fp32 nchw", measure.FP32, NCHW, "7.0", 0},
		{"amp nchw without tensor cores", measure.AMP, NCHW, "6.0", 0},
	} {
		base := run(tc.p, "", tc.cc)
		if got := run(tc.p, tc.f, tc.cc) - base; math.Abs(got-tc.extra) > 1e-12 {
			t.Errorf("%s: %v ms more than without transposes, want %v", tc.name, got, tc.extra)
		}
	}
	// A measured convolution (here, interpolated or transferred from another GPU) was
	// timed on NCHW tensors: cuDNN's layout work is in its time, so none is added.
	for _, src := range []Source{Measured, Interpolated, Transferred} {
		timer := newLinearTimer(1)
		timer.source = src
		measured := NewEngine(timer, noOverheads(), DefaultMemoryModel)
		times := map[MemoryFormat]float64{}
		for _, f := range []MemoryFormat{"", NCHW} {
			c, err := measured.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: testGPU,
				Precision: measure.AMP, Batches: []int{10}, Run: Run{Epochs: 1, Images: 10}, MemoryFormat: f})
			if err != nil {
				t.Fatal(err)
			}
			times[f] = c.Points[0].IterMS
		}
		if d := times[NCHW] - times[""]; math.Abs(d) > 1e-12 {
			t.Errorf("amp nchw, %s convolutions: %v ms of transposes added to times that hold them already", src, d)
		}
	}
	if _, err := ParseMemoryFormat("nchwc"); err == nil {
		t.Error("ParseMemoryFormat accepted nchwc")
	}
	if f, err := ParseMemoryFormat("channels_last"); err != nil || f != NHWC {
		t.Errorf("ParseMemoryFormat(channels_last) = %q, %v", f, err)
	}
}

// TestNCHWBatchNormUnderAMP: an eager NCHW network under amp runs cuDNN's NCHW
// batch-norm kernels, whose SMs bound them (Calibration.NCHWNormBytesPerSMCycle):
// estimated from specifications, its batch norm takes its bytes at the SMs' capped
// rate instead of the streaming rate channels_last's kernels reach. FP32 batch norm, a
// batch norm a stack fuses into its own kernel, and a measured batch norm (timed in
// the network's layout) keep their time.
func TestNCHWBatchNormUnderAMP(t *testing.T) {
	cal := kernels.PriorCalibration()
	cal.NCHWNormBytesPerSMCycle = 4
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	h200 := hw.GPU{ID: "h200", Name: "H200 SXM 141GB", ComputeCapability: "9.0", SMs: 132, BoostClockMHz: 1980, FP32TFLOPS: 66.9,
		TF32TFLOPS: 494.5, FP16TFLOPS: 989, MemoryGB: 141, MemoryType: "HBM3e", MemoryBandwidthGBs: 4800, TDPW: 700}
	bn := cnn.Config{Op: cnn.OpBatchNorm, In: cnn.Shape{C: 256, H: 56, W: 56}, Out: cnn.Shape{C: 256, H: 56, W: 56}, NumInputs: 1}
	const batch = 64
	dev := measure.Device{Key: "cuda:h200", Backend: "cuda", GPUID: h200.ID}
	ms := []measure.Measurement{{DeviceKey: dev.Key, ConfigKey: bn.Key(), Batch: batch, Precision: measure.AMP, Phase: measure.Forward,
		Policy: measure.Heuristic, MedianMS: 1.5, SpreadMS: 0.01, Repeats: 10, Status: measure.OK, At: time.Unix(1_700_000_000, 0)}}
	estimated := NewEngine(kernels.NewModel(cal, []hw.GPU{h200}, nil, nil), DefaultOverheads, DefaultMemoryModel)
	measured := NewEngine(kernels.NewModel(cal, []hw.GPU{h200}, []measure.Device{dev}, ms), DefaultOverheads, DefaultMemoryModel)
	// Forward batch norm reads its input twice (statistics, then normalise) and writes
	// its output: 3 × 256×56×56 FP16 elements per image, at 4 bytes per cycle on the
	// 128 SMs its 256 channels keep busy on average (2 waves on 132 SMs) × 1.98 GHz ×
	// the sustained clock.
	smRate := 128 * 1980e6 * kernels.SustainedClockFactorExp(h200, cal.PowerClockExponentOrLegacy()) * 4
	capped := cal.LaunchUS/1000 + 3*256*56*56*2*batch/smRate*1000
	for _, tc := range []struct {
		name     string
		p        measure.Precision
		fused    bool
		measured bool
		nchw     float64 // 0: NHWC's time
	}{
		{"amp, estimated", measure.AMP, false, false, capped},
		{"fp32, estimated", measure.FP32, false, false, 0},
		{"amp, fused by the stack", measure.AMP, true, false, 0},
		{"amp, measured", measure.AMP, false, true, 0},
	} {
		e, kdev := estimated, kernels.Device{GPU: h200}
		if tc.measured {
			e, kdev.Key = measured, dev.Key
		}
		kreq := kernels.Request{Config: bn, Phase: measure.Forward, Precision: tc.p, Policy: measure.Heuristic}
		if tc.fused {
			kreq.FusedElems = 3 * float64(bn.In.Elems())
		}
		at := func(f MemoryFormat) float64 {
			out := make([]kernels.Estimate, 1)
			e.timerFor(&Request{MemoryFormat: f, Precision: tc.p}).Times(kdev, kreq, []int{batch}, out)
			return out[0].MS
		}
		nhwc, nchw := at(NHWC), at(NCHW)
		want := tc.nchw
		if want == 0 {
			want = nhwc
		} else if !(nhwc < 0.8*want) {
			t.Errorf("%s: NHWC batch norm %.4f ms; want it well under the SM-bound %.4f ms", tc.name, nhwc, want)
		}
		if math.Abs(nchw-want) > 1e-9*want {
			t.Errorf("%s: NCHW batch norm %.6f ms (NHWC %.6f ms), want %.6f ms", tc.name, nchw, nhwc, want)
		}
	}
}

// An assumed host widens the band by what it can move the step: from the loader at the
// slow end of its range to the loader at the fast end, where the GPU takes over; the
// slow end is what a ranking charges. A known host, or a loader far from the pace, adds
// nothing.
func TestAnAssumedHostWidensTheBandByWhatItCanMove(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	gpuMS := 4 * tinyPerSampleMS // batch 4
	for _, tc := range []struct {
		name            string
		in              pipeline.Rate
		wantHost, wantS float64 // HostErrorPct, HostSlowPct
	}{
		{"input-bound, assumed 0.9–2×", pipeline.Rate{Loader: pipeline.PyTorch, Workers: 2, ImagesPerS: 40, CPUScale: 1, CPUScaleSlow: 0.9, CPUScaleFast: 2},
			100 * (1 - gpuMS/100), 100 * (100/0.9/100 - 1)},
		{"known host", pipeline.Rate{Loader: pipeline.PyTorch, Workers: 2, ImagesPerS: 40, CPUScale: 1.4, CPUScaleSlow: 1.4, CPUScaleFast: 1.4}, 0, 0},
		{"a loader far ahead of the GPU", pipeline.Rate{Loader: pipeline.PyTorch, Workers: 2, ImagesPerS: 1000, CPUScale: 1, CPUScaleSlow: 0.9, CPUScaleFast: 2}, 0, 0},
	} {
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: testGPU,
			Precision: measure.FP32, Batches: []int{4}, Run: Run{Epochs: 1, Images: 100}, Input: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		p := c.Points[0]
		if math.Abs(p.HostErrorPct-tc.wantHost) > 1e-9 || math.Abs(p.HostSlowPct-tc.wantS) > 1e-9 {
			t.Errorf("%s: host ±%.3f%% (slow end +%.3f%%), want ±%.3f%% (+%.3f%%)", tc.name, p.HostErrorPct, p.HostSlowPct, tc.wantHost, tc.wantS)
		}
		if want := math.Hypot(10, tc.wantHost); tc.wantHost > 0 && math.Abs(p.ErrorPct-want) > 1e-9 {
			t.Errorf("%s: band ±%.3f%%, want the step's and the host's combined, ±%.3f%%", tc.name, p.ErrorPct, want)
		}
		if got, want := p.RankTotalS(), p.TotalS*(1+tc.wantS/100); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: ranked at %g s, want %g", tc.name, got, want)
		}
	}
}
