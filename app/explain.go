package app

import (
	"context"
	"fmt"

	"cnntime/predictor"
)

// Explain says why model's iteration time on target t at the global batch size batch
// is what Curves predicts for the same run: every layer's kernel times, the step split
// by phase and by kind of layer, the slowest layers (predictor.Explanation). q
// describes the run as it does for Curves (precision, policy, run data, nodes and
// their network, epochs and images); its Models, Targets and Batches are not used. A
// zero q.Run is one epoch of the dataset's images (or of one batch without a dataset).
//
// The model and target are resolved as Curves resolves them (a custom model added
// with AddNetwork, a zoo model built at the run data's input size and classes; the
// target's own measured device or the first measured device of its GPU; a measured
// CPU's own step model), so the explanation's phases add up to the curve's IterMS at
// that batch. A batch that does not fit in memory is a *predictor.FitError naming the
// largest that does.
func (e *Engine) Explain(ctx context.Context, q Query, model string, t Target, batch int) (predictor.Explanation, error) {
	if err := ctx.Err(); err != nil {
		return predictor.Explanation{}, fmt.Errorf("explanation cancelled: %w", err)
	}
	if err := q.Data.Check(); err != nil {
		return predictor.Explanation{}, err
	}
	if batch <= 0 {
		return predictor.Explanation{}, fmt.Errorf("batch size %d: must be positive", batch)
	}
	n, err := e.networkFor(model, q.Data)
	if err != nil {
		return predictor.Explanation{}, err
	}
	if k := max(t.Machine.GPUCount, 1) * nodesOn(&q, t); batch < k {
		return predictor.Explanation{}, fmt.Errorf("batch size %d on %s: data-parallel training over %d GPUs needs a batch of at least %d", batch, t.Machine.ID, k, k)
	} else if batch%k != 0 {
		// Each GPU runs the same batch: an uneven split would explain a step of
		// ceil(batch/k) images per GPU as if it trained batch images.
		lo := batch / k * k
		return predictor.Explanation{}, Inputf("batch size %d on %s does not split evenly over its %d data-parallel GPUs: use %d or %d (%d or %d images per GPU)",
			batch, t.Machine.ID, k, lo, lo+k, lo/k, lo/k+1)
	}
	if q.Run == (predictor.Run{}) {
		q.Run = predictor.Run{Epochs: 1, Images: max(q.Data.Images(), batch)}
	}
	if _, err := capToImages([]int{batch}, q.Run.Images, false); err != nil {
		return predictor.Explanation{}, err
	}
	r, pred, err := e.request(&q, n, t, []int{batch})
	if err != nil {
		return predictor.Explanation{}, err
	}
	x, err := pred.Explain(r, batch)
	if err != nil {
		return x, err
	}
	if t.cpu != nil {
		x.Bound = cpuBound(x.Bound)
	}
	// The host's share is the step less its parts: a rounding error below zero is none.
	if x.Phases.HostMS < 0 && x.Phases.HostMS > -1e-6 {
		x.Phases.HostMS = 0
	}
	// A measured step is a GPU's own: the prediction beside it leaves out the wait for
	// the loader and the all-reduce with other GPUs.
	// Each measured step has the prediction at its own per-GPU batch beside it, under
	// the same request (Explain sets its batch), where that batch runs here.
	x.Measured = e.measuredSteps(t, x.Model, x.Precision, x.PerGPUBatch)
	k := batch / x.PerGPUBatch
	for i, m := range x.Measured {
		if m.PerGPUBatch == x.PerGPUBatch {
			x.Measured[i].PredictedMS = gpuStepMS(&x)
		} else if B := m.PerGPUBatch * k; B <= q.Run.Images {
			if xb, err := pred.Explain(r, B); err == nil {
				x.Measured[i].PredictedMS = gpuStepMS(&xb)
			}
		}
	}
	// What predict, best and the window give here, where the steps anchor the curve.
	if anchors := e.anchorsFor(t, &r); len(anchors) > 0 {
		r.Anchors, r.Batches = anchors, []int{batch}
		if c, err := pred.Curve(r); err == nil && len(c.Points) == 1 && c.Points[0].Fits {
			x.AnchoredMS, x.AnchoredSource, x.AnchoredTo = c.Points[0].IterMS, c.Points[0].Source, len(c.Anchors)
		}
	}
	return x, nil
}

// gpuStepMS is an explanation's step as one GPU runs it, beside which a measured step is
// read: without the wait for the loader and the all-reduce with other GPUs.
func gpuStepMS(x *predictor.Explanation) float64 {
	return x.IterMS - x.Phases.LoaderMS - x.Phases.CommunicationMS
}
