package app

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"cnntime/app/numfmt"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// stepKey is how the engine files the cache's measured whole steps: by device (a
// measured device's key, or gpu:<catalog id>), model and precision.
type stepKey struct {
	device    string
	model     string
	precision measure.Precision
}

// fileSteps keeps the cache's successful whole-step measurements by stepKey, for
// explanations to show beside their prediction.
func fileSteps(steps []measure.Step) map[stepKey][]measure.Step {
	out := map[stepKey][]measure.Step{}
	for _, s := range steps {
		if s.Status != measure.OK || !(s.MedianMS > 0) {
			continue
		}
		k := stepKey{s.DeviceKey, s.Model, s.Precision}
		out[k] = append(out[k], s)
	}
	return out
}

// maxMeasuredSteps bounds the measured steps an explanation lists: those nearest its
// per-GPU batch.
const maxMeasuredSteps = 8

// measuredSteps is what the cache measured of model's whole steps on t's GPU (its own
// device for a local machine; else its GPU's measured device and the catalog GPU's
// imported rows) at precision: the maxMeasuredSteps nearest perGPUBatch, in order of
// batch. Explain puts the prediction at each one's batch beside it.
func (e *Engine) measuredSteps(t Target, model string, precision measure.Precision, perGPUBatch int) []predictor.MeasuredStep {
	rows := slices.Clone(e.stepRows(t, model, precision)) // sorted below: the engine's are shared
	if len(rows) == 0 {
		return nil
	}
	distance := func(b int) int { return max(b, perGPUBatch) * 1024 / max(min(b, perGPUBatch), 1) }
	sort.SliceStable(rows, func(i, j int) bool {
		if di, dj := distance(rows[i].Batch), distance(rows[j].Batch); di != dj {
			return di < dj
		}
		return rows[i].At.After(rows[j].At) // the newest of a batch first
	})
	rows = rows[:min(len(rows), maxMeasuredSteps)]
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Batch < rows[j].Batch })
	out := make([]predictor.MeasuredStep, len(rows))
	for i, s := range rows {
		out[i] = measuredStep(s)
	}
	return out
}

// stepRows is the cache's successful measured whole steps of model on t's GPU at
// precision (its own device for a local machine; else its GPU's measured device and
// the catalog GPU's imported gpu:<id> rows), as the engine keeps them: not to be
// modified.
func (e *Engine) stepRows(t Target, model string, precision measure.Precision) []measure.Step {
	if t.DeviceKey != "" || t.cpu != nil {
		return e.steps[stepKey{t.DeviceKey, model, precision}]
	}
	mine, imported := e.steps[stepKey{e.measured[t.Machine.GPUID], model, precision}], e.steps[stepKey{"gpu:" + t.Machine.GPUID, model, precision}]
	if len(mine) == 0 || e.measured[t.Machine.GPUID] == "" {
		return imported
	}
	if len(imported) == 0 {
		return mine
	}
	return append(append(make([]measure.Step, 0, len(mine)+len(imported)), mine...), imported...)
}

// measuredStep is s as an explanation and a curve read it.
func measuredStep(s measure.Step) predictor.MeasuredStep {
	m := predictor.MeasuredStep{PerGPUBatch: s.Batch, StepMS: s.MedianMS, SpreadMS: s.SpreadMS, Framework: s.Framework, Source: s.Source}
	if !s.At.IsZero() {
		m.MeasuredAt = s.At.UTC().Format(time.DateOnly)
	}
	return m
}

// MeasuredStepText says one measured step for the explain table and the Why tab:
// "per-GPU batch 256: 300 ms ±3 ms (pytorch 2.8.0 cnntime_train.py; lab, 2026-11-01);
// predicted 164 ms, 45% less".
func MeasuredStepText(m predictor.MeasuredStep) string {
	s := fmt.Sprintf("per-GPU batch %s: %s", numfmt.Count(int64(m.PerGPUBatch)), numfmt.MS(m.StepMS))
	if m.SpreadMS > 0 {
		s += " ±" + numfmt.MS(m.SpreadMS)
	}
	var from []string
	for _, f := range []string{Printable(m.Framework), Printable(m.Source), m.MeasuredAt} {
		if f != "" {
			from = append(from, f)
		}
	}
	if len(from) > 0 {
		s += " (" + strings.Join(from, "; ") + ")"
	}
	if m.PredictedMS > 0 {
		d := (m.PredictedMS - m.StepMS) / m.StepMS * 100
		switch {
		case math.Abs(d) < 0.5:
			s += fmt.Sprintf("; predicted %s, the same", numfmt.MS(m.PredictedMS))
		case d < 0:
			s += fmt.Sprintf("; predicted %s, %.0f%% less", numfmt.MS(m.PredictedMS), -d)
		default:
			s += fmt.Sprintf("; predicted %s, %.0f%% more", numfmt.MS(m.PredictedMS), d)
		}
	}
	return s
}
