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

// Bounds and prior weights of the whole-network fit.
const (
	minMemoryEfficiency = 0.4 // below any GPU's measured streaming bandwidth share
	maxMemoryEfficiency = 0.95
	// scalePrior weighs the squared log of each fitted factor against the mean squared
	// log error: a factor that only a few rows see moves only as far as they insist.
	scalePrior = 0.002
	// SingleSourcePrior multiplies scalePrior for a family whose tuning rows come from
	// fewer than MinScaleSources sources: one vendor's rows move a generation's factor
	// only a little, so its ratio to the others stays the specifications'.
	SingleSourcePrior = 10.0
	// MinScaleRows is the fewest tuning rows a family's factor is fitted on; a family
	// with fewer keeps factor 1 (its specifications alone).
	MinScaleRows = 2
	// MinScaleSources is the fewest independent sources a family's factor is fitted on
	// at scalePrior; fewer get SingleSourcePrior.
	MinScaleSources = 2
)

// NetworkFit is what FitNetworks found.
type NetworkFit struct {
	Calibration *kernels.Calibration
	Scales      []string // the family scales written, "family/arithmetic"
	// Families are the GPU families whose factor was fitted, with the tuning rows and
	// the sources behind each; SingleSource lists those fitted under SingleSourcePrior.
	Families     map[string]FamilyEvidence
	Arithmetics  map[string]float64 // the arithmetic factors (fp16 is 1)
	TuningRows   int
	SingleSource []string
	// DepthwiseScale multiplied the depthwise convolutions' efficiencies.
	DepthwiseScale float64
	// Maturity is the fit of the maturity term on pairs of tuning rows.
	Maturity MaturityFit
	// SoftwareAges counts the tuning rows by their software's age on their GPU's
	// architecture (months, hw.LaunchMonth), in the bands of AgeBands: the evidence of
	// the maturity term (Calibration.MaturityDeficit and MaturityMonths).
	SoftwareAges []int
	// MAPE of the tuning rows before and after the fit, percent.
	BeforeMAPE, AfterMAPE float64
}

// FamilyEvidence is a family's fitted factor and what it rests on.
type FamilyEvidence struct {
	Factor  float64  `json:"factor"`
	Rows    int      `json:"rows"`
	Sources []string `json:"sources"`
}

// networkArith are the arithmetics whose factor the fit finds (FP16 tensor cores are
// the reference, factor 1).
var networkArith = []kernels.Arithmetic{kernels.ArithFP32, kernels.ArithTF32}

