package fit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// Options bound the work of a fit.
type Options struct {
	// MaxEvaluations caps the objective evaluations of one fit (Nelder–Mead); 0 means 20000.
	MaxEvaluations int
}

func (o Options) evaluations() int {
	if o.MaxEvaluations > 0 {
		return o.MaxEvaluations
	}
	return 20000
}

// sample is one phase timing of one row, with its GPU's specifications.
type sample struct {
	row   *Row
	phase measure.Phase
	gpu   hw.GPU
	ms    float64
}

func samplesOf(rows []Row, gpus map[string]hw.GPU, keep func(gpu string) bool) []sample {
	var out []sample
	for i := range rows {
		r := &rows[i]
		g, ok := gpus[r.GPU]
		if !ok || !keep(r.GPU) {
			continue
		}
		for p, ph := range measure.Phases {
			if r.MS[p] > 0 {
				out = append(out, sample{row: r, phase: ph, gpu: g, ms: r.MS[p]})
			}
		}
	}
	return out
}

// Dependent efficiencies the data cannot fit are set from fitted ones:
// TF32 kernels reach the share of their peak that FP16 tensor-core kernels reach, and a
// linear layer is a GEMM like a 1×1 convolution.
var (
	fittedClasses = []kernels.Class{kernels.ClassConv1x1, kernels.ClassConv3x3, kernels.ClassConv}
	fittedArith   = []kernels.Arithmetic{kernels.ArithFP32, kernels.ArithFP16, kernels.ArithFP16SIMT}
)

