package predictor

import "cnntime/predictor/kernels"

// phaseTimer times one of a plan's kernels (a layer configuration × phase on the
// plan's device) at any batch sizes. A table's plan keeps one per timing and times
// its kernels at one block of batch sizes after another (stepPlan.timeAt), so that
// what does not depend on the batch is worked out once per kernel, not per block.
type phaseTimer interface {
	TimesInto(batches []int, out kernels.Timings)
}

// preparingTimer is a LayerTimer that works out a request's batch-independent figures
// once (kernels.Model.Prepare).
type preparingTimer interface {
	Prepare(dev kernels.Device, req kernels.Request) kernels.Prepared
}

// phaseTimerOf is the phaseTimer of req on dev as timer times it: prepared where
// timer prepares (itself, or under the layout's transposes), in p's slabs of prepared
// kernels, else a call of timer at each block.
func (p *stepPlan) phaseTimerOf(timer LayerTimer, dev kernels.Device, req kernels.Request) phaseTimer {
	switch t := timer.(type) {
	case preparingTimer:
		k := &fromSlab(&p.kernelSlabs, &kernelSlabPool, 1)[0]
		*k = preparedKernel{Prepared: t.Prepare(dev, req)}
		return k
	case layoutTimer:
		if inner, ok := t.inner.(preparingTimer); ok {
			k := &fromSlab(&p.kernelSlabs, &kernelSlabPool, 1)[0]
			t.prepare(k, inner, dev, req)
			return k
		}
	}
	if _, ok := timer.(intoTimer); !ok && p.scratch == nil {
		p.scratch = estimateSlabPool.Get().(*[]kernels.Estimate)
	}
	return timerCall{timer: timer, dev: dev, req: req, scratch: p.scratch}
}

// preparedKernel is a prepared request (kernels.Prepared), with the layout
// transposes' perImageMS per image added to its estimates where transposes (a
// layoutTimer's, layoutTimer.prepare).
type preparedKernel struct {
	kernels.Prepared
	perImageMS float64
	transposes bool
}

func (k *preparedKernel) TimesInto(batches []int, out kernels.Timings) {
	k.Prepared.TimesInto(batches, out)
	if k.transposes {
		addTransposes(batches, out, k.perImageMS)
	}
}

// timerCall is a phaseTimer that calls its LayerTimer at every block of batch sizes.
type timerCall struct {
	timer   LayerTimer
	dev     kernels.Device
	req     kernels.Request
	scratch *[]kernels.Estimate // the Estimates of a timer that is no intoTimer
}

func (c timerCall) TimesInto(batches []int, out kernels.Timings) {
	if t, ok := c.timer.(intoTimer); ok {
		t.TimesInto(c.dev, c.req, batches, out)
		return
	}
	if cap(*c.scratch) < len(batches) {
		*c.scratch = make([]kernels.Estimate, len(batches))
	}
	est := (*c.scratch)[:len(batches)]
	c.timer.Times(c.dev, c.req, batches, est)
	for i := range est {
		out.MS[i], out.RelErr[i], out.Rank[i] = est[i].MS, est[i].RelErr, est[i].Source.Rank()
	}
}
