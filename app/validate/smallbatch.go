package validate

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/dataset"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/published"
)

// SmallBatchMaxBatch is the largest batch the small-batch figures of the step-time
// table cover: where a step's fixed cost (its intercept) weighs most.
const SmallBatchMaxBatch = 64

// StepBatchRow is one published one-GPU training step at one batch size
// (assets/validation/step_batch.csv): several batches of one model on one GPU from one
// source draw the line step time = intercept + slope × batch. Predicted is the step
// cnntime predicts now; Before the same step with none of the framework's work per
// parameter tensor (predictor.Graph: a fused update, no zero_grad, no accumulation,
// no batch-norm counters), which is what cnntime predicted before it modelled it.
type StepBatchRow struct {
	Source    string  `json:"source"`
	Where     string  `json:"where"`
	Set       string  `json:"set"`
	GPU       string  `json:"gpu"`
	Model     string  `json:"model"`
	Framework string  `json:"framework"`
	Script    string  `json:"script"` // the training script's kind (predictor.Scripts)
	Precision string  `json:"precision"`
	Batch     int     `json:"batch"`
	Dataset   string  `json:"dataset"`
	Loader    string  `json:"loader"`
	Workers   int     `json:"workers"`
	CPU       string  `json:"cpu,omitempty"`
	TurboGHz  float64 `json:"cpu_turbo_ghz,omitempty"`
	Measured  float64 `json:"measured_ms"`
	Predicted float64 `json:"predicted_ms"`
	Before    float64 `json:"before_ms"`
	ErrorPct  float64 `json:"error_pct"`
	BeforePct float64 `json:"before_error_pct"`
}

// StepBatchGroup is the accuracy over a set of rows, at every batch and at batches up
// to SmallBatchMaxBatch, now and without the per-tensor work (Before).
type StepBatchGroup struct {
	Set             string  `json:"set"`
	Source          string  `json:"source,omitempty"`
	Rows            int     `json:"rows"`
	MAPEPct         float64 `json:"mape_pct"`
	BiasPct         float64 `json:"bias_pct"`
	SmallRows       int     `json:"small_rows"`
	SmallMAPEPct    float64 `json:"small_mape_pct"`
	BeforeMAPEPct   float64 `json:"before_mape_pct"`
	BeforeSmallMAPE float64 `json:"before_small_mape_pct"`
	InterceptMS     float64 `json:"intercept_ms,omitempty"` // of the measured line, where one source × GPU × model has ≥ 3 batches
	PredInterceptM  float64 `json:"predicted_intercept_ms,omitempty"`
}

// StepBatchAccuracy is the small-batch table of `cnntime validate`.
type StepBatchAccuracy struct {
	Sets    []StepBatchGroup `json:"sets"`
	Sources []StepBatchGroup `json:"sources"`
	// Lines are the measured and predicted intercepts and slopes per source × GPU ×
	// model with at least three batches.
	Lines []StepLine     `json:"lines"`
	Rows  []StepBatchRow `json:"rows"`
	// Shipped is what cnntime predicts with; Refit what FitStepOverheads finds on the
	// tuning rows now (they agree unless the data or the model changed since).
	Shipped StepOverheadsFit `json:"overheads"`
	Refit   StepOverheadsFit `json:"refit"`
}

// StepLine is the least-squares line through one series' steps: measured and predicted.
type StepLine struct {
	Set, Source, GPU, Model        string
	Points                         int
	InterceptMS, SlopeMSPerImage   float64
	PInterceptMS, PSlopeMSPerImage float64
}

// StepOverheadsFit is a set of the per-step figures table 8 is about: the training
// process's work per DataLoader batch, the host cost of one eager operator and the GPU
// time of a small kernel, with the tuning rows' MAPE they give.
type StepOverheadsFit struct {
	HandoffMS     float64 `json:"handoff_ms"`
	EagerOpUS     float64 `json:"eager_op_us"`
	SmallKernelUS float64 `json:"small_kernel_us"`
	TuningMAPEPct float64 `json:"tuning_mape_pct"`
}

var stepBatchColumns = []string{"source", "where", "gpu", "model", "framework", "script", "precision", "batch", "dataset",
	"loader", "workers", "cpu", "cpu_turbo_ghz", "step_ms", "set"}

