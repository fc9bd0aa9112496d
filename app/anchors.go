package app

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"cnntime/app/charts"
	"cnntime/app/numfmt"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// anchorsFor is the cache's measured whole steps that the curve of request r on target
// t passes through (predictor.Request.Anchors): those of r's model on t's GPU (the
// lookup explanations use, stepRows) at r's precision, measured under r's settings as
// far as a step records them (stepSettings): the framework and its torch.compile mode,
// the memory format, cuDNN's algorithm choice, the input size, one process. A step
// that records a setting r does not share, or whose framework text cannot be read, is
// not used. Nil when none is: the curve is then predicted as it always was.
func (e *Engine) anchorsFor(t Target, r *predictor.Request) []predictor.MeasuredStep {
	if len(e.steps) == 0 {
		return nil
	}
	rows := e.stepRows(t, r.Network.Name, r.Precision)
	if len(rows) == 0 {
		return nil
	}
	var out []predictor.MeasuredStep
	for _, s := range rows {
		if stepSettingsOf(s).suit(t, r) {
			out = append(out, measuredStep(s))
		}
	}
	return out
}

// stepSettings is what a measured step records of how it ran, read from its framework
// text ("pytorch 2.8.0 cnntime_train.py compile default channels_last", "pytorch 2.5",
// "pytorch 2.5 cpu 8 threads", "cnntime-cpu") and its source ("…, input 224, …",
// "…, 1 processes, …", "cudnn.benchmark=True").
type stepSettings struct {
	known     bool // the framework text was read: PyTorch's, or cnntime's CPU backend's
	cpu       bool // measured on a CPU
	backend   string
	framework predictor.Framework // on a GPU: the stack as the predictor names it
	format    predictor.MemoryFormat
	input     int            // pixels; 0: not recorded, or the model's default
	processes int            // the data-parallel processes that ran it; 0: not recorded
	policy    measure.Policy // cuDNN's algorithm choice; "": not recorded
}

// The settings a step's source text records, compiled on first use (start-up compiles
// no pattern a command does not need).
var (
	inputRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\binput (\d+)\b`) })
	processesRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(\d+) process(es)?\b`) })
)

// stepSettingsOf reads s's settings.
func stepSettingsOf(s measure.Step) stepSettings {
	var st stepSettings
	words := strings.Fields(strings.ToLower(s.Framework))
	switch {
	case len(words) == 0:
		return st
	case words[0] == measure.FrameworkCnntimeCPU:
		st.known, st.cpu, st.backend = true, true, measure.FrameworkCnntimeCPU
	case words[0] == measure.FrameworkPyTorch && len(words) > 1:
		major, err := strconv.Atoi(strings.SplitN(words[1], ".", 2)[0])
		if err != nil || major < 1 {
			return st
		}
		st.known, st.backend, st.framework = true, measure.FrameworkPyTorch, predictor.PyTorch2
		if major == 1 {
			st.framework = predictor.PyTorch1
		}
		st.format = predictor.NCHW
		for i, w := range words[2:] {
			switch w {
			case "cpu":
				st.cpu = true
			case "channels_last":
				st.format = predictor.NHWC
			case "compile":
				mode := ""
				if j := i + 3; j < len(words) {
					mode = words[j]
				}
				switch mode {
				case "", "default", "channels_last":
					st.framework = predictor.Compiled
				case "reduce-overhead":
					st.framework = predictor.CompiledGraphs
				default: // max-autotune and the like: a stack the predictor does not model
					st.known = false
				}
			}
		}
	default:
		return st
	}
	if m := inputRe().FindStringSubmatch(s.Source); m != nil {
		st.input, _ = strconv.Atoi(m[1])
	}
	if m := processesRe().FindStringSubmatch(s.Source); m != nil {
		st.processes, _ = strconv.Atoi(m[1])
	}
	switch {
	case strings.Contains(s.Source, "cudnn.benchmark=True"):
		st.policy = measure.Fastest
	case strings.Contains(s.Source, "cudnn.benchmark=False"):
		st.policy = measure.Heuristic
	}
	return st
}

// suit reports whether a step measured with st can anchor request r on target t: a
// CPU's step its own backend's, a GPU's under r's framework, memory format and policy
// where recorded, by one process (a step of several holds their all-reduce), at r's
// input (a step that records none: the model's default input).
func (st stepSettings) suit(t Target, r *predictor.Request) bool {
	if !st.known || st.processes > 1 || st.cpu != (t.cpu != nil) {
		return false
	}
	if st.cpu {
		if st.backend != measure.CPUFramework(t.DeviceKey) {
			return false
		}
	} else {
		format := r.MemoryFormat
		if format == "" {
			format = predictor.NCHW
		}
		framework := r.Framework
		if framework == "" {
			framework = predictor.PyTorch2
		}
		if st.framework != framework || st.format != format || (st.policy != "" && st.policy != r.Policy) {
			return false
		}
	}
	input := predictor.NetworkInput(r.Network)
	if st.input > 0 {
		return st.input == input
	}
	def := cnn.DefaultResolution(r.Network.Name)
	return def == 0 || def == input // a custom network's steps are of its own input
}

// AnchorNote says what the cache's measured whole steps did to curve c ("" when none
// did): "anchored to 2 measured steps (per-GPU batch 64: 60.0 ms ±1.20 ms, predicted
// 69.6 ms; 256: 250 ms ±2.50 ms, predicted 273 ms): the step is the measurement at
// those batches (source measured) and the prediction scaled through them elsewhere
// (source anchored); the loader and the all-reduce stay predicted".
func AnchorNote(c *predictor.Curve) string {
	if len(c.Anchors) == 0 {
		return ""
	}
	var at []string
	for i, m := range c.Anchors {
		s := numfmt.MS(m.StepMS)
		if i == 0 {
			s = "per-GPU batch " + numfmt.Count(int64(m.PerGPUBatch)) + ": " + s
		} else {
			s = numfmt.Count(int64(m.PerGPUBatch)) + ": " + s
		}
		if m.SpreadMS > 0 {
			s += " ±" + numfmt.MS(m.SpreadMS)
		}
		at = append(at, s+", predicted "+numfmt.MS(m.PredictedMS))
	}
	those, them := "those batches", "them"
	if len(c.Anchors) == 1 {
		those, them = "that batch", "it"
	}
	return fmt.Sprintf("anchored to %s (%s): the step is the measurement at %s (source %s) and the prediction scaled through %s elsewhere (source %s); the loader and the all-reduce stay predicted",
		charts.Count(len(c.Anchors), "measured step", "measured steps"), strings.Join(at, "; "), those, predictor.Measured, them, predictor.Anchored)
}

// AnchoredText says what the curve that predict, best and the window give makes of
// explanation x's batch where measured steps anchor it: "122 ms (anchored) in predict,
// best and the window: the prediction passed through the 2 measured steps that suit
// this run; this explanation is the model's own".
func AnchoredText(x *predictor.Explanation) string {
	them := "the " + charts.Count(x.AnchoredTo, "measured step that suits", "measured steps that suit")
	return fmt.Sprintf("%s (%s) in predict, best and the window: the prediction passed through %s this run; this explanation is the model's own",
		numfmt.MS(x.AnchoredMS), x.AnchoredSource, them)
}
