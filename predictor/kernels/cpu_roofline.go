package kernels

import (
	"fmt"
	"math"
	"sort"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// cpuElemBytes is the size of a tensor element on the CPU backend, which runs FP32 only.
const cpuElemBytes = 4

// CPURoofline is a CPU's roofline drawn from its own measurements: the median
// arithmetic rate its GEMM kernels (convolutions, linear layers) achieved and the
// median memory rate its memory-bound kernels (normalisation, activations, pooling,
// copies) achieved. A kernel the CPU never measured is estimated as the larger of its
// FLOPs at the first rate and its bytes at the second (see CPUWork); nothing of a GPU's
// specifications or measurements enters.
type CPURoofline struct {
	GFLOPS float64 `json:"gflops"` // median achieved FP32 GFLOP/s over the measured GEMM kernels
	GBs    float64 `json:"gbs"`    // median achieved GB/s over the measured memory-bound kernels
	// RelErr is the median relative error of the roofline over the kernels it was
	// fitted on: the error band of its estimates.
	RelErr  float64 `json:"rel_err"`
	Kernels int     `json:"kernels"` // the measurements it was fitted on
}

// CPUWork is the arithmetic (FLOPs) and memory traffic (bytes) of one phase of
// configuration c at batch size n on the CPU backend, in FP32. It counts what the
// CPU backend runs: its batch-norm weight gradient is a pass of its own over the
// input and the output gradient, and views are copies.
func CPUWork(c cnn.Config, phase measure.Phase, n int) (flops, bytes float64) {
	if n <= 0 {
		return 0, 0
	}
	k := costOf(c, phase)
	fn := float64(n)
	if k.none {
		return 0, (float64(c.In.Elems()) + float64(c.Out.Elems())) * fn * cpuElemBytes
	}
	if k.hasGEMM {
		g := k.gemm
		m := float64(g.m0) + float64(g.mPerSample)*fn
		kk := float64(g.k0) + float64(g.kPerSample)*fn
		flops = 2 * m * float64(g.n) * kk * float64(g.groups)
	}
	return flops, (k.elemsPerSample*fn + k.elemsFixed) * cpuElemBytes
}

// FitCPURoofline fits a CPU's roofline to its measurements (one device's, all FP32).
// configs maps a measurement's ConfigKey to its configuration; measurements of
// configurations it lacks, and those that are not OK, are left out. It is an error
// when no GEMM kernel or no memory-bound kernel is left: one of the two rates would be
// unknown.
func FitCPURoofline(ms []measure.Measurement, configs map[string]cnn.Config) (CPURoofline, error) {
	type sample struct {
		cfg   cnn.Config
		phase measure.Phase
		batch int
		ms    float64
	}
	var (
		samples       []sample
		gflops, gbsOf []float64
	)
	for _, m := range ms {
		c, ok := configs[m.ConfigKey]
		if !ok || m.Status != measure.OK || m.Validate() != nil {
			continue
		}
		flops, bytes := CPUWork(c, m.Phase, m.Batch)
		perS := 1 / (m.MedianMS * 1e6) // 1 ÷ (milliseconds × 10⁶): per-second rate in units of 10⁹
		switch {
		case ClassOf(c) != ClassMemory && flops > 0:
			gflops = append(gflops, flops*perS)
		case ClassOf(c) == ClassMemory && bytes > 0:
			gbsOf = append(gbsOf, bytes*perS)
		default:
			continue
		}
		samples = append(samples, sample{c, m.Phase, m.Batch, m.MedianMS})
	}
	if len(gflops) == 0 || len(gbsOf) == 0 {
		return CPURoofline{}, fmt.Errorf("the CPU's measurements hold %d GEMM kernels (convolution, linear) and %d memory-bound ones: both are needed to estimate the kernels it did not measure; sweep a whole CNN on it",
			len(gflops), len(gbsOf))
	}
	r := CPURoofline{GFLOPS: median(gflops), GBs: median(gbsOf), Kernels: len(samples)}
	errs := make([]float64, len(samples))
	for i, s := range samples {
		errs[i] = math.Abs(r.MS(s.cfg, s.phase, s.batch)-s.ms) / s.ms
	}
	r.RelErr = median(errs)
	return r, nil
}

// MS is the roofline's time of one phase of configuration c at batch size n, in
// milliseconds: the larger of its FLOPs at GFLOPS and its bytes at GBs.
func (r CPURoofline) MS(c cnn.Config, phase measure.Phase, n int) float64 {
	flops, bytes := CPUWork(c, phase, n)
	var s float64
	if r.GFLOPS > 0 {
		s = flops / (r.GFLOPS * 1e9)
	}
	if r.GBs > 0 {
		s = math.Max(s, bytes/(r.GBs*1e9))
	}
	return s * 1000
}

// median of xs, which it sorts; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	h := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[h]
	}
	return (xs[h-1] + xs[h]) / 2
}

// CPUTimer predicts a CPU's kernel times: from its own measurements through Model
// (measured, or interpolated along the batch size) where it has them, else from its
// roofline (estimated). A GPU's measurements are never transferred to a CPU, and no
// GPU's calibration estimates it. It is what the predictor's LayerTimer is for a CPU.
type CPUTimer struct {
	Model    *Model
	Roofline CPURoofline
}

// Times fills out[i] with the time of r on the CPU dev at batch size batches[i]; see
// Model.Times.
func (t CPUTimer) Times(dev Device, r Request, batches []int, out []Estimate) {
	t.Model.Times(dev, r, batches, out)
	for i, b := range batches {
		if out[i].Source == Measured || out[i].Source == Interpolated {
			continue
		}
		if b <= 0 {
			out[i] = Estimate{Source: Estimated, RelErr: 1}
			continue
		}
		out[i] = Estimate{MS: t.Roofline.MS(r.Config, r.Phase, b), Source: Estimated, RelErr: t.Roofline.RelErr}
	}
}
