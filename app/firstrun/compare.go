package firstrun

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"cnntime/app"
	"cnntime/db"
	"cnntime/gpu"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// layerKey is one layer phase at one batch size and kernel precision.
type layerKey struct {
	config    string
	phase     measure.Phase
	batch     int
	precision measure.Precision
}

// timesOf are a device's OK heuristic-policy kernel times in the cache, by layer phase.
func timesOf(ctx context.Context, d *db.DB, device string) (map[layerKey]measure.Measurement, error) {
	ms, err := d.Measurements(ctx, device, nil)
	if err != nil {
		return nil, err
	}
	out := map[layerKey]measure.Measurement{}
	for _, m := range ms {
		if m.Status == measure.OK && m.Policy == measure.Heuristic {
			out[layerKey{m.ConfigKey, m.Phase, m.Batch, m.Precision}] = m
		}
	}
	return out, nil
}

// compare puts the worker's layer times beside PyTorch's, and PyTorch's measured steps
// beside the steps predicted from the worker's layers.
func (r *run) compare(ctx context.Context) error {
	worker, err := timesOf(ctx, r.cache, r.dev.Key)
	if err != nil {
		return err
	}
	pytorch, err := timesOf(ctx, r.cache, r.dev.Key+measure.PyTorchGPUSuffix)
	if err != nil {
		return err
	}
	r.rep.Layers, r.rep.Kinds = LayerRatios(worker, pytorch)
	steps, err := r.cache.Steps(ctx, db.StepFilter{DeviceKey: r.dev.Key})
	if err != nil {
		return err
	}
	var measured []measure.Step
	for _, s := range steps {
		if s.Status == measure.OK && strings.HasPrefix(s.Framework, measure.FrameworkPyTorch) {
			measured = append(measured, s)
		}
	}
	r.rep.Steps, err = r.predictSteps(ctx, measured, worker, pytorch)
	return err
}

// LayerRatios pairs the layer phases both measured (worker ÷ PyTorch) and sums them up
// by layer kind and precision, the median ratio of each.
func LayerRatios(worker, pytorch map[layerKey]measure.Measurement) ([]LayerRatio, []RatioSummary) {
	var rows []LayerRatio
	for k, w := range worker {
		p, ok := pytorch[k]
		if !ok || !(p.MedianMS > 0) || !(w.MedianMS > 0) {
			continue
		}
		op, _, _ := strings.Cut(k.config, ":")
		rows = append(rows, LayerRatio{Config: k.config, Op: op, Phase: k.phase, Batch: k.batch, Precision: k.precision,
			WorkerMS: w.MedianMS, PyTorchMS: p.MedianMS, Ratio: w.MedianMS / p.MedianMS, Notes: w.Notes})
	}
	slices.SortFunc(rows, func(a, b LayerRatio) int {
		return cmp.Or(cmp.Compare(a.Op, b.Op), cmp.Compare(a.Precision, b.Precision), cmp.Compare(a.Config, b.Config),
			cmp.Compare(a.Batch, b.Batch), cmp.Compare(a.Phase, b.Phase))
	})
	type kind struct {
		op   string
		prec measure.Precision
	}
	groups := map[kind][]LayerRatio{}
	var order []kind
	for _, row := range rows {
		k := kind{row.Op, row.Precision}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], row)
	}
	var sums []RatioSummary
	for _, k := range order {
		g := groups[k]
		ratios := make([]float64, len(g))
		s := RatioSummary{Op: k.op, Precision: k.prec, Layers: len(g)}
		for i, row := range g {
			ratios[i] = row.Ratio
			s.WorkerMS += row.WorkerMS
			s.PyTorchMS += row.PyTorchMS
		}
		s.MedianRatio, _ = gpu.Summarize(ratios)
		var long []float64
		for _, row := range g {
			if row.WorkerMS >= LongKernelMS {
				long = append(long, row.Ratio)
			}
		}
		s.LongLayers = len(long)
		if len(long) > 0 {
			s.LongMedianRatio, _ = gpu.Summarize(long)
		}
		sums = append(sums, s)
	}
	return rows, sums
}

// predictSteps predicts each measured step from the worker's layers with cnntime's step
// model, and sums the worker's and PyTorch's layers of the step as they are.
func (r *run) predictSteps(ctx context.Context, measured []measure.Step, worker, pytorch map[layerKey]measure.Measurement) ([]StepComparison, error) {
	if len(measured) == 0 {
		return nil, nil
	}
	eng, err := app.NewEngine(ctx, r.cache)
	if err != nil {
		return nil, err
	}
	g := app.GPUOfDevice(eng.Catalog(), r.dev)
	pred := predictor.NewEngine(eng.Kernels(), predictor.DefaultOverheads, predictor.DefaultMemoryModel)
	cpu := host.ReferenceCPU
	var out []StepComparison
	for _, s := range measured {
		net, err := cnn.Build(s.Model, cnn.Options{Resolution: r.o.Input})
		if err != nil {
			continue // not a zoo model: nothing to predict it with
		}
		c, err := pred.Curve(predictor.Request{Network: net, Machine: hw.Machine{ID: "first-run", GPUCount: 1, CPU: &cpu}, GPU: g,
			DeviceKey: r.dev.Key, Precision: s.Precision, Policy: measure.Heuristic, Batches: []int{s.Batch},
			Run: predictor.Run{Epochs: 1, Images: s.Batch}})
		if err != nil {
			return nil, fmt.Errorf("predict %s at batch %d: %w", s.Model, s.Batch, err)
		}
		if len(c.Points) != 1 {
			continue
		}
		p := c.Points[0].IterMS
		out = append(out, StepComparison{Model: s.Model, Batch: s.Batch, Precision: s.Precision, MeasuredMS: s.MedianMS,
			Framework: s.Framework, PredictedMS: p, ErrorPct: 100 * (p - s.MedianMS) / s.MedianMS,
			WorkerLayersMS: layerSum(net, s.Batch, s.Precision, g, worker), PyTorchLayerMS: layerSum(net, s.Batch, s.Precision, g, pytorch)})
	}
	slices.SortFunc(out, func(a, b StepComparison) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Precision, b.Precision), cmp.Compare(a.Batch, b.Batch))
	})
	return out, nil
}

// layerSum adds up the kernels a PyTorch step of net runs at batch (cnn.Layer.Phases,
// each in the kernel precision the training precision gives it on g) from times; 0
// when one is missing.
func layerSum(net *cnn.Network, batch int, prec measure.Precision, g hw.GPU, times map[layerKey]measure.Measurement) float64 {
	sum := 0.0
	for i := range net.Layers {
		l := &net.Layers[i]
		for _, ph := range l.Phases() {
			m, ok := times[layerKey{l.Config.Key(), ph, batch, predictor.KernelPrecision(prec, l.Config.Op, g)}]
			if !ok {
				return 0
			}
			sum += m.MedianMS
		}
	}
	return sum
}
