package app

import (
	"context"
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
	}
	e := &Engine{
		catalog:  cat,
		machines: make(map[string]hw.Machine),
		measured: make(map[string]string),
		local:    make(map[string]Target),
		localErr: make(map[string]error),
		nets:     make(map[string]*cnn.Network),
	}
	for _, m := range machines {
		e.machines[strings.ToLower(m.ID)] = m
		e.machineIDs = append(e.machineIDs, m.ID)
	}
	for _, dev := range devices { // sorted by key: the first measured device of a GPU wins
		if dev.Backend == "cuda" && dev.GPUID != "" && e.measured[dev.GPUID] == "" {
			e.measured[dev.GPUID] = dev.Key
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

// GPUTarget is a one-GPU machine with the catalog GPU id and no price: its costs are
// unknown. Its machine id is "gpu/<id>".
func (e *Engine) GPUTarget(id string) (Target, error) {
	g, err := e.catalog.GPU(id)
	if err != nil {
		return Target{}, err
	}
	return Target{Machine: hw.Machine{ID: "gpu/" + g.ID, Provider: "gpu", Instance: g.ID, GPUID: g.ID, GPUCount: 1}, GPU: g}, nil
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
	// Data is the dataset, input pipeline and memory format (RunData); the zero value
	// predicts synthetic data at each model's default input.
	Data RunData
	// Nodes trains on that many instances of each machine (0 or 1: one), joined by
	// NodeNetwork where given, else by the catalog's network of the machine (NodeNetwork).
	Nodes       int
	NodeNetwork *hw.Network
}

// Curves predicts every model × target of q, in that order (models outer). Nothing
// is predicted when any part of q is wrong.
func (e *Engine) Curves(ctx context.Context, q Query) ([]predictor.Curve, error) {
	if err := q.Data.Check(); err != nil {
		return nil, err
	}
	nets := make([]*cnn.Network, len(q.Models))
	for i, name := range q.Models {
		n, err := e.networkFor(name, q.Data)
		if err != nil {
			return nil, err
		}
		nets[i] = n
	}
	reqs := make([]predictor.Request, 0, len(nets)*len(q.Targets))
	engines := make([]*predictor.Engine, 0, cap(reqs))
	backends := make([]string, 0, cap(reqs)) // a measured CPU's framework
	for _, n := range nets {
		for _, t := range q.Targets {
			batches := q.Batches
			k := max(t.Machine.GPUCount, 1) * max(q.Nodes, 1) // data-parallel GPUs
			if q.Span.Min > 0 {
				// MaxBatch reads only the network, GPU, precision, GPU count and nodes.
				sized := predictor.Request{Network: n, Machine: t.Machine, GPU: t.GPU, Precision: q.Precision, Nodes: q.Nodes}
				batches = q.Span.Grid(e.predictorFor(t).MaxBatch(sized), k)
			}
			if len(batches) > 0 && batches[0] < k {
				i := sort.SearchInts(batches, k)
				if i == len(batches) {
					return nil, fmt.Errorf("batch size %d on %s: data-parallel training over %d GPUs needs a batch of at least %d", batches[len(batches)-1], t.Machine.ID, k, k)
				}
				batches = batches[i:]
			}
			r, pred, err := e.request(&q, n, t, batches)
			if err != nil {
				return nil, err
			}
			backend := ""
			if t.cpu != nil {
				backend = measure.CPUFramework(t.DeviceKey)
			}
			reqs = append(reqs, r)
			engines = append(engines, pred)
			backends = append(backends, backend)
		}
	}
	out := make([]predictor.Curve, len(reqs))
	errs := make([]error, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(reqs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = engines[i].Curve(reqs[i])
				out[i].Backend = backends[i]
			}
		}()
	}
feed:
	for i := range reqs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("prediction cancelled: %w", err)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// request is the prediction of network n on target t at the batches as q describes
// the run (precision, policy, run data, nodes), with the engine that predicts it (a
// measured CPU has its own), checked.
func (e *Engine) request(q *Query, n *cnn.Network, t Target, batches []int) (predictor.Request, *predictor.Engine, error) {
	r := predictor.Request{Network: n, Machine: t.Machine, GPU: t.GPU, DeviceKey: t.DeviceKey,
		Precision: q.Precision, Policy: q.Policy, Batches: batches, Run: q.Run, MemoryFormat: q.Data.memoryFormat(),
		Script: q.Data.script(), Framework: q.Data.framework()}
	if t.cpu == nil && r.Machine.CPU == nil {
		assumed := hw.ReferenceCPU // a bare GPU, or a machine whose CPU is not published: say what was assumed
		r.Machine.CPU = &assumed
	}
	in, err := q.Data.inputRate(n, t)
	if err != nil {
		return r, nil, err
	}
	r.Input = in
	if q.Nodes > 1 {
		r.Nodes, r.NodeNetwork = q.Nodes, NodeNetwork(t.Machine.ID)
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
