package validate

import (
	"cnntime/app"
	"fmt"
	"io"
	"sort"
	"strconv"

	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/fit"
)

// ModernAccuracy is table 4 of `cnntime validate`: whole-network training throughput
// predicted from specifications (embedded calibration, no measurements) vs published
// figures on current GPUs (assets/validation/modern_anchors.csv).
type ModernAccuracy struct {
	Groups []ModernGroup `json:"groups"` // per set × source × GPU × precision
	Sets   []ModernGroup `json:"sets"`   // per set (tuning, held out)
	// Stacks is the accuracy per set × software stack (predictor.Frameworks: eager
	// PyTorch, graph frameworks, torch.compile, NVIDIA's optimised implementations).
	Stacks []ModernGroup      `json:"stacks"`
	Rows   []ModernComparison `json:"rows"`
	// MemoryMisses counts rows whose published batch the memory model says does not fit.
	MemoryMisses int `json:"memory_misses"`
	// Families is the residual per set × data (synthetic or the loader) × GPU family ×
	// network kind (dense, grouped, depthwise, depthwise+SE).
	Families []fit.Residual `json:"families"`
}

// ModernComparison is one published figure and its prediction.
type ModernComparison struct {
	Source        string  `json:"source"`
	Where         string  `json:"where"`
	Set           string  `json:"set"`
	GPU           string  `json:"gpu"`
	Model         string  `json:"model"`
	Framework     string  `json:"framework"`
	Stack         string  `json:"stack"`    // the predictor's stack the row is predicted with
	Software      string  `json:"software"` // the release of the kernel libraries the row ran
	Precision     string  `json:"precision"`
	Batch         int     `json:"batch_per_gpu"`
	GPUs          int     `json:"gpus"` // the images/s are over all of them
	MeasuredIPS   float64 `json:"measured_images_per_s"`
	PredictedIPS  float64 `json:"predicted_images_per_s"`
	ErrorPct      float64 `json:"error_pct"` // signed: (predicted − measured) / measured
	BandPct       float64 `json:"band_pct"`  // the prediction's own error band, ± percent
	FitsInMemory  bool    `json:"fits_in_memory"`
	MaxBatchPerGP int     `json:"max_batch_per_gpu"` // the memory model's; -1 when unknown
}

// ModernGroup is the accuracy over a group of rows.
type ModernGroup struct {
	Set       string  `json:"set"`
	Source    string  `json:"source,omitempty"`
	GPU       string  `json:"gpu,omitempty"`
	Precision string  `json:"precision,omitempty"`
	Stack     string  `json:"stack,omitempty"`
	Rows      int     `json:"rows"`
	MAPEPct   float64 `json:"mape_pct"`
	BiasPct   float64 `json:"bias_pct"`
	BandPct   float64 `json:"band_pct"` // mean of the predictions' own error bands
}

// Modern predicts every embedded modern anchor with eng's calibration and
// the default step and memory models, and summarises the errors.
func Modern(eng *app.Engine) (*ModernAccuracy, error) {
	anchors, err := fit.ParseAnchors(assets.ModernAnchors)
	if err != nil {
		return nil, fmt.Errorf("the embedded modern anchors are broken (a build mistake; report it): %w", err)
	}
	cases, err := fit.Resolve(anchors, eng.Catalog().GPUs(), map[string]*cnn.Network{})
	if err != nil {
		return nil, fmt.Errorf("the embedded modern anchors: %w", err)
	}
	preds, err := fit.Predict(eng.Kernels().Calibration(), predictor.DefaultOverheads, predictor.DefaultMemoryModel, cases)
	if err != nil {
		return nil, err
	}
	acc := &ModernAccuracy{}
	for i, c := range cases {
		acc.Rows = append(acc.Rows, modernComparison(c, preds[i]))
		if !preds[i].Fits {
			acc.MemoryMisses++
		}
	}
	acc.Groups = groupModern(acc.Rows, func(r ModernComparison) ModernGroup {
		return ModernGroup{Set: r.Set, Source: r.Source, GPU: r.GPU, Precision: r.Precision}
	})
	acc.Sets = groupModern(acc.Rows, func(r ModernComparison) ModernGroup { return ModernGroup{Set: r.Set} })
	acc.Stacks = groupModern(acc.Rows, func(r ModernComparison) ModernGroup { return ModernGroup{Set: r.Set, Stack: r.Stack} })
	acc.Families = fit.Residuals(cases, preds)
	return acc, nil
}