// ParseStepBatch reads the published one-GPU steps.
func ParseStepBatch(data []byte) ([]StepBatchRow, error) {
	var rows []StepBatchRow
	err := published.Read("step_batch.csv", data, stepBatchColumns, func(f *published.Row) error {
		row := StepBatchRow{Source: f.Text("source"), Where: f.Text("where"), Set: f.Text("set"), GPU: f.Text("gpu"), Model: f.Text("model"),
			Framework: f.Text("framework"), Script: f.Text("script"), Precision: f.Text("precision"), Dataset: f.Text("dataset"), Loader: f.Text("loader"), CPU: f.Text("cpu"),
			Batch: int(f.Num("batch", true)), Workers: int(f.Num("workers", true)), TurboGHz: f.Num("cpu_turbo_ghz", false),
			Measured: f.Num("step_ms", true)}
		if f.Err() != nil {
			return f.Err()
		}
		if _, err := pipeline.ParseLoader(row.Loader); err != nil {
			return f.Errorf("%w", err)
		}
		if _, err := predictor.ParseScript(row.Script); err != nil || row.Script == "" {
			return f.CellErrorf("script", "%q is no script: name one of lean, reference, examples, lightning", row.Script)
		}
		if _, err := predictor.ParseTrainingPrecision(row.Precision); err != nil {
			return f.Errorf("%w", err)
		}
		if _, err := dataset.Preset(row.Dataset); err != nil {
			return f.Errorf("%w", err)
		}
		if row.Source == "" || row.GPU == "" || row.Model == "" {
			return f.Errorf("a row needs its source, gpu and model")
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// stepBatchNetwork builds a row's model: a zoo CNN, or the embedded CIFAR ResNet-18
// (kuangliu/pytorch-cifar's, which Gavel and Pollux train).
func stepBatchNetwork(name string, classes int) (*cnn.Network, error) {
	if name == "resnet18_cifar" {
		return cnn.ParseCustom(assets.ResNet18CIFAR)
	}
	return cnn.Build(name, cnn.Options{Resolution: cnn.DefaultResolution(name), Classes: classes})
}

// stepSoftware is each source's release of the kernel libraries (predictor.ParseSoftware):
// Gavel pins torch==1.4.0 (scheduler/requirements.txt); cgnorthcutt's README names CUDA
// 10.1, whose PyTorch wheels were 1.4's (January 2020); Pollux's traces do not say,
// and are taken as June 2020, the year before the paper; Sia's benchmark Dockerfiles
// name PyTorch 1.9 with CUDA 11.1.
var stepSoftware = map[string]string{"gavel": "pytorch-1.4", "cgnorthcutt": "pytorch-1.4", "pollux": "2020-06", "sia": "pytorch-1.9"}

// PredictStepBatch predicts each row with pred: the step on the row's GPU, its loader
// (workers on the row's CPU; the reference CPU where none is named) with handoffMS of
// the training process's own work per DataLoader batch, the framework its description
// names, in its kind of script; and the same step with no per-tensor work (Before).
func PredictStepBatch(pred *predictor.Engine, cat interface {
	GPU(string) (hw.GPU, error)
}, rows []StepBatchRow, handoffMS float64) error {
	nets := map[string]*cnn.Network{}
	for i := range rows {
		r := &rows[i]
		gpu, err := cat.GPU(r.GPU)
		if err != nil {
			return fmt.Errorf("step_batch.csv %s: %w", r.Source, err)
		}
		ds, _ := dataset.Preset(r.Dataset)
		net := nets[r.Model+"/"+r.Dataset]
		if net == nil {
			if net, err = stepBatchNetwork(r.Model, ds.Classes); err != nil {
				return fmt.Errorf("step_batch.csv %s: %w", r.Source, err)
			}
			nets[r.Model+"/"+r.Dataset] = net
		}
		cpu := host.ReferenceCPU
		if r.CPU != "" && r.TurboGHz > 0 {
			cpu = host.CPU{Model: r.CPU, TurboGHz: r.TurboGHz}
		}
		rate, err := pipeline.Model(pipeline.Settings{Loader: pipeline.Loader(r.Loader), Workers: r.Workers, CPUScale: cpu.Speed()},
			ds, net.Input.H, 0, 1, gpu)
		if err != nil {
			return fmt.Errorf("step_batch.csv %s: %w", r.Source, err)
		}
		if rate.Loader == pipeline.PyTorch { // a DataLoader hands its batches over, whatever the shipped cost
			rate.HandoffMS = handoffMS
		}
		p, _ := predictor.ParseTrainingPrecision(r.Precision)
		sw, err := predictor.ParseSoftware(stepSoftware[r.Source])
		if err != nil {
			return fmt.Errorf("step_batch.csv %s: %w", r.Source, err)
		}
		req := predictor.Request{Software: sw, Network: net, GPU: gpu, Precision: p, Policy: measure.Heuristic,
			Machine: hw.Machine{ID: r.Source, GPUCount: 1, CPU: &cpu}, Batches: []int{r.Batch},
			Run: predictor.Run{Epochs: 1, Images: r.Batch}, Input: rate, MemoryFormat: predictor.NCHW, Script: predictor.Script(r.Script),
			Framework: predictor.FrameworkOf(r.Framework)}
		step := func(req predictor.Request) (float64, error) {
			c, err := pred.Curve(req)
			if err != nil {
				return 0, fmt.Errorf("step_batch.csv %s: %w", r.Source, err)
			}
			if !c.Points[0].Fits {
				return 0, fmt.Errorf("step_batch.csv %s: batch %d of %s does not fit the memory model", r.Source, r.Batch, r.Model)
			}
			return c.Points[0].IterMS, nil
		}
		if r.Predicted, err = step(req); err != nil {
			return err
		}
		// Before: no per-tensor work, no hand-over of the batch, no read of the loss
		// inside the step.
		req.Framework = predictor.Graph
		req.Input.HandoffMS = 0
		if req.Script == predictor.Examples {
			req.Script = predictor.Reference
		}
		if r.Before, err = step(req); err != nil {
			return err
		}
		r.ErrorPct = 100 * (r.Predicted - r.Measured) / r.Measured
		r.BeforePct = 100 * (r.Before - r.Measured) / r.Measured
	}
	return nil
}

// SummariseStepBatch groups the rows' errors per set and per source and fits each
// series' lines.
func SummariseStepBatch(rows []StepBatchRow) *StepBatchAccuracy {
	acc := &StepBatchAccuracy{Rows: rows}
	group := func(key func(r *StepBatchRow) StepBatchGroup) []StepBatchGroup {
		idx := map[StepBatchGroup]int{}
		var out []StepBatchGroup
		for i := range rows {
			r := &rows[i]
			k := key(r)
			j, ok := idx[k]
			if !ok {
				j = len(out)
				idx[k] = j
				out = append(out, k)
			}
			g := &out[j]
			g.Rows++
			g.MAPEPct += math.Abs(r.ErrorPct)
			g.BiasPct += r.ErrorPct
			g.BeforeMAPEPct += math.Abs(r.BeforePct)
			if r.Batch <= SmallBatchMaxBatch {
				g.SmallRows++
				g.SmallMAPEPct += math.Abs(r.ErrorPct)
				g.BeforeSmallMAPE += math.Abs(r.BeforePct)
			}
		}
		for i := range out {
			g := &out[i]
			n := float64(g.Rows)
			g.MAPEPct, g.BiasPct, g.BeforeMAPEPct = g.MAPEPct/n, g.BiasPct/n, g.BeforeMAPEPct/n
			if g.SmallRows > 0 {
				g.SmallMAPEPct /= float64(g.SmallRows)
				g.BeforeSmallMAPE /= float64(g.SmallRows)
			}
		}
		var t, h []StepBatchGroup
		for _, g := range out {
			if g.Set == "tuning" {
				t = append(t, g)
			} else {
				h = append(h, g)
			}
		}
		return append(t, h...)
	}
	acc.Sets = group(func(r *StepBatchRow) StepBatchGroup { return StepBatchGroup{Set: r.Set} })
	acc.Sources = group(func(r *StepBatchRow) StepBatchGroup { return StepBatchGroup{Set: r.Set, Source: r.Source} })

	type key struct{ set, source, gpu, model string }
	series := map[key][]int{}
	var order []key
	for i := range rows {
		k := key{rows[i].Set, rows[i].Source, rows[i].GPU, rows[i].Model}
		if series[k] == nil {
			order = append(order, k)
		}
		series[k] = append(series[k], i)
	}
	for _, k := range order {
		idx := series[k]
		if len(idx) < 3 {
			continue
		}
		xs := make([]float64, len(idx))
		ms, ps := make([]float64, len(idx)), make([]float64, len(idx))
		for j, i := range idx {
			xs[j], ms[j], ps[j] = float64(rows[i].Batch), rows[i].Measured, rows[i].Predicted
		}
		a, b := line(xs, ms)
		pa, pb := line(xs, ps)
		acc.Lines = append(acc.Lines, StepLine{Set: k.set, Source: k.source, GPU: k.gpu, Model: k.model, Points: len(idx),
			InterceptMS: a, SlopeMSPerImage: b, PInterceptMS: pa, PSlopeMSPerImage: pb})
	}
	return acc
}

// line is the least-squares line y = a + b·x.
func line(x, y []float64) (a, b float64) {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	b = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return (sy - b*sx) / n, b
}

// StepBatch predicts every embedded one-GPU step and summarises the errors.
func StepBatch(eng *app.Engine) (*StepBatchAccuracy, error) {
	rows, err := ParseStepBatch(assets.StepBatch)
	if err != nil {
		return nil, fmt.Errorf("the embedded step-time series are broken (a build mistake; report it): %w", err)
	}
	if err := PredictStepBatch(eng.Predictor(), eng.Catalog(), rows, pipeline.DataLoaderHandoffMS); err != nil {
		return nil, err
	}
	acc := SummariseStepBatch(rows)
	o := eng.Predictor().Overheads()
	acc.Shipped = StepOverheadsFit{HandoffMS: pipeline.DataLoaderHandoffMS, EagerOpUS: o.EagerOpUS, SmallKernelUS: o.SmallKernelUS}
	for _, g := range acc.Sets {
		if g.Set == "tuning" {
			acc.Shipped.TuningMAPEPct = g.MAPEPct
		}
	}
	if acc.Refit, err = FitStepOverheads(eng.Kernels(), o, predictor.DefaultMemoryModel, eng.Catalog(), rows); err != nil {
		return nil, err
	}
	return acc, nil
}

// WriteStepBatchTable prints the small-batch table.
func WriteStepBatchTable(w io.Writer, acc *StepBatchAccuracy, number int) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintf(w, "\n%d. One-GPU step time against batch: the step's intercept (step_batch.csv; real scripts, real data)\n", number)
	fmt.Fprintf(w, "%.1f ms per DataLoader batch handed over, %.0f µs per eager operator, %.0f µs per small kernel (refitted now on the tuning sources: %.1f ms, %.0f µs; tuning MAPE %.1f%%)\n"+
		"\"before\": the same steps without the framework's per-tensor kernels, the batch's hand-over or the loss read after the forward pass\n\n",
		acc.Shipped.HandoffMS, acc.Shipped.EagerOpUS, acc.Shipped.SmallKernelUS, acc.Refit.HandoffMS, acc.Refit.EagerOpUS, acc.Refit.TuningMAPEPct)
	for _, s := range acc.Sets {
		fmt.Fprintf(w, "%s: %d rows, MAPE %.1f%% (before %.1f%%), bias %+.1f%%; batch ≤ %d: %d rows, MAPE %.1f%% (before %.1f%%)\n",
			s.Set, s.Rows, s.MAPEPct, s.BeforeMAPEPct, s.BiasPct, SmallBatchMaxBatch, s.SmallRows, s.SmallMAPEPct, s.BeforeSmallMAPE)
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", "SOURCE", "ROWS", "MAPE", "BEFORE", "BIAS", fmt.Sprintf("≤%d ROWS", SmallBatchMaxBatch), "≤ MAPE", "≤ BEFORE")
	for _, g := range acc.Sources {
		t.Row(g.Set, g.Source, strconv.Itoa(g.Rows), fmt.Sprintf("%.1f%%", g.MAPEPct), fmt.Sprintf("%.1f%%", g.BeforeMAPEPct),
			fmt.Sprintf("%+.1f%%", g.BiasPct), strconv.Itoa(g.SmallRows), fmt.Sprintf("%.1f%%", g.SmallMAPEPct), fmt.Sprintf("%.1f%%", g.BeforeSmallMAPE))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = app.NewTable(w, "SET", "SOURCE", "GPU", "MODEL", "POINTS", "MEASURED LINE", "PREDICTED LINE")
	for _, l := range acc.Lines {
		t.Row(l.Set, l.Source, l.GPU, l.Model, strconv.Itoa(l.Points),
			fmt.Sprintf("%.1f ms + %.3f ms/image", l.InterceptMS, l.SlopeMSPerImage),
			fmt.Sprintf("%.1f ms + %.3f ms/image", l.PInterceptMS, l.PSlopeMSPerImage))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = app.NewTable(w, "SET", "SOURCE", "GPU", "MODEL", "PRECISION", "BATCH", "MEASURED MS", "PREDICTED", "ERROR", "BEFORE", "ERROR")
	for _, r := range acc.Rows {
		t.Row(r.Set, r.Source, r.GPU, r.Model, r.Precision, strconv.Itoa(r.Batch), fmt.Sprintf("%.1f", r.Measured),
			fmt.Sprintf("%.1f", r.Predicted), fmt.Sprintf("%+.1f%%", r.ErrorPct), fmt.Sprintf("%.1f", r.Before), fmt.Sprintf("%+.1f%%", r.BeforePct))
	}
	return t.Flush()
}

// StepFitGrid is where FitStepOverheads looks: per-operator host costs (µs) and the
// training process's work per DataLoader batch (ms).
//
// The operator costs span what scripts/step_host_cost.py measures of PyTorch's Python
// optimizer loop on a CPU tensor plus a kernel launch (about 8 µs) up to NVIDIA's ~20 µs
// per PyTorch elementwise operator on a V100, host call to kernel start (Nsight
// Systems user guide); the per-step host work from none to 4 ms.
var StepFitGrid = struct{ EagerOpUS, HandoffMS []float64 }{
	EagerOpUS: []float64{8, 10, 12, 15, 20},
	HandoffMS: []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 5},
}

// FitStepOverheads chooses, on the tuning rows alone, the host cost of one eager
// operator (Overheads.EagerOpUS) and the training process's work per DataLoader batch
// (pipeline.DataLoaderHandoffMS) with the least mean absolute log error of the
// predicted steps, over StepFitGrid; base holds every other figure.
func FitStepOverheads(timer predictor.LayerTimer, base predictor.Overheads, mem predictor.MemoryModel, cat interface {
	GPU(string) (hw.GPU, error)
}, rows []StepBatchRow) (StepOverheadsFit, error) {
	var tuning []StepBatchRow
	for _, r := range rows {
		if r.Set == "tuning" {
			tuning = append(tuning, r)
		}
	}
	if len(tuning) == 0 {
		return StepOverheadsFit{}, fmt.Errorf("step_batch.csv has no tuning rows")
	}
	best, bestErr := StepOverheadsFit{SmallKernelUS: base.SmallKernelUS}, math.Inf(1)
	work := make([]StepBatchRow, len(tuning))
	for _, op := range StepFitGrid.EagerOpUS {
		o := base
		o.EagerOpUS = op
		eng := predictor.NewEngine(timer, o, mem)
		for _, handoff := range StepFitGrid.HandoffMS {
			copy(work, tuning)
			if err := PredictStepBatch(eng, cat, work, handoff); err != nil {
				return StepOverheadsFit{}, err
			}
			logErr, mape := 0.0, 0.0
			for _, r := range work {
				logErr += math.Abs(math.Log(r.Predicted / r.Measured))
				mape += math.Abs(r.ErrorPct)
			}
			if logErr < bestErr-1e-12 {
				bestErr = logErr
				best.EagerOpUS, best.HandoffMS, best.TuningMAPEPct = op, handoff, mape/float64(len(work))
			}
		}
	}
	return best, nil
}
