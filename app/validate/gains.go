package validate

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/fit"
	"cnntime/predictor/kernels"
	"cnntime/predictor/pipeline"
)

// GainSeries is one published run at several batch sizes of one model on one GPU in
// one setup (a source's series of table 3, 4 or 8) and how much faster it trains per
// image at its largest batch than at its smallest: the shape of the batch curve, which
// the chart of time against batch shows, apart from its level.
type GainSeries struct {
	Table     int    `json:"table"` // the report's table its rows are in: 3, 4 or 8
	Source    string `json:"source"`
	Set       string `json:"set"`
	GPU       string `json:"gpu"`
	Model     string `json:"model"`
	Setup     string `json:"setup"` // what else the rows share: framework or stack, precision, layout
	Points    int    `json:"points"`
	FromBatch int    `json:"from_batch"`
	ToBatch   int    `json:"to_batch"`
	// MeasuredGainPct and PredictedGainPct are the throughput at ToBatch over that at
	// FromBatch, less one, percent; ErrorPct is the predicted ratio over the measured
	// one, less one, percent (negative: the curve is predicted too flat).
	MeasuredGainPct  float64 `json:"measured_gain_pct"`
	PredictedGainPct float64 `json:"predicted_gain_pct"`
	ErrorPct         float64 `json:"error_pct"`
}

// GainGroup is the accuracy of the gains over a set, or a set's source.
type GainGroup struct {
	Set     string  `json:"set"`
	Source  string  `json:"source,omitempty"`
	Series  int     `json:"series"`
	MAPEPct float64 `json:"mape_pct"`
	BiasPct float64 `json:"bias_pct"`
}

// GainAccuracy is table 10 of `cnntime validate`: the batch curve's gain from the
// smallest to the largest batch of every published series, measured and predicted.
type GainAccuracy struct {
	Sets    []GainGroup  `json:"sets"`
	Sources []GainGroup  `json:"sources"`
	Series  []GainSeries `json:"series"`
	// Shipped is the per-kernel, per-operator and per-batch costs the predictor charges,
	// with the tuning errors of tables 10 and 8; Refit what FitBatchCurve finds on the
	// tuning series and rows now (they agree unless the data or the model changed since).
	Shipped BatchCurveFit `json:"shipped"`
	Refit   BatchCurveFit `json:"refit"`
	// MaturityRefit is what FitMaturityLaunch finds: the fixed time a young library
	// adds to each convolution, the other costs Shipped's.
	MaturityRefit BatchCurveFit `json:"maturity_refit"`
}

// BatchCurveFit is the three costs that set a step's time apart from its batch, and
// the tuning errors of tables 8 and 10 they give: the GPU time of a kernel queued
// behind others (kernels.Calibration.LaunchUS), the host time of one eager operator
// (predictor.Overheads.EagerOpUS) and the training process's work per DataLoader
// batch (the handoff, pipeline.DataLoaderHandoffMS).
type BatchCurveFit struct {
	LaunchUS  float64 `json:"launch_us"`
	EagerOpUS float64 `json:"eager_op_us"`
	HandoffMS float64 `json:"handoff_ms"`
	// MaturityLaunchUS is the fixed GPU time a convolution or matrix product adds on
	// libraries released as its GPU launched (kernels.Calibration.MaturityLaunchUS).
	MaturityLaunchUS float64 `json:"maturity_launch_us"`
	// TuningMAPEPct is table 10's tuning series' gain MAPE, TuningStepMAPEPct table
	// 8's tuning rows' step MAPE.
	TuningMAPEPct     float64 `json:"tuning_mape_pct"`
	TuningStepMAPEPct float64 `json:"tuning_step_mape_pct"`
}

// gainPoint is one row of a series: its batch (per GPU) and its measured and
// predicted time per image.
type gainPoint struct {
	batch               int
	measured, predicted float64 // ms per image
}

