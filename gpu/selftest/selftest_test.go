package selftest

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

func TestCompare(t *testing.T) {
	ref := []float32{1, -2, 4, 0.5}
	for _, c := range []struct {
		name    string
		got     []float32
		prec    measure.Precision
		wantErr float64
		ok      bool
	}{
		{"exact", []float32{1, -2, 4, 0.5}, measure.FP32, 0, true},
		{"fp32 summation-order noise", []float32{1.002, -2, 4, 0.5}, measure.FP32, 0.0005, true},
		{"fp32 off by 1%", []float32{1, -2, 4.04, 0.5}, measure.FP32, 0.01, false},
		{"tf32 off by 0.4%", []float32{1, -2, 4.016, 0.5}, measure.TF32, 0.004, true},
		{"amp off by 1%", []float32{1, -2, 4.04, 0.5}, measure.AMP, 0.01, true},
		{"amp off by 10%", []float32{1, -2, 4.4, 0.5}, measure.AMP, 0.1, false},
	} {
		gotErr, ok := Compare(c.got, ref, c.prec)
		if ok != c.ok || math.Abs(gotErr-c.wantErr) > 1e-6 {
			t.Errorf("%s: Compare = %g, %v; want %g, %v", c.name, gotErr, ok, c.wantErr, c.ok)
		}
	}
	for name, got := range map[string][]float32{"NaN": {1, float32(math.NaN()), 4, 0.5}, "Inf": {1, -2, float32(math.Inf(1)), 0.5}, "short": {1, -2}} {
		if _, ok := Compare(got, ref, measure.AMP); ok {
			t.Errorf("%s output passed the comparison", name)
		}
	}
}

func TestCasesCoverEveryKindOnce(t *testing.T) {
	kinds := map[cnn.Op]int{}
	for _, c := range Cases() {
		kinds[c.Op]++
		if c.In.Elems() <= 0 || c.Out.Elems() <= 0 || c.In.Elems() > 1<<13 {
			t.Errorf("case %s is not a small valid shape", c.Key())
		}
	}
	for _, op := range []cnn.Op{cnn.OpConv2d, cnn.OpLinear, cnn.OpBatchNorm, cnn.OpLayerNorm, cnn.OpReLU, cnn.OpReLU6, cnn.OpSiLU,
		cnn.OpHardswish, cnn.OpHardsigmoid, cnn.OpSigmoid, cnn.OpGELU, cnn.OpMaxPool, cnn.OpAvgPool, cnn.OpAdaptiveAvg, cnn.OpAdd,
		cnn.OpMul, cnn.OpScale, cnn.OpConcat, cnn.OpChannelShuffle, cnn.OpDropout, cnn.OpStochasticDepth, cnn.OpFlatten,
		cnn.OpPermute, cnn.OpSlice, cnn.OpLoss} {
		if kinds[op] == 0 {
			t.Errorf("no self-test case for %s", op)
		}
	}
	if kinds[cnn.OpConv2d] != 2 {
		t.Errorf("want a dense and a depthwise convolution, have %d convolutions", kinds[cnn.OpConv2d])
	}
}

