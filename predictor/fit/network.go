package fit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
)

// Bounds and prior weight of the whole-network fit.
const (
	minMemoryEfficiency = 0.4 // below any GPU's measured streaming bandwidth share
	maxMemoryEfficiency = 0.95
	// scalePrior weighs the squared log of each fitted scale against the mean squared
	// log error: a scale that only one or two rows see moves only as far as they insist.
	scalePrior = 0.002
)

// NetworkFit is what FitNetworks found.
type NetworkFit struct {
	Calibration *kernels.Calibration
	Scales      []string // the family scales fitted, "family/arithmetic"
	// MemoryScales are the families whose memory efficiency was fitted.
	MemoryScales []string
	TuningRows   int
	// DepthwiseScale multiplied the depthwise convolutions' efficiencies.
	DepthwiseScale float64
	// MAPE of the tuning rows before and after the fit, percent.
	BeforeMAPE, AfterMAPE float64
}

// FitNetworks fits, to the tuning part of cases (published whole-network
// throughputs), the figures of cal that the per-layer data cannot reach: the share of
// the memory bandwidth that streaming kernels reach (batch norm, activations, pooling,
// the update), a scale on the depthwise convolutions' efficiency, and a compute
// efficiency scale per GPU family and the arithmetic its tuning rows' convolutions run in
// (kernels.Calibration.FamilyScale), and a memory-efficiency scale per GPU family
// (kernels.Calibration.FamilyMemoryScale). The held-out rows and the real-data rows
// (which judge the input-pipeline model) are never read. It minimises
// the mean squared log error of the predicted images per second plus a small prior
// that pulls every scale towards 1, with Nelder–Mead from cal's values. cal is not
// changed; the fitted copy is returned.
func FitNetworks(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case, opt Options) (*NetworkFit, error) {
	var tuning []Case
	keys := map[string]int{}    // tuning rows per family scale
	famRows := map[string]int{} // tuning rows per family
	for _, c := range cases {
		if c.Held || c.RealData() {
			continue // real-data rows judge the loader model, not the GPU's efficiencies
		}
		tuning = append(tuning, c)
		if f := hw.FamilyOf(c.Dev); f != hw.FamilyUnknown {
			keys[kernels.FamilyKey(f, kernelArith(c))]++
			famRows[f.String()]++
		}
	}
	if len(tuning) == 0 {
		return nil, fmt.Errorf("no tuning rows among the %d anchors: mark some 'tuning'", len(cases))
	}
	scales, param, nParams := scaleParams(keys)
	var memScales []string
	for f, n := range famRows {
		if n >= MinScaleRows {
			memScales = append(memScales, f)
		}
	}
	sort.Strings(memScales)
	m0 := 2 + nParams // where the memory scales start in x

	work := clone(cal)
	if work.FamilyScale == nil {
		work.FamilyScale = map[string]float64{}
	}
	if work.FamilyMemoryScale == nil {
		work.FamilyMemoryScale = map[string]float64{}
	}
	baseDepthwise := map[string]float64{}
	for k, v := range work.ComputeEfficiency {
		if strings.HasPrefix(k, kernels.ClassDepthwise.String()+"/") {
			baseDepthwise[k] = v
		}
	}
	// x = logit of the memory efficiency in its bounds, log depthwise scale, log family
	// scales, log family memory scales.
	x0 := make([]float64, m0+len(memScales))
	u := (clamp(work.MemoryEfficiency, minMemoryEfficiency+1e-3, maxMemoryEfficiency-1e-3) - minMemoryEfficiency) / (maxMemoryEfficiency - minMemoryEfficiency)
	x0[0] = math.Log(u / (1 - u))
	for i, k := range scales {
		if v, ok := work.FamilyScale[k]; ok && v > 0 {
			x0[2+param[i]] = math.Log(v) // a shared scale starts from its last key's
		}
	}
	for i, k := range memScales {
		if v, ok := work.FamilyMemoryScale[k]; ok && v > 0 {
			x0[m0+i] = math.Log(v)
		}
	}
	apply := func(x []float64) {
		work.MemoryEfficiency = minMemoryEfficiency + (maxMemoryEfficiency-minMemoryEfficiency)/(1+math.Exp(-x[0]))
		d := math.Exp(clamp(x[1], -3, 3))
		for k, v := range baseDepthwise {
			work.ComputeEfficiency[k] = math.Min(v*d, 1)
		}
		for i, k := range scales {
			work.FamilyScale[k] = math.Exp(clamp(x[2+param[i]], -1.5, 1.35)) // 0.22 to 3.9
		}
		for i, k := range memScales {
			// 0.41 to 1.65, and never beyond the specified bandwidth
			work.FamilyMemoryScale[k] = math.Min(math.Exp(clamp(x[m0+i], -0.9, 0.5)), 1/work.MemoryEfficiency)
		}
	}
	var lastErr error
	objective := func(x []float64) float64 {
		apply(x)
		if err := work.Validate(); err != nil {
			lastErr = err
			return math.Inf(1)
		}
		sq, err := logErrors(work, over, mem, tuning)
		if err != nil {
			lastErr = err
			return math.Inf(1)
		}
		for _, v := range x[1:] {
			sq += scalePrior * v * v
		}
		return sq
	}
	before, err := tuningMAPE(cal, over, mem, tuning)
	if err != nil {
		return nil, err
	}
	res, err := optimize.Minimize(optimize.Problem{Func: objective}, x0,
		&optimize.Settings{FuncEvaluations: opt.networkEvaluations(), Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 60}},
		&optimize.NelderMead{})
	if res == nil {
		if lastErr != nil {
			return nil, fmt.Errorf("fit the whole-network figures: %w", lastErr)
		}
		return nil, fmt.Errorf("fit the whole-network figures: %w", err)
	}
	apply(res.X)
	if err := work.Validate(); err != nil {
		return nil, fmt.Errorf("the whole-network fit produced an invalid calibration: %w", err)
	}
	after, err := tuningMAPE(work, over, mem, tuning)
	if err != nil {
		return nil, err
	}
	return &NetworkFit{Calibration: work, Scales: scales, MemoryScales: memScales, TuningRows: len(tuning), DepthwiseScale: math.Exp(clamp(res.X[1], -3, 3)),
		BeforeMAPE: before, AfterMAPE: after}, nil
}

