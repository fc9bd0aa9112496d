package predictor

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"cnntime/predictor/cnn"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

// LayerTimer predicts the time of one phase of one layer configuration on a device
// at many batch sizes at once; *kernels.Model is the one the app uses.
type LayerTimer interface {
	Times(dev kernels.Device, req kernels.Request, batches []int, out []kernels.Estimate)
}

// intoTimer is a LayerTimer that also writes its estimates into arrays of their own
// (kernels.Timings), as *kernels.Model does: the step composer's plans hold them so,
// and need no Estimate per batch in between.
type intoTimer interface {
	TimesInto(dev kernels.Device, req kernels.Request, batches []int, out kernels.Timings)
}

// Request asks for one CNN on one machine over a range of batch sizes.
type Request struct {
	Network *cnn.Network
	Machine hw.Machine // its GPUCount and price are used; ID and name are copied to the curve
	GPU     hw.GPU     // the machine's GPU
	// DeviceKey is a device of this GPU model measured in the cache ("" when none):
	// its measurements come first.
	DeviceKey string
	Precision measure.Precision // a training precision: fp32, fp32-strict, tf32, amp or bf16
	Policy    measure.Policy    // cuDNN's algorithm choice; NoPolicy for the CPU
	Batches   []int             // global batch sizes, ascending, each ≥ the machine's GPU count
	// Points, where it holds a point per batch, is where the curve's points are
	// written (cleared first) instead of new memory: a caller that is done with one
	// curve's points before the next reuses them.
	Points []Point
	// PointsOnly says that the caller reads the curve's points and what describes
	// them, not its summary: the best batch, sweet spots and recommendation are then
	// not worked out (Best is -1, as where none fits).
	PointsOnly bool
	Run        Run
	// RecipeBatch is the global batch the run's training recipe was published with (0:
	// none): among the batches within NearBestPct of the best, the one nearest it is
	// the recommended batch (Curve.Recommended).
	RecipeBatch int
	// ForwardBackwardOnly times the forward and backward passes without the optimizer
	// update, as benchmarks that report "fwd+bwd" do.
	ForwardBackwardOnly bool
	// Kernels says which kernels each layer runs; the zero value is PyTorch on cuDNN.
	Kernels KernelRule
	// Nodes is how many instances of Machine train together, data-parallel (0 or 1:
	// one); NodeNetwork joins them (needed when Nodes > 1). Batches are then global over
	// all Nodes × GPUCount GPUs, and the price is Nodes times the machine's.
	Nodes       int
	NodeNetwork hw.Network
	// Input is the input pipeline feeding each GPU (pipeline.Model); the zero value is
	// synthetic data already on the GPU. Host is the machine's host it runs on
	// (host.Resolve; nil for none), copied to the curve: where its CPU is assumed,
	// Input's CPUScaleSlow–CPUScaleFast is the range the prediction's band covers.
	Input pipeline.Rate
	Host  *host.Host
	// MemoryFormat is the activations' layout; "" adds no layout transposes.
	MemoryFormat MemoryFormat
	// Script is the training script around the step; "" is a tight loop (Lean).
	Script Script
	// Framework is what runs the step ("" is PyTorch2): its per-tensor work (the
	// optimizer's update, clearing and accumulating gradients, batch norm's counters).
	Framework Framework
	// Software is the release of the kernel libraries that runs the step (the zero
	// value is CurrentSoftware): how much of the GPU's peak its kernels reach
	// (kernels.Calibration.Maturity).
	Software Software
	// Anchors are whole training steps measured of this network on this GPU under this
	// request's precision, framework, memory format and input, as one GPU runs them (the
	// caller picks them; nil: none). The curve passes through them: at a measured
	// per-GPU batch the GPU's own step is the measurement's median (Measured, its
	// spread the band), elsewhere the prediction scaled by the measured/predicted
	// ratios interpolated in log-batch (Anchored); the loader and the all-reduce
	// between GPUs stay as predicted. A measured batch beyond memory is left out.
	Anchors []MeasuredStep
}

