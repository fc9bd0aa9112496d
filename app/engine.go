package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"cnntime/assets"
	"cnntime/db"
	"cnntime/gpu"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// Engine is the predictor with what it needs loaded: the embedded catalog and
// calibration, the user's machines and price overrides, and every kernel measurement
// in the cache. The GUI and the CLI share it. It is safe for concurrent use; build a
// new one after the cache changes.
type Engine struct {
	catalog    *hw.Catalog
	machines   map[string]hw.Machine // by lower-case id: the catalog's with overrides, and the user's
	machineIDs []string
	measured   map[string]string // catalog GPU id → the measured CUDA device of that GPU in the cache
	// local holds the targets of the devices measured in the cache (local/...), by
	// lower-case id; localErr says why a listed one cannot be predicted.
	local    map[string]Target
	localErr map[string]error
	kernels  *kernels.Model
	pred     *predictor.Engine
	// steps are the cache's measured whole steps, shown beside an explanation.
	steps map[stepKey][]measure.Step

	mu     sync.Mutex
	nets   map[string]*cnn.Network // the zoo networks built so far and the custom ones added
	custom []string                // the custom networks' names, in the order added
	// warnings say what was left out while loading: custom models saved in the cache
	// that no longer parse.
	warnings []string
}

// NewEngine loads the embedded catalog and calibration and, when d is not nil, the
// cache's user machines, price overrides, devices, kernel measurements and custom models.
func NewEngine(ctx context.Context, d *db.DB) (*Engine, error) {
	cat, err := LoadCatalog()
	if err != nil {
		return nil, err
	}
	cal, err := kernels.ParseCalibration(assets.Calibration)
	if err != nil {
		return nil, fmt.Errorf("the embedded calibration is broken (a build mistake; report it): %w", err)
	}
	machines, local, err := machinesWithLocal(ctx, d)
	if err != nil {
		return nil, err
	}
	var (
		devices []measure.Device
		ms      []measure.Measurement
		configs map[string]cnn.Config
		steps   []measure.Step
	)
	if d != nil {
		if devices, err = d.Devices(ctx); err != nil {
			return nil, err
		}
		if ms, err = d.Measurements(ctx, "", nil); err != nil {
			return nil, err
		}
		if configs, err = cacheConfigs(ctx, d); err != nil {
			return nil, err
		}
		if steps, err = d.Steps(ctx, db.StepFilter{}); err != nil {
			return nil, err
		}
	}
	e := &Engine{
		catalog:  cat,
		machines: make(map[string]hw.Machine),
		measured: make(map[string]string),
		local:    make(map[string]Target),
		localErr: make(map[string]error),
		nets:     make(map[string]*cnn.Network),
		steps:    fileSteps(steps),
	}
	for _, m := range machines {
		e.machines[strings.ToLower(m.ID)] = m
		e.machineIDs = append(e.machineIDs, m.ID)
	}
	// The measured device of a GPU: cnntime's worker's (sorted by key, the first wins),
	// else PyTorch's layer rows (scripts/pytorch_sweep.py --layers, kept under a key of
	// their own: a small layer's time holds Python's issue rate there, which the step
	// model adds as host time).
	for _, pytorch := range []bool{false, true} {
		for _, dev := range devices {
			if dev.Backend == "cuda" && dev.GPUID != "" && e.measured[dev.GPUID] == "" && measure.MeasuredByPyTorch(dev.Key) == pytorch {
				e.measured[dev.GPUID] = dev.Key
			}
		}
	}
	e.kernels = kernels.NewModel(cal, cat.GPUs(), devices, ms)
	e.pred = predictor.NewEngine(e.kernels, predictor.DefaultOverheads, predictor.DefaultMemoryModel)
	e.addLocalTargets(local, ms, configs)
	if d != nil {
		if err := e.addSavedModels(ctx, d); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// MeasuredDevice is the key of the measured device whose rows predict the catalog GPU
// gpuID ("" when none): cnntime's worker's where there is one, else PyTorch's.
func (e *Engine) MeasuredDevice(gpuID string) string { return e.measured[gpuID] }

// Warnings says what NewEngine left out of the cache, and why.
func (e *Engine) Warnings() []string { return append([]string(nil), e.warnings...) }

// Catalog is the embedded hardware catalog.
func (e *Engine) Catalog() *hw.Catalog { return e.catalog }

// Predictor is the step-time engine underneath.
func (e *Engine) Predictor() *predictor.Engine { return e.pred }

// Kernels is the per-layer model underneath.
func (e *Engine) Kernels() *kernels.Model { return e.kernels }

// MachineIDs lists every machine: the catalog's, then the user's.
func (e *Engine) MachineIDs() []string { return append([]string(nil), e.machineIDs...) }

// Network returns the CNN called name: a custom network added with AddNetwork, or the
// zoo CNN of that name at its default input, built once. Curves looks models up here.
func (e *Engine) Network(name string) (*cnn.Network, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n, ok := e.nets[name]; ok {
		return n, nil
	}
	n, err := cnn.Build(name, cnn.Options{})
	if err != nil {
		if cnn.Family(name) == "" {
			return nil, fmt.Errorf("unknown model %q%s: 'cnntime models' lists them, or give a custom model file (.json)",
				name, Suggest(name, append(cnn.Names(), e.custom...)))
		}
		return nil, err
	}
	e.nets[name] = n
	return n, nil
}

// networkFor is the network called name as the run d trains it: a custom network as
// it was given; a zoo model at the run's input size and classes, built once.
func (e *Engine) networkFor(name string, d RunData) (*cnn.Network, error) {
	e.mu.Lock()
	_, custom := e.nets[name]
	e.mu.Unlock()
	if custom && cnn.Family(name) == "" {
		return e.Network(name)
	}
	opt, err := d.buildOptions(name)
	if err != nil {
		return nil, err
	}
	if (opt.Resolution == 0 || opt.Resolution == cnn.DefaultResolution(name)) && (opt.Classes == 0 || opt.Classes == 1000) {
		return e.Network(name)
	}
	key := fmt.Sprintf("%s@%dpx/%d", name, opt.Resolution, opt.Classes)
	e.mu.Lock()
	defer e.mu.Unlock()
	if n, ok := e.nets[key]; ok {
		return n, nil
	}
	n, err := cnn.Build(name, opt)
	if err != nil {
		if cnn.Family(name) == "" {
			return nil, fmt.Errorf("unknown model %q%s: 'cnntime models' lists them, or give a custom model file (.json)",
				name, Suggest(name, append(cnn.Names(), e.custom...)))
		}
		return nil, err
	}
	e.nets[key] = n
	return n, nil
}

// AddNetwork registers a custom network (from cnn.ParseCustom) under its name, so that
// Curves predicts it as it does a zoo model: from the cache's measurements on the
// target GPU where its layer configurations were measured, interpolated or transferred
// from other GPUs, else estimated. Adding a network of a name already added replaces
// it. A name of a zoo model is refused, as is a network without a name or layers.
func (e *Engine) AddNetwork(n *cnn.Network) error {
	if err := CheckCustomNetwork(n); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, added := e.nets[n.Name]; !added {
		e.custom = append(e.custom, n.Name)
	}
	e.nets[n.Name] = n
	return nil
}

// CustomNames lists the custom networks added, in the order they were first added.
func (e *Engine) CustomNames() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.custom...)
}

