package convalgo

import (
	"fmt"
	"sort"
	"strings"

	"cnntime/predictor/measure"
)

// The cuDNN APIs a convolution's algorithm is chosen through.
const (
	// Legacy is cudnnGet*Algorithm_v7 and cudnnFind*AlgorithmEx: algorithms by their
	// legacy enum (CUDNN_CONVOLUTION_FWD_ALGO_…), the worker's default.
	Legacy = "legacy"
	// V8 is the graph (backend) API PyTorch 2 uses unless TORCH_CUDNN_V8_API_DISABLED=1:
	// the engine heuristics' ranked engine configurations (and, for the fastest policy,
	// each timed), executed as plans; an engine by its global index and knobs.
	V8 = "v8"
)

// APIs are the cuDNN APIs a sweep may choose convolution algorithms through.
var APIs = []string{Legacy, V8}

// ParseAPI accepts legacy or v8 ("" is legacy).
func ParseAPI(s string) (string, error) {
	switch s {
	case "", Legacy:
		return Legacy, nil
	case V8:
		return V8, nil
	}
	return "", fmt.Errorf("unknown cuDNN API %q: use legacy (cudnnGet/Find*Algorithm) or v8 (the graph API PyTorch 2 uses)", s)
}

// cuDNN's numerical notes of an engine (cudnnBackendNumericalNote_t, cuDNN 8 and 9).
const (
	NoteTensorCore                = 0
	NoteDownConvertInputs         = 1
	NoteReducedPrecisionReduction = 2
	NoteFFT                       = 3
	NoteNondeterministic          = 4
	NoteWinograd                  = 5
)

// Knob is one knob choice of an engine configuration.
type Knob struct{ Type, Value int64 }

// Engine is one engine configuration the v8 heuristics offered for a convolution.
type Engine struct {
	Index     int64 // the engine's global index
	Knobs     []Knob
	Notes     []int // numerical notes
	Workspace int64 // the plan's workspace
	Built     bool  // its execution plan finalized: this GPU can run it
}

func (e Engine) has(note int) bool {
	for _, n := range e.Notes {
		if n == note {
			return true
		}
	}
	return false
}

// EngineUsable says whether PyTorch would run an engine configuration under kernel
// precision p (its cuDNN v8 filter, deterministic off): its plan built; it does not
// convert inputs down (never allowed); and under fp32 or fp32-strict, where TF32 is
// off, it uses no tensor cores.
func EngineUsable(e Engine, p measure.Precision) bool {
	if !e.Built || e.has(NoteDownConvertInputs) {
		return false
	}
	if strict(p) && e.has(NoteTensorCore) {
		return false
	}
	return true
}

// ChooseEngine walks the heuristics' ranking and returns the index of the first usable
// configuration whose workspace alloc obtains, as PyTorch's v8 path does with
// cudnn.benchmark off; ok is false when none is usable, outOfMemory true when usable ones
// existed but none got its workspace.
func ChooseEngine(ranked []Engine, p measure.Precision, alloc func(bytes int64) bool) (chosen int, ok, outOfMemory bool) {
	usable := 0
	for i, e := range ranked {
		if !EngineUsable(e, p) {
			continue
		}
		usable++
		if alloc(e.Workspace) {
			return i, true, false
		}
	}
	return -1, false, usable > 0
}

// Fastest returns the index (in ranked) of the usable configuration that timed fastest
// (ms, one per configuration; ≤ 0 where it was not timed), as cudnn.benchmark's
// find-plans does; -1 when none was timed.
func Fastest(ranked []Engine, p measure.Precision, ms []float64) int {
	best := -1
	for i, e := range ranked {
		if i >= len(ms) || !(ms[i] > 0) || !EngineUsable(e, p) {
			continue
		}
		if best < 0 || ms[i] < ms[best] {
			best = i
		}
	}
	return best
}

// EngineLabel is a v8 engine configuration as a measurement's algorithm: the API, the
// engine's global index and its knobs in type order, "cudnn-v8 engine 12 (k2=3, k14=1)".
func EngineLabel(e Engine) string {
	knobs := append([]Knob(nil), e.Knobs...)
	sort.Slice(knobs, func(i, j int) bool { return knobs[i].Type < knobs[j].Type })
	parts := make([]string, len(knobs))
	for i, k := range knobs {
		parts[i] = fmt.Sprintf("k%d=%d", k.Type, k.Value)
	}
	label := fmt.Sprintf("cudnn-v8 engine %d", e.Index)
	if len(parts) > 0 {
		label += " (" + strings.Join(parts, ", ") + ")"
	}
	return label
}

// APIOf says which cuDNN API chose a measured algorithm: V8 for an engine label,
// Legacy for a legacy algorithm's name, "" for anything else (cnntime's kernels,
// cuBLAS, a CPU).
func APIOf(algorithm string) string {
	switch {
	case strings.HasPrefix(algorithm, "cudnn-v8 "):
		return V8
	case strings.HasPrefix(algorithm, "CUDNN_CONVOLUTION_"):
		return Legacy
	}
	return ""
}