// Engine composes per-layer kernel times into training steps, runs and costs. It
// keeps the network × device × precision × policy step-time arrays it computes, so
// machines that share a GPU and later requests reuse them, up to maxTableBytes: past
// that the least recently used are dropped (and computed again if asked for). It is
// safe for concurrent use.
type Engine struct {
	timer LayerTimer
	over  Overheads
	mem   MemoryModel

	mu         sync.Mutex
	tables     map[tableKey]*stepTable
	tableBytes int    // the kept tables' size
	tableLimit int    // the most tableBytes may be: maxTableBytes
	clock      uint64 // counts table uses, to find the least recently used
	mems       map[memKey]Memory
	firsts     map[*cnn.Network][]int // firstLayers' answers
}

// maxTableBytes bounds the step tables an engine keeps. A table of a per-GPU batch
// range 1..1024 takes about 50 kB, so the zoo's tables on a few GPUs stay; a
// prediction over every zoo CNN × every catalog GPU at 1–65,536 goes through them
// without holding them all.
const maxTableBytes = 64 << 20

type tableKey struct {
	net       *cnn.Network
	gpu       string
	device    string
	precision measure.Precision
	policy    measure.Policy
	noUpdate  bool
	rule      KernelRule
	layout    MemoryFormat
	framework Framework
	syncFwd   bool // the script waits for the GPU after the forward pass
	software  hw.Month
}

type memKey struct {
	net       *cnn.Network
	precision measure.Precision
}

// untunedFamilies is a layer timer that can say a GPU's family has no tuning
// measurement, and the least band of a step estimated on it (kernels.Model).
type untunedFamilies interface {
	UntunedFamily(hw.GPU) (note string, band float64)
}

// NewEngine returns an engine over the per-layer model timer.
func NewEngine(timer LayerTimer, over Overheads, mem MemoryModel) *Engine {
	return &Engine{
		timer:      timer,
		over:       over,
		mem:        mem,
		tables:     make(map[tableKey]*stepTable),
		tableLimit: maxTableBytes,
		mems:       make(map[memKey]Memory),
		firsts:     make(map[*cnn.Network][]int),
	}
}

// Overheads returns the host and communication model the engine uses.
func (e *Engine) Overheads() Overheads { return e.over }

// Check reports the first thing wrong with req, or nil. A request that fails it
// changes nothing.
func (req *Request) Check() error {
	switch {
	case req.Network == nil || len(req.Network.Layers) == 0:
		return fmt.Errorf("no network to predict")
	case req.Run.ToTarget == nil && req.Run.Epochs <= 0:
		return fmt.Errorf("epochs must be positive, not %d", req.Run.Epochs)
	case req.Run.Images <= 0:
		return fmt.Errorf("images per epoch must be positive, not %d", req.Run.Images)
	case len(req.Batches) == 0:
		return fmt.Errorf("no batch sizes to predict")
	}
	if _, err := ParseTrainingPrecision(string(req.Precision)); err != nil {
		return err
	}
	if m := req.Run.ToTarget; m != nil {
		if err := m.Check(); err != nil {
			return err
		}
	}
	if err := req.checkNodes(); err != nil {
		return err
	}
	if err := req.checkInput(); err != nil {
		return err
	}
	if req.Script != "" {
		if _, err := ParseScript(string(req.Script)); err != nil {
			return err
		}
	}
	if _, err := ParseFramework(string(req.Framework)); err != nil {
		return err
	}
	if !req.Software.IsZero() {
		if err := checkSoftwareMonth(req.Software.Name, req.Software.Month); err != nil {
			return err
		}
	}
	if err := req.Software.orDefault().CheckFramework(req.Framework); err != nil {
		return err
	}
	n := req.totalGPUs()
	prev := 0
	for _, b := range req.Batches {
		switch {
		case b <= 0:
			return fmt.Errorf("batch size %d: must be positive", b)
		case b <= prev:
			return fmt.Errorf("batch sizes must ascend without repeats: %d after %d", b, prev)
		case b < n:
			return fmt.Errorf("batch size %d on %s: data-parallel training over %d GPUs needs at least one image per GPU (batch ≥ %d)", b, req.Machine.ID, n, n)
		}
		prev = b
	}
	return nil
}

