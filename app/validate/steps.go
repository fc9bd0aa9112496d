package validate

import (
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
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
	Device      string  `json:"device"`
	Framework   string  `json:"framework"` // what ran the measured step: "cnntime-cpu", "pytorch 1.13.0 cpu 2 threads", ...
	Model       string  `json:"model"`
	Batch       int     `json:"batch"`
	Input       int     `json:"input"`
	PredictedMS float64 `json:"predicted_ms"`
	MeasuredMS  float64 `json:"measured_ms"`
	ErrorPct    float64 `json:"error_pct"` // signed: (predicted − measured) / measured
	// LoadAverage is the machine's load average while the step was measured, as its
	// measurement's source records it ("1.34-1.92": lowest and highest of the rounds);
	// "" when the source does not say. Timings on a loaded CPU are less comparable.
	LoadAverage string `json:"load_average,omitempty"`
}

// stepInputs are the input sizes tried, after the model's own, to find the one a
// device's layer measurements cover (a step row does not record its input).
var stepInputs = []int{32, 64, 96, 128, 160, 192, 224, 256, 299}

// Steps predicts every FP32 step measurement in the cache from its device's
// layer measurements (nothing fitted to the steps) and compares. A step's input size is
// the first of the model's own and stepInputs whose every layer configuration the
// device has a forward measurement of at that batch size.
func Steps(ctx context.Context, d *db.DB, cal *kernels.Calibration) (StepsAccuracy, error) {
	out := StepsAccuracy{Rows: []StepsRow{}, Skipped: []string{}}
	steps, err := d.Steps(ctx, db.StepFilter{Precision: measure.FP32})
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
	}
	groups := map[group][]measure.Step{}
	var order []group
	for _, s := range steps {
		if s.Status != measure.OK {
			continue
		}
		g := group{s.DeviceKey, s.Model, s.Framework}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], s)
	}
	for _, g := range order {
		dev, ok := byKey[g.device]
		if !ok {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s on %s: the cache has no layer measurements of that device", g.model, g.device))
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
		net, ms, err := coveredNetwork(ctx, d, dev.Key, g.model, batches)
		if err != nil {
			return out, err
		}
		if net == nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s on %s: its layer measurements do not cover every layer at batches %v for any input size", g.model, g.device, batches))
			continue
		}
		pred, err := PredictCPUSteps(cal, dev, []*cnn.Network{net}, batches, ms)
		if err != nil {
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s on %s: %v", g.model, g.device, err))
			continue
		}
		for i, b := range batches {
			m := latest[b].MedianMS
			out.Rows = append(out.Rows, StepsRow{Device: dev.Key, Framework: g.framework, Model: g.model, Batch: b,
				Input: net.Input.H, PredictedMS: pred[net.Name][i], MeasuredMS: m, ErrorPct: 100 * (pred[net.Name][i] - m) / m,
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

// coveredNetwork builds model at the first input size whose layers the device's
// measurements cover at every batch, and returns it with those measurements; nil when
// no size is covered or the model is unknown.
func coveredNetwork(ctx context.Context, d *db.DB, device, model string, batches []int) (*cnn.Network, []measure.Measurement, error) {
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
		// none under PyTorch, and is not measured).
		rule := predictor.CPUKernels(device)
		keys := map[string]bool{}
		for i := range net.Layers {
			if len(rule.Phases(&net.Layers[i])) > 0 {
				keys[net.Layers[i].Config.Key()] = true
			}
		}
		list := make([]string, 0, len(keys))
		for k := range keys {
			list = append(list, k)
		}
		ms, err := d.Measurements(ctx, device, list)
		if err != nil {
			return nil, nil, err
		}
		have := map[string]map[int]bool{}
		for _, m := range ms {
			if m.Phase == measure.Forward && m.Status == measure.OK && m.Precision == measure.FP32 {
				if have[m.ConfigKey] == nil {
					have[m.ConfigKey] = map[int]bool{}
				}
				have[m.ConfigKey][m.Batch] = true
			}
		}
		covered := true
		for k := range keys {
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
	t := app.NewTable(w, "DEVICE", "FRAMEWORK", "MODEL", "BATCH", "INPUT", "PREDICTED MS", "MEASURED MS", "ERROR", "LOAD")
	for _, r := range v.Rows {
		load := r.LoadAverage
		if load == "" {
			load = "-"
		}
		t.Row(r.Device, r.Framework, r.Model, fmt.Sprint(r.Batch), fmt.Sprint(r.Input), fmt.Sprintf("%.2f", r.PredictedMS),
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
