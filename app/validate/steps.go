package validate

import (
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// StepsAccuracy is `cnntime validate --table steps`: every measured whole step in the
// cache against the step composed from the same device's layer measurements alone.
type StepsAccuracy struct {
	Rows    []StepsRow `json:"rows"`
	MAPEPct float64    `json:"mape_pct"`
	// Skipped names the measured steps that could not be predicted, and why (no layer
	// measurements of that device, or not of every layer).
	Skipped []string `json:"skipped"`
}

// StepsRow is one measured step and its prediction.
type StepsRow struct {
	Device      string            `json:"device"`
	Framework   string            `json:"framework"` // what ran the measured step: "cnntime-cpu", "cnntime-cuda", "pytorch 2.5.1", ...
	Model       string            `json:"model"`
	Batch       int               `json:"batch"`
	Precision   measure.Precision `json:"precision"` // the step's training precision: fp32 (a CPU's only one), fp32-strict, tf32, amp or bf16
	Input       int               `json:"input"`
	PredictedMS float64           `json:"predicted_ms"`
	MeasuredMS  float64           `json:"measured_ms"`
	ErrorPct    float64           `json:"error_pct"` // signed: (predicted − measured) / measured
	// LoadAverage is the machine's load average while the step was measured, as its
	// measurement's source records it ("1.34-1.92": lowest and highest of the rounds);
	// "" when the source does not say. Timings on a loaded CPU are less comparable.
	LoadAverage string `json:"load_average,omitempty"`
}

// stepInputs are the input sizes tried, after the model's own, to find the one a
// device's layer measurements cover (a step row does not record its input).
var stepInputs = []int{32, 64, 96, 128, 160, 192, 224, 256, 299}

// Steps predicts every step measurement in the cache from its device's layer
// measurements (nothing fitted to the steps) and compares: a CPU's FP32 steps as the
// CPU's framework runs them (predictor.CPUKernels, predictor.CPUOverheads), a CUDA
// GPU's steps at every precision with cnntime's GPU step model (predictor.DefaultOverheads
// on the catalog's GPU) from the layer timings of the framework that ran the step:
// PyTorch's (the device's ":pytorch" rows, pytorch_sweep.py --layers) for PyTorch's
// steps, cnntime's worker's for its own. A step's input size is the first of the
// model's own and stepInputs whose every layer configuration the device has a forward
// measurement of at that batch size (at the layer's kernel precision on a GPU).
func Steps(ctx context.Context, d *db.DB, cal *kernels.Calibration) (StepsAccuracy, error) {
	out := StepsAccuracy{Rows: []StepsRow{}, Skipped: []string{}}
	steps, err := d.Steps(ctx, db.StepFilter{})
	if err != nil {
		return out, err
	}
	devs, err := d.Devices(ctx)
	if err != nil {
		return out, err
	}
	byKey := make(map[string]measure.Device, len(devs))
	for _, dev := range devs {
		byKey[dev.Key] = dev
	}
	type group struct {
		device, model, framework string
		precision                measure.Precision
	}
	groups := map[group][]measure.Step{}
	var order []group
	for _, s := range steps {
		if s.Status != measure.OK || (!isGPUKey(s.DeviceKey) && s.Precision != measure.FP32) {
			continue
		}
		g := group{s.DeviceKey, s.Model, s.Framework, s.Precision}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], s)
	}
	var cat *hw.Catalog
	for _, g := range order {
		what := g.model + " on " + g.device
		if isGPUKey(g.device) {
			what += " (" + string(g.precision) + ", " + g.framework + ")"
		}
		dev, ok := byKey[g.device]
		if !ok {
			out.Skipped = append(out.Skipped, what+": the cache has no layer measurements of that device")
			continue
		}
		// One row per batch size: the newest measurement.
		latest := map[int]measure.Step{}
		for _, s := range groups[g] {
			if old, ok := latest[s.Batch]; !ok || s.At.After(old.At) {
				latest[s.Batch] = s
			}
		}
		batches := make([]int, 0, len(latest))
		for b := range latest {
			batches = append(batches, b)
		}
		sort.Ints(batches)
		var c composer
		if isGPUKey(g.device) {
			if cat == nil {
				if cat, err = app.LoadCatalog(); err != nil {
					return out, err
				}
			}
			c = gpuComposer(cal, cat, dev, g.framework, g.precision)
		} else {
			c = cpuComposer(cal, dev)
		}
		net, ms, err := coveredNetwork(ctx, d, c, g.model, batches)
		if err != nil {
			return out, err
		}
		if net == nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s: the layer measurements of %s do not cover every layer at batches %v for any input size", what, c.layers, batches))
			continue
		}
		pred, err := c.predict(net, batches, ms)
		if err != nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %v", what, err))
			continue
		}
		for i, b := range batches {
			m := latest[b].MedianMS
			out.Rows = append(out.Rows, StepsRow{Device: dev.Key, Framework: g.framework, Model: g.model, Batch: b, Precision: g.precision,
				Input: net.Input.H, PredictedMS: pred[i], MeasuredMS: m, ErrorPct: 100 * (pred[i] - m) / m,
				LoadAverage: loadAverageOf(latest[b].Source)})
		}
	}
	for _, r := range out.Rows {
		out.MAPEPct += math.Abs(r.ErrorPct)
	}
	if len(out.Rows) > 0 {
		out.MAPEPct /= float64(len(out.Rows))
	}
	return out, nil
}