// FitNetworks fits, to the tuning part of cases (published whole-network
// throughputs), the figures of cal that the per-layer data cannot reach:
//   - the share of the memory bandwidth streaming kernels reach (batch norm,
//     activations, pooling, the update, fused kernels), one for every GPU: how much of
//     its bandwidth a streaming kernel gets is the memory's matter, not the generation's;
//   - how many bytes an SM moves per clock cycle at most (StreamBytesPerSMCycle), which
//     caps streaming on GPUs with much bandwidth per SM (HBM3, HBM3e);
//   - how many bytes an SM moves per clock cycle at most in cuDNN's NCHW batch-norm
//     kernels (NCHWNormBytesPerSMCycle), which an eager NCHW network runs under amp;
//   - a scale on the depthwise convolutions' efficiency;
//   - the compute efficiency of each GPU family in each arithmetic, as a product of a
//     family factor and an arithmetic factor (kernels.Calibration.FamilyScale holds the
//     products): a generation's tensor cores and libraries are one factor for all its
//     arithmetics, and TF32 or FP32 convolutions relate to FP16 ones alike on every
//     generation. So a family whose rows are mostly one arithmetic still gets the
//     others right, and no family's ratio to another rests on one kind of row.
//
// A family's factor is fitted on at least MinScaleRows rows; with fewer than
// MinScaleSources sources its prior is SingleSourcePrior times stronger. The held-out
// rows and the real-data rows (which judge the input-pipeline model) are never read.
// It minimises the mean squared log error of the predicted images per second plus the
// priors pulling every factor towards 1, with Nelder–Mead from cal's values. cal is not
// changed; the fitted copy is returned.
func FitNetworks(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case, opt Options) (*NetworkFit, error) {
	var tuning []Case
	rows := map[hw.Family]int{}
	sources := map[hw.Family]map[string]bool{}
	arithSeen := map[kernels.Arithmetic]bool{}
	for _, c := range cases {
		if c.Held || c.RealData() {
			continue // real-data rows judge the loader model, not the GPU's efficiencies
		}
		tuning = append(tuning, c)
		if f := hw.FamilyOf(c.Dev); f != hw.FamilyUnknown {
			rows[f]++
			if sources[f] == nil {
				sources[f] = map[string]bool{}
			}
			sources[f][c.Source] = true
			arithSeen[kernelArith(c)] = true
		}
	}
	if len(tuning) == 0 {
		return nil, fmt.Errorf("no tuning rows among the %d anchors: mark some 'tuning'", len(cases))
	}
	var families []hw.Family
	for f, n := range rows {
		if n >= MinScaleRows {
			families = append(families, f)
		}
	}
	sort.Slice(families, func(i, j int) bool { return families[i] < families[j] })
	var ariths []kernels.Arithmetic
	for _, a := range networkArith {
		if arithSeen[a] {
			ariths = append(ariths, a)
		}
	}

	work := clone(cal)
	// Every published whole-network figure ran cuDNN 8 or later, which splits a
	// weight gradient's reduction until the GPU is full (kernels.ModernSplitK).
	work.SplitKMax = kernels.ModernSplitK
	work.FamilyScale = map[string]float64{}
	work.FamilyMemoryScale = nil
	baseDepthwise := map[string]float64{}
	for k, v := range work.ComputeEfficiency {
		if strings.HasPrefix(k, kernels.ClassDepthwise.String()+"/") {
			baseDepthwise[k] = v
		}
	}
	// The maturity of the libraries comes first, from pairs of tuning rows of one GPU
	// that ran two releases: their ratio does not depend on the family's factor. Its
	// cost per convolution is the batch series' (MaturityLaunchUS).
	work.MaturityLaunchUS = MaturityLaunchUS
	mat, err := fitMaturity(work, over, mem, tuning)
	if err != nil {
		return nil, err
	}
	work.MaturityDeficit, work.MaturityMonths = mat.Deficit, mat.Months
	if mat.Months == 0 {
		work.MaturityLaunchUS = 0 // no pairs to date the term by
	}
	// x = logit of the memory efficiency in its bounds, log stream bytes per SM cycle,
	// log depthwise scale, logit of the power-clock exponent in [0.2, 0.8], log NCHW
	// batch-norm bytes per SM cycle, log family factors, log arithmetic factors.
	famAt := 5
	arithAt := famAt + len(families)
	x0 := make([]float64, arithAt+len(ariths))
	u := (clamp(work.MemoryEfficiency, minMemoryEfficiency+1e-3, maxMemoryEfficiency-1e-3) - minMemoryEfficiency) / (maxMemoryEfficiency - minMemoryEfficiency)
	x0[0] = math.Log(u / (1 - u))
	x0[1] = math.Log(startStreamBytesPerSMCycle)
	if work.StreamBytesPerSMCycle > 0 {
		x0[1] = math.Log(work.StreamBytesPerSMCycle)
	}
	x0[3] = powerExpLogit(work.PowerClockExponentOrLegacy())
	x0[4] = math.Log(startNCHWNormBytesPerSMCycle)
	if work.NCHWNormBytesPerSMCycle > 0 {
		x0[4] = math.Log(work.NCHWNormBytesPerSMCycle)
	}
	prior := make([]float64, len(x0))
	prior[2] = scalePrior
	var singles []string
	for i, f := range families {
		prior[famAt+i] = scalePrior
		if len(sources[f]) < MinScaleSources {
			prior[famAt+i] *= SingleSourcePrior
			singles = append(singles, f.String())
		}
	}
	for i := range ariths {
		prior[arithAt+i] = scalePrior
	}
	apply := func(x []float64) {
		work.MemoryEfficiency = minMemoryEfficiency + (maxMemoryEfficiency-minMemoryEfficiency)/(1+math.Exp(-x[0]))
		work.StreamBytesPerSMCycle = math.Exp(clamp(x[1], math.Log(2), math.Log(128)))
		work.PowerClockExponent = powerExpOf(x[3])
		work.NCHWNormBytesPerSMCycle = math.Exp(clamp(x[4], math.Log(1), math.Log(128)))
		d := math.Exp(clamp(x[2], -3, 3))
		for k, v := range baseDepthwise {
			work.ComputeEfficiency[k] = math.Min(v*d, 1)
		}
		for i, f := range families {
			fam := clamp(x[famAt+i], -1.5, 1.35) // 0.22 to 3.9 in all
			for _, a := range append([]kernels.Arithmetic{kernels.ArithFP16}, ariths...) {
				v := fam
				for j, b := range ariths {
					if b == a {
						v += x[arithAt+j]
					}
				}
				work.FamilyScale[kernels.FamilyKey(f, a)] = math.Exp(clamp(v, -1.5, 1.35))
			}
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
		for i, v := range x {
			sq += prior[i] * v * v
		}
		return sq
	}
	before, err := tuningMAPE(cal, over, mem, tuning)
	if err != nil {
		return nil, err
	}
	res, err := optimize.Minimize(optimize.Problem{Func: objective}, x0,
		&optimize.Settings{FuncEvaluations: opt.networkEvaluations(), Converger: &optimize.FunctionConverge{Absolute: 1e-6, Iterations: 60}},
		&optimize.NelderMead{SimplexSize: networkSimplexSize})
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
	nf := &NetworkFit{Calibration: work, TuningRows: len(tuning), DepthwiseScale: math.Exp(clamp(res.X[2], -3, 3)),
		SoftwareAges: softwareAges(tuning), Maturity: mat,
		BeforeMAPE: before, AfterMAPE: after, Families: map[string]FamilyEvidence{}, Arithmetics: map[string]float64{"fp16": 1},
		SingleSource: singles}
	for k := range work.FamilyScale {
		nf.Scales = append(nf.Scales, k)
	}
	sort.Strings(nf.Scales)
	for i, f := range families {
		var src []string
		for s := range sources[f] {
			src = append(src, s)
		}
		sort.Strings(src)
		nf.Families[f.String()] = FamilyEvidence{Factor: math.Exp(clamp(res.X[famAt+i], -1.5, 1.35)), Rows: rows[f], Sources: src}
	}
	for j, a := range ariths {
		nf.Arithmetics[a.String()] = math.Exp(res.X[arithAt+j])
	}
	return nf, nil
}

// MaturityFit is what fitMaturity found: the deficit and time of the maturity term
// (kernels.Calibration.Maturity), the pairs of tuning rows it rests on (one GPU, model,
// precision, layout and stack on two releases) and the MAPE of the pairs' predicted
// ratios of throughput without the term and with it, percent.
type MaturityFit struct {
	Deficit    float64  `json:"deficit"`
	Months     float64  `json:"months"`
	Pairs      int      `json:"pairs"`
	GPUs       []string `json:"gpus"`
	BeforeMAPE float64  `json:"before_mape_pct"`
	AfterMAPE  float64  `json:"after_mape_pct"`
}

// MaturityLaunchUS is the fixed GPU time a convolution or matrix product adds on
// libraries released as its GPU's architecture launched, µs, falling with the maturity
// term (kernels.Calibration.MaturityLaunchUS). The release pairs fitMaturity reads run
// one batch each and cannot tell a cost per call from a loss of efficiency; the
// published batch series can (a cost per call weighs on the small batches alone):
// `cnntime validate --table gains` fits it on the tuning series and table 8's tuning
// rows (validate.FitMaturityLaunch) and prints the value it finds beside this one.
var MaturityLaunchUS = 30.0

// MaturityMonths is the maturity term's time, months, where the release pairs alone
// leave it open: their error is flat along the deficit's trade with the time (a ratio
// MAPE of 4.5–5.0% from 0.2 over 12 months to 0.4 over 48), and the batch series
// choose along it. A long time keeps a 2020 V100 immature, which slows Gavel's V100
// rows at every batch (table 8) and flattens the series' curves; a short one frees the
// held-out T4 rows of 2020 that need it (Pollux). 24 months, with MaturityLaunchUS,
// keeps every table of `cnntime validate` within a few tenths of a point of the 36
// months fitted on the pairs alone, or better, and brings table 10's gains from 19.8% /
// 14.7% to 12.8% / 11.9% (tuning / held out), 14.0% / 12.7% once table 8's own fit
// moved the eager operator's and the hand-over's costs (docs/accuracy.md). 0: fitted on
// the pairs over MaturityGrid.Months.
var MaturityMonths = 24.0

// MaturityGrid is where fitMaturity looks: the share of its peak a GPU's kernels lose
// in libraries released at its architecture's launch, and the months over which that
// loss falls by e.
var MaturityGrid = struct{ Deficits, Months []float64 }{
	Deficits: []float64{0, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25, 0.3, 0.35, 0.4},
	Months:   []float64{3, 6, 9, 12, 15, 18, 24, 30, 36, 48},
}

// fitMaturity chooses, over MaturityGrid's deficits (and its times where MaturityMonths
// is 0), the maturity term whose predicted throughput ratios of the pairs of tuning
// rows that ran one GPU, model, precision, layout, stack and input on two releases of
// different months are nearest the published ratios (least mean squared log error),
// with cal's cost per convolution (MaturityLaunchUS). A pair's ratio is that of two
// predictions on one GPU, so the family's factor, which the rest of the fit finds,
// cancels from it: the deficit rests on these pairs (Lambda's runs of one GPU in
// 2020–21 and 2022–24, NVIDIA's of one GPU on two containers), its time and cost per
// convolution on the batch series. Without pairs the term is 0.
func fitMaturity(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case) (MaturityFit, error) {
	type pairKey struct {
		gpu, model, prec, format, stack string
		input                           int
	}
	groups := map[pairKey][]int{}
	for i, c := range cases {
		if _, dated := hw.LaunchMonth(c.Dev); !dated || c.Software.Month == 0 {
			continue
		}
		k := pairKey{c.GPU, c.Model, string(c.Precision), string(c.MemoryFormat()), string(c.StackOf()), c.Input}
		groups[k] = append(groups[k], i)
	}
	var rows []Case
	var pairs [][2]int
	gpus := map[string]bool{}
	var keys []pairKey
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		idx := groups[k]
		for a := 0; a < len(idx); a++ {
			for b := a + 1; b < len(idx); b++ {
				if cases[idx[a]].Software.Month == cases[idx[b]].Software.Month {
					continue
				}
				pairs = append(pairs, [2]int{len(rows), len(rows) + 1})
				rows = append(rows, cases[idx[a]], cases[idx[b]])
				gpus[k.gpu] = true
			}
		}
	}
	out := MaturityFit{Pairs: len(pairs)}
	for g := range gpus {
		out.GPUs = append(out.GPUs, g)
	}
	sort.Strings(out.GPUs)
	if len(pairs) == 0 {
		return out, nil
	}
	errorsOf := func(d, months, launchUS float64) (sq, mape float64, err error) {
		work := clone(cal)
		work.MaturityDeficit, work.MaturityMonths, work.MaturityLaunchUS = d, months, launchUS
		if err := work.Validate(); err != nil {
			return 0, 0, err
		}
		preds, err := Predict(work, over, mem, rows)
		if err != nil {
			return 0, 0, err
		}
		for _, p := range pairs {
			measured := rows[p[0]].ImagesPerS / rows[p[1]].ImagesPerS
			predicted := preds[p[0]].ImagesPerS / preds[p[1]].ImagesPerS
			l := math.Log(predicted / measured)
			sq += l * l
			mape += math.Abs(predicted/measured - 1)
		}
		n := float64(len(pairs))
		return sq / n, 100 * mape / n, nil
	}
	var err error
	if _, out.BeforeMAPE, err = errorsOf(0, 1, 0); err != nil {
		return out, err
	}
	best := math.Inf(1)
	months := MaturityGrid.Months
	if MaturityMonths > 0 {
		months = []float64{MaturityMonths}
	}
	for _, d := range MaturityGrid.Deficits {
		for _, m := range months {
			if d == 0 && m != months[0] && !(cal.MaturityLaunchUS > 0) {
				continue // no deficit and no cost per call: the time does not matter
			}
			sq, mape, err := errorsOf(d, m, cal.MaturityLaunchUS)
			if err != nil {
				return out, err
			}
			if sq < best-1e-12 {
				best, out.Deficit, out.Months, out.AfterMAPE = sq, d, m, mape
			}
		}
	}
	if out.Deficit == 0 && !(cal.MaturityLaunchUS > 0) {
		out.Months = 0
	}
	return out, nil
}

