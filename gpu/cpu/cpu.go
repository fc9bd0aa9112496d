package cpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"cnntime/gpu"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Backend runs kernels on this machine's CPU cores.
type Backend struct {
	device measure.Device
	// MemoryLimit is the most bytes a measurement may allocate, its tensors and their
	// working memory (im2col buffers) together; above it the result is out of memory,
	// as on a GPU. New sets it to half the tightest of the machine's memory, the memory
	// cgroup's limit and the address-space and data limits (readMemoryLimits).
	MemoryLimit int64
}

// New describes this machine's CPU and returns a backend for it.
func New() *Backend {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	cpuinfo, meminfo := ProcInfo()
	model := cpuModel(cpuinfo)
	mem := MemTotalBytes(meminfo)
	limit := readMemoryLimits("/", processRlimit).budget()
	return &Backend{
		device: measure.Device{
			Key:         "cpu:" + host + ":" + model,
			Backend:     "cpu",
			Name:        model,
			SMs:         runtime.NumCPU(),
			MemoryBytes: mem,
			Host:        host,
		},
		MemoryLimit: limit,
	}
}

// Device describes the CPU: its key is "cpu:<host>:<model>" and SMs counts its cores.
func (b *Backend) Device() measure.Device { return b.device }

// cpuModel is the processor's model name from /proc/cpuinfo, or says it is unknown.
func cpuModel(cpuinfo []byte) string {
	if m := InfoValue(cpuinfo, "model name"); m != "" {
		return m
	}
	return runtime.GOARCH + " CPU"
}

// cpuPrecision reports whether the CPU backend runs a precision: FP32 only.
func cpuPrecision(p measure.Precision) bool { return p == measure.FP32 || p == measure.FP32Strict }

// TimeLayer times one phase of a layer configuration, doing the work the training step
// does for it (see layerRun): the forward pass also clears the output's gradient, the
// weight gradient also applies the SGD update. Precisions other than FP32 are
// unsupported; the policy does not apply (the result's policy is measure.NoPolicy).
func (b *Backend) TimeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error) {
	m := measure.Measurement{
		DeviceKey: b.device.Key, ConfigKey: cfg.Key(), Batch: batch, Precision: prec,
		Phase: phase, Policy: measure.NoPolicy, Status: measure.OK, At: time.Now().UTC(),
	}
	if batch < 1 || repeats < 1 {
		return m, fmt.Errorf("time %s: batch %d and repeats %d must be positive", cfg.Key(), batch, repeats)
	}
	if !cpuPrecision(prec) {
		m.Status = measure.Unsupported
		return m, nil
	}
	shapes := inShapesOf(cfg)
	var bytes int64
	for _, s := range shapes {
		bytes += 2 * s.Elems() // input and its gradient
	}
	bytes = 4 * int64(batch) * (bytes + 2*cfg.Out.Elems())
	if bytes+scratchBytes(cfg, batch) > b.MemoryLimit {
		m.Status = measure.OutOfMemory
		return m, nil
	}
	o, err := newOp(cfg, shapes, batch)
	if errors.Is(err, errUnsupported) {
		m.Status = measure.Unsupported
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("time %s: %w", cfg.Key(), err)
	}
	switch phase {
	case measure.Forward, measure.BackwardData:
	case measure.BackwardWeights:
		if len(o.params()) == 0 {
			m.Status = measure.Unsupported // nothing to compute: the op has no weights
			return m, nil
		}
	default:
		return m, fmt.Errorf("time %s: unknown phase %q", cfg.Key(), phase)
	}
	// In a step a layer's tensors were written a while ago, by other kernels: they are
	// no longer in this core's own caches, and their values change from step to step.
	// Runs timed back to back on one set of tensors find them in L1/L2 and let the
	// branch predictor learn them (small layers ran 10–15% faster than in the step), so
	// a small layer's runs rotate through copies that overflow the private caches.
	copies := int(min(max(privateCacheBytes/max(bytes, 1), 1), maxTensorCopies))
	runs := make([]layerRun, copies)
	for c := range runs {
		r := layerRun{op: o, xs: make([][]float32, len(shapes)), dxs: make([][]float32, len(shapes))}
		for i, s := range shapes {
			r.xs[i] = make([]float32, int64(batch)*s.Elems())
			r.dxs[i] = make([]float32, len(r.xs[i]))
		}
		r.y = make([]float32, max(int64(batch)*cfg.Out.Elems(), 1))
		r.dy = make([]float32, len(r.y))
		if c == 0 {
			for i := range r.xs {
				fillRandom(r.xs[i], 1, uint64(i+1))
			}
			fillRandom(r.dy, 1, 99)
		} else { // the same values, shifted: other data, cheaply
			for i := range r.xs {
				rotateCopy(r.xs[i], runs[0].xs[i], c)
			}
			rotateCopy(r.dy, runs[0].dy, c)
		}
		for _, t := range append(r.dxs, r.y) {
			clear(t) // map the pages now, not in a timed run
		}
		runs[c] = r
	}
	next := 0
	run := func() {
		r := &runs[next%copies]
		next++
		switch phase {
		case measure.Forward:
			r.forward()
		case measure.BackwardData:
			r.backwardData()
		default:
			r.backwardWeights(learningRate)
		}
	}
	if phase != measure.Forward {
		// Backward kernels read what the forward pass saved; it clears dy, which holds
		// the gradient from the layers above, so keep that aside.
		dy := append([]float32(nil), runs[0].dy...)
		for c := range runs {
			runs[c].forward()
			rotateCopy(runs[c].dy, dy, c)
		}
	}
	times, err := timeRuns(ctx, run, repeats)
	if err != nil {
		return m, fmt.Errorf("time %s at batch %d: %w", cfg.Key(), batch, err)
	}
	m.MedianMS, m.SpreadMS = gpu.Summarize(times)
	m.Repeats = repeats
	m.Algorithm = algorithmOf(o)
	return m, nil
}

// privateCacheBytes is more than a few cores' own (L1 and L2) caches hold on current
// servers; maxTensorCopies bounds the copies of a small layer's tensors.
const (
	privateCacheBytes = 8 << 20
	maxTensorCopies   = 16
)

// rotateCopy fills dst with src rotated left by shift·7919 elements (a prime, so the
// copies of a tensor differ).
func rotateCopy(dst, src []float32, shift int) {
	if len(src) == 0 {
		return
	}
	k := shift * 7919 % len(src)
	n := copy(dst, src[k:])
	copy(dst[n:], src[:k])
}

// timeRuns runs fn WarmupRuns times untimed, then repeats times, and returns each
// timed run's milliseconds. It stops early when ctx is cancelled.
func timeRuns(ctx context.Context, fn func(), repeats int) ([]float64, error) {
	times := make([]float64, 0, repeats)
	for i := 0; i < gpu.WarmupRuns+repeats; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		fn()
		if i >= gpu.WarmupRuns {
			times = append(times, float64(time.Since(start).Nanoseconds())/1e6)
		}
	}
	return times, nil
}

func algorithmOf(o op) string {
	if c, ok := o.(*conv); ok {
		if c.depthwise() {
			return "direct-depthwise"
		}
		return "im2col-gemm"
	}
	return ""
}
