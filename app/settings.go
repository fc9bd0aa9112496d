package app

import (
	"errors"
	"fmt"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// SessionSettings are what the user chose to predict.
type SessionSettings struct {
	Models    []string          // CNN names
	Machines  []string          // machine IDs, e.g. "aws/p3.2xlarge"
	Epochs    int               // passes over the data set
	Images    int               // training images per epoch
	Precision measure.Precision // fp32, fp32-strict, tf32, amp or bf16
	Policy    measure.Policy    // cuDNN algorithm choice: heuristic or fastest
	BatchMin  int               // the smallest global batch size
	// BatchMax caps the global batch size; 0 lets each machine's curve run up to the
	// largest batch that fits in its memory (the global batch on multi-GPU machines).
	BatchMax int
	// Data is the dataset (its input size and classes), the input pipeline and the
	// memory format; Images is kept equal to the dataset's unless the user changes it.
	Data RunData
	// Nodes is how many instances of each machine train together, data-parallel over
	// the catalog's network between them (0 or 1: one); batches are then global over
	// all their GPUs and the price is the instances' together.
	Nodes int
	// Train is how the run is counted: a fixed Epochs, or to a target accuracy with
	// the dataset's preset or the user's own figures (app.Training).
	Train Training
	// Price says which prices the costs use: a region ("" each machine's cheapest) and
	// on-demand or spot.
	Price hw.PriceChoice
}

// DefaultSessionSettings are a fresh session's: ImageNet-1k for 90 epochs in FP32,
// batch sizes from 1 up to the largest that fits each machine, nothing selected.
func DefaultSessionSettings() SessionSettings {
	return SessionSettings{
		Epochs:    DefaultEpochs,
		Images:    predictor.ImageNetImages,
		Precision: measure.FP32,
		Policy:    measure.Heuristic,
		BatchMin:  1,
		Data:      DefaultRunData(), // the CLI's default too: the two predict alike
	}
}

// Limits on the settings, wide enough for any real training run.
const (
	MaxEpochs    = 100000
	MaxImages    = 10_000_000_000
	MaxBatchSize = 1 << 16
)

// Validate says what is wrong with the settings and how to fix it.
func (s SessionSettings) Validate() error {
	var errs []error
	if s.Epochs < 1 || s.Epochs > MaxEpochs {
		errs = append(errs, fmt.Errorf("epochs must be a whole number from 1 to %d, not %d", MaxEpochs, s.Epochs))
	}
	if s.Images < 1 || s.Images > MaxImages {
		errs = append(errs, fmt.Errorf("training images must be from 1 to %d, not %d", int64(MaxImages), s.Images))
	}
	if _, err := predictor.ParseTrainingPrecision(string(s.Precision)); err != nil {
		errs = append(errs, err)
	}
	if s.Policy != measure.NoPolicy {
		if _, err := measure.ParsePolicy(string(s.Policy)); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case s.BatchMin < 1:
		errs = append(errs, fmt.Errorf("the smallest batch size must be at least 1, not %d", s.BatchMin))
	case s.BatchMax < 0:
		errs = append(errs, fmt.Errorf("the batch size cap must be a positive whole number, or empty for none, not %d", s.BatchMax))
	case s.BatchMax > 0 && s.BatchMax < s.BatchMin:
		errs = append(errs, fmt.Errorf("the largest batch size (%d) is below the smallest (%d)", s.BatchMax, s.BatchMin))
	case s.BatchMin > MaxBatchSize || s.BatchMax > MaxBatchSize:
		errs = append(errs, fmt.Errorf("the largest batch size must be at most %d, not %d", MaxBatchSize, max(s.BatchMin, s.BatchMax)))
	}
	if s.Nodes < 0 || s.Nodes > predictor.MaxNodes {
		errs = append(errs, fmt.Errorf("instances per machine must be from 1 to %d, not %d", predictor.MaxNodes, s.Nodes))
	}
	if err := s.Data.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Train.Check(s.Data); err != nil {
		errs = append(errs, err)
	}
	for _, list := range [][]string{s.Models, s.Machines} {
		for _, name := range list {
			if strings.TrimSpace(name) == "" {
				errs = append(errs, errors.New("an empty CNN or machine name was selected"))
			}
		}
	}
	return errors.Join(errs...)
}

// ChartSettings are how the charts show the curves.
type ChartSettings struct {
	Metric    charts.Metric
	LogX      bool
	LogY      bool
	Hidden    map[string]bool // series keys (charts.SeriesKey) toggled off in the legend
	Highlight string          // the series clicked in the scatter; "" for none
	// ScatterLog draws the scatter with logarithmic axes (for machines of very
	// different speeds); LogX and LogY are the curves chart's.
	ScatterLog bool
	// HideErrorBands leaves out the expected-error bands on the curves and the
	// whiskers on the scatter.
	HideErrorBands bool
	// HideLegend leaves the curves chart's legend out of the window, the curves the
	// whole of their panel (the series stay named in their tooltips and the tables).
	HideLegend bool
	// Limit is the Run tab's deadline or budget: the results rank the runs that meet
	// it first and the Results tab answers which is the cheapest (or fastest) that does,
	// as best --deadline or --budget does (RunLimit). It filters, it predicts nothing.
	Limit RunLimit
}

// DefaultChartSettings are a fresh window's charts, and what cnntime export draws
// unless told otherwise: total time against batch size, both axes logarithmic (curves
// of machines and batches that differ a thousandfold stay apart), the scatter linear.
func DefaultChartSettings() ChartSettings {
	return ChartSettings{Metric: charts.MetricTotal, LogX: true, LogY: true}
}

// Run is the training run the settings describe: Epochs of Images; to a target
// accuracy (Train) each network's recipe plan is resolved when it is predicted
// (Query.Train), after Train.Check.
func (s SessionSettings) Run() (predictor.Run, error) {
	if err := s.Train.Check(s.Data); err != nil {
		return predictor.Run{}, err
	}
	return predictor.Run{Epochs: s.Epochs, Images: s.Images}, nil
}

// query is the query of the settings' run, without its models, targets and batch
// sizes: every prediction, explanation and launch file of the window starts from it,
// so none of them leaves out a part of the run (the training to a target did).
func (s SessionSettings) query() (Query, error) {
	run, err := s.Run()
	if err != nil {
		return Query{}, err
	}
	return Query{Precision: s.Precision, Policy: s.Policy, Run: run, Data: s.Data, Nodes: s.Nodes, Price: s.Price, Train: s.Train}, nil
}

// Options are the chart options for these settings in a style.
func (v ChartSettings) Options(style charts.Style) charts.Options {
	return charts.Options{Metric: v.Metric, LogX: v.LogX, LogY: v.LogY, Hidden: v.Hidden, Highlight: v.Highlight, Style: style, NoErrorBands: v.HideErrorBands,
		DeadlineS: v.Limit.Deadline.Seconds(), BudgetUSD: v.Limit.BudgetUSD}
}

func (s SessionSettings) clone() SessionSettings {
	s.Models = append([]string(nil), s.Models...)
	s.Machines = append([]string(nil), s.Machines...)
	return s
}

func (v ChartSettings) clone() ChartSettings {
	hidden := make(map[string]bool, len(v.Hidden))
	for k, on := range v.Hidden {
		if on {
			hidden[k] = true
		}
	}
	v.Hidden = hidden
	return v
}

// BatchGrid is the batch sizes a session predicts between lo and hi: every size up to
// 64, every multiple of 8 up to 512, of 32 up to 4096, of 128 up to 16384 and of 512
// beyond, plus the powers of two and the ends. Dense enough to show the jumps that tile
// and wave quantization make, sparse enough that an 8-GPU machine's range stays quick.
func BatchGrid(lo, hi int) []int {
	var out []int
	for b := lo; b <= hi; b++ {
		if b == lo || b == hi || b <= 64 || (b <= 512 && b%8 == 0) || (b <= 4096 && b%32 == 0) ||
			(b <= 16384 && b%128 == 0) || b%512 == 0 || b&(b-1) == 0 {
			out = append(out, b)
		}
	}
	return out
}

// DefaultBatchCap is how far a curve runs when its machine's memory is unknown and the
// user set no cap: 1024 per GPU.
const DefaultBatchCap = 1024

// BatchSpan is a curve's batch range that follows its machine: from Min up to the
// largest global batch that fits in the machine's memory, so an 8-GPU machine's curve
// runs to 8 times a one-GPU machine's; Cap (0: none) stops it earlier.
type BatchSpan struct {
	Min, Cap int
}

// Grid is the span's batch sizes for a machine of gpus GPUs whose largest fitting
// global batch is maxFit (-1 when its memory is unknown). Past maxFit it adds one more
// size, so a chart shows where memory runs out.
//
// On gpus > 1 data-parallel GPUs every size is a multiple of gpus: each GPU runs the
// same batch, so the global batch is the per-GPU batch times the GPUs (the per-GPU
// grid is the one-GPU grid, from Min to Cap and past maxFit as above, divided out).
func (s BatchSpan) Grid(maxFit, gpus int) []int {
	if k := gpus; k > 1 {
		hi := s.Cap
		if hi <= 0 {
			hi = MaxBatchSize
			if maxFit < 0 {
				hi = DefaultBatchCap * k
			}
		}
		per := BatchSpan{Min: (max(s.Min, 1) + k - 1) / k, Cap: max(min(hi, MaxBatchSize)/k, 1)}
		perFit := -1
		if maxFit >= 0 {
			perFit = maxFit / k
		}
		grid := per.Grid(perFit, 1)
		for i := range grid {
			grid[i] *= k
		}
		return grid
	}
	lo := max(s.Min, 1)
	hi := s.Cap
	if hi <= 0 {
		hi = MaxBatchSize
		if maxFit < 0 {
			hi = DefaultBatchCap * max(gpus, 1)
		}
	}
	hi = min(hi, MaxBatchSize)
	if maxFit >= 0 && maxFit < hi {
		// the first grid size past maxFit: the out-of-memory mark
		next := maxFit + 1
		for _, b := range BatchGrid(maxFit+1, min(hi, 2*maxFit+2)) {
			if b > maxFit && (b <= 64 || b%8 == 0) {
				next = b
				break
			}
		}
		hi = max(min(next, hi), lo)
	}
	return BatchGrid(lo, hi)
}