// AgeBands are the upper bounds (months, exclusive) of the software-age bands
// NetworkFit.SoftwareAges counts; the last band is open.
var AgeBands = []int{6, 12, 24}

// softwareAges counts cases by their software's age on their GPU (AgeBands, then the
// rest); a GPU with an undated architecture counts in none.
func softwareAges(cases []Case) []int {
	out := make([]int, len(AgeBands)+1)
	for _, c := range cases {
		launch, ok := hw.LaunchMonth(c.Dev)
		if !ok {
			continue
		}
		age := int(c.Software.Month - launch)
		i := 0
		for i < len(AgeBands) && age >= AgeBands[i] {
			i++
		}
		out[i]++
	}
	return out
}

// The power-clock exponent is fitted in [minPowerExp, maxPowerExp]: from a clock that
// barely follows the power to one that follows its square root and more.
const (
	minPowerExp = 0.2
	maxPowerExp = 0.8
)

func powerExpOf(x float64) float64 {
	return minPowerExp + (maxPowerExp-minPowerExp)/(1+math.Exp(-x))
}

func powerExpLogit(e float64) float64 {
	u := (clamp(e, minPowerExp+1e-3, maxPowerExp-1e-3) - minPowerExp) / (maxPowerExp - minPowerExp)
	return math.Log(u / (1 - u))
}