// Gains gathers every series of two batch sizes or more from the report's tables 3, 4
// (one GPU) and 8, and compares each one's gain from its smallest to its largest
// batch. A series is in its rows' set (table 3: its source's), so whole sources are
// held out as those tables hold them out.
func Gains(rep *Report) *GainAccuracy {
	type key struct {
		table                       int
		source, set, gpu, model, su string
	}
	series := map[key][]gainPoint{}
	var order []key
	add := func(k key, p gainPoint) {
		if _, ok := series[k]; !ok {
			order = append(order, k)
		}
		series[k] = append(series[k], p)
	}
	sets := map[string]string{}
	for _, s := range rep.Public {
		sets[s.Source] = s.Set
	}
	for _, r := range rep.Rows {
		add(key{3, r.Source, sets[r.Source], r.GPU, r.Model, r.Framework + ", " + r.Precision},
			gainPoint{r.Batch, r.MeasuredMS / float64(r.Batch), r.PredictedMS / float64(r.Batch)})
	}
	if rep.Modern != nil {
		for _, r := range rep.Modern.Rows {
			if r.GPUs != 1 {
				continue
			}
			// A series is one file's rows: two runs of one GPU in different places are not a sweep.
			add(key{4, r.Source + "\x00" + r.Where, r.Set, r.GPU, r.Model, r.Stack + ", " + r.Precision + ", " + r.Software},
				gainPoint{r.Batch, 1000 / r.MeasuredIPS, 1000 / r.PredictedIPS})
		}
	}
	if rep.StepBatch != nil {
		for _, r := range rep.StepBatch.Rows {
			add(key{8, r.Source, r.Set, r.GPU, r.Model, r.Framework + ", " + r.Precision},
				gainPoint{r.Batch, r.Measured / float64(r.Batch), r.Predicted / float64(r.Batch)})
		}
	}
	acc := &GainAccuracy{}
	for _, k := range order {
		pts := series[k]
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].batch < pts[j].batch })
		lo, hi := pts[0], pts[len(pts)-1]
		if lo.batch == hi.batch {
			continue
		}
		set := k.set
		gm := lo.measured / hi.measured
		gp := lo.predicted / hi.predicted
		source, _, _ := strings.Cut(k.source, "\x00")
		acc.Series = append(acc.Series, GainSeries{Table: k.table, Source: source, Set: set, GPU: k.gpu, Model: k.model, Setup: k.su,
			Points: distinctBatches(pts), FromBatch: lo.batch, ToBatch: hi.batch,
			MeasuredGainPct: 100 * (gm - 1), PredictedGainPct: 100 * (gp - 1), ErrorPct: 100 * (gp/gm - 1)})
	}
	sort.SliceStable(acc.Series, func(i, j int) bool {
		a, b := acc.Series[i], acc.Series[j]
		if a.Set != b.Set {
			return a.Set == "tuning"
		}
		return a.Source < b.Source
	})
	group := func(key func(GainSeries) GainGroup) []GainGroup {
		keys, stats := meanErrors(acc.Series, key, func(s GainSeries) (float64, float64) { return s.ErrorPct, 0 })
		out := make([]GainGroup, len(keys))
		for i, k := range keys {
			k.Series, k.MAPEPct, k.BiasPct = stats[i].rows, stats[i].mape, stats[i].bias
			out[i] = k
		}
		return out
	}
	acc.Sets = group(func(s GainSeries) GainGroup { return GainGroup{Set: s.Set} })
	acc.Sources = group(func(s GainSeries) GainGroup { return GainGroup{Set: s.Set, Source: s.Source} })
	return acc
}

// QueuedKernelGrid is where FitBatchCurve looks for the GPU-side cost of a kernel
// queued behind another, µs, from a bare launch's few microseconds (NVIDIA's CUDA best
// practices guide: about 5 µs) to the ramp-up and drain of a full GEMM kernel that its
// successor waits for. The eager operator's and the handoff's grid is StepFitGrid.
var QueuedKernelGrid = []float64{2, 5, 8, 10, 12, 15, 20, 25, 30}