// Target is one machine a prediction is for, with its GPU.
type Target struct {
	Machine hw.Machine
	GPU     hw.GPU // for a CPU, the host processor as hw.HostCPU describes it
	// DeviceKey is the measured device a local machine is; "" for the others, which
	// use the first measured device of their GPU in the cache, if any.
	DeviceKey string
	// cpu is the step model of a measured CPU (nil for a GPU): its own measurements
	// and roofline, the CPU backend's kernels added one after another.
	cpu *predictor.Engine
}

// addLocalTargets makes the devices measured in the cache machines one can predict: a
// CUDA GPU as its catalog GPU with its own measurements first, a CPU with its own
// measurements and the roofline fitted to them. A CPU whose measurements cannot give
// a roofline stays listed, and predicting it says why it cannot be.
func (e *Engine) addLocalTargets(local []localMachine, ms []measure.Measurement, configs map[string]cnn.Config) {
	for _, lm := range local {
		id := strings.ToLower(lm.machine.ID)
		if lm.device.Backend != "cpu" {
			g, err := e.catalog.GPU(lm.machine.GPUID)
			if err != nil {
				e.localErr[id] = fmt.Errorf("machine %s: %w", lm.machine.ID, err)
				continue
			}
			e.local[id] = Target{Machine: lm.machine, GPU: g, DeviceKey: lm.device.Key}
			continue
		}
		t, err := cpuTarget(lm, e.kernels, ms, configs)
		if err != nil {
			e.localErr[id] = err
			e.warnings = append(e.warnings, err.Error())
			continue
		}
		e.local[id] = t
	}
}