func TestReportWrite(t *testing.T) {
	r := Report{
		Device:   measure.Device{Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-1", ComputeCapability: "9.0", SMs: 132},
		Versions: Versions{Driver: "550.54.15", CUDA: "12.4", CuDNN: "9.6.0", CuBLAS: "12.4.5"},
		Rows: append(coreRows(), []Row{
			{Layer: "relu:in=8x6x6,out=8x6x6", Kind: cnn.OpReLU, Precision: measure.FP32, Phase: measure.Forward, Verdict: Pass, MaxError: 1e-7, Tolerance: 1e-3, MS: 0.004},
			{Layer: "gelu:in=8x6x6,out=8x6x6", Kind: cnn.OpGELU, Precision: measure.AMP, Phase: measure.Forward, Verdict: Unsupported, Why: "NVRTC is absent: cnntime's own kernels cannot be compiled"},
		}...),
		Sweep: Sweep{Items: 12, Measured: 12, Seconds: 1.5},
	}
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"driver 550.54.15", "NVRTC absent", "NVRTC is absent", "12 of 12 items", "5 ok, 0 ran, 1 unsupported", "can be trusted", "fastest"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	r.Rows = append(r.Rows, Row{Layer: "conv2d", Precision: measure.TF32, Phase: measure.BackwardData, Verdict: Mismatch, MaxError: 0.5, Tolerance: 1e-2})
	b.Reset()
	_ = r.Write(&b)
	if r.Trustworthy() || !strings.Contains(b.String(), "do not trust") {
		t.Errorf("a mismatch must make the report untrustworthy:\n%s", b.String())
	}
}

// coreRows are passing FP32 checks of the kinds every report needs: a convolution (with
// the heuristic's and the fastest algorithm), a linear layer and batch norm.
func coreRows() []Row {
	pass := func(kind cnn.Op, phase measure.Phase, policy measure.Policy) Row {
		return Row{Layer: string(kind), Kind: kind, Precision: measure.FP32, Phase: phase, Policy: policy, Verdict: Pass, MaxError: 1e-6, Tolerance: 1e-3}
	}
	return []Row{pass(cnn.OpConv2d, measure.Forward, measure.Heuristic), pass(cnn.OpConv2d, measure.Forward, measure.Fastest),
		pass(cnn.OpLinear, measure.BackwardWeights, measure.Heuristic), pass(cnn.OpBatchNorm, measure.BackwardData, measure.Heuristic)}
}

// TestProblemsOfABrokenInstall: a report is trusted only when the FP32 convolution,
// linear and batch-norm checks passed and the timed sweep finished every item. A cuDNN
// that calls its convolutions unsupported (its sub-libraries missing, say) or a sweep
// that stopped is a broken install, not a healthy one with gaps.
func TestProblemsOfABrokenInstall(t *testing.T) {
	done := Sweep{Items: 6, Measured: 6, Seconds: 1}
	with := func(change func(*Report)) Report {
		r := Report{Rows: coreRows(), Sweep: done}
		change(&r)
		return r
	}
	for _, c := range []struct {
		name string
		rep  Report
		want string // "" for a trusted report
	}{
		{"healthy", with(func(*Report) {}), ""},
		{"amp unsupported is a gap, not a fault", with(func(r *Report) {
			r.Rows = append(r.Rows, Row{Kind: cnn.OpConv2d, Precision: measure.AMP, Phase: measure.Forward, Verdict: Unsupported, Why: "no FP16 on this GPU"})
		}), ""},
		{"fp32 convolution unsupported", with(func(r *Report) {
			r.Rows[0].Verdict, r.Rows[0].Why = Unsupported, "cuDNN cudnnConvolutionForward: CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE (3009)"
		}), "FP32 conv2d fwd did not run against the reference: cuDNN cudnnConvolutionForward: CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"},
		{"the fastest algorithm unsupported", with(func(r *Report) { r.Rows[1].Verdict = Unsupported }), "FP32 conv2d fwd with the fastest algorithm did not run"},
		{"no linear check", with(func(r *Report) { r.Rows = append(r.Rows[:2], r.Rows[3]) }), "no FP32 linear was checked"},
		{"batch norm only ran", with(func(r *Report) { r.Rows[3].Verdict = Ran }), "FP32 batchnorm2d bwd_data did not run against the reference"},
		{"mismatch", with(func(r *Report) { r.Rows[2].Verdict = Mismatch }), "1 checks mismatched the CPU reference and 0 failed"},
		{"sweep stopped", with(func(r *Report) {
			r.Sweep.Measured, r.Sweep.Why = 2, "measure relu at batch 32 (fwd): CUDA_ERROR_ILLEGAL_ADDRESS"
		}), "the timed sweep stopped: measure relu at batch 32 (fwd): CUDA_ERROR_ILLEGAL_ADDRESS"},
		{"sweep items failed", with(func(r *Report) {
			r.Sweep.Measured, r.Sweep.Failures = 5, []string{"conv2d at batch 32 (fwd): cuDNN: CUDNN_STATUS_EXECUTION_FAILED (5000)"}
		}), "1 items of the timed sweep failed (first: conv2d at batch 32 (fwd)"},
		{"sweep short", with(func(r *Report) { r.Sweep.Measured = 4 }), "the timed sweep measured 4 of its 6 items"},
		// NVRTC loaded, but the kernels did not compile or load: every memory-bound
		// layer is unsupported while cuDNN and cuBLAS pass.
		{"own kernels unsupported", with(func(r *Report) {
			why := "unsupported: relu needs cnntime's own kernels, and cnntime's kernels could not be built: load the --gpu-architecture=sm_90 image into the GPU: CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
			r.Rows = append(r.Rows,
				Row{Layer: "relu:in=8x6x6,out=8x6x6", Kind: cnn.OpReLU, Precision: measure.FP32, Phase: measure.Forward, Verdict: Unsupported, Why: why},
				Row{Layer: "maxpool2d", Kind: cnn.OpMaxPool, Precision: measure.FP32, Phase: measure.Forward, Verdict: Unsupported, Why: why},
				Row{Layer: "add", Kind: cnn.OpAdd, Precision: measure.FP32, Phase: measure.Forward, Verdict: Pass})
		}), "cnntime's own kernels did not run: 2 of 3 FP32 checks of the memory-bound layers are unsupported"},
		{"the graph API unsupported is a gap, not a fault", with(func(r *Report) {
			r.Rows = append(r.Rows, Row{Kind: cnn.OpConv2d, Precision: measure.FP32, Phase: measure.Forward, API: "v8", Verdict: Unsupported, Why: "cuDNN's graph API is not in the cuDNN loaded"})
		}), ""},
		{"a view has no kernel: not a fault", with(func(r *Report) {
			r.Rows = append(r.Rows, Row{Layer: "flatten", Kind: cnn.OpFlatten, Precision: measure.FP32, Phase: measure.Forward, Verdict: Unsupported, Why: "unsupported: no kernel of cnntime's own: flatten"})
		}), ""},
	} {
		problems := c.rep.Problems()
		switch {
		case c.want == "" && (len(problems) > 0 || !c.rep.Trustworthy()):
			t.Errorf("%s: problems %q, want none", c.name, problems)
		case c.want != "" && (c.rep.Trustworthy() || !strings.Contains(strings.Join(problems, "\n"), c.want)):
			t.Errorf("%s: problems %q, want one saying %q", c.name, problems, c.want)
		}
		var b strings.Builder
		_ = c.rep.Write(&b)
		if c.want != "" && !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: the written report does not say %q:\n%s", c.name, c.want, b.String())
		}
	}
}