// networkSimplexSize is the whole-network fit's first step in every parameter (logs
// and a logit): 0.3, a third of an e-fold, so that Nelder–Mead's first simplex spans
// the range the factors plausibly take rather than gonum's default 0.05.
const networkSimplexSize = 0.3

// startNCHWNormBytesPerSMCycle is where the fit of
// Calibration.NCHWNormBytesPerSMCycle starts: 6 bytes per SM per cycle, below what
// an A100 or V100 streams per SM, so that the cap binds and the fit sees it move.
const startNCHWNormBytesPerSMCycle = 6

// startStreamBytesPerSMCycle is where the fit of Calibration.StreamBytesPerSMCycle
// starts: 16 bytes per SM per cycle, an A100's 1.6 TB/s of streaming over 108 SMs at
// 1.41 GHz rounded up (binding on no GPU before Hopper).
const startStreamBytesPerSMCycle = 20

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
	w := groupWeights(cases)
	var sum, total float64
	for i, c := range cases {
		d := math.Log(preds[i].ImagesPerS / c.ImagesPerS)
		sum += w[i] * d * d
		total += w[i]
	}
	return sum / total, nil
}

// groupWeights weighs each case by 1 ÷ √(the rows of its source on its GPU family):
// a source's many rows of one generation (a benchmark suite's 24 networks on one
// GPU) count for more than one row, but not so much that they decide how that
// generation relates to the others, which the few rows of its other generations and
// of other vendors must.
func groupWeights(cases []Case) []float64 {
	n := map[string]int{}
	key := func(c Case) string { return c.Source + "/" + hw.FamilyOf(c.Dev).String() }
	for _, c := range cases {
		n[key(c)]++
	}
	w := make([]float64, len(cases))
	for i, c := range cases {
		w[i] = 1 / math.Sqrt(float64(n[key(c)]))
	}
	return w
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
	PerKey  map[string]float64 // "family/arithmetic"
	Rows    map[string]int     // tuning rows behind each key
	HeldOut float64            // MAPE of the held-out rows (all rows if none is held out)
	Other   float64            // for a family and arithmetic without tuning rows
	// UntunedFloor is, per family name with held-out rows and no tuning row, the
	// largest of those rows' absolute errors (kernels.Calibration.UntunedBandFloor).
	UntunedFloor map[string]float64
	Transfer     float64 // for a time transferred from a measured GPU
}

