package convalgo

import (
	"fmt"
	"strings"
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
		i, ok, oom, _ := ChooseEngine(ranked, c.prec, c.alloc, nil)
		if ok != c.ok || oom != c.oom || (ok && ranked[i].Index != c.want) || (!ok && i != -1) {
			t.Errorf("%s: choice %d ok %v oom %v, want engine %d %v %v", c.prec, i, ok, oom, c.want, c.ok, c.oom)
		}
	}
	if _, ok, oom, _ := ChooseEngine(ranked[:1], measure.AMP, all, nil); ok || oom {
		t.Error("a down-converting engine alone was chosen, or called out of memory")
	}
	// An engine whose first execution fails is passed over for the next, as PyTorch's
	// v8 path does; when every one fails, the last failure says why.
	fails := func(bad ...int) func(int) error {
		return func(i int) error {
			for _, b := range bad {
				if i == b {
					return fmt.Errorf("engine at %d: CUDNN_STATUS_EXECUTION_FAILED", i)
				}
			}
			return nil
		}
	}
	if i, ok, _, _ := ChooseEngine(ranked, measure.TF32, all, fails(1)); !ok || ranked[i].Index != 1 {
		t.Errorf("engine 7 failed to run and %d was chosen (ok %v), want engine 1 next", i, ok)
	}
	if _, ok, oom, err := ChooseEngine(ranked, measure.FP32, all, fails(3, 4)); ok || oom || err == nil || !strings.Contains(err.Error(), "at 4") {
		t.Errorf("every usable engine failed: ok %v, oom %v, %v; want the last failure", ok, oom, err)
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
	// auto is what PyTorch 2 does: the graph API on cuDNN 8 and 9 (the first H200 run's
	// 726 convolution rows all went through the legacy API, the old default).
	for version, want := range map[string]string{"9.19.0": V8, "8.9.7": V8, "7.6.5": Legacy, "": Legacy} {
		if got := DefaultAPI(version); got != want {
			t.Errorf("DefaultAPI(%q) = %q, want %q", version, got, want)
		}
	}
}

// TestToTimeStopsAtPyTorchsBenchmarkLimit: cudnn.benchmark times at most
// torch.backends.cudnn.benchmark_limit (10) usable configurations, in the heuristics'
// order, where the worker timed all 48 it was offered.
func TestToTimeStopsAtPyTorchsBenchmarkLimit(t *testing.T) {
	var ranked []Engine
	for i := 0; i < 48; i++ {
		e := Engine{Index: int64(i), Built: true}
		if i%4 == 1 {
			e.Notes = []int{NoteDownConvertInputs} // never usable
		}
		ranked = append(ranked, e)
	}
	got := ToTime(ranked, measure.TF32, BenchmarkLimit)
	want := []int{0, 2, 3, 4, 6, 7, 8, 10, 11, 12}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timed %v, want the first 10 usable: %v", got, want)
	}
}