// TestPlanChecksTheFastestAlgorithm: the self-test runs the convolution through
// cudnnFind*AlgorithmEx (the fastest policy) at every precision — under TF32 and amp it
// may choose tensor-core algorithms the heuristic does not — besides every case under
// the heuristic.
func TestPlanChecksTheFastestAlgorithm(t *testing.T) {
	fastest := map[measure.Precision]int{}
	for _, c := range Plan() {
		if c.Policy == measure.Fastest {
			fastest[c.Precision]++
			if c.Config.Op != cnn.OpConv2d {
				t.Errorf("fastest-algorithm check of %s in %s: want a convolution", c.Config.Key(), c.Precision)
			}
		}
	}
	for _, p := range Precisions {
		if fastest[p] != 1 {
			t.Errorf("%d fastest-algorithm checks in %s, want 1", fastest[p], p)
		}
	}
	v8 := map[measure.Precision]int{}
	for _, c := range Plan() {
		if c.API == "v8" {
			v8[c.Precision]++
		}
	}
	for _, p := range Precisions {
		if v8[p] != 1 {
			t.Errorf("%d checks through cuDNN's graph API in %s, want 1", v8[p], p)
		}
	}
	if len(Plan()) != (len(Cases())+2)*len(Precisions)+2 {
		t.Errorf("plan of %d checks: want every case at every precision, the convolution at each with the fastest algorithm and through the graph API, and the TF32 tensor-core case in fp32 and tf32", len(Plan()))
	}
}

// TestTF32MustBeExercised: on Ampere and later, a TF32 check of the tensor-core shape
// that matches FP32 bit for bit (as the 8-channel checks did on the H200: TF32 never
// ran) keeps the report from being trusted; one that differs as TF32 does passes, and a
// Volta has no TF32 to exercise.
func TestTF32MustBeExercised(t *testing.T) {
	row := func(maxErr float64) Row {
		return Row{Layer: TF32Case().Key(), Kind: cnn.OpConv2d, Precision: measure.TF32, Phase: measure.Forward, Verdict: Pass, MaxError: maxErr, Tolerance: Tolerance(measure.TF32)}
	}
	for _, c := range []struct {
		cc      string
		maxErr  float64
		problem bool
	}{{"9.0", 0, true}, {"9.0", 2e-7, true}, {"9.0", 4e-4, false}, {"7.0", 0, false}} {
		rep := Report{Device: measure.Device{ComputeCapability: c.cc}, Rows: []Row{row(c.maxErr)}}
		found := false
		for _, p := range rep.Problems() {
			found = found || strings.Contains(p, "TF32 convolutions did not use TF32")
		}
		if found != c.problem {
			t.Errorf("compute capability %s, TF32 error %g: problem %v, want %v (%q)", c.cc, c.maxErr, found, c.problem, rep.Problems())
		}
	}
}

// TestCasesCoverWhatRealLayersRun: the channels-last linear layer of ConvNeXt's MLP, an
// adaptive average pooling to more than 1×1, and a layer norm with rows enough for the
// warp-per-row path (package cudakern's test checks the path it takes).
func TestCasesCoverWhatRealLayersRun(t *testing.T) {
	var channelsLast, adaptive, manyRows bool
	for _, c := range Cases() {
		switch c.Op {
		case cnn.OpLinear:
			channelsLast = channelsLast || c.In.H*c.In.W > 1
		case cnn.OpAdaptiveAvg:
			adaptive = adaptive || c.Out.H*c.Out.W > 1
		case cnn.OpLayerNorm:
			manyRows = manyRows || Batch*c.In.H*c.In.W >= 8*256
		}
	}
	if !channelsLast || !adaptive || !manyRows {
		t.Errorf("cases lack a channels-last linear layer (%v), an adaptive pooling beyond 1x1 (%v), a layer norm of many rows (%v)", channelsLast, adaptive, manyRows)
	}
}