// FitNetworkBands computes the error bands of cal's whole-network predictions from
// the cases' residuals. Per family and arithmetic the band is the mean absolute
// relative error of its tuning rows, mixed with the held-out MAPE as if that were
// BandPriorRows more rows; a family and arithmetic without tuning rows gets
// BandOtherFactor × the held-out MAPE. The held-out rows enter only through their
// MAPE, the one figure that says how far a prediction for rows the fit has not seen
// is off: a family's own held-out rows never set its band, so a GPU whose only rows
// are held out (Blackwell) is not given a band its held-out rows drew. A time
// transferred from a measured GPU gets the held-out MAPE: per layer, DeepBench's
// transfers were about as accurate as estimates (see the leave-one-GPU-out table),
// and a transfer starts from a measurement of the same layer rather than from fitted
// efficiencies. The one exception is a family with held-out rows and no tuning row
// (Blackwell): predicted from its neighbour's scales, its band is at least the largest
// of its held-out rows' errors (UntunedFloor), so that it covers the evidence until
// public sources of its own tune it.
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
	tuned := map[hw.Family]bool{}
	heldMax := map[hw.Family]float64{}
	var heldSum, allSum float64
	var held int
	for i, c := range cases {
		e := math.Abs(preds[i].ErrorPct(c.ImagesPerS)) / 100
		allSum += e
		f := hw.FamilyOf(c.Dev)
		if c.Held {
			heldSum += e
			held++
			heldMax[f] = math.Max(heldMax[f], e)
			continue
		}
		tuned[f] = true
		if f != hw.FamilyUnknown {
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
	for f, e := range heldMax {
		if _, inherits := kernels.FamilyNeighbour[f]; inherits && !tuned[f] && e > 0 {
			if b.UntunedFloor == nil {
				b.UntunedFloor = map[string]float64{}
			}
			b.UntunedFloor[f.String()] = e
		}
	}
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
	cal.UntunedBandFloor = nil
	if len(b.UntunedFloor) > 0 {
		cal.UntunedBandFloor = make(map[string]float64, len(b.UntunedFloor))
		for k, v := range b.UntunedFloor {
			cal.UntunedBandFloor[k] = v
		}
	}
	return cal.Validate()
}