// MinScaleRows is the fewest published tuning rows one fitted scale may rest on: a
// family and arithmetic that fewer rows cover shares one scale with the family's
// other such arithmetics (Hopper's one TF32 and one FP16 row: one scale from both),
// or with its best-covered arithmetic; a family with fewer rows in all keeps its
// scales and memory scale at 1. So no per-family factor is fitted to a single
// published figure.
const MinScaleRows = 2

// scaleParams maps each family scale key (with its tuning rows) to a fitted
// parameter: its own where MinScaleRows rows cover it, else one shared by the
// family's under-covered keys (if they have MinScaleRows rows together), else the
// family's best-covered key's; -1 where none applies (not fitted). scales is sorted;
// param[i] is the parameter of scales[i].
func scaleParams(keys map[string]int) (scales []string, param []int, n int) {
	for k := range keys {
		scales = append(scales, k)
	}
	sort.Strings(scales)
	family := func(k string) string { f, _, _ := strings.Cut(k, "/"); return f }
	own := map[string]int{}     // key → its parameter
	best := map[string]string{} // family → its best-covered key with its own parameter
	for _, k := range scales {
		if keys[k] >= MinScaleRows {
			own[k] = n
			n++
			if b, ok := best[family(k)]; !ok || keys[k] > keys[b] {
				best[family(k)] = k
			}
		}
	}
	under := map[string]int{} // family → rows of its under-covered keys
	for _, k := range scales {
		if keys[k] < MinScaleRows {
			under[family(k)] += keys[k]
		}
	}
	shared := map[string]int{}
	param = make([]int, len(scales))
	for i, k := range scales {
		f := family(k)
		switch p, ok := own[k]; {
		case ok:
			param[i] = p
		case under[f] >= MinScaleRows:
			if _, ok := shared[f]; !ok {
				shared[f] = n
				n++
			}
			param[i] = shared[f]
		case best[f] != "":
			param[i] = own[best[f]]
		default:
			param[i] = -1
		}
	}
	// Keys without a parameter are dropped: their scale stays as it was.
	kept, keptParam := scales[:0:0], param[:0:0]
	for i, k := range scales {
		if param[i] >= 0 {
			kept, keptParam = append(kept, k), append(keptParam, param[i])
		}
	}
	return kept, keptParam, n
}