// FitBatchCurve fits together, over QueuedKernelGrid × StepFitGrid, the three costs
// that set the step's time apart from its batch: the GPU-side cost of a queued kernel,
// the host cost of an eager operator and the work per DataLoader batch. It minimises
// the mean absolute log error of table 8's tuning rows plus that of table 10's tuning
// series' gains (rep's tables 3, 4 and 8, whole sources tuning), each table weighed
// alike: the steps' level and the curve's shape. Held-out rows are never read; every
// other figure is eng's calibration's and overheads'.
func FitBatchCurve(eng *app.Engine, rep *Report) (BatchCurveFit, error) {
	bc, err := newBatchCurveData(eng, rep)
	if err != nil {
		return BatchCurveFit{}, err
	}
	best, bestErr := BatchCurveFit{}, math.Inf(1)
	for _, us := range QueuedKernelGrid {
		cal := *eng.Kernels().Calibration()
		cal.LaunchUS = us
		for _, op := range StepFitGrid.EagerOpUS {
			over := eng.Predictor().Overheads()
			over.EagerOpUS = op
			fits, errs, err := bc.errors(&cal, over, StepFitGrid.HandoffMS)
			if err != nil {
				return BatchCurveFit{}, err
			}
			for i, f := range fits {
				if errs[i] < bestErr-1e-12 {
					bestErr, best = errs[i], f
				}
			}
		}
	}
	return best, nil
}

// MaturityLaunchGrid is where FitMaturityLaunch looks for the fixed GPU time a young
// library adds to each convolution or matrix product (kernels.Calibration's
// MaturityLaunchUS), µs: from none to a few kernels' launch and drain.
var MaturityLaunchGrid = []float64{0, 10, 20, 30, 40, 50, 60, 80}

// FitMaturityLaunch fits, over MaturityLaunchGrid, the fixed GPU time a young library
// adds to each convolution or matrix product on the tuning series and rows
// FitBatchCurve reads, by the same error, every other figure eng's (the maturity
// deficit and time, which the release pairs fit, the three costs FitBatchCurve fits).
func FitMaturityLaunch(eng *app.Engine, rep *Report) (BatchCurveFit, error) {
	bc, err := newBatchCurveData(eng, rep)
	if err != nil {
		return BatchCurveFit{}, err
	}
	best, bestErr := BatchCurveFit{}, math.Inf(1)
	for _, us := range MaturityLaunchGrid {
		cal := *eng.Kernels().Calibration()
		cal.MaturityLaunchUS = us
		if us > 0 && !(cal.MaturityMonths > 0) {
			continue // no time for the term to fall over
		}
		fits, errs, err := bc.errors(&cal, eng.Predictor().Overheads(), []float64{pipeline.DataLoaderHandoffMS})
		if err != nil {
			return BatchCurveFit{}, err
		}
		if errs[0] < bestErr-1e-12 {
			bestErr, best = errs[0], fits[0]
		}
	}
	return best, nil
}

// batchCurveData is what the batch curve's fits read: the tuning sources of table 3,
// table 8's tuning rows and table 4's tuning rows in a series.
type batchCurveData struct {
	eng    *app.Engine
	public []PublicSourceAccuracy
	tuning map[string]bool
	steps  []StepBatchRow
	cases  []fit.Case
}

func newBatchCurveData(eng *app.Engine, rep *Report) (*batchCurveData, error) {
	bc := &batchCurveData{eng: eng, public: rep.Public, tuning: map[string]bool{}}
	for _, s := range rep.Public {
		bc.tuning[s.Source] = s.Set == "tuning"
	}
	if rep.StepBatch != nil {
		for _, r := range rep.StepBatch.Rows {
			if r.Set == "tuning" {
				bc.steps = append(bc.steps, r)
			}
		}
	}
	var err error
	if bc.cases, err = modernSeriesCases(eng); err != nil {
		return nil, err
	}
	return bc, nil
}