// isGPUKey reports whether a step's device key is a measured CUDA GPU's.
func isGPUKey(key string) bool { return strings.HasPrefix(key, "cuda:") }

// composer is how a device's step is composed from its layer timings: which device's
// layer rows (layers), which phases each layer runs (rule), at which kernel precision
// and policy ("" for any) its rows are taken, and the step model that adds them up.
type composer struct {
	layers  string
	rule    predictor.KernelRule
	kernel  func(op cnn.Op) measure.Precision
	policy  measure.Policy
	predict func(net *cnn.Network, batches []int, ms []measure.Measurement) ([]float64, error)
}

// cpuComposer composes a measured CPU's FP32 step from its own layer rows, the phases
// its framework runs one after another and nothing else.
func cpuComposer(cal *kernels.Calibration, dev measure.Device) composer {
	return composer{layers: dev.Key, rule: predictor.CPUKernels(dev.Key),
		kernel: func(cnn.Op) measure.Precision { return measure.FP32 },
		predict: func(net *cnn.Network, batches []int, ms []measure.Measurement) ([]float64, error) {
			pred, err := PredictCPUSteps(cal, dev, []*cnn.Network{net}, batches, ms)
			return pred[net.Name], err
		}}
}

// gpuComposer composes a CUDA GPU's step at precision with cnntime's step model on the
// catalog's GPU, from the heuristic-policy layer rows of the framework that ran it:
// PyTorch's under the device's ":pytorch" key, else cnntime's worker's.
func gpuComposer(cal *kernels.Calibration, cat *hw.Catalog, dev measure.Device, framework string, prec measure.Precision) composer {
	g := app.GPUOfDevice(cat, dev)
	layers := dev
	if strings.HasPrefix(framework, measure.FrameworkPyTorch) && !measure.MeasuredByPyTorch(dev.Key) {
		layers.Key += measure.PyTorchGPUSuffix
	}
	return composer{layers: layers.Key, rule: predictor.FrameworkKernels,
		kernel: func(op cnn.Op) measure.Precision { return predictor.KernelPrecision(prec, op, g) },
		policy: measure.Heuristic,
		predict: func(net *cnn.Network, batches []int, ms []measure.Measurement) ([]float64, error) {
			eng := predictor.NewEngine(kernels.NewModel(cal, cat.GPUs(), []measure.Device{layers}, ms), predictor.DefaultOverheads, predictor.DefaultMemoryModel)
			cpu := host.ReferenceCPU
			c, err := eng.Curve(predictor.Request{Network: net, Machine: hw.Machine{ID: "measured", GPUCount: 1, CPU: &cpu}, GPU: g,
				DeviceKey: layers.Key, Precision: prec, Policy: measure.Heuristic, Batches: batches,
				Run: predictor.Run{Epochs: 1, Images: batches[len(batches)-1]}})
			if err != nil {
				return nil, err
			}
			out := make([]float64, len(batches))
			for i, b := range batches {
				if i >= len(c.Points) || c.Points[i].Batch != b || !c.Points[i].Fits {
					return nil, fmt.Errorf("the step model finds batch %d does not fit %s's memory", b, g.Name)
				}
				out[i] = c.Points[i].IterMS
			}
			return out, nil
		}}
}