func (o Options) networkEvaluations() int {
	if o.MaxEvaluations > 0 {
		return max(o.MaxEvaluations/20, 100)
	}
	return 1000
}

// kernelArith is the arithmetic a case's convolutions run in.
func kernelArith(c Case) kernels.Arithmetic {
	return kernels.ArithmeticFor(c.Dev, predictor.KernelPrecision(c.Precision, cnn.OpConv2d, c.Dev))
}

// logErrors is the mean squared log ratio of predicted to measured throughput.
func logErrors(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case) (float64, error) {
	preds, err := Predict(cal, over, mem, cases)
	if err != nil {
		return 0, err
	}
	var sum float64
	for i, c := range cases {
		d := math.Log(preds[i].ImagesPerS / c.ImagesPerS)
		sum += d * d
	}
	return sum / float64(len(cases)), nil
}

func tuningMAPE(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case) (float64, error) {
	preds, err := Predict(cal, over, mem, cases)
	if err != nil {
		return 0, err
	}
	var sum float64
	for i, c := range cases {
		sum += math.Abs(preds[i].ErrorPct(c.ImagesPerS))
	}
	return sum / float64(len(cases)), nil
}

// Error bands of whole-network predictions, from the published rows' residuals.
const (
	// BandPriorRows is how many rows' worth of weight the held-out error has in each
	// family and arithmetic's band: a band from one or two rows leans on it.
	BandPriorRows = 3.0
	// BandOtherFactor widens the held-out error for a family and arithmetic that no
	// published row covers.
	BandOtherFactor = 2.0
)

// NetworkBands are the error bands of whole-network predictions (see
// kernels.Calibration.NetworkRelErr), as fractions.
type NetworkBands struct {
	PerKey   map[string]float64 // "family/arithmetic"
	Rows     map[string]int     // published rows behind each key
	HeldOut  float64            // MAPE of the held-out rows (all rows if none is held out)
	Other    float64            // for a family and arithmetic without rows
	Transfer float64            // for a time transferred from a measured GPU
}

// FitNetworkBands computes the error bands of cal's whole-network predictions from
// every case (tuning and held out: the bands are judged, not fitted, and the held-out
// rows are what says how far an unseen GPU's prediction is off). Per family and
// arithmetic the band is the mean absolute relative error of its rows, mixed with
// the held-out MAPE as if that were BandPriorRows more rows; a family and arithmetic
// without rows gets BandOtherFactor × the held-out MAPE. A time transferred from a
// measured GPU gets the held-out MAPE: per layer, DeepBench's transfers were about as
// accurate as estimates (see the leave-one-GPU-out table), and a transfer starts from
// a measurement of the same layer rather than from fitted efficiencies.
func FitNetworkBands(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case) (*NetworkBands, error) {
	if len(cases) == 0 {
		return nil, fmt.Errorf("no published rows to judge the error bands by")
	}
	preds, err := Predict(cal, over, mem, cases)
	if err != nil {
		return nil, err
	}
	sum := map[string]float64{}
	rows := map[string]int{}
	var heldSum, allSum float64
	var held int
	for i, c := range cases {
		e := math.Abs(preds[i].ErrorPct(c.ImagesPerS)) / 100
		allSum += e
		if c.Held {
			heldSum += e
			held++
		}
		if f := hw.FamilyOf(c.Dev); f != hw.FamilyUnknown {
			k := kernels.FamilyKey(f, kernelArith(c))
			sum[k] += e
			rows[k]++
		}
	}
	b := &NetworkBands{PerKey: map[string]float64{}, Rows: rows, HeldOut: allSum / float64(len(cases))}
	if held > 0 {
		b.HeldOut = heldSum / float64(held)
	}
	for k, s := range sum {
		b.PerKey[k] = (s + BandPriorRows*b.HeldOut) / (float64(rows[k]) + BandPriorRows)
	}
	b.Other = BandOtherFactor * b.HeldOut
	b.Transfer = b.HeldOut
	return b, nil
}

// Apply writes the bands into cal and checks it.
func (b *NetworkBands) Apply(cal *kernels.Calibration) error {
	cal.NetworkRelErr = make(map[string]float64, len(b.PerKey))
	for k, v := range b.PerKey {
		cal.NetworkRelErr[k] = v
	}
	cal.NetworkRelErrOther = b.Other
	cal.TransferRelErr = b.Transfer
	return cal.Validate()
}
