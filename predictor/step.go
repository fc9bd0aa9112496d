package predictor

import (
	"math"
	"sync"

	"cnntime/predictor/cnn"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// stepTable holds one network's training step on one device at one precision and
// policy, indexed by per-GPU batch size (index 0 unused).
type stepTable struct {
	mu         sync.Mutex
	stepMS     []float64 // the whole step: kernels as the host issues them, update, host overhead
	gpuMS      []float64 // the GPU's busy time: kernels and update
	backwardMS []float64 // the backward kernels' time, under which the all-reduce hides
	source     []Source  // the least trusted source among the layer kernels
	relErr     []float64 // expected relative error of stepMS, a fraction
}

// kernelSeq is one kernel launch of the step, in issue order: which layer and phase
// it is (layer -1: one of the framework's per-tensor operators of no layer), which timing, and
// how long the host takes to issue it.
type kernelSeq struct {
	layer    int
	phase    measure.Phase
	timing   int
	issueUS  float64
	backward bool
}

// stepPlan is a training step's kernels at some batch sizes: the distinct
// configuration phases timed at each batch, and the kernel launches that run, in
// issue order. Both the step table (fill) and Explain compose a step from one.
type stepPlan struct {
	batches []int
	timings [][]kernels.Estimate // per distinct configuration × phase, per batch
	seq     []kernelSeq          // the launches that run a kernel, in issue order
	// update and updateIssue are the optimizer step's GPU time and host issue time
	// where it is not a list of operators in seq (0 with ForwardBackwardOnly).
	update, updateIssue float64
	// bookkeepingMS is the GPU time of the framework's per-tensor operators in seq
	// that belong to no layer (layer -1): zero_grad, gradient accumulation, an
	// optimizer's per-tensor loop. Batch norm's counters are their layer's forward.
	bookkeepingMS float64
	// syncAt is the index in seq before which the host waits for the GPU (the
	// script's loss.item() after the forward pass); -1: no sync inside the step.
	syncAt int
}

// plan times req's kernels at the per-GPU batches (each distinct configuration ×
// phase once, over every batch) and lists the launches in issue order: forward
// through the layers, backward in reverse. Which phases run a kernel is the request's
// rule (for PyTorch, cnn.Layer.Phases: no data gradient for a layer on the image,
// which does not require grad, none for a view); a phase whose time is zero at the
// first and the last batch runs none (a view, a parameter-free weight gradient).
func (e *Engine) plan(req *Request, batches []int) stepPlan {
	net := req.Network
	dev := kernels.Device{GPU: req.GPU, Key: req.DeviceKey}
	timer := e.timerFor(req)
	p := stepPlan{batches: batches, syncAt: -1}

	type timingKey struct {
		cfg   cnn.Config
		phase measure.Phase
	}
	index := make(map[timingKey]int)
	timing := func(cfg cnn.Config, phase measure.Phase) int {
		k := timingKey{cfg, phase}
		if i, ok := index[k]; ok {
			return i
		}
		out := make([]kernels.Estimate, len(batches))
		timer.Times(dev, kernels.Request{
			Config:    cfg,
			Phase:     phase,
			Precision: KernelPrecision(req.Precision, cfg.Op, req.GPU),
			Policy:    req.Policy,
		}, batches, out)
		index[k] = len(p.timings)
		p.timings = append(p.timings, out)
		return len(p.timings) - 1
	}
	add := func(layer int, phase measure.Phase, issueUS float64) {
		ti := timing(net.Layers[layer].Config, phase)
		est := p.timings[ti]
		if !(est[0].MS > 0 || est[len(est)-1].MS > 0) {
			return // no kernel runs in this phase
		}
		p.seq = append(p.seq, kernelSeq{layer, phase, ti, issueUS, phase != measure.Forward})
	}
	// The framework's per-tensor operators take the same time at every batch: a
	// timing of their own each, trusted as the overheads are (layer -1 in the sequence).
	var bk bookkeeping
	if !e.over.Synchronous {
		bk = e.over.bookkeeping(req, e.over.streamGBs(req))
	}
	// A layer's own operators (batch norm's counter) count as its forward pass; the
	// others (layer -1) as the optimizer.
	addOps := func(layer int, ops []smallOp) {
		for _, op := range ops {
			out := make([]kernels.Estimate, len(batches))
			for i := range out {
				out[i] = kernels.Estimate{MS: op.gpuMS, Source: kernels.Measured, RelErr: e.over.OverheadRelErr}
			}
			p.timings = append(p.timings, out)
			phase := measure.Phase("")
			if layer >= 0 {
				phase = measure.Forward
			} else {
				p.bookkeepingMS += op.gpuMS
			}
			p.seq = append(p.seq, kernelSeq{layer, phase, len(p.timings) - 1, op.issueUS, op.backward})
		}
	}
	for i := range net.Layers {
		if ps := req.Kernels.Phases(&net.Layers[i]); len(ps) > 0 && ps[0] == measure.Forward {
			add(i, measure.Forward, e.over.LaunchForwardUS)
		}
		addOps(i, bk.forwardAfter[i])
	}
	if req.Script.Cost().SyncAfterForward {
		p.syncAt = len(p.seq)
	}
	addOps(-1, bk.zeroGrad)
	for i := len(net.Layers) - 1; i >= 0; i-- {
		for _, ph := range req.Kernels.Phases(&net.Layers[i]) {
			if ph != measure.Forward {
				add(i, ph, e.over.LaunchBackwardUS)
			}
		}
		addOps(-1, bk.backwardAfter[i])
	}
	addOps(-1, bk.optimizer)
	p.update, p.updateIssue = bk.updateMS, bk.updateIssueMS
	return p
}

// fill computes t for per-GPU batches 1..size-1 (the arrays have size entries).
func (e *Engine) fill(t *stepTable, req Request, size int) {
	batches := make([]int, size-1)
	for i := range batches {
		batches[i] = i + 1
	}
	p := e.plan(&req, batches)
	e.compose(t, &p)
}

// compose fills t from the plan p: entry i+1 of each array is the step at
// p.batches[i] (entry 0 is unused).
//
// The step is simulated as the host issuing kernels into one stream: the host spends
// LaunchForwardUS per forward kernel (Python module call, dispatcher, launch) and
// LaunchBackwardUS per backward kernel (autograd engine, launch); each kernel starts
// when both it has been issued and the previous kernel has finished. With small
// batches the GPU waits on the host (launch-bound); with large ones the host runs
// ahead and its cost disappears. The SGD update follows, then StepMS of host work per
// step (optimizer bookkeeping, zeroing gradients, synchronisation).
func (e *Engine) compose(t *stepTable, p *stepPlan) {
	size := len(p.batches) + 1
	t.stepMS = make([]float64, size)
	t.gpuMS = make([]float64, size)
	t.backwardMS = make([]float64, size)
	t.source = make([]Source, size)
	t.relErr = make([]float64, size)
	gpuEnd := make([]float64, size) // when the GPU finishes the kernels so far, ms
	errSum := make([]float64, size) // Σ kernel time × its relative error
	for b := range t.source {
		t.source[b] = Measured
	}
	// The issue simulation runs over every launch; the sums run over distinct
	// configuration phases, weighted by how often each is launched.
	type uses struct{ total, backward int }
	used := make([]uses, len(p.timings))
	hostMS := 0.0                   // the host's issue time of the kernels so far
	waited := make([]float64, size) // how long the host has waited for the GPU at a sync, per batch
	for j, k := range p.seq {
		if j == p.syncAt {
			// The script reads a GPU value here (loss.item()): the host waits for
			// every kernel issued so far before it issues the next.
			for b := 1; b < size; b++ {
				waited[b] = math.Max(waited[b], gpuEnd[b]-hostMS)
			}
		}
		est := p.timings[k.timing]
		hostMS += k.issueUS / 1000
		used[k.timing].total++
		if k.backward {
			used[k.timing].backward++
		}
		for i := range est {
			end := gpuEnd[i+1]
			if h := hostMS + waited[i+1]; end < h {
				end = h // the GPU waits for the host to issue this kernel
			}
			gpuEnd[i+1] = end + est[i].MS
		}
	}
	for ti, u := range used {
		if u.total == 0 {
			continue
		}
		n, nb := float64(u.total), float64(u.backward)
		for i, es := range p.timings[ti] {
			b := i + 1
			t.gpuMS[b] += n * es.MS
			t.backwardMS[b] += nb * es.MS
			errSum[b] += n * es.MS * es.RelErr
			if es.Source != t.source[b] && sourceRank(es.Source) > sourceRank(t.source[b]) {
				t.source[b] = es.Source
			}
		}
	}

	update, updateIssue := p.update, p.updateIssue
	for b := 1; b < size; b++ {
		layers := t.gpuMS[b]
		end := math.Max(gpuEnd[b], hostMS+waited[b]+updateIssue) + update
		if e.over.Synchronous {
			end = hostMS + layers + updateIssue + update // the host waits for every kernel
		}
		t.stepMS[b] = end + e.over.StepMS
		t.gpuMS[b] += update
		// Kernel errors are correlated (one fitted model), so they add linearly; the
		// host and update part of the step carries the overhead model's own error.
		rest := t.stepMS[b] - layers
		t.relErr[b] = (errSum[b] + rest*e.over.OverheadRelErr) / t.stepMS[b]
	}
}

// needsDataGradient reports whether the backward pass computes the gradient with
// respect to l's input: not when every input is the image, which does not require grad.
func needsDataGradient(l *cnn.Layer) bool {
	for _, in := range l.Inputs {
		if in >= 0 {
			return true
		}
	}
	return false
}

// sourceRank orders sources from most (0) to least trusted.
func sourceRank(s Source) int {
	switch s {
	case Measured:
		return 0
	case Interpolated:
		return 1
	case Transferred:
		return 2
	}
	return 3
}