// errors predicts the tuning series and step rows with cal and over at each handoff
// and gives, per handoff, the costs and tuning MAPEs (BatchCurveFit) and the fits'
// error: the mean absolute log error of the steps plus that of the series' gains.
func (bc *batchCurveData) errors(cal *kernels.Calibration, over predictor.Overheads, handoffs []float64) ([]BatchCurveFit, []float64, error) {
	if err := cal.Validate(); err != nil {
		return nil, nil, err
	}
	timer := kernels.NewModel(cal, nil, nil, nil)
	pred := predictor.NewEngine(timer, over, predictor.DefaultMemoryModel)
	try := Report{Public: bc.public}
	var err error
	if try.Rows, err = publicWith(bc.eng, pred, func(s string) bool { return bc.tuning[s] }); err != nil {
		return nil, nil, err
	}
	preds, err := fit.Predict(cal, over, predictor.DefaultMemoryModel, bc.cases)
	if err != nil {
		return nil, nil, err
	}
	try.Modern = &ModernAccuracy{}
	for i, c := range bc.cases {
		try.Modern.Rows = append(try.Modern.Rows, modernComparison(c, preds[i]))
	}
	var fits []BatchCurveFit
	var errs []float64
	for _, handoff := range handoffs {
		rows := append([]StepBatchRow(nil), bc.steps...)
		if err := PredictStepBatch(pred, bc.eng.Catalog(), rows, handoff); err != nil {
			return nil, nil, err
		}
		try.StepBatch = &StepBatchAccuracy{Rows: rows}
		f := BatchCurveFit{LaunchUS: cal.LaunchUS, EagerOpUS: over.EagerOpUS, HandoffMS: handoff, MaturityLaunchUS: cal.MaturityLaunchUS}
		stepErr, gainErr, n := 0.0, 0.0, 0
		for _, r := range rows {
			stepErr += math.Abs(math.Log(r.Predicted / r.Measured))
			f.TuningStepMAPEPct += math.Abs(r.ErrorPct)
		}
		for _, g := range Gains(&try).Series {
			if g.Set != "tuning" {
				continue
			}
			gainErr += math.Abs(math.Log1p(g.ErrorPct / 100))
			f.TuningMAPEPct += math.Abs(g.ErrorPct)
			n++
		}
		if n == 0 || len(rows) == 0 {
			return nil, nil, fmt.Errorf("no tuning step rows or series of two batch sizes or more to fit the batch curve's costs on")
		}
		f.TuningMAPEPct /= float64(n)
		f.TuningStepMAPEPct /= float64(len(rows))
		fits = append(fits, f)
		errs = append(errs, gainErr/float64(n)+stepErr/float64(len(rows)))
	}
	return fits, errs, nil
}

// modernSeriesCases are the tuning rows of table 4 on one GPU that are in a series of two
// batch sizes or more (one file's rows of one GPU, model and setup).
func modernSeriesCases(eng *app.Engine) ([]fit.Case, error) {
	anchors, err := fit.ParseAnchors(assets.ModernAnchors)
	if err != nil {
		return nil, fmt.Errorf("the embedded modern anchors are broken (a build mistake; report it): %w", err)
	}
	key := func(a fit.Anchor) string {
		return strings.Join([]string{a.Source, a.Where, a.GPU, a.Model, string(a.StackOf()), string(a.Precision), a.Software.Name}, "\x00")
	}
	batches := map[string]map[int]bool{}
	for _, a := range anchors {
		if a.Held || a.GPUs != 1 {
			continue
		}
		if batches[key(a)] == nil {
			batches[key(a)] = map[int]bool{}
		}
		batches[key(a)][a.Batch] = true
	}
	var keep []fit.Anchor
	for _, a := range anchors {
		if !a.Held && a.GPUs == 1 && len(batches[key(a)]) > 1 {
			keep = append(keep, a)
		}
	}
	return fit.Resolve(keep, eng.Catalog().GPUs(), map[string]*cnn.Network{})
}