// isLocal reports whether id is a device measured in the cache (predictable or not).
func (e *Engine) isLocal(id string) bool {
	key := strings.ToLower(strings.TrimSpace(id))
	_, ok := e.local[key]
	_, bad := e.localErr[key]
	return ok || bad
}

// MachineTarget looks a machine up by id: a catalog instance, one of the user's, or a
// device measured in the cache.
func (e *Engine) MachineTarget(id string) (Target, error) {
	key := strings.ToLower(strings.TrimSpace(id))
	if t, ok := e.local[key]; ok {
		return t, nil
	}
	if err, ok := e.localErr[key]; ok {
		return Target{}, err
	}
	m, ok := e.machines[key]
	if !ok {
		return Target{}, fmt.Errorf("unknown machine %q%s: 'cnntime machines' lists them", id, Suggest(id, e.machineIDs))
	}
	g, err := e.catalog.GPU(m.GPUID)
	if err != nil {
		return Target{}, fmt.Errorf("machine %s: %w", m.ID, err)
	}
	return Target{Machine: m, GPU: g}, nil
}

// Regions lists every region a machine has a price in (imported regional prices, the
// shipped catalog's regions and its spot snapshot's), sorted.
func (e *Engine) Regions() []string {
	seen := map[string]bool{}
	var out []string
	add := func(r string) {
		if r != "" && !seen[strings.ToLower(r)] {
			seen[strings.ToLower(r)] = true
			out = append(out, r)
		}
	}
	for _, id := range e.machineIDs {
		for _, r := range e.machines[strings.ToLower(id)].KnownRegions() {
			add(r)
		}
	}
	sort.Strings(out)
	return out
}

// CheckPriceChoice refuses a region no machine is priced in, suggesting the closest.
func (e *Engine) CheckPriceChoice(c hw.PriceChoice) error {
	if c.Region == "" {
		return nil
	}
	regions := e.Regions()
	for _, r := range regions {
		if strings.EqualFold(r, c.Region) {
			return nil
		}
	}
	return Inputf("no machine has a price in region %q%s (%d regions known; 'cnntime prices' says where prices come from)",
		c.Region, SuggestRegion(c.Region, regions), len(regions))
}

