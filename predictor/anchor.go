package predictor

import (
	"math"
	"slices"
	"sort"
)

// Anchored is the source of a point whose step is predicted and then scaled through
// whole training steps measured of the same model on the same GPU under the same
// settings (Request.Anchors): the curve keeps its predicted shape but passes through
// the measurements. A point at a measured per-GPU batch is Measured.
const Anchored Source = "anchored"

// anchor is what a curve's measured whole steps do to it: at each measured per-GPU
// batch the one-GPU step is the measurement; between two of them the prediction is
// scaled by their measured/predicted ratios interpolated in log-batch, and beyond the
// outermost by that one's ratio.
type anchor struct {
	batches []int     // per-GPU batches, ascending, each once
	logB    []float64 // their logarithms
	ratio   []float64 // measured / predicted one-GPU step at each
	errPct  []float64 // the measurement's spread, ± percent of its median
}

// anchorSteps is each measured per-GPU batch of steps once, ascending, that fits in
// memory (perGPUMax per GPU; -1: unknown, all fit): the median of the medians measured
// there, its spread the larger of their median spread and half their range. steps is
// not modified.
func anchorSteps(steps []MeasuredStep, perGPUMax int) []MeasuredStep {
	if len(steps) == 0 {
		return nil
	}
	byBatch := map[int][]MeasuredStep{}
	for _, s := range steps {
		if s.PerGPUBatch < 1 || !(s.StepMS > 0) || (perGPUMax >= 0 && s.PerGPUBatch > perGPUMax) {
			continue
		}
		byBatch[s.PerGPUBatch] = append(byBatch[s.PerGPUBatch], s)
	}
	out := make([]MeasuredStep, 0, len(byBatch))
	for _, same := range byBatch {
		m := same[0]
		if len(same) > 1 {
			ms, spreads := make([]float64, len(same)), make([]float64, len(same))
			for i, s := range same {
				ms[i], spreads[i] = s.StepMS, s.SpreadMS
			}
			m.StepMS = median(ms)
			m.SpreadMS = math.Max(median(spreads), (slices.Max(ms)-slices.Min(ms))/2)
		}
		m.PredictedMS = 0
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PerGPUBatch < out[j].PerGPUBatch })
	return out
}

// median is the median of xs (not empty), which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// anchorBatches is the per-GPU batches of steps (from anchorSteps).
func anchorBatches(steps []MeasuredStep) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.PerGPUBatch
	}
	return out
}

// newAnchor is the anchor of steps (from anchorSteps, not empty) against the one-GPU
// steps that predicted gives at their batches, and fills each step's PredictedMS. It is
// nil when none of them can be read against a prediction.
func newAnchor(steps []MeasuredStep, predicted func(b int) float64) *anchor {
	a := &anchor{}
	for i := range steps {
		s := &steps[i]
		p := predicted(s.PerGPUBatch)
		if !(p > 0) {
			continue
		}
		s.PredictedMS = p
		a.batches = append(a.batches, s.PerGPUBatch)
		a.logB = append(a.logB, math.Log(float64(s.PerGPUBatch)))
		a.ratio = append(a.ratio, s.StepMS/p)
		a.errPct = append(a.errPct, 100*s.SpreadMS/s.StepMS)
	}
	if len(a.batches) == 0 {
		return nil
	}
	return a
}

// at is the measured/predicted ratio at per-GPU batch b, and whether b is a measured
// batch (errPct then its measurement's spread, ± percent).
func (a *anchor) at(b int) (ratio float64, measured bool, errPct float64) {
	i, found := slices.BinarySearch(a.batches, b)
	switch {
	case found:
		return a.ratio[i], true, a.errPct[i]
	case i == 0:
		return a.ratio[0], false, 0
	case i == len(a.batches):
		return a.ratio[i-1], false, 0
	}
	f := (math.Log(float64(b)) - a.logB[i-1]) / (a.logB[i] - a.logB[i-1])
	return a.ratio[i-1] + f*(a.ratio[i]-a.ratio[i-1]), false, 0
}

// ratioAt is at's ratio alone.
func (a *anchor) ratioAt(b int) float64 {
	r, _, _ := a.at(b)
	return r
}