// GainsWithRefit is Gains with the costs the predictor charges (Shipped) and those
// FitBatchCurve finds on the tuning series and rows now (Refit).
func GainsWithRefit(eng *app.Engine, rep *Report) (*GainAccuracy, error) {
	acc := Gains(rep)
	cal := eng.Kernels().Calibration()
	acc.Shipped = BatchCurveFit{LaunchUS: cal.LaunchUS, EagerOpUS: eng.Predictor().Overheads().EagerOpUS,
		HandoffMS: pipeline.DataLoaderHandoffMS, MaturityLaunchUS: cal.MaturityLaunchUS, TuningMAPEPct: acc.TuningMAPE()}
	if rep.StepBatch != nil {
		for _, g := range rep.StepBatch.Sets {
			if g.Set == "tuning" {
				acc.Shipped.TuningStepMAPEPct = g.MAPEPct
			}
		}
	}
	var err error
	if acc.Refit, err = FitBatchCurve(eng, rep); err != nil {
		return nil, err
	}
	if acc.MaturityRefit, err = FitMaturityLaunch(eng, rep); err != nil {
		return nil, err
	}
	return acc, nil
}

// TuningMAPE is the tuning series' MAPE, percent.
func (a *GainAccuracy) TuningMAPE() float64 {
	for _, s := range a.Sets {
		if s.Set == "tuning" {
			return s.MAPEPct
		}
	}
	return 0
}

// distinctBatches counts the batch sizes of a series (a source may repeat one).
func distinctBatches(pts []gainPoint) int {
	n := 0
	for i := range pts {
		if i == 0 || pts[i].batch != pts[i-1].batch {
			n++
		}
	}
	return n
}

// WriteGainTable prints table 10.
func WriteGainTable(w io.Writer, acc *GainAccuracy, number int) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintf(w, "\n%d. Throughput gain from the smallest to the largest batch of each published series (tables 3, 4 and 8; the batch curve's shape)\n", number)
	fmt.Fprintln(w, "error: the predicted gain's throughput ratio over the measured one, less one (negative: predicted too flat)")
	fmt.Fprintf(w, "%.0f µs of GPU time per queued kernel, %.0f µs per eager operator, %.1f ms per DataLoader batch (tuning MAPE %.1f%%, table 8's %.1f%%)\n",
		acc.Shipped.LaunchUS, acc.Shipped.EagerOpUS, acc.Shipped.HandoffMS, acc.Shipped.TuningMAPEPct, acc.Shipped.TuningStepMAPEPct)
	fmt.Fprintf(w, "the three refitted together now on the tuning series and table 8's tuning rows: %.0f µs, %.0f µs, %.1f ms (tuning MAPE %.1f%%, table 8's %.1f%%)\n",
		acc.Refit.LaunchUS, acc.Refit.EagerOpUS, acc.Refit.HandoffMS, acc.Refit.TuningMAPEPct, acc.Refit.TuningStepMAPEPct)
	fmt.Fprintf(w, "a convolution on libraries of its GPU's launch month costs %.0f µs more, falling with the maturity term; refitted now on the same rows: %.0f µs (tuning MAPE %.1f%%, table 8's %.1f%%)\n",
		acc.Shipped.MaturityLaunchUS, acc.MaturityRefit.MaturityLaunchUS, acc.MaturityRefit.TuningMAPEPct, acc.MaturityRefit.TuningStepMAPEPct)
	fmt.Fprintln(w)
	line := func(g GainGroup) errorGroup { return errorGroup{g.Set, g.Source, g.Series, g.MAPEPct, g.BiasPct} }
	if err := writeErrorGroups(w, "series", "SOURCE", summaryOf(acc.Sets, line), summaryOf(acc.Sources, line)); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", "TABLE", "SOURCE", "GPU", "MODEL", "SETUP", "BATCHES", "MEASURED", "PREDICTED", "ERROR")
	for _, s := range acc.Series {
		t.Row(s.Set, strconv.Itoa(s.Table), s.Source, s.GPU, s.Model, s.Setup, fmt.Sprintf("%d→%d (%d)", s.FromBatch, s.ToBatch, s.Points),
			fmt.Sprintf("%+.1f%%", s.MeasuredGainPct), fmt.Sprintf("%+.1f%%", s.PredictedGainPct), fmt.Sprintf("%+.1f%%", s.ErrorPct))
	}
	return t.Flush()
}