// Curve predicts req's CNN on its machine at every requested batch size.
func (e *Engine) Curve(req Request) (Curve, error) {
	if err := req.Check(); err != nil {
		return Curve{}, err
	}
	n := req.totalGPUs()
	mem := e.memory(req.Network, req.Precision)
	perGPUMax := mem.MaxBatch(e.mem.Capacity(req.GPU))

	maxB := req.Batches[len(req.Batches)-1]
	need := perGPUBatch(maxB, n)
	if perGPUMax >= 0 && need > perGPUMax {
		need = max(perGPUMax, 1) // nothing beyond memory is predicted
	}
	var anchors []MeasuredStep // nil without measured steps: the curve as predicted
	if len(req.Anchors) > 0 {
		anchors = anchorSteps(req.Anchors, perGPUMax)
	}
	var tab *stepArrays
	switch reads := req.readsSteps(perGPUMax); {
	case reads == readsDense && len(anchors) > 0:
		tab = e.table(req, max(need, anchors[len(anchors)-1].PerGPUBatch))
	case reads == readsDense:
		tab = e.table(req, need)
	case reads == readsSome && len(anchors) > 0:
		wanted := append(req.stepsRead(perGPUMax), anchorBatches(anchors)...)
		slices.Sort(wanted)
		tab = e.tableAt(req, slices.Compact(wanted))
	case reads == readsSome:
		tab = e.tableAt(req, req.stepsRead(perGPUMax))
	}

	c := Curve{
		Model:     req.Network.Name,
		Machine:   req.Machine.ID,
		GPU:       req.GPU.ID,
		GPUCount:  n,
		Precision: req.Precision,
		Policy:    req.Policy,
		Points:    req.pointsFor(),
		MaxBatch:  perGPUMax * n,
		Input:     networkInput(req.Network),
		Loader:    req.Input.Loader,
		Workers:   req.Input.Workers,
		Format:    req.MemoryFormat,
		Script:    req.Script,
		Framework: req.Framework.orDefault(),
		Software:  req.Software.orDefault(),
		Host:      req.Host,
		Price:     req.Machine.Basis(),
		GPUSource: req.GPU.Source,
	}
	if t, ok := e.timer.(untunedFamilies); ok && req.DeviceKey == "" {
		c.TuningNote, _ = t.UntunedFamily(req.GPU)
	}
	if c.Loader == "" {
		c.Loader = pipeline.Synthetic
	}
	if req.Input.ImagesPerS > 0 {
		c.LoaderImagesPerS = req.Input.ImagesPerS * float64(n)
	}
	if perGPUMax < 0 {
		c.MaxBatch = -1
	}
	gradBytes := 4 * float64(req.Network.Params())
	scriptMS := req.Script.Cost().StepMS(e.over.LaunchForwardUS)
	sync := e.over.syncOf(gradBytes, &req)
	// gpuSide is the GPU's own step at per-GPU batch b whose kernels, host work and
	// script take stepMS, fed by in: with the batch's copy to it and the loader's work
	// on it, without the wait for the loader. A measured step is read against it.
	gpuSide := func(in pipeline.Rate, b int, stepMS float64) float64 {
		in.ImagesPerS = 0
		ms, _ := in.StepMS(b, stepMS, hostLinkGBs(req.GPU))
		return ms
	}
	var anc *anchor // nil: no measured step to pass through
	if len(anchors) > 0 && tab != nil {
		anc = newAnchor(anchors, func(b int) float64 {
			if i := tab.entry(b); i >= 0 {
				return gpuSide(req.Input, b, tab.stepMS[i]+scriptMS)
			}
			return 0
		})
		if anc != nil {
			c.Anchors = anchors
		}
	}
	// stepWithBound is the step at global batch B with the input pipeline in, and what
	// bounds it.
	stepWithBound := func(B int, in pipeline.Rate) (float64, string) {
		b := perGPUBatch(B, n)
		i := tab.entry(b)
		gpuStep := tab.stepMS[i] + scriptMS
		if anc != nil { // the GPU's own step times the ratio; the loader's wait as predicted
			gpuStep += (anc.ratioAt(b) - 1) * gpuSide(in, b, gpuStep)
		}
		ms, bound := in.StepMS(b, gpuStep, hostLinkGBs(req.GPU))
		return ms + sync.parts(ms, tab.backwardMS[i]).Total(), bound
	}
	stepWith := func(B int, in pipeline.Rate) float64 {
		ms, _ := stepWithBound(B, in)
		return ms
	}
	// step is the step at global batch B, for an epoch's shorter last step
	// (fillSchedule): the point's own where the curve has a fitting point at B (its
	// IterMS is stepWith(B, req.Input), below), found where a run of consecutive
	// batches puts it (1–1024 holds every last step), else worked out.
	step := func(B int) float64 {
		if i := B - req.Batches[0]; i >= 0 && i < len(c.Points) && c.Points[i].Batch == B && c.Points[i].Fits {
			return c.Points[i].IterMS
		}
		return stepWith(B, req.Input)
	}
	for i, B := range req.Batches {
		b := perGPUBatch(B, n)
		p := &c.Points[i]
		p.Batch = B
		p.MemoryGB = mem.Bytes(b) / 1e9
		p.Fits = perGPUMax < 0 || b <= perGPUMax
		if !p.Fits {
			continue
		}
		p.IterMS, p.Bound = stepWithBound(B, req.Input)
		p.ScriptMS = scriptMS
		i := tab.entry(b)
		p.Source = kernels.RankedSource(tab.source[i])
		p.ErrorPct = 100 * tab.relErr[i]
		if anc != nil {
			if _, measured, spreadPct := anc.at(b); measured {
				p.Source, p.ErrorPct = Measured, spreadPct
			} else {
				p.Source = Anchored
			}
		}
		if in := req.Input; in.CPUScaleSlow != in.CPUScale || in.CPUScaleFast != in.CPUScale {
			slow, fast := stepWith(B, in.AtScale(in.CPUScaleSlow)), stepWith(B, in.AtScale(in.CPUScaleFast))
			p.HostSlowPct = 100 * (slow/p.IterMS - 1)
			p.HostErrorPct = math.Max(p.HostSlowPct, 100*(1-fast/p.IterMS))
			p.ErrorPct = math.Hypot(p.ErrorPct, p.HostErrorPct)
		}
	}
	watts := func(B int, stepMS float64) float64 {
		b := perGPUBatch(B, n)
		gpuMS := tab.gpuMS[tab.entry(b)]
		if anc != nil {
			gpuMS *= anc.ratioAt(b)
		}
		busy := math.Min(1, gpuMS/stepMS)
		return float64(n) * req.GPU.TDPW * (e.over.PowerIdleFraction + e.over.PowerBusyFraction*busy)
	}
	price := req.Machine.PriceUSDPerHour * float64(req.nodes())
	if req.Nodes > 1 {
		net := req.NodeNetwork
		if !(net.LatencyUS > 0) { // say what the all-reduce assumed, not "0"
			net.LatencyUS, net.LatencyAssumed = DefaultNetworkModel.LatencyUS, true
		}
		c.Nodes, c.Network = req.Nodes, &net
	}
	c.PriceUSDPerHour = price
	c.CostKnown = price > 0
	c.EnergyKnown = req.GPU.TDPW > 0
	c.EpochsSource = req.Run.EpochsSource()
	if m := req.Run.ToTarget; m != nil {
		mc := *m
		c.Recipe = &mc
	}
	c.RecipeBatch = req.RecipeBatch
	fillSchedule(&c, req.Run, price, step, watts)
	if req.PointsOnly {
		c.Best = -1
		return c, nil
	}
	summarise(&c, e.over.MaxSweetSpots, e.over.SweetSpotJumpPct)
	return c, nil
}

