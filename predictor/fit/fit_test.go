package fit

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

const header = "file,gpu,sheet,mode,cuda,cudnn,app,W,H,C,N,K,S_filter_w,R_filter_h,pad_w,pad_h,stride_w,stride_h,fwd_ms,bwd_input_ms,bwd_params_ms,total_ms,fwd_algo\n"

func TestParseDeepBench(t *testing.T) {
	good := header +
		"x,NVIDIA V100,Results FP32,train,10.1,7.6,Resnet,56,56,64,8,256,1,1,0,0,1,1,0.086,0.084,0.143,0.313,IMPLICIT_GEMM\n" +
		"x,NVIDIA V100,\"Results - FP16 ip, Mixed math\",train,10.1,7.6,DeepSpeech,700,161,1,4,32,20,5,0,0,2,2,0.591,N/A*,1.028,1.619,\n" +
		"x,NVIDIA T4,Results - Mixed Precision,inference,10.1,7.6,,700,161,1,1,32,20,5,0,0,2,2,0.437,,,,\n"
	rows, err := ParseDeepBench([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (the inference row skipped)", len(rows))
	}
	want0 := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: 64, H: 56, W: 56}, Out: cnn.Shape{C: 256, H: 56, W: 56}, NumInputs: 1,
		Kernel: cnn.Pair{1, 1}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{0, 0}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	if rows[0].Config != want0 || rows[0].Batch != 8 || rows[0].Precision != measure.FP32 || rows[0].MS != [3]float64{0.086, 0.084, 0.143} {
		t.Errorf("row 0 = %+v", rows[0])
	}
	// W=700, H=161, filter 20 wide × 5 high, stride 2: 79 × 341 outputs; no data gradient given.
	r := rows[1]
	if r.Config.Out != (cnn.Shape{C: 32, H: 79, W: 341}) || r.Config.Kernel != (cnn.Pair{5, 20}) || r.Precision != measure.AMP || r.MS != [3]float64{0.591, 0, 1.028} {
		t.Errorf("row 1 = %+v", r)
	}

	bad := []struct{ name, csv, wantErr string }{
		{"empty", "", "header"},
		{"missing column", strings.Replace(header, "stride_h,", "", 1), `lacks column "stride_h"`},
		{"bad number", header + "x,NVIDIA V100,Results FP32,train,,,,56,56,sixty,8,256,1,1,0,0,1,1,0.1,0.1,0.1,0.3,\n", "line 2: C"},
		{"zero stride", header + "x,NVIDIA V100,Results FP32,train,,,,56,56,64,8,256,1,1,0,0,0,1,0.1,0.1,0.1,0.3,\n", "stride_w is 0"},
		{"filter too big", header + "x,NVIDIA V100,Results FP32,train,,,,4,4,64,8,256,9,9,0,0,1,1,0.1,0.1,0.1,0.3,\n", "larger than"},
		{"unknown sheet", header + "x,NVIDIA V100,INT8,train,,,,56,56,64,8,256,1,1,0,0,1,1,0.1,0.1,0.1,0.3,\n", "neither FP32 nor FP16"},
		{"no training rows", header + "x,NVIDIA T4,Results - Mixed Precision,inference,,,,7,7,1,1,32,1,1,0,0,1,1,0.4,,,,\n", "no training-mode rows"},
	}
	for _, tc := range bad {
		_, err := ParseDeepBench([]byte(tc.csv))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestMatchGPUs(t *testing.T) {
	var catalog []hw.GPU
	for _, id := range DeepBenchGPUs {
		catalog = append(catalog, hw.GPU{ID: id})
	}
	got, err := MatchGPUs(catalog)
	if err != nil || len(got) != len(DeepBenchGPUs) || got["NVIDIA V100"].ID != "v100-sxm2-16gb" {
		t.Errorf("MatchGPUs = %v, %v", got, err)
	}
	if _, err := MatchGPUs(catalog[1:]); err == nil || !strings.Contains(err.Error(), "the catalog has no GPU") {
		t.Errorf("a missing GPU gave %v", err)
	}
}

var testGPUs = map[string]hw.GPU{
	"A": {ID: "a", Architecture: "Volta", ComputeCapability: "7.0", SMs: 80, FP32TFLOPS: 15.7, FP16TFLOPS: 125, MemoryBandwidthGBs: 900},
	"B": {ID: "b", Architecture: "Turing", ComputeCapability: "7.5", SMs: 40, FP32TFLOPS: 8.1, FP16TFLOPS: 65, MemoryBandwidthGBs: 320},
	"C": {ID: "c", Architecture: "Pascal", ComputeCapability: "6.1", SMs: 28, FP32TFLOPS: 11.3, MemoryBandwidthGBs: 484},
}

// syntheticRows times a set of layers on the test GPUs with a known calibration, so a
// fit has an exact answer to find.
func syntheticRows(truth *kernels.Calibration) []Row {
	layers := []struct{ cin, cout, hw, k, stride int }{
		{64, 64, 56, 3, 1}, {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {64, 256, 56, 1, 1}, {256, 64, 56, 1, 1},
		{512, 128, 28, 1, 1}, {3, 64, 224, 7, 2}, {64, 128, 56, 3, 2}, {256, 512, 28, 1, 2}, {1024, 256, 14, 1, 1},
	}
	var rows []Row
	for name, g := range testGPUs {
		for _, p := range []measure.Precision{measure.FP32, measure.AMP} {
			for _, l := range layers {
				for _, n := range []int{8, 16, 32} {
					out := (l.hw+2*(l.k/2)-l.k)/l.stride + 1
					c := cnn.Config{Op: cnn.OpConv2d, In: cnn.Shape{C: l.cin, H: l.hw, W: l.hw}, Out: cnn.Shape{C: l.cout, H: out, W: out},
						NumInputs: 1, Kernel: cnn.Pair{l.k, l.k}, Stride: cnn.Pair{l.stride, l.stride}, Padding: cnn.Pair{l.k / 2, l.k / 2},
						Dilation: cnn.Pair{1, 1}, Groups: 1}
					r := Row{GPU: name, Precision: p, Config: c, Batch: n}
					for i, ph := range measure.Phases {
						r.MS[i], _ = kernels.EstimateMS(truth, c, ph, g, p, n)
					}
					rows = append(rows, r)
				}
			}
		}
	}
	return rows
}

func trueCalibration(t *testing.T) *kernels.Calibration {
	truth := kernels.PriorCalibration()
	for k, v := range truth.ComputeEfficiency {
		truth.ComputeEfficiency[k] = v * (0.8 + 0.05*float64(len(k)%7)) // away from the priors, deterministically
	}
	truth.LaunchUS = 12
	if err := truth.Validate(); err != nil {
		t.Fatal(err)
	}
	return truth
}

func TestFitRecoversAKnownCalibration(t *testing.T) {
	rows := syntheticRows(trueCalibration(t))
	prior := kernels.PriorCalibration()
	priorAPE := 0.0
	for _, s := range samplesOf(rows, testGPUs, func(string) bool { return true }) {
		p, _ := kernels.EstimateMS(prior, s.row.Config, s.phase, s.gpu, s.row.Precision, s.row.Batch)
		priorAPE += math.Abs(p-s.ms) / s.ms
	}
	priorMAPE := 100 * priorAPE / float64(len(samplesOf(rows, testGPUs, func(string) bool { return true })))
	res, err := FitEfficiencies(rows, testGPUs, prior, Options{MaxEvaluations: 6000})
	if err != nil {
		t.Fatal(err)
	}
	cal, keys, mape := res.Calibration, res.Keys, res.TrainMAPE
	// The truth's 12 µs launch cost is 7 µs above the prior's 5: the harness overhead takes it.
	if math.Abs(res.HarnessMS-0.007) > 0.002 {
		t.Errorf("harness overhead %.4f ms, want about 0.007", res.HarnessMS)
	}
	if !(mape < 3) || !(mape < priorMAPE/3) {
		t.Errorf("fitted MAPE %.2f%% (priors %.2f%%): want under 3%% and a third of the priors'", mape, priorMAPE)
	}
	// conv1x1, conv3x3 and conv × fp32, fp16 (A, B) and fp16-simt (C) × 3 phases.
	if len(keys) != 3*3*3 {
		t.Errorf("fitted %d keys, want 27: %v", len(keys), keys)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "conv3x3/fp32/") {
			want := trueCalibration(t).ComputeEfficiency[k]
			if got := cal.ComputeEfficiency[k]; math.Abs(got-want)/want > 0.1 {
				t.Errorf("%s fitted %.3f, true %.3f", k, got, want)
			}
		}
	}
	// Dependent keys follow the fitted ones.
	if a, b := cal.ComputeEfficiency["conv3x3/tf32/fwd"], cal.ComputeEfficiency["conv3x3/fp16/fwd"]; a != b {
		t.Errorf("tf32 efficiency %.3f should equal the fitted fp16 one %.3f", a, b)
	}
}

func TestLeaveOneGPUOut(t *testing.T) {
	rows := syntheticRows(trueCalibration(t))
	acc, err := LeaveOneGPUOut(rows, testGPUs, Options{MaxEvaluations: 3000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range acc {
		seen[a.GPU+"/"+a.Sheet] = true
		if a.Rows == 0 || a.TransferRows == 0 {
			t.Errorf("%s %s: %d rows, %d transferred", a.GPU, a.Sheet, a.Rows, a.TransferRows)
		}
		if !(a.TransferMAPE < 15) {
			t.Errorf("%s %s: transfer MAPE %.1f%% on data the model generated", a.GPU, a.Sheet, a.TransferMAPE)
		}
	}
	for _, want := range []string{"A/fp32", "A/fp16", "B/fp16", "C/fp32", "C/fp16-simt"} {
		if !seen[want] {
			t.Errorf("no accuracy row for %s; have %v", want, acc)
		}
	}
	if _, err := LeaveOneGPUOut(rows, map[string]hw.GPU{"A": testGPUs["A"]}, Options{}); err == nil {
		t.Error("one GPU cannot be left out: want an error")
	}
}