// SuggestRegion suggests the region spelt most like r, " (did you mean ...?)", or "":
// by edit distance alone, since region names share prefixes ("us-east-1", "US").
func SuggestRegion(r string, regions []string) string {
	best, bestD := "", max(2, len(r)/3)+1
	for _, x := range regions {
		if d := hw.EditDistance(strings.ToLower(r), strings.ToLower(x)); d < bestD {
			best, bestD = x, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// GPUTarget is a one-GPU machine with the catalog GPU id and no price: its costs are
// unknown. Its machine id is "gpu/<id>".
func (e *Engine) GPUTarget(id string) (Target, error) {
	g, err := e.catalog.GPU(id)
	if err != nil {
		return Target{}, err
	}
	return Target{Machine: hw.Machine{ID: hw.BareGPUProvider + "/" + g.ID, Provider: hw.BareGPUProvider, Instance: g.ID, GPUID: g.ID, GPUCount: 1}, GPU: g}, nil
}

// Query asks for every model on every target.
type Query struct {
	Models  []string
	Targets []Target
	Batches []int // global batch sizes, ascending; a target with n GPUs gets those ≥ n
	// Span, when its Min is set, replaces Batches: each curve runs over BatchGrid from
	// Min up to the largest batch that fits its machine (see BatchSpan).
	Span      BatchSpan
	Precision measure.Precision
	Policy    measure.Policy
	Run       predictor.Run
	// Train, training to a target, gives each network its recipe plan (Training.Plan)
	// in place of Run.ToTarget.
	Train Training
	// Data is the dataset, input pipeline and memory format (RunData); the zero value
	// predicts synthetic data at each model's default input.
	Data RunData
	// Nodes trains on that many instances of each machine (0 or 1: one), joined by
	// NodeNetwork where given, else by the catalog's network of the machine (NodeNetwork).
	Nodes       int
	NodeNetwork *hw.Network
	// Price says which price the costs use: a region ("" each machine's cheapest) and
	// on-demand or spot. A machine without such a price is predicted with its cost
	// unknown, and its curve's Price.Note says why.
	Price hw.PriceChoice
	// TransientPoints says that StreamCurves' work keeps nothing of a curve's points
	// once it returns (it writes them out, or copies what it keeps): each worker then
	// predicts its next curve into the same points, which for every zoo CNN on every
	// catalog machine at 1–1024 saves allocating (and collecting) hundreds of megabytes.
	TransientPoints bool
	// PointsOnly says that StreamCurves' work reads each curve's points and what
	// describes them, not its best batch, sweet spots or recommendation, which are then
	// not worked out (predictor.Request.PointsOnly).
	PointsOnly bool
}

// ToTarget says whether q trains to a target accuracy.
func (q Query) ToTarget() bool { return q.Run.ToTarget != nil || q.Train.Mode == TrainToTarget }

// Curves predicts every model × target of q, in that order (models outer). Nothing
// is predicted when any part of q is wrong. It holds every curve at once: for many
// models × machines × batch sizes, StreamCurves hands them over one by one instead.
func (e *Engine) Curves(ctx context.Context, q Query) ([]predictor.Curve, error) {
	var out []predictor.Curve
	err := StreamCurves(ctx, e, q, func(c *predictor.Curve) (predictor.Curve, error) { return *c, nil },
		func(c predictor.Curve) error { out = append(out, c); return nil })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// StreamCurves predicts every model × target of q in Curves' order and hands each
// curve first to work, on one of several goroutines as soon as it is predicted, and
// then work's result to use, on the calling goroutine and in order. Only the few curves
// being predicted or waiting for their turn are held at a time, so memory does not grow
// with the number of models × machines (work may turn a curve into its output rows, its
// summary, or a copy that use keeps). Nothing is predicted when any part of q is
// wrong; an error from work or use stops the prediction and is returned.
func StreamCurves[T any](ctx context.Context, e *Engine, q Query, work func(*predictor.Curve) (T, error), use func(T) error) error {
	pairs, err := e.plan(q)
	if err != nil {
		return err
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	type job struct {
		i   int
		out chan result
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), pairs.count()))
	queue := newCurveQueue[job]()
	ordered := make(chan chan result, curvesAhead*workers) // the curves predicted ahead of use: a window
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var points []predictor.Point // the last curve's, reused with TransientPoints
			for {
				j, table, ok := queue.take()
				if !ok {
					return
				}
				var r result
				if r.err = ctx.Err(); r.err == nil {
					c, err := pairs.curve(j.i, points)
					if err != nil {
						r.err = err
					} else {
						r.v, r.err = work(&c)
					}
					if q.TransientPoints && cap(c.Points) > cap(points) {
						points = c.Points
					}
				}
				queue.done(table)
				j.out <- r
			}
		}()
	}
	go func() {
		defer close(ordered)
		defer queue.close()
		for i := range pairs.count() {
			out := make(chan result, 1)
			select {
			case ordered <- out: // waits while the window is full
			case <-ctx.Done():
				return
			}
			queue.add(job{i, out}, pairs.tableOf(i))
		}
	}()
	var first error
	for out := range ordered {
		r := <-out
		if first != nil {
			continue // drain: the producer has stopped
		}
		if r.err == nil {
			r.err = use(r.v)
		}
		if r.err != nil {
			first = r.err
			cancel()
		}
	}
	wg.Wait()
	if err := parent.Err(); err != nil && (first == nil || errors.Is(first, err)) {
		return fmt.Errorf("prediction cancelled: %w", err)
	}
	return first
}

// queryPlan is a checked query: its networks and a way to make the request of each
// model × target (i = model × len(targets) + target) when it is predicted.
type queryPlan struct {
	e    *Engine
	q    *Query
	nets []*cnn.Network
	// reserve is, for each model on each GPU (or device), the largest per-GPU batch its
	// machines ask for: the first curve fills the step table that far at once.
	reserve map[tableUse]int
	// unavailable are the model × targets the run cannot be predicted for, and why.
	unavailable map[int]error
}

// tableUse is what one step table serves: a model on a GPU or measured device, through
// one engine.
type tableUse struct {
	model       int
	engine      *predictor.Engine
	gpu, device string
}

func (p *queryPlan) count() int { return len(p.nets) * len(p.q.Targets) }

// plan checks every part of q and every model × target's request, so that a wrong one
// is found before anything is predicted. A model that cannot be built for the run (an
// input smaller than it takes) or a model × target the run does not suit (a batch
// below its GPU count) is unavailable: its curve says why and has no points, and the
// others are predicted. A query none of whose curves can be predicted, or that names a
// model nobody knows, is an error.
func (e *Engine) plan(q Query) (*queryPlan, error) {
	if err := q.Data.Check(); err != nil {
		return nil, err
	}
	p := &queryPlan{e: e, q: &q, nets: make([]*cnn.Network, len(q.Models)), unavailable: map[int]error{}}
	for i, name := range q.Models {
		n, err := e.networkFor(name, q.Data)
		if err != nil {
			if !e.knowsModel(name) {
				return nil, err
			}
			for j := range q.Targets {
				p.unavailable[i*len(q.Targets)+j] = err
			}
			continue
		}
		p.nets[i] = n
	}
	p.reserve = map[tableUse]int{}
	var first error
	for i := range p.count() {
		if err := p.unavailable[i]; err != nil {
			first = cmp.Or(first, err)
			continue
		}
		r, pred, err := p.request(i)
		if err != nil {
			p.unavailable[i], first = err, cmp.Or(first, err)
			continue
		}
		use := tableUse{i / len(q.Targets), pred, r.GPU.ID, r.DeviceKey}
		gpus := max(r.Machine.GPUCount, 1) * max(r.Nodes, 1)
		p.reserve[use] = max(p.reserve[use], (r.Batches[len(r.Batches)-1]+gpus-1)/gpus)
	}
	if len(p.unavailable) == p.count() && first != nil {
		return nil, first
	}
	return p, nil
}

// knowsModel reports whether name is a zoo model or a custom network of the engine.
func (e *Engine) knowsModel(name string) bool {
	if cnn.Family(name) != "" {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.nets[name]
	return ok
}

// request is model × target i's request and the engine that predicts it.
func (p *queryPlan) request(i int) (predictor.Request, *predictor.Engine, error) {
	e, q := p.e, p.q
	n, t := p.nets[i/len(q.Targets)], q.Targets[i%len(q.Targets)]
	batches := q.Batches
	nodes := nodesOn(q, t)
	k := max(t.Machine.GPUCount, 1) * nodes // data-parallel GPUs
	if q.Span.Min > 0 {
		// MaxBatch reads only the network, GPU, precision, GPU count and nodes.
		sized := predictor.Request{Network: n, Machine: t.Machine, GPU: t.GPU, Precision: q.Precision, Nodes: nodes}
		batches = q.Span.Grid(e.predictorFor(t).MaxBatch(sized), k)
	}
	batches, err := capToImages(batches, q.Run.Images, q.Span.Min > 0)
	if err != nil {
		return predictor.Request{}, nil, err
	}
	if len(batches) > 0 && batches[0] < k {
		j := sort.SearchInts(batches, k)
		if j == len(batches) {
			return predictor.Request{}, nil, fmt.Errorf("batch size %d on %s: data-parallel training over %d GPUs needs a batch of at least %d", batches[len(batches)-1], t.Machine.ID, k, k)
		}
		batches = batches[j:]
	}
	return e.request(q, n, t, batches)
}

// curve predicts model × target i, into points where they are enough
// (predictor.Request.Points; nil: new ones); an unavailable one is a curve without
// points that says why.
func (p *queryPlan) curve(i int, points []predictor.Point) (predictor.Curve, error) {
	if err := p.unavailable[i]; err != nil {
		t := p.q.Targets[i%len(p.q.Targets)]
		return predictor.Curve{Model: p.q.Models[i/len(p.q.Targets)], Machine: t.Machine.ID, GPU: t.GPU.ID,
			GPUCount: max(t.Machine.GPUCount, 1) * nodesOn(p.q, t), Precision: p.q.Precision, Best: -1, MaxBatch: -1,
			Dataset: p.q.Data.Dataset, Unavailable: err.Error()}, nil
	}
	r, pred, err := p.request(i)
	if err != nil {
		return predictor.Curve{}, err
	}
	pred.Reserve(r, p.reserve[tableUse{i / len(p.q.Targets), pred, r.GPU.ID, r.DeviceKey}])
	r.Points = points
	t := p.q.Targets[i%len(p.q.Targets)]
	r.Anchors = p.e.anchorsFor(t, &r)
	c, err := pred.Curve(r)
	c.Dataset = p.q.Data.Dataset
	if t.cpu != nil {
		c.Backend = measure.CPUFramework(t.DeviceKey)
		for j := range c.Points {
			c.Points[j].Bound = cpuBound(c.Points[j].Bound)
		}
	}
	return c, err
}

// capToImages keeps the batch sizes that are at most an epoch's images: a larger batch
// would make an epoch less than one step. A grid that runs past them (span) ends at
// exactly the images; when every size given is larger, that is an error.
func capToImages(batches []int, images int, span bool) ([]int, error) {
	if images <= 0 || len(batches) == 0 || batches[len(batches)-1] <= images {
		return batches, nil
	}
	i := sort.SearchInts(batches, images+1)
	if i == 0 {
		return nil, fmt.Errorf("batch size %d is above the %d training images of an epoch (an epoch would be less than one step): give batch sizes up to %d", batches[0], images, images)
	}
	out := batches[:i:i]
	if span && out[len(out)-1] < images {
		out = append(out, images)
	}
	return out, nil
}

// request is the prediction of network n on target t at the batches as q describes
// the run (precision, policy, run data, nodes) and its price (q.Price), with the engine that predicts it (a
// measured CPU has its own), checked.
func (e *Engine) request(q *Query, n *cnn.Network, t Target, batches []int) (predictor.Request, *predictor.Engine, error) {
	t.Machine = t.Machine.Priced(q.Price).Aged(today())
	r := predictor.Request{Network: n, Machine: t.Machine, GPU: t.GPU, DeviceKey: t.DeviceKey,
		Precision: q.Precision, Policy: q.Policy, Batches: batches, Run: q.Run, MemoryFormat: q.Data.memoryFormat(),
		Script: q.Data.script(), Framework: q.Data.framework(), Software: q.Data.software(), PointsOnly: q.PointsOnly}
	if q.Train.Mode == TrainToTarget {
		plan, err := q.Train.Plan(n.Name, q.Data)
		if err != nil {
			return r, nil, err
		}
		r.Run.ToTarget = plan
	}
	r.RecipeBatch = q.Train.RecipeBatch(n.Name, q.Data, r.Run.ToTarget)
	if t.cpu == nil { // a GPU's loader runs on its machine's host; a measured CPU's data is where it trains
		h := host.Resolve(t.Machine.CPU, t.Machine.VCPUs, t.Machine.MemoryGiB)
		r.Host = &h
	}
	in, err := q.Data.inputRate(n, t, r.Host)
	if err != nil {
		return r, nil, err
	}
	r.Input = in
	if nodes := nodesOn(q, t); nodes > 1 {
		r.Nodes, r.NodeNetwork = nodes, NodeNetwork(t.Machine.ID)
		if q.NodeNetwork != nil {
			r.NodeNetwork = *q.NodeNetwork
		}
	}
	if r.DeviceKey == "" {
		r.DeviceKey = e.measured[t.GPU.ID]
	}
	if t.cpu != nil {
		r = cpuStepRequest(r)
	}
	if err := r.Check(); err != nil {
		return r, nil, err
	}
	return r, e.predictorFor(t), nil
}

// nodesOn is how many instances of target t train together under q: q.Nodes (at
// least 1), but one for this computer and the devices measured on it, which no
// cloud multiplies (Instances applies to the machines one rents).
func nodesOn(q *Query, t Target) int {
	if thisComputer(t.Machine) {
		return 1
	}
	return max(q.Nodes, 1)
}

// cpuBound is a measured CPU's bound: its own kernels, where the step model says
// "gpu" (the device that runs them).
func cpuBound(bound string) string {
	if bound == BoundGPU {
		return BoundCPU
	}
	return bound
}

// predictorFor is the engine that predicts on t: a measured CPU's own step model, else
// the GPU model.
func (e *Engine) predictorFor(t Target) *predictor.Engine {
	if t.cpu != nil {
		return t.cpu
	}
	return e.pred
}

// MaxSweepBatch is the largest batch size a sweep accepts.
const MaxSweepBatch = gpu.MaxBatch

// FormatBatches writes ascending batch sizes as ParseBatches reads them, as short as it
// can ("1-16,24,32").
func FormatBatches(sizes []int) string { return gpu.FormatBatches(sizes) }

// ParseBatches reads batch sizes as gpu.ParseBatches does — a number ("64"), a range
// ("1-1024": every size in it), or a comma-separated list of both ("16,32,48-64") — and
// checks that none is above maxBatch. The result ascends without repeats.
func ParseBatches(s string, maxBatch int) ([]int, error) {
	out, err := gpu.ParseBatches(s)
	if err != nil {
		return nil, err
	}
	if last := out[len(out)-1]; last > maxBatch {
		return nil, fmt.Errorf("batch size %d is above the largest this tool predicts (%d)", last, maxBatch)
	}
	return out, nil
}