// modernComparison is case c's row of table 4 with its prediction p.
func modernComparison(c fit.Case, p fit.Prediction) ModernComparison {
	return ModernComparison{Source: c.Source, Where: c.Where, Set: c.Set(), GPU: c.GPU,
		Model: c.Model, Framework: c.Framework, Stack: string(c.StackOf()), Software: c.Software.Name, Precision: string(c.Precision), Batch: c.Batch, GPUs: c.GPUs,
		MeasuredIPS: c.ImagesPerS, PredictedIPS: p.ImagesPerS, ErrorPct: p.ErrorPct(c.ImagesPerS), BandPct: p.BandPct,
		FitsInMemory: p.Fits, MaxBatchPerGP: p.MaxBatch}
}

// groupModern sums rows into groups keyed by what key keeps of a row, sorted tuning
// first, then by source, stack, GPU and precision.
func groupModern(rows []ModernComparison, key func(ModernComparison) ModernGroup) []ModernGroup {
	keys, stats := meanErrors(rows, key, func(r ModernComparison) (float64, float64) { return r.ErrorPct, r.BandPct })
	out := make([]ModernGroup, len(keys))
	for i, k := range keys {
		k.Rows, k.MAPEPct, k.BiasPct, k.BandPct = stats[i].rows, stats[i].mape, stats[i].bias, stats[i].extra
		out[i] = k
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Set != b.Set {
			return a.Set == "tuning"
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Stack != b.Stack {
			return a.Stack < b.Stack
		}
		if a.GPU != b.GPU {
			return a.GPU < b.GPU
		}
		return a.Precision < b.Precision
	})
	return out
}

// WriteModernTable prints table 4.
func WriteModernTable(w io.Writer, acc *ModernAccuracy) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintln(w, "\n4. Whole networks vs published training throughput on current GPUs (modern_anchors.csv; estimated from specifications)")
	fmt.Fprintln(w)
	for _, s := range acc.Sets {
		fmt.Fprintf(w, "%s: %d rows, MAPE %.1f%%, bias %+.1f%%, predicted band ±%.1f%%\n", s.Set, s.Rows, s.MAPEPct, s.BiasPct, s.BandPct)
	}
	fmt.Fprintf(w, "published batch over the memory model's limit: %d of %d rows\n\n", acc.MemoryMisses, len(acc.Rows))
	t := app.NewTable(w, "SET", "STACK", "ROWS", "MAPE", "BIAS", "BAND")
	for _, g := range acc.Stacks {
		t.Row(g.Set, g.Stack, strconv.Itoa(g.Rows), fmt.Sprintf("%.1f%%", g.MAPEPct), fmt.Sprintf("%+.1f%%", g.BiasPct), fmt.Sprintf("±%.1f%%", g.BandPct))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = app.NewTable(w, "SET", "SOURCE", "GPU", "PRECISION", "ROWS", "MAPE", "BIAS", "BAND")
	for _, g := range acc.Groups {
		t.Row(g.Set, g.Source, g.GPU, g.Precision, strconv.Itoa(g.Rows), fmt.Sprintf("%.1f%%", g.MAPEPct), fmt.Sprintf("%+.1f%%", g.BiasPct), fmt.Sprintf("±%.1f%%", g.BandPct))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nResidual per GPU family and network kind (bias > 0: predicted too fast; data: synthetic, or the real-data loader)")
	fmt.Fprintln(w)
	t = app.NewTable(w, "SET", "DATA", "GPU FAMILY", "NETWORK KIND", "ROWS", "MAPE", "BIAS")
	for _, g := range acc.Families {
		t.Row(g.Set, g.Data, g.Family, g.Kind, strconv.Itoa(g.Rows), fmt.Sprintf("%.1f%%", g.MAPEPct), fmt.Sprintf("%+.1f%%", g.BiasPct))
	}
	return t.Flush()
}
