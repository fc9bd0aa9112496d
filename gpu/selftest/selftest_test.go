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
		if c.In.Elems() <= 0 || c.Out.Elems() <= 0 || c.In.Elems() > 1<<12 {
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
		Rows: []Row{
			{Layer: "relu:in=8x6x6,out=8x6x6", Precision: measure.FP32, Phase: measure.Forward, Verdict: Pass, MaxError: 1e-7, Tolerance: 1e-3, MS: 0.004},
			{Layer: "gelu:in=8x6x6,out=8x6x6", Precision: measure.AMP, Phase: measure.Forward, Verdict: Unsupported, Why: "NVRTC is absent: cnntime's own kernels cannot be compiled"},
		},
		Sweep: Sweep{Items: 12, Measured: 12, Seconds: 1.5},
	}
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"driver 550.54.15", "NVRTC absent", "NVRTC is absent", "12 of 12 items", "1 ok, 0 ran, 1 unsupported", "can be trusted"} {
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
