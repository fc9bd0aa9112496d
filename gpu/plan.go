package gpu

import (
	"fmt"
	"sort"
	"time"

	"cnntime/gpu/convalgo"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Key identifies one measurement of a device at one precision and policy: the cache's
// answer to "is this measured already?".
type Key struct {
	Config string // cnn.Config.Key()
	Batch  int
	Phase  measure.Phase
}

// Settled says whether a cached outcome on a device of backend ("cuda", "cpu") needs no
// new measurement. A time never does. Out of memory and unsupported do on a GPU: the
// first may be another process holding memory at the time, the second a broken or
// partial install (NVRTC absent, the kernels not built, a cuDNN sub-library missing)
// fixed since; trying them again is cheap (an allocation or a set-up that fails at
// once). cnntime's Go CPU backend decides both from the configuration and its memory
// limit alone, so they stand.
func Settled(backend string, s measure.Status) bool {
	return s == measure.OK || backend != "cuda"
}

// SameAPI reports whether a cached convolution's algorithm (its label says which API
// chose it: convalgo.APIOf) is of the cuDNN API a sweep asks for ("" is legacy); a
// measurement that names no API (cnntime's kernels, cuBLAS, a CPU, an older row) is.
func SameAPI(algorithm, api string) bool {
	got := convalgo.APIOf(algorithm)
	if api == "" {
		api = convalgo.Legacy
	}
	return got == "" || got == api
}

// Item is one measurement a sweep takes.
type Item struct {
	Config cnn.Config    `json:"config"`
	Batch  int           `json:"batch"`
	Phase  measure.Phase `json:"phase"`
	// Precision is the kernel precision the item runs in; "" is the job's. A sweep of a
	// training precision gives each layer its own: PyTorch's fp32 runs convolutions in
	// TF32 on Ampere and later, everything else in FP32.
	Precision measure.Precision `json:"precision,omitempty"`
	// EstimateS is the planner's rough guess of the seconds it takes, warm-up included.
	EstimateS float64 `json:"estimate_s,omitempty"`
}

// Key is the item's identity in the cache.
func (it Item) Key() Key { return Key{Config: it.Config.Key(), Batch: it.Batch, Phase: it.Phase} }

// Rate is a device's rough throughput, used only to estimate how long a plan takes.
type Rate struct {
	FLOPS       float64 // floating-point operations per second a kernel reaches
	BytesPerSec float64 // memory bytes per second a memory-bound kernel reaches
	OverheadS   float64 // fixed cost of one kernel run (launch, synchronisation)
}

// RateOf guesses a device's rate from its description: a CPU core with gonum reaches a
// few GFLOPS; a GPU's FP32 rate follows from its SMs and clock.
func RateOf(d measure.Device) Rate {
	if d.Backend == "cuda" {
		sms, mhz := float64(max(d.SMs, 20)), float64(max(d.ClockMHz, 1200))
		return Rate{FLOPS: sms * 128 * 2 * mhz * 1e6 * 0.5, BytesPerSec: 400e9, OverheadS: 20e-6}
	}
	return Rate{FLOPS: float64(max(d.SMs, 1)) * 5e9, BytesPerSec: 5e9, OverheadS: 20e-6}
}

// PlanOptions says what to sweep.
type PlanOptions struct {
	Networks []*cnn.Network
	Batches  []int
	Repeats  int
	Rate     Rate
	// Measured holds what the cache already has for this device, precision and policy
	// and need not measure again (Settled); those items are left out of the plan.
	Measured map[Key]bool
	// Unsettled holds what the cache has with an outcome to try again (Settled is
	// false): those items are planned, and counted in Plan.Retried.
	Unsettled map[Key]bool
	// Phases lists the kernels a layer runs on the device; nil is PyTorch on cuDNN
	// (cnn.Layer.Phases). The CPU backend runs more (views copy, batch norm's weight
	// gradient is a kernel of its own).
	Phases func(l *cnn.Layer) []measure.Phase
	// Precision is the kernel precision a layer is measured in; nil leaves every item
	// at the job's.
	Precision func(l *cnn.Layer) measure.Precision
}

// Plan is an ordered list of measurements to take.
type Plan struct {
	Items    []Item
	Configs  int           // distinct layer configurations across the selected networks
	Layers   int           // layers with a kernel across the selected networks
	Cached   int           // measurements left out because the cache holds them
	Retried  int           // items planned again: the cache holds an outcome to retry (out of memory or unsupported on a GPU, or another cuDNN API's)
	Estimate time.Duration // rough time to take every item
}

// MakePlan lists the measurements that the networks need at the batch sizes: each
// distinct layer configuration once however many layers and networks share it, every
// phase it has, minus what is measured already. Items are ordered so that a partial
// sweep is useful: powers of two first for every configuration, then multiples of 16,
// then multiples of 8, then the rest; within a level by configuration and batch size.
func MakePlan(o PlanOptions) (Plan, error) {
	if len(o.Networks) == 0 {
		return Plan{}, fmt.Errorf("no networks to sweep: choose at least one model")
	}
	if len(o.Batches) == 0 {
		return Plan{}, fmt.Errorf("no batch sizes to sweep: give some, like 1-64,96,128")
	}
	for _, b := range o.Batches {
		if b < 1 || b > MaxBatch {
			return Plan{}, fmt.Errorf("batch size %d is out of range: use 1 to %d", b, MaxBatch)
		}
	}
	if o.Repeats < 1 {
		return Plan{}, fmt.Errorf("repeats is %d: measure each kernel at least once", o.Repeats)
	}
	if o.Rate.FLOPS <= 0 || o.Rate.BytesPerSec <= 0 {
		return Plan{}, fmt.Errorf("the device rate %+v must be positive to estimate the plan's duration", o.Rate)
	}
	// Each distinct configuration once, in order of first use, with the union of the
	// phases its layers run (the first convolution runs no input gradient, but a layer
	// with the same configuration deeper in another network does).
	type source struct {
		layer  *cnn.Layer
		index  int
		phases map[measure.Phase]bool
	}
	var order []*source
	byConfig := map[cnn.Config]*source{}
	var p Plan
	for _, net := range o.Networks {
		for i := range net.Layers {
			l := &net.Layers[i]
			phases := l.Phases()
			if o.Phases != nil {
				phases = o.Phases(l)
			}
			if len(phases) == 0 {
				continue // a view (flatten, slice): no kernel
			}
			p.Layers++
			src := byConfig[l.Config]
			if src == nil {
				src = &source{layer: l, index: len(order), phases: map[measure.Phase]bool{}}
				byConfig[l.Config] = src
				order = append(order, src)
			}
			for _, ph := range phases {
				src.phases[ph] = true
			}
		}
	}
	p.Configs = len(order)
	batches := append([]int(nil), o.Batches...)
	sort.Ints(batches)
	for _, src := range order {
		key := src.layer.Config.Key()
		for _, b := range batches {
			for _, ph := range measure.Phases {
				if !src.phases[ph] {
					continue
				}
				k := Key{Config: key, Batch: b, Phase: ph}
				if o.Measured[k] {
					p.Cached++
					continue
				}
				if o.Unsettled[k] {
					p.Retried++
				}
				est := estimateSeconds(src.layer, b, ph, o.Rate) * float64(o.Repeats+WarmupRuns)
				it := Item{Config: src.layer.Config, Batch: b, Phase: ph, EstimateS: est}
				if o.Precision != nil {
					it.Precision = o.Precision(src.layer)
				}
				p.Items = append(p.Items, it)
				p.Estimate += time.Duration(est * float64(time.Second))
			}
		}
	}
	sort.SliceStable(p.Items, func(i, j int) bool {
		a, b := p.Items[i], p.Items[j]
		if la, lb := batchLevel(a.Batch), batchLevel(b.Batch); la != lb {
			return la < lb
		}
		if ia, ib := byConfig[a.Config].index, byConfig[b.Config].index; ia != ib {
			return ia < ib
		}
		return a.Batch < b.Batch // phases keep their order: the sort is stable
	})
	return p, nil
}

// estimateSeconds is a roofline guess of one run of a layer phase: the larger of its
// arithmetic at the device's FLOP rate and its memory traffic at the device's bandwidth.
func estimateSeconds(l *cnn.Layer, batch int, phase measure.Phase, r Rate) float64 {
	w := l.Work(phase, batch, 4)
	if w.FLOPs == 0 && w.Bytes() == 0 {
		// The layer that chose this configuration runs no such kernel (the first
		// convolution's input gradient): cost it as its forward pass.
		w = l.Work(measure.Forward, batch, 4)
	}
	return max(w.FLOPs/r.FLOPS, float64(w.Bytes())/r.BytesPerSec) + r.OverheadS
}
