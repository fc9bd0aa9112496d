package predictor

import (
	"math"
	"sync"

	"cnntime/predictor/cnn"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// stepTable is the cache entry of one network's training step on one device at one
// precision and policy: its arrays, replaced by larger ones when a request needs more
// batch sizes (mu held).
type stepTable struct {
	mu     sync.Mutex
	arrays *stepArrays

	// used is the engine's clock at the table's last use and size the bytes the
	// engine counts it for; both are guarded by the engine's mutex.
	used uint64
	size int
}

// stepArrays are a training step's figures indexed by per-GPU batch size (index 0
// unused). They are never changed once filled, so a curve reads them without a lock
// while a larger table is being filled.
type stepArrays struct {
	stepMS     []float64 // the whole step: kernels as the host issues them, update, host overhead
	gpuMS      []float64 // the GPU's busy time: kernels and update
	backwardMS []float64 // the backward kernels' time, under which the all-reduce hides
	source     []Source  // the least trusted source among the layer kernels
	relErr     []float64 // expected relative error of stepMS, a fraction
}

// bytes is what a's arrays take; a may be nil.
func (a *stepArrays) bytes() int {
	if a == nil {
		return 0
	}
	const perBatch = 4*8 + 16 // four float64 arrays and a Source (a string header)
	return len(a.stepMS) * perBatch
}

// kernelSeq is one kernel launch of the step, in issue order: which layer and phase
// it is (layer -1: one of the framework's per-tensor operators of no layer), which
// timing, and how long the host takes to issue it.
type kernelSeq struct {
	layer    int
	phase    measure.Phase
	timing   int
	issueUS  float64
	backward bool
	fused    int // the stack's fused kernel (index in the plan's fusion) it is; -1: a layer's own
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
	// fusion is the stack's fused kernels; hostStepMS the stack's host work once per
	// step (Overheads.stepHostMS).
	fusion     fusionPlan
	hostStepMS float64
	// bandFloor is the least relative error of the step: for a GPU of a family no
	// published run tunes, estimated (not measured on this device), the largest error
	// of its held-out rows (kernels.Calibration.UntunedBand); 0 elsewhere.
	bandFloor float64
	// slabs hold the timings; release gives them back for the next plan.
	slabs []*[]kernels.Estimate
}

// estimateSlabs are reused backing arrays of plans' timings: a table's fill times
// every configuration phase at a thousand batch sizes, megabytes that would otherwise
// be garbage after every fill.
var estimateSlabs = sync.Pool{New: func() any {
	s := make([]kernels.Estimate, 0, 64*(fillChunk+2))
	return &s
}}

// estimates returns n estimates from p's slabs.
func (p *stepPlan) estimates(n int) []kernels.Estimate {
	if len(p.slabs) > 0 {
		s := p.slabs[len(p.slabs)-1]
		if cap(*s)-len(*s) >= n {
			*s = (*s)[:len(*s)+n]
			return (*s)[len(*s)-n:]
		}
	}
	s := estimateSlabs.Get().(*[]kernels.Estimate)
	if cap(*s) < n {
		big := make([]kernels.Estimate, 0, n)
		s = &big
	}
	*s = (*s)[:n]
	p.slabs = append(p.slabs, s)
	return *s
}

// release gives p's slabs back; p's timings must not be used after it.
func (p *stepPlan) release() {
	for _, s := range p.slabs {
		*s = (*s)[:0]
		estimateSlabs.Put(s)
	}
	p.slabs, p.timings = nil, nil
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
	month := req.Software.orDefault().Month
	p := stepPlan{batches: batches, syncAt: -1}
	if t, ok := e.timer.(untunedFamilies); ok && req.DeviceKey == "" {
		_, p.bandFloor = t.UntunedFamily(req.GPU)
	}

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
		out := p.estimates(len(batches))
		timer.Times(dev, kernels.Request{
			Config:       cfg,
			Phase:        phase,
			Precision:    KernelPrecision(req.Precision, cfg.Op, req.GPU),
			Policy:       req.Policy,
			LibraryMonth: month,
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
		p.seq = append(p.seq, kernelSeq{layer, phase, ti, issueUS, phase != measure.Forward, -1})
	}
	// The stack's fused kernels: one memory-bound pass each, timed from its traffic.
	type fusedKey struct {
		cfg   cnn.Config
		phase measure.Phase
		elems float64
	}
	fusedIndex := map[fusedKey]int{}
	p.fusion = fusion(req)
	addFused := func(k int, phase measure.Phase, issueUS float64) {
		fk := &p.fusion.kernels[k]
		elems := fk.fwdElems
		if phase != measure.Forward {
			elems = fk.bwdElems
		}
		if !(elems > 0) {
			return // applied inside the convolutions: no kernel of its own
		}
		if req.Framework.Compiles() && e.over.GeneratedKernelEfficiency > 0 {
			elems /= e.over.GeneratedKernelEfficiency // a generated kernel streams slower than a library's
		}
		cfg := net.Layers[fk.layers[0]].Config
		key := fusedKey{cfg, phase, elems}
		ti, ok := fusedIndex[key]
		if !ok {
			out := p.estimates(len(batches))
			timer.Times(dev, kernels.Request{Config: cfg, Phase: phase, Precision: KernelPrecision(req.Precision, cfg.Op, req.GPU),
				Policy: req.Policy, FusedElems: elems, LibraryMonth: month}, batches, out)
			ti = len(p.timings)
			fusedIndex[key] = ti
			p.timings = append(p.timings, out)
		}
		p.seq = append(p.seq, kernelSeq{fk.at, phase, ti, issueUS, phase != measure.Forward, k})
	}
	f := req.Framework.orDefault()
	launchF, launchB := e.over.LaunchForwardUS, e.over.LaunchBackwardUS
	switch {
	case f.CUDAGraphs():
		launchF, launchB = 0, 0 // replayed from a CUDA graph
	case f == Compiled:
		launchF = launchB // the generated wrapper issues each kernel from C++-level code, no module call
	}
	p.hostStepMS = e.over.stepHostMS(f)
	// The framework's per-tensor operators take the same time at every batch: a
	// timing of their own each, trusted as the overheads are.
	var bk bookkeeping
	if !e.over.Synchronous {
		bk = e.over.bookkeeping(req, e.over.streamGBs(req))
	}
	// A layer's own operators (batch norm's counter) count as its forward pass; the
	// others (layer -1) as the optimizer.
	addOps := func(layer int, ops []smallOp) {
		for _, op := range ops {
			out := p.estimates(len(batches))
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
			p.seq = append(p.seq, kernelSeq{layer, phase, len(p.timings) - 1, op.issueUS, op.backward, -1})
		}
	}
	for i := range net.Layers {
		if ps := req.Kernels.Phases(&net.Layers[i]); len(ps) > 0 && ps[0] == measure.Forward && !p.fusion.absorbed[i] {
			add(i, measure.Forward, launchF)
		}
		for _, k := range p.fusion.at[i] {
			addFused(k, measure.Forward, launchF)
		}
		addOps(i, bk.forwardAfter[i])
	}
	if req.Script.Cost().SyncAfterForward {
		p.syncAt = len(p.seq)
	}
	addOps(-1, bk.zeroGrad)
	for i := len(net.Layers) - 1; i >= 0; i-- {
		for _, k := range p.fusion.at[i] {
			addFused(k, measure.BackwardData, launchB)
		}
		if !p.fusion.absorbed[i] {
			for _, ph := range req.Kernels.Phases(&net.Layers[i]) {
				if ph != measure.Forward {
					add(i, ph, launchB)
				}
			}
		}
		addOps(-1, bk.backwardAfter[i])
	}
	addOps(-1, bk.optimizer)
	p.update, p.updateIssue = bk.updateMS, bk.updateIssueMS
	return p
}

// fillChunk is how many batch sizes fill plans at once: the plan holds an estimate
// per distinct configuration phase per batch, so a table of 65,536 batch sizes of a
// large network planned in one go would hold hundreds of megabytes.
const fillChunk = 1024

// fill computes the step for per-GPU batches 1..size-1 (arrays of size entries), a
// chunk of batches at a time. Every chunk decides which phases run a kernel as one
// plan over the whole table would: by their time at batch 1 and at the last batch.
func (e *Engine) fill(req Request, size int) *stepArrays {
	t := &stepArrays{
		stepMS:     make([]float64, size),
		gpuMS:      make([]float64, size),
		backwardMS: make([]float64, size),
		source:     make([]Source, size),
		relErr:     make([]float64, size),
	}
	last := size - 1
	batches := make([]int, 0, min(fillChunk, last)+2)
	for lo := 1; lo <= last; lo += fillChunk {
		hi := min(lo+fillChunk, size)
		batches = append(batches[:0], 1) // plan probes its first and last batch
		for b := lo; b < hi; b++ {
			batches = append(batches, b)
		}
		batches = append(batches, last)
		p := e.plan(&req, batches)
		e.compose(t, &p, 1, len(batches)-1)
		p.release()
	}
	return t
}

// compose fills the entries of t at the per-GPU batches p.batches[lo:hi] from the
// plan p (an array's entry b is the step at per-GPU batch b).
//
// The step is simulated as the host issuing kernels into one stream: the host spends
// LaunchForwardUS per forward kernel (Python module call, dispatcher, launch) and
// LaunchBackwardUS per backward kernel (autograd engine, launch); each kernel starts
// when both it has been issued and the previous kernel has finished. With small
// batches the GPU waits on the host (launch-bound); with large ones the host runs
// ahead and its cost disappears. The framework's per-tensor operators are kernels in
// the same stream (Request.Framework); a script that reads the loss after the forward
// pass makes the host wait there for the GPU. The update's fused part follows, then
// StepMS of host work per step.
func (e *Engine) compose(t *stepArrays, p *stepPlan, lo, hi int) {
	n := hi - lo
	gpuEnd := make([]float64, n) // when the GPU finishes the kernels so far, ms
	gpuMS := make([]float64, n)
	backwardMS := make([]float64, n)
	errSum := make([]float64, n) // Σ kernel time × its relative error
	source := make([]Source, n)
	for i := range source {
		source[i] = Measured
	}
	// The issue simulation runs over every launch; the sums run over distinct
	// configuration phases, weighted by how often each is launched.
	type uses struct{ total, backward int }
	used := make([]uses, len(p.timings))
	hostMS := 0.0                // the host's issue time of the kernels so far
	waited := make([]float64, n) // how long the host has waited for the GPU at a sync, per batch
	for j, k := range p.seq {
		if j == p.syncAt {
			// The script reads a GPU value here (loss.item()): the host waits for
			// every kernel issued so far before it issues the next.
			for i := range waited {
				waited[i] = math.Max(waited[i], gpuEnd[i]-hostMS)
			}
		}
		est := p.timings[k.timing][lo:hi]
		hostMS += k.issueUS / 1000
		used[k.timing].total++
		if k.backward {
			used[k.timing].backward++
		}
		for i := range est {
			end := gpuEnd[i]
			if h := hostMS + waited[i]; end < h {
				end = h // the GPU waits for the host to issue this kernel
			}
			gpuEnd[i] = end + est[i].MS
		}
	}
	for ti, u := range used {
		if u.total == 0 {
			continue
		}
		nt, nb := float64(u.total), float64(u.backward)
		for i, es := range p.timings[ti][lo:hi] {
			gpuMS[i] += nt * es.MS
			backwardMS[i] += nb * es.MS
			errSum[i] += nt * es.MS * es.RelErr
			if es.Source != source[i] && sourceRank(es.Source) > sourceRank(source[i]) {
				source[i] = es.Source
			}
		}
	}

	update, updateIssue := p.update, p.updateIssue
	for i := range n {
		b := p.batches[lo+i]
		layers := gpuMS[i]
		end := math.Max(gpuEnd[i], hostMS+waited[i]+updateIssue) + update
		if e.over.Synchronous {
			end = hostMS + layers + updateIssue + update // the host waits for every kernel
		}
		t.stepMS[b] = end + p.hostStepMS
		t.gpuMS[b] = layers + update
		t.backwardMS[b] = backwardMS[i]
		t.source[b] = source[i]
		// Kernel errors are correlated (one fitted model), so they add linearly; the
		// host and update part of the step carries the overhead model's own error.
		rest := t.stepMS[b] - layers
		t.relErr[b] = math.Max((errSum[i]+rest*e.over.OverheadRelErr)/t.stepMS[b], p.bandFloor)
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
