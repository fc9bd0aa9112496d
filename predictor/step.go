package predictor

import (
	"bytes"
	"math"
	"slices"
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

// stepArrays are a training step's figures at per-GPU batch sizes: in a dense table
// every batch from 1 up, entry b at batch b (entry 0 unused); in a sparse one the
// batches a window's curves read, entry i at batches[i]. They are never changed once
// filled, so a curve reads them without a lock while a larger table is being filled.
type stepArrays struct {
	// batches are a sparse table's per-GPU batch sizes, ascending; nil in a dense table.
	batches []int
	// probe is the batch at which the plans that filled the table told a phase that
	// runs no kernel (fill, plan): the dense table's last batch.
	probe      int
	stepMS     []float64 // the whole step: kernels as the host issues them, update, host overhead
	gpuMS      []float64 // the GPU's busy time: kernels and update
	backwardMS []float64 // the backward kernels' time, under which the all-reduce hides
	source     []uint8   // the least trusted source among the layer kernels, as its sourceRank
	relErr     []float64 // expected relative error of stepMS, a fraction
}

// stepEntryBytes is what one batch size of a table takes: four float64 arrays and a
// source rank.
const stepEntryBytes = 4*8 + 1

// bytes is what a's arrays take; a may be nil.
func (a *stepArrays) bytes() int {
	if a == nil {
		return 0
	}
	return len(a.stepMS)*stepEntryBytes + len(a.batches)*8
}

// newStepArrays makes arrays of n entries.
func newStepArrays(n int) *stepArrays {
	return &stepArrays{
		stepMS:     make([]float64, n),
		gpuMS:      make([]float64, n),
		backwardMS: make([]float64, n),
		source:     make([]uint8, n),
		relErr:     make([]float64, n),
	}
}

// entry is the index of per-GPU batch b's figures in a, or -1 where a does not hold
// them; a may be nil.
func (a *stepArrays) entry(b int) int {
	switch {
	case a == nil:
		return -1
	case a.batches == nil:
		if b >= 1 && b < len(a.stepMS) {
			return b
		}
		return -1
	}
	if i, ok := slices.BinarySearch(a.batches, b); ok {
		return i
	}
	return -1
}

// denseTo reports whether a is a dense table holding every batch from 1 to b.
func (a *stepArrays) denseTo(b int) bool {
	return a != nil && a.batches == nil && b < len(a.stepMS)
}

// missing lists the batches of wanted (ascending) that a does not hold.
func (a *stepArrays) missing(wanted []int) []int {
	var out []int
	for _, b := range wanted {
		if a.entry(b) < 0 {
			out = append(out, b)
		}
	}
	return out
}

// withEntries is a sparse table of a's entries (a may be nil or dense) and fresh's
// (sparse; none of its batches in a), ascending.
func (a *stepArrays) withEntries(fresh *stepArrays) *stepArrays {
	var old []int // a's batches
	switch {
	case a == nil:
	case a.batches == nil:
		old = make([]int, 0, max(len(a.stepMS)-1, 0))
		for b := 1; b < len(a.stepMS); b++ {
			old = append(old, b)
		}
	default:
		old = a.batches
	}
	out := newStepArrays(len(old) + len(fresh.batches))
	out.batches = make([]int, 0, len(old)+len(fresh.batches))
	out.probe = max(fresh.probe, 0)
	if a != nil {
		out.probe = max(out.probe, a.probe)
	}
	copyEntry := func(from *stepArrays, i int) {
		j := len(out.batches)
		out.stepMS[j], out.gpuMS[j], out.backwardMS[j] = from.stepMS[i], from.gpuMS[i], from.backwardMS[i]
		out.source[j], out.relErr[j] = from.source[i], from.relErr[i]
	}
	i, j := 0, 0
	for i < len(old) || j < len(fresh.batches) {
		if j == len(fresh.batches) || i < len(old) && old[i] < fresh.batches[j] {
			copyEntry(a, a.entry(old[i]))
			out.batches = append(out.batches, old[i])
			i++
			continue
		}
		copyEntry(fresh, j)
		out.batches = append(out.batches, fresh.batches[j])
		j++
	}
	return out
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
// issue order. Both the step table (fill) and Explain compose a step from one. A
// table's plan is made once and times its kernels at one block of batch sizes after
// another (timeAt).
type stepPlan struct {
	batches []int
	// width is how many batch sizes the timings' arrays hold at most; timers time
	// each timing (a kernel's timing index) at any batch sizes, prepared once.
	width  int
	timers []phaseTimer
	// The timings per distinct configuration × phase (a kernel's timing index), per
	// batch: its milliseconds, relative error and source (as its sourceRank), in
	// arrays of their own, so that compose's loops over the batches read only what
	// they add and the garbage collector has no pointers to scan in them.
	ms, relErr [][]float64
	rank       [][]uint8
	// sameRank is a timing's rank where it is the same at every batch, else mixedRank:
	// compose takes the least trusted source of those once, not at every batch.
	sameRank []uint8
	seq      []kernelSeq // the launches that run a kernel, in issue order
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
	// floatSlabs and rankSlabs hold the timings, kernelSlabs the prepared kernels
	// that time them (phaseTimerOf), scratch the estimates a timer writes before they
	// are split into them; release gives them back for the next plan.
	floatSlabs  []*[]float64
	rankSlabs   []*[]uint8
	kernelSlabs []*[]preparedKernel
	scratch     *[]kernels.Estimate
	// lists holds the lists above (ms … seq) for the next plan once release gives
	// them back; composing holds compose's working arrays for the next block.
	lists     *planLists
	composing composeArrays
}

// composeArrays are compose's working arrays over one block of batches.
type composeArrays struct {
	gpuEnd, gpuMS, backwardMS, errSum, waited []float64
	source                                    []uint8
	used                                      []launchUses
}

// launchUses counts a timing's launches in a step, and those in the backward pass.
type launchUses struct{ total, backward int }

// composeArrays returns p's compose arrays for n batches and p's timings, zeroed:
// made at the first block of a plan, and reused at the next.
func (p *stepPlan) composeArrays(n int) *composeArrays {
	c := &p.composing
	for _, a := range []*[]float64{&c.gpuEnd, &c.gpuMS, &c.backwardMS, &c.errSum, &c.waited} {
		*a = zeroed(*a, n)
	}
	c.source, c.used = zeroed(c.source, n), zeroed(c.used, len(p.ms))
	return c
}

// zeroed is s with n zero values, in its own room where it has enough.
func zeroed[T any](s []T, n int) []T {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// planLists are the lists a plan grows as it is made, reused through planListsPool:
// a zoo-by-catalog CSV makes thousands of plans of hundreds of timings and launches.
// index is the timing of each distinct configuration phase, as plan makes them.
type planLists struct {
	ms, relErr [][]float64
	rank       [][]uint8
	timers     []phaseTimer
	sameRank   []uint8
	seq        []kernelSeq
	index      map[timingKey]int
}

// timingKey is a distinct configuration phase of a plan: the first layer of the
// network with that configuration (Engine.firstLayers), and the phase. (A key
// holding the configuration itself is over 128 bytes, which a map keeps apart from
// its table, allocating one per key.)
type timingKey struct {
	layer int
	phase measure.Phase
}

var planListsPool = sync.Pool{New: func() any { return &planLists{index: map[timingKey]int{}} }}

// slabLen is how many values a slab of a plan's timings holds: a table's fill times
// every configuration phase at a block of batch sizes, memory that would otherwise be
// garbage after every fill, so slabs are reused through pools.
const slabLen = 64 * fillBlock

var (
	floatSlabPool    = sync.Pool{New: func() any { s := make([]float64, 0, 2*slabLen); return &s }}
	rankSlabPool     = sync.Pool{New: func() any { s := make([]uint8, 0, slabLen); return &s }}
	estimateSlabPool = sync.Pool{New: func() any { s := make([]kernels.Estimate, 0, fillBlock); return &s }}
	kernelSlabPool   = sync.Pool{New: func() any { s := make([]preparedKernel, 0, kernelSlabLen); return &s }}
)

// kernelSlabLen is how many prepared kernels (a kilobyte each) a slab holds.
const kernelSlabLen = 64

// fromSlab returns n values from the last of slabs, or from a new slab of pool when
// it has no room left.
func fromSlab[T any](slabs *[]*[]T, pool *sync.Pool, n int) []T {
	if k := len(*slabs); k > 0 {
		s := (*slabs)[k-1]
		if cap(*s)-len(*s) >= n {
			*s = (*s)[:len(*s)+n]
			return (*s)[len(*s)-n:]
		}
	}
	s := pool.Get().(*[]T)
	if cap(*s) < n {
		big := make([]T, 0, n)
		s = &big
	}
	*s = (*s)[:n]
	*slabs = append(*slabs, s)
	return *s
}

// newTiming adds a timing that timer times (nil: one the same at every batch, filled
// once), with arrays of p.width values, of which the first len(p.batches) are in
// use, and returns its index and arrays; the caller fills them.
func (p *stepPlan) newTiming(timer phaseTimer) (ti int, ms, relErr []float64, rank []uint8) {
	n, w := len(p.batches), p.width
	ms = fromSlab(&p.floatSlabs, &floatSlabPool, w)[:n:w]
	relErr = fromSlab(&p.floatSlabs, &floatSlabPool, w)[:n:w]
	rank = fromSlab(&p.rankSlabs, &rankSlabPool, w)[:n:w]
	p.ms, p.relErr, p.rank = append(p.ms, ms), append(p.relErr, relErr), append(p.rank, rank)
	p.timers = append(p.timers, timer)
	p.sameRank = append(p.sameRank, mixedRank) // until settle says otherwise
	return len(p.ms) - 1, ms, relErr, rank
}

// reserve takes p's lists from the pool, with room for the launches and timings of
// a network of layers layers: about 2.5 launches a layer (forward, its gradients,
// the framework's operators) and at most 1.6 distinct timings in the zoo, so the
// lists are seldom grown and copied.
func (p *stepPlan) reserve(layers int) {
	l := planListsPool.Get().(*planLists)
	p.lists = l
	n := 2*layers + 8
	p.ms, p.relErr, p.rank = slices.Grow(l.ms, n), slices.Grow(l.relErr, n), slices.Grow(l.rank, n)
	p.timers, p.sameRank = slices.Grow(l.timers, n), slices.Grow(l.sameRank, n)
	p.seq = slices.Grow(l.seq, 3*layers+8)
}

// sameTiming adds a timing of ms milliseconds, relErr and source rank at every batch
// (one of the framework's per-tensor operators), filled over p's width once, and
// returns its index.
func (p *stepPlan) sameTiming(ms, relErr float64, rank uint8) int {
	ti, msArr, relErrArr, rankArr := p.newTiming(nil)
	fill(msArr[:p.width], ms)
	fill(relErrArr[:p.width], relErr)
	fill(rankArr[:p.width], rank)
	p.sameRank[ti] = rank
	return ti
}

// fill sets every element of s to v.
func fill[T any](s []T, v T) {
	for i := range s {
		s[i] = v
	}
}

// timeKernels adds the timing of req on dev over p's batches, as timer gives it, and
// returns its index.
func (p *stepPlan) timeKernels(timer LayerTimer, dev kernels.Device, req kernels.Request) int {
	ti, ms, relErr, rank := p.newTiming(p.phaseTimerOf(timer, dev, req))
	p.timers[ti].TimesInto(p.batches, kernels.Timings{MS: ms, RelErr: relErr, Rank: rank})
	p.settleRank(ti)
	return ti
}

// timeAt times every timing of p at batches (at most p.width of them) in place of
// the batches it held: compose then reads the step at these batches.
func (p *stepPlan) timeAt(batches []int) {
	p.batches = batches
	n := len(batches)
	for ti, timer := range p.timers {
		p.ms[ti], p.relErr[ti], p.rank[ti] = p.ms[ti][:n], p.relErr[ti][:n], p.rank[ti][:n]
		if timer == nil {
			continue // the same at every batch, filled over the width (sameTiming)
		}
		timer.TimesInto(batches, kernels.Timings{MS: p.ms[ti], RelErr: p.relErr[ti], Rank: p.rank[ti]})
		p.settleRank(ti)
	}
}

// mixedRank marks a timing whose source differs between batches (stepPlan.sameRank).
const mixedRank = 0xff

// settleRank notes whether timing ti's source is the same at every batch (counted
// by bytes.Count, vectorised).
func (p *stepPlan) settleRank(ti int) {
	rank := p.rank[ti]
	p.sameRank[ti] = mixedRank
	if len(rank) > 0 && bytes.Count(rank, rank[:1]) == len(rank) {
		p.sameRank[ti] = rank[0]
	}
}

// estimate is timing ti at the plan's batch index at.
func (p *stepPlan) estimate(ti, at int) kernels.Estimate {
	return kernels.Estimate{MS: p.ms[ti][at], Source: kernels.RankedSource(p.rank[ti][at]), RelErr: p.relErr[ti][at]}
}

// release gives p's slabs back; p's timings must not be used after it.
func (p *stepPlan) release() {
	for _, s := range p.floatSlabs {
		*s = (*s)[:0]
		floatSlabPool.Put(s)
	}
	for _, s := range p.rankSlabs {
		*s = (*s)[:0]
		rankSlabPool.Put(s)
	}
	for _, s := range p.kernelSlabs {
		clear(*s) // no measured series kept alive by the pool
		*s = (*s)[:0]
		kernelSlabPool.Put(s)
	}
	if p.scratch != nil {
		clear(*p.scratch) // no source strings kept alive by the pool
		estimateSlabPool.Put(p.scratch)
	}
	p.floatSlabs, p.rankSlabs, p.kernelSlabs, p.scratch = nil, nil, nil, nil
	if l := p.lists; l != nil {
		// Emptied of what they point to (the slabs, the prepared kernels), kept for
		// their room.
		clear(p.ms)
		clear(p.relErr)
		clear(p.rank)
		clear(p.timers)
		l.ms, l.relErr, l.rank, l.timers = p.ms[:0], p.relErr[:0], p.rank[:0], p.timers[:0]
		l.sameRank, l.seq = p.sameRank[:0], p.seq[:0]
		clear(l.index)
		planListsPool.Put(l)
	}
	p.ms, p.relErr, p.rank, p.sameRank, p.timers, p.seq, p.lists = nil, nil, nil, nil, nil, nil, nil
}

// plan times req's kernels at the per-GPU batches (each distinct configuration ×
// phase once, over every batch) and lists the launches in issue order: forward
// through the layers, backward in reverse. Which phases run a kernel is the request's
// rule (for PyTorch, cnn.Layer.Phases: no data gradient for a layer on the image,
// which does not require grad, none for a view); a phase whose time is zero at the
// first and the last batch runs none (a view, a parameter-free weight gradient).
func (e *Engine) plan(req *Request, batches []int) stepPlan {
	return e.planWidth(req, batches, len(batches))
}

// blockPlan is the plan of a table of req whose last batch is probe: which phases
// run a kernel decided at batch 1 and at probe, as a plan over the whole table
// decides, its timings ready for timeAt at up to fillBlock batch sizes at a time.
func (e *Engine) blockPlan(req *Request, probe int) stepPlan {
	return e.planWidth(req, []int{1, probe}, fillBlock)
}

// planWidth is plan with timings' arrays of width values (at least len(batches)),
// for timeAt to time them at other batches later.
func (e *Engine) planWidth(req *Request, batches []int, width int) stepPlan {
	net := req.Network
	dev := kernels.Device{GPU: req.GPU, Key: req.DeviceKey}
	timer := e.timerFor(req)
	month := req.Software.orDefault().Month
	p := stepPlan{batches: batches, width: max(width, len(batches)), syncAt: -1}
	p.reserve(len(net.Layers))
	if t, ok := e.timer.(untunedFamilies); ok && req.DeviceKey == "" {
		_, p.bandFloor = t.UntunedFamily(req.GPU)
	}

	index, first := p.lists.index, e.firstLayers(net)
	timing := func(layer int, phase measure.Phase) int {
		k := timingKey{first[layer], phase}
		if i, ok := index[k]; ok {
			return i
		}
		cfg := net.Layers[layer].Config
		i := p.timeKernels(timer, dev, kernels.Request{
			Config:       cfg,
			Phase:        phase,
			Precision:    KernelPrecision(req.Precision, cfg.Op, req.GPU),
			Policy:       req.Policy,
			LibraryMonth: month,
		})
		index[k] = i
		return i
	}
	add := func(layer int, phase measure.Phase, issueUS float64) {
		ti := timing(layer, phase)
		ms := p.ms[ti]
		if !(ms[0] > 0 || ms[len(ms)-1] > 0) {
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
			ti = p.timeKernels(timer, dev, kernels.Request{Config: cfg, Phase: phase, Precision: KernelPrecision(req.Precision, cfg.Op, req.GPU),
				Policy: req.Policy, FusedElems: elems, LibraryMonth: month})
			fusedIndex[key] = ti
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
			ti := p.sameTiming(op.gpuMS, e.over.OverheadRelErr, kernels.Measured.Rank())
			phase := measure.Phase("")
			if layer >= 0 {
				phase = measure.Forward
			} else {
				p.bookkeepingMS += op.gpuMS
			}
			p.seq = append(p.seq, kernelSeq{layer, phase, ti, op.issueUS, op.backward, -1})
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

// fillBlock is how many batch sizes a table's plan times at once (stepPlan.timeAt):
// the plan holds an estimate per distinct configuration phase per batch, a megabyte
// per thousand batches of a large network, so blocks keep it small enough to stay in
// the processor's cache while compose reads it back.
const fillBlock = 256

// fill computes the step for per-GPU batches 1..size-1 (arrays of size entries), a
// block of batches at a time. One plan decides which phases run a kernel as a plan
// over the whole table would: by their time at batch 1 and at batch probe, the last
// of a table of its size (tableSize), at or beyond size-1 (denseEntries).
func (e *Engine) fill(req Request, size, probe int) *stepArrays {
	t := newStepArrays(size)
	t.probe = probe
	if size <= 1 {
		return t
	}
	p := e.blockPlan(&req, probe)
	defer p.release()
	batches := make([]int, 0, min(fillBlock, size-1))
	for lo := 1; lo < size; lo += fillBlock {
		batches = batches[:0]
		for b := lo; b < min(lo+fillBlock, size); b++ {
			batches = append(batches, b)
		}
		p.timeAt(batches)
		e.compose(t, &p, 0, len(batches), batches) // a dense table's entry b is batch b
	}
	return t
}

// fillAt computes the step at the per-GPU batches wanted (ascending) into a sparse
// table, a block at a time, its plan probing batch 1 and probe as fill's plan does:
// the figures are those of a dense table whose last batch is probe.
func (e *Engine) fillAt(req Request, wanted []int, probe int) *stepArrays {
	t := newStepArrays(len(wanted))
	t.batches, t.probe = wanted, probe
	if len(wanted) == 0 {
		return t
	}
	p := e.blockPlan(&req, probe)
	defer p.release()
	entries := make([]int, 0, min(fillBlock, len(wanted)))
	for lo := 0; lo < len(wanted); lo += fillBlock {
		hi := min(lo+fillBlock, len(wanted))
		entries = entries[:0]
		for i := lo; i < hi; i++ {
			entries = append(entries, i)
		}
		p.timeAt(wanted[lo:hi])
		e.compose(t, &p, 0, hi-lo, entries)
	}
	return t
}

// compose fills the entries of t at the per-GPU batches p.batches[lo:hi] from the
// plan p: the step at p.batches[lo+i] goes to t's entry entries[i].
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
func (e *Engine) compose(t *stepArrays, p *stepPlan, lo, hi int, entries []int) {
	n := hi - lo
	c := p.composeArrays(n)
	gpuEnd := c.gpuEnd // when the GPU finishes the kernels so far, ms
	gpuMS := c.gpuMS
	backwardMS := c.backwardMS
	errSum := c.errSum // Σ kernel time × its relative error
	source := c.source // the least trusted source so far, as its sourceRank (0: measured)
	// The issue simulation runs over every launch; the sums run over distinct
	// configuration phases, weighted by how often each is launched.
	used := c.used
	hostMS := 0.0 // the host's issue time of the kernels so far
	// waited is how long the host has waited for the GPU at a sync, per batch: none
	// before the sync, where the loop leaves it out.
	var waited []float64
	sim := newIssueSim(p, lo, hi)
	for j, k := range p.seq {
		if j == p.syncAt {
			// The script reads a GPU value here (loss.item()): the host waits for
			// every kernel issued so far before it issues the next.
			waited = c.waited
			for i := range waited {
				waited[i] = math.Max(0, gpuEnd[i]-hostMS)
			}
			sim.sync(j, gpuEnd, waited)
		}
		hostMS += k.issueUS / 1000
		used[k.timing].total++
		if k.backward {
			used[k.timing].backward++
		}
		sim.kernel(k.timing, gpuEnd, waited, hostMS)
	}
	var sameRank uint8 // the least trusted source of the timings whose source is the same at every batch
	for ti, u := range used {
		if u.total == 0 {
			continue
		}
		nt, nb := float64(u.total), float64(u.backward)
		ms, relErr := p.ms[ti][lo:hi], p.relErr[ti][lo:hi]
		relErr, gpuMS, backwardMS, errSum := relErr[:len(ms)], gpuMS[:len(ms)], backwardMS[:len(ms)], errSum[:len(ms)]
		for i, t := range ms {
			gpuMS[i] += nt * t
			backwardMS[i] += nb * t
			errSum[i] += nt * t * relErr[i]
		}
		if r := p.sameRank[ti]; r != mixedRank {
			sameRank = max(sameRank, r)
			continue
		}
		rank := p.rank[ti][lo:hi]
		for i, r := range rank {
			source[i] = max(source[i], r)
		}
	}
	for i := range source {
		source[i] = max(source[i], sameRank)
	}
	if waited == nil {
		waited = c.waited // zeros
	}

	update, updateIssue := p.update, p.updateIssue
	for i := range n {
		b := entries[i]
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

// sourceRank orders sources from most (0) to least trusted (Source.Rank).
func sourceRank(s Source) uint8 { return s.Rank() }
