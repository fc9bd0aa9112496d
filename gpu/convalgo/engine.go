package convalgo

import (
	"fmt"
	"sort"
	"strconv"
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

// Auto is the API PyTorch uses with the cuDNN a GPU has (DefaultAPI): a sweep's default.
const Auto = "auto"

// APIs are the cuDNN APIs a sweep may choose convolution algorithms through.
var APIs = []string{Auto, Legacy, V8}

// ParseAPI accepts auto, legacy or v8 ("" is legacy, as requests before auto were).
func ParseAPI(s string) (string, error) {
	switch s {
	case "", Legacy:
		return Legacy, nil
	case V8, Auto:
		return s, nil
	}
	return "", fmt.Errorf("unknown cuDNN API %q: use auto (what PyTorch uses), legacy (cudnnGet/Find*Algorithm) or v8 (the graph API PyTorch 2 uses)", s)
}

// DefaultAPI is the API PyTorch 2 chooses convolution algorithms through with a cuDNN
// of version ("9.19.0"): the graph API (v8) from cuDNN 8 on (aten/src/ATen/cudnn/Macros.h:
// HAS_CUDNN_V8 from CUDNN_VERSION 8000; TORCH_CUDNN_V8_API_DISABLED=1 turns it off),
// the legacy calls before it or when the version is unknown.
func DefaultAPI(cudnnVersion string) string {
	major, _, _ := strings.Cut(cudnnVersion, ".")
	if m, err := strconv.Atoi(major); err == nil && m >= 8 {
		return V8
	}
	return Legacy
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
// configuration whose workspace alloc obtains and that runs (works: its first execution
// succeeds; nil takes it on trust), as PyTorch's v8 path does with cudnn.benchmark off,
// moving on to the next when one fails; ok is false when none is usable, outOfMemory
// true when usable ones existed but none got its workspace, and failed the error of the
// last one that was tried and failed.
func ChooseEngine(ranked []Engine, p measure.Precision, alloc func(bytes int64) bool, works func(i int) error) (chosen int, ok, outOfMemory bool, failed error) {
	usable, fit := 0, 0
	for i, e := range ranked {
		if !EngineUsable(e, p) {
			continue
		}
		usable++
		if !alloc(e.Workspace) {
			continue
		}
		fit++
		if works != nil {
			if err := works(i); err != nil {
				failed = err
				continue
			}
		}
		return i, true, false, nil
	}
	return -1, false, usable > 0 && fit == 0, failed
}

// BenchmarkLimit is how many engine configurations cudnn.benchmark times at most:
// PyTorch's torch.backends.cudnn.benchmark_limit, 10 by default (the v8 API's
// find-plans stops there); the heuristics rank the rest below them.
const BenchmarkLimit = 10

// ToTime are the indices of the usable configurations the fastest policy times: the
// first limit of the ranking, as PyTorch's benchmark does.
func ToTime(ranked []Engine, p measure.Precision, limit int) []int {
	var out []int
	for i, e := range ranked {
		if len(out) == limit {
			break
		}
		if EngineUsable(e, p) {
			out = append(out, i)
		}
	}
	return out
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