// FitEfficiencies fits the compute efficiencies and the unaligned tensor-core factor
// of start (a copy is returned) to the rows of the GPUs in gpus, minimising the mean
// squared log error of the roofline estimates with Nelder–Mead from start's values.
// DeepBench times each call synchronously, so the fit also finds a constant harness
// overhead per timing; it is not part of the calibration, whose LaunchUS (the
// GPU-side cost of a queued kernel) stays start's.
func FitEfficiencies(rows []Row, gpus map[string]hw.GPU, start *kernels.Calibration, opt Options) (*Result, error) {
	samples := samplesOf(rows, gpus, func(string) bool { return true })
	if len(samples) == 0 {
		return nil, fmt.Errorf("no DeepBench rows of a known GPU to fit: the GPUs are %v", gpuNames(gpus))
	}
	cal := clone(start)
	used := map[string]bool{}
	for _, s := range samples {
		used[kernels.EfficiencyKey(kernels.ClassOf(s.row.Config), kernels.ArithmeticFor(s.gpu, s.row.Precision), s.phase)] = true
	}
	var keys []string
	for k := range used {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// x = log efficiencies, then log harness overhead µs, then logit of the unaligned factor.
	x0 := make([]float64, len(keys)+2)
	maxEff := make([]float64, len(keys))
	for i, k := range keys {
		x0[i] = math.Log(cal.ComputeEfficiency[k])
		maxEff[i] = physicalMax(k)
	}
	x0[len(keys)] = math.Log(20)
	var harnessMS float64
	u := cal.UnalignedTensorFactor
	x0[len(keys)+1] = math.Log(u / (1 - math.Min(u, 0.999)))
	apply := func(x []float64) {
		for i, k := range keys {
			cal.ComputeEfficiency[k] = clamp(math.Exp(x[i]), 1e-3, maxEff[i])
		}
		harnessMS = clamp(math.Exp(x[len(keys)]), 0, 1000) / 1000
		cal.UnalignedTensorFactor = clamp(1/(1+math.Exp(-x[len(keys)+1])), 1e-3, 1)
	}
	objective := func(x []float64) float64 {
		apply(x)
		if err := cal.Validate(); err != nil {
			return math.Inf(1)
		}
		var sum float64
		for _, s := range samples {
			pred, _ := kernels.EstimateMS(cal, s.row.Config, s.phase, s.gpu, s.row.Precision, s.row.Batch)
			d := math.Log((pred + harnessMS) / s.ms)
			sum += d * d
		}
		return sum / float64(len(samples))
	}
	res, err := optimize.Minimize(optimize.Problem{Func: objective}, x0,
		&optimize.Settings{FuncEvaluations: opt.evaluations(), Converger: &optimize.FunctionConverge{Absolute: 1e-7, Iterations: 400}},
		&optimize.NelderMead{})
	if err != nil && res == nil {
		return nil, fmt.Errorf("fit the efficiencies: %w", err)
	}
	apply(res.X)
	setDependent(cal)
	if err := cal.Validate(); err != nil {
		return nil, fmt.Errorf("the fit produced an invalid calibration: %w", err)
	}
	var ape float64
	for _, s := range samples {
		pred, _ := kernels.EstimateMS(cal, s.row.Config, s.phase, s.gpu, s.row.Precision, s.row.Batch)
		ape += math.Abs(pred+harnessMS-s.ms) / s.ms
	}
	return &Result{Calibration: cal, Keys: keys, TrainMAPE: 100 * ape / float64(len(samples)), HarnessMS: harnessMS}, nil
}

// Result is a fitted calibration with what the fit found along with it.
type Result struct {
	Calibration *kernels.Calibration
	Keys        []string // the efficiencies fitted to data
	TrainMAPE   float64  // percent, on the rows fitted, harness overhead included
	HarnessMS   float64  // DeepBench's per-timing overhead, milliseconds
}

// physicalMax is the highest efficiency a key may reach: 1 for tensor-core and GEMM
// kernels (no algorithm beats direct computation there), 2.25 for FP32 convolutions
// with a spatial filter, which Winograd and FFT algorithms compute with fewer FLOPs.
func physicalMax(key string) float64 {
	spatial := strings.HasPrefix(key, "conv3x3/") || strings.HasPrefix(key, "conv/")
	simt := strings.Contains(key, "/fp32/") || strings.Contains(key, "/fp16-simt/")
	if spatial && simt {
		return 2.25
	}
	return 1
}

// setDependent copies fitted efficiencies to the keys the data cannot reach.
func setDependent(cal *kernels.Calibration) {
	for _, ph := range measure.Phases {
		for _, cl := range fittedClasses {
			cal.ComputeEfficiency[kernels.EfficiencyKey(cl, kernels.ArithTF32, ph)] =
				cal.ComputeEfficiency[kernels.EfficiencyKey(cl, kernels.ArithFP16, ph)]
		}
		for _, a := range []kernels.Arithmetic{kernels.ArithFP32, kernels.ArithTF32, kernels.ArithFP16, kernels.ArithFP16SIMT} {
			cal.ComputeEfficiency[kernels.EfficiencyKey(kernels.ClassLinear, a, ph)] =
				cal.ComputeEfficiency[kernels.EfficiencyKey(kernels.ClassConv1x1, a, ph)]
		}
	}
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

func clone(c *kernels.Calibration) *kernels.Calibration {
	out := *c
	out.ComputeEfficiency = make(map[string]float64, len(c.ComputeEfficiency))
	for k, v := range c.ComputeEfficiency {
		out.ComputeEfficiency[k] = v
	}
	out.EstimateRelErr = make(map[string]float64, len(c.EstimateRelErr))
	for k, v := range c.EstimateRelErr {
		out.EstimateRelErr[k] = v
	}
	if c.FamilyScale != nil {
		out.FamilyScale = make(map[string]float64, len(c.FamilyScale))
		for k, v := range c.FamilyScale {
			out.FamilyScale[k] = v
		}
	}
	if c.FamilyMemoryScale != nil {
		out.FamilyMemoryScale = make(map[string]float64, len(c.FamilyMemoryScale))
		for k, v := range c.FamilyMemoryScale {
			out.FamilyMemoryScale[k] = v
		}
	}
	if c.NetworkRelErr != nil {
		out.NetworkRelErr = make(map[string]float64, len(c.NetworkRelErr))
		for k, v := range c.NetworkRelErr {
			out.NetworkRelErr[k] = v
		}
	}
	if c.UntunedBandFloor != nil {
		out.UntunedBandFloor = make(map[string]float64, len(c.UntunedBandFloor))
		for k, v := range c.UntunedBandFloor {
			out.UntunedBandFloor[k] = v
		}
	}
	out.Fitted = append([]string(nil), c.Fitted...)
	out.Accuracy = append([]kernels.GPUAccuracy(nil), c.Accuracy...)
	return &out
}

func gpuNames(gpus map[string]hw.GPU) []string {
	var names []string
	for n := range gpus {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Fit fits a calibration to the DeepBench rows of the GPUs in gpus (DeepBench name →
// specifications, see MatchGPUs), starting from kernels.PriorCalibration: first it
// holds out each GPU in turn to measure how well the model predicts an unseen GPU
// (LeaveOneGPUOut), which sets the error bands; then it fits on all GPUs.
func Fit(rows []Row, gpus map[string]hw.GPU, opt Options) (*kernels.Calibration, error) {
	acc, err := LeaveOneGPUOut(rows, gpus, opt)
	if err != nil {
		return nil, err
	}
	res, err := FitEfficiencies(rows, gpus, kernels.PriorCalibration(), opt)
	if err != nil {
		return nil, err
	}
	cal := res.Calibration
	cal.Fitted = res.Keys
	cal.Accuracy = acc
	estErr, transferErr := errorBands(acc)
	for a, v := range estErr {
		cal.EstimateRelErr[a] = v
	}
	cal.TransferRelErr = transferErr
	cal.FittedOn = fmt.Sprintf("DeepBench training convolutions (forward, data and weight gradient; FP32 and FP16 sheets) on %s: %d rows",
		strings.Join(gpuNames(gpus), ", "), countRows(rows, gpus))
	cal.Method = fmt.Sprintf("Nelder–Mead on the mean squared log error of the roofline with tile and wave quantization (gonum/optimize), from the priors of kernels.PriorCalibration; training MAPE %.1f%% with a DeepBench harness overhead of %.1f µs per timing (fitted, not kept). "+
		"Fitted: conv1x1, conv3x3 and other convolutions on fp32, fp16 tensor cores and fp16 without tensor cores, and the unaligned tensor factor; efficiencies bounded by 1 (2.25 for FP32 spatial convolutions: Winograd, FFT). "+
		"Set from fitted values: tf32 = fp16 share of peak, linear = conv1x1. Priors kept: grouped, depthwise, memory-bound classes, memory efficiency. "+
		"Launch cost per kernel: the prior's. Error bands: leave-one-GPU-out MAPE per arithmetic (tf32 = fp16 + 10 points, not measured).", res.TrainMAPE, res.HarnessMS*1000)
	if err := cal.Validate(); err != nil {
		return nil, fmt.Errorf("the fit produced an invalid calibration: %w", err)
	}
	return cal, nil
}

func countRows(rows []Row, gpus map[string]hw.GPU) int {
	n := 0
	for _, r := range rows {
		if _, ok := gpus[r.GPU]; ok {
			n++
		}
	}
	return n
}

// errorBands turns the leave-one-GPU-out report into expected relative errors: the
// row-weighted MAPE of estimates per arithmetic and of transfers overall.
func errorBands(acc []kernels.GPUAccuracy) (map[string]float64, float64) {
	sum, n := map[string]float64{}, map[string]float64{}
	var tSum, tN float64
	for _, a := range acc {
		sum[a.Sheet] += a.EstimateMAPE * float64(a.Rows)
		n[a.Sheet] += float64(a.Rows)
		tSum += a.TransferMAPE * float64(a.TransferRows)
		tN += float64(a.TransferRows)
	}
	out := map[string]float64{}
	for _, a := range []string{"fp32", "fp16", "fp16-simt"} {
		if n[a] > 0 {
			out[a] = sum[a] / n[a] / 100
		}
	}
	if v, ok := out["fp16"]; ok {
		out["tf32"] = v + 0.1
	}
	transfer := 0.15
	if tN > 0 {
		transfer = tSum / tN / 100
	}
	return out, transfer
}