// pointsFor is req's Points, cleared, where they are enough for its batches, else new
// points.
func (req *Request) pointsFor() []Point {
	if cap(req.Points) < len(req.Batches) {
		return make([]Point, len(req.Batches))
	}
	p := req.Points[:len(req.Batches)]
	clear(p)
	return p
}

// memory returns net's memory model at precision p, computed once.
func (e *Engine) memory(net *cnn.Network, p measure.Precision) Memory {
	k := memKey{net, p}
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.mems[k]
	if !ok {
		m = e.mem.NetworkMemory(net, p)
		e.mems[k] = m
	}
	return m
}

// firstLayers is, for each layer of net, the index of the first layer with the same
// configuration (its own where no layer before it has it): a plan times each
// distinct configuration phase once. Worked out once per network.
func (e *Engine) firstLayers(net *cnn.Network) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.firsts[net]; ok {
		return f
	}
	f := make([]int, len(net.Layers))
	seen := make(map[cnn.Config]int, len(net.Layers))
	for i := range net.Layers {
		j, ok := seen[net.Layers[i].Config]
		if !ok {
			j = i
			seen[net.Layers[i].Config] = i
		}
		f[i] = j
	}
	e.firsts[net] = f
	return f
}

// stepsRead are the per-GPU batches a curve of req reads the step of (ascending, each
// once): each point's that fits in memory (perGPUMax per GPU; -1: unknown, all fit),
// and the last, partial step's of each such point's epoch.
func (req *Request) stepsRead(perGPUMax int) []int {
	n := req.totalGPUs()
	out := make([]int, 0, 2*len(req.Batches))
	for _, B := range req.Batches {
		b := perGPUBatch(B, n)
		if perGPUMax >= 0 && b > perGPUMax {
			continue
		}
		out = append(out, b)
		if req.Run.Images > 0 {
			if last := req.Run.Images % B; last > 0 {
				out = append(out, perGPUBatch(last, n))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sparseBelow is how few of the per-GPU batches up to its largest a curve's points are
// for its steps to be worked out one by one (a sparse table, tableAt) instead of every
// batch from 1 up (a dense one, table): a window's curve over a grid up to a CIFAR
// epoch's 50,000 images has a few hundred points.
const sparseBelow = 4

// What a curve's steps are read from (readsSteps).
const (
	readsNone  = iota // no point fits: no step is read
	readsDense        // every batch up to the largest point's: a dense table
	readsSome         // the points' and their epochs' last steps: a sparse table
)

// readsSteps says which table a curve of req reads its steps from: a dense one where
// its points that fit in memory (perGPUMax per GPU; -1: all fit) are at least 1 in
// sparseBelow of the per-GPU batches up to the largest (an epoch's last step is
// smaller than its point's, so a dense table holds it too), else a sparse one of the
// batches it reads (stepsRead). The points ascend, so they are counted without a sort.
func (req *Request) readsSteps(perGPUMax int) int {
	n := req.totalGPUs()
	count, last := 0, 0
	for _, B := range req.Batches {
		b := perGPUBatch(B, n)
		if perGPUMax >= 0 && b > perGPUMax {
			break
		}
		if b != last {
			count, last = count+1, b
		}
	}
	switch {
	case count == 0:
		return readsNone
	case count*sparseBelow >= last:
		return readsDense
	}
	return readsSome
}

// tableSize is the last batch of a dense table holding per-GPU batch need: a power of
// two times 64, so that a table grows a few times at most.
func tableSize(need int) int {
	size := 64
	for size < need {
		size *= 2
	}
	return size
}

// stepTableOf is the cache entry of req's network on its device, marked used.
func (e *Engine) stepTableOf(req *Request) (tableKey, *stepTable) {
	k := tableKey{req.Network, req.GPU.ID, req.DeviceKey, req.Precision, req.Policy, req.ForwardBackwardOnly, req.Kernels, req.MemoryFormat,
		req.Framework.orDefault(), req.Script.Cost().SyncAfterForward, req.Software.orDefault().Month}
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.tables[k]
	if !ok {
		t = &stepTable{}
		e.tables[k] = t
	}
	e.clock++
	t.used = e.clock
	return k, t
}

// table returns the dense step-time arrays of req's network on its device, covering
// per-GPU batches 1..need at least.
func (e *Engine) table(req Request, need int) *stepArrays {
	k, t := e.stepTableOf(&req)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.arrays.denseTo(need) {
		before := t.arrays.bytes()
		t.arrays = e.fill(req, denseEntries(need, e.memory(req.Network, req.Precision).MaxBatch(e.mem.Capacity(req.GPU)))+1, tableSize(need))
		e.kept(k, t, t.arrays.bytes()-before)
	}
	return t.arrays
}

// tableAt returns step-time arrays of req's network on its device that hold the
// per-GPU batches wanted (ascending, not empty): the dense table where it covers them,
// else a sparse one, to which the batches it lacks are added, their figures those of a
// dense table covering the largest (fillAt).
func (e *Engine) tableAt(req Request, wanted []int) *stepArrays {
	k, t := e.stepTableOf(&req)
	t.mu.Lock()
	defer t.mu.Unlock()
	need := wanted[len(wanted)-1]
	if t.arrays.denseTo(need) {
		return t.arrays
	}
	missing := t.arrays.missing(wanted)
	if len(missing) == 0 {
		return t.arrays
	}
	before := t.arrays.bytes()
	t.arrays = t.arrays.withEntries(e.fillAt(req, missing, tableSize(need)))
	e.kept(k, t, t.arrays.bytes()-before)
	return t.arrays
}

// kept accounts for table t of key k having grown by grown bytes, and drops the least
// recently used other tables while the kept ones take more than e.tableLimit. A
// dropped table's arrays still serve whoever holds them.
func (e *Engine) kept(k tableKey, t *stepTable, grown int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tables[k] != t { // dropped while it was filled: not counted
		return
	}
	e.tableBytes += grown
	for e.tableBytes > e.tableLimit && len(e.tables) > 1 {
		var oldest tableKey
		var oldestT *stepTable
		for key, other := range e.tables {
			if other != t && (oldestT == nil || other.used < oldestT.used) {
				oldest, oldestT = key, other
			}
		}
		delete(e.tables, oldest)
		e.tableBytes -= oldestT.size
		oldestT.size = 0
	}
	t.size = t.arrays.bytes()
}

// Reserve makes the dense step table of req's network on its device cover per-GPU
// batches up to perGPUBatch (no further than fits in the GPU's memory), so that
// requests for several machines of one GPU fill it once, at its largest size, instead
// of growing it machine by machine. It does so only where req's own curve reads a
// dense table (a range of every batch); a sparse one (a window's grid) gets the
// batches each curve reads as it is predicted. Only the network, GPU, device,
// precision, policy, kernels, memory format, batches and run of req are read.
func (e *Engine) Reserve(req Request, perGPUBatch int) {
	if req.Network == nil || perGPUBatch < 1 {
		return
	}
	fits := e.memory(req.Network, req.Precision).MaxBatch(e.mem.Capacity(req.GPU))
	if req.readsSteps(fits) != readsDense {
		return
	}
	if fits >= 0 && perGPUBatch > fits {
		perGPUBatch = max(fits, 1)
	}
	e.table(req, perGPUBatch)
}

// MaxBatch is the largest global batch of req's network that fits in its GPUs' memory
// at req's precision, over all the machine's GPUs and nodes; -1 when the GPU's memory
// is unknown. Only the network, GPU, precision, machine's GPU count and nodes are read.
func (e *Engine) MaxBatch(req Request) int {
	if req.Network == nil {
		return -1
	}
	perGPU := e.memory(req.Network, req.Precision).MaxBatch(e.mem.Capacity(req.GPU))
	if perGPU < 0 {
		return -1
	}
	return perGPU * req.totalGPUs()
}
