package convalgo

import (
	"testing"

	"cnntime/predictor/measure"
)

// TestChooseEngineAsPyTorchsV8Path: the heuristics' first configuration that PyTorch's
// v8 filter keeps and whose plan and workspace are had: no down-converting engine, no
// tensor cores under fp32 (TF32 off), tensor cores under tf32 and amp.
func TestChooseEngineAsPyTorchsV8Path(t *testing.T) {
	ranked := []Engine{
		{Index: 0, Notes: []int{NoteTensorCore, NoteDownConvertInputs}, Workspace: 0, Built: true},
		{Index: 7, Notes: []int{NoteTensorCore}, Workspace: 1 << 20, Built: true},
		{Index: 12, Notes: []int{NoteTensorCore}, Workspace: 1 << 30, Built: false}, // does not run here
		{Index: 1, Notes: nil, Workspace: 64 << 20, Built: true},
		{Index: 3, Notes: []int{NoteNondeterministic}, Workspace: 0, Built: true},
	}
	all := func(int64) bool { return true }
	for _, c := range []struct {
		prec  measure.Precision
		alloc func(int64) bool
		want  int64
		ok    bool
		oom   bool
	}{
		{measure.TF32, all, 7, true, false},
		{measure.AMP, all, 7, true, false},
		{measure.FP32, all, 1, true, false},
		{measure.FP32, func(b int64) bool { return b < 1<<20 }, 3, true, false}, // engine 1's 64 MB not to be had
		{measure.FP32, func(b int64) bool { return false }, 0, false, true},
	} {
		i, ok, oom := ChooseEngine(ranked, c.prec, c.alloc)
		if ok != c.ok || oom != c.oom || (ok && ranked[i].Index != c.want) || (!ok && i != -1) {
			t.Errorf("%s: choice %d ok %v oom %v, want engine %d %v %v", c.prec, i, ok, oom, c.want, c.ok, c.oom)
		}
	}
	if _, ok, oom := ChooseEngine(ranked[:1], measure.AMP, all); ok || oom {
		t.Error("a down-converting engine alone was chosen, or called out of memory")
	}
	// The fastest policy times the usable ones and takes the quickest.
	if i := Fastest(ranked, measure.FP32, []float64{0.1, 0.2, 0, 0.9, 0.5}); i != 4 {
		t.Errorf("Fastest under fp32 = %d, want 4 (engine 3: engine 0 converts down, 7 uses tensor cores)", i)
	}
	if i := Fastest(ranked, measure.TF32, []float64{0.1, 0.2, 0, 0.9, 0.5}); i != 1 {
		t.Errorf("Fastest under tf32 = %d, want 1", i)
	}
}

// TestTheAlgorithmSaysWhichAPI: a measurement's algorithm names the API that chose it,
// and a v8 engine its index and knobs.
func TestTheAlgorithmSaysWhichAPI(t *testing.T) {
	label := EngineLabel(Engine{Index: 12, Knobs: []Knob{{14, 1}, {2, 3}}})
	if label != "cudnn-v8 engine 12 (k2=3, k14=1)" {
		t.Errorf("EngineLabel = %q", label)
	}
	for alg, want := range map[string]string{label: V8, "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM": Legacy,
		"cudnn-v8 engine 0": V8, "cnntime-kernel": "", "cublasGemmEx": ""} {
		if got := APIOf(alg); got != want {
			t.Errorf("APIOf(%q) = %q, want %q", alg, got, want)
		}
	}
	for in, want := range map[string]string{"": Legacy, "legacy": Legacy, "v8": V8} {
		if got, err := ParseAPI(in); err != nil || got != want {
			t.Errorf("ParseAPI(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseAPI("v9"); err == nil {
		t.Error("ParseAPI accepted v9")
	}
}