// loadAverageRE finds the load average that scripts/pytorch_sweep.py and cnntime's
// own step sweeps write into a step's source: "load average 1.34-1.92" or "load 1.3".
var loadAverageRE = regexp.MustCompile(`\bload(?: average)? ([0-9]+(?:\.[0-9]+)?(?:-[0-9]+(?:\.[0-9]+)?)?)`)

// loadAverageOf is the load average a step's source records, "" when none.
func loadAverageOf(source string) string {
	if m := loadAverageRE.FindStringSubmatch(source); m != nil {
		return m[1]
	}
	return ""
}

// coveredNetwork builds model at the first input size whose layers c's layer rows
// cover at every batch (a forward measurement at each layer's kernel precision and
// policy), and returns it with those rows; nil when no size is covered or the model is
// unknown.
func coveredNetwork(ctx context.Context, d *db.DB, c composer, model string, batches []int) (*cnn.Network, []measure.Measurement, error) {
	if cnn.Family(model) == "" {
		return nil, nil, nil
	}
	sizes := append([]int{cnn.DefaultResolution(model)}, stepInputs...)
	for _, size := range sizes {
		net, err := cnn.Build(model, cnn.Options{Resolution: size})
		if err != nil {
			continue // too small for this model
		}
		// The layers that run a kernel as the device's framework runs them (a view runs
		// none under PyTorch, and is not measured), at their kernel precision.
		want := map[string]measure.Precision{}
		for i := range net.Layers {
			if l := &net.Layers[i]; len(c.rule.Phases(l)) > 0 {
				want[l.Config.Key()] = c.kernel(l.Config.Op)
			}
		}
		list := make([]string, 0, len(want))
		for k := range want {
			list = append(list, k)
		}
		ms, err := d.Measurements(ctx, c.layers, list)
		if err != nil {
			return nil, nil, err
		}
		have := map[string]map[int]bool{}
		for _, m := range ms {
			if m.Phase == measure.Forward && m.Status == measure.OK && m.Precision == want[m.ConfigKey] && (c.policy == "" || m.Policy == c.policy) {
				if have[m.ConfigKey] == nil {
					have[m.ConfigKey] = map[int]bool{}
				}
				have[m.ConfigKey][m.Batch] = true
			}
		}
		covered := true
		for k := range want {
			for _, b := range batches {
				if !have[k][b] {
					covered = false
				}
			}
		}
		if covered {
			return net, ms, nil
		}
	}
	return nil, nil, nil
}

// WriteStepsTable prints the steps table of `cnntime validate --table steps`.
func WriteStepsTable(w io.Writer, v *StepsAccuracy) error {
	fmt.Fprintf(w, "Whole training steps in the cache, predicted from the same device's layer measurements: MAPE %.1f%% over %d steps\n\n", v.MAPEPct, len(v.Rows))
	t := app.NewTable(w, "DEVICE", "FRAMEWORK", "MODEL", "BATCH", "PRECISION", "INPUT", "PREDICTED MS", "MEASURED MS", "ERROR", "LOAD")
	for _, r := range v.Rows {
		load := r.LoadAverage
		if load == "" {
			load = "-"
		}
		t.Row(r.Device, r.Framework, r.Model, fmt.Sprint(r.Batch), string(r.Precision), fmt.Sprint(r.Input), fmt.Sprintf("%.2f", r.PredictedMS),
			fmt.Sprintf("%.2f", r.MeasuredMS), fmt.Sprintf("%+.1f%%", r.ErrorPct), load)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, s := range v.Skipped {
		fmt.Fprintln(w, "not predicted:", s)
	}
	return nil
}
