package validate

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor/convergence"
)

// ConvergenceSet is the epochs model's accuracy over one preset's figures of one set.
type ConvergenceSet struct {
	Dataset string `json:"dataset"`
	Set     string `json:"set"` // tuning or held out
	Rows    int    `json:"rows"`
	// MAPEPct is the preset's own predictions' mean absolute percentage error;
	// AnchoredMAPEPct that of the predictions scaled from each source's smallest batch
	// by the preset's critical batch (the custom mode), null when no source has two rows.
	MAPEPct         float64  `json:"mape_pct"`
	AnchoredMAPEPct *float64 `json:"anchored_mape_pct"`
}

// ConvergenceFit is a preset's parameters as shipped and as fitted again on the tuning
// figures now.
type ConvergenceFit struct {
	Dataset          string  `json:"dataset"`
	EpochsMin        float64 `json:"epochs_min"`
	NoiseBatch       float64 `json:"noise_batch"`
	ErrorPct         float64 `json:"error_pct"`
	FitEpochsMin     float64 `json:"fit_epochs_min"`
	FitNoiseBatch    float64 `json:"fit_noise_batch"`
	FitErrorPct      float64 `json:"fit_error_pct"` // max(tuning MAPE, held-out anchored MAPE)
	TuningFigures    int     `json:"tuning_figures"`
	HeldOutFigures   int     `json:"held_out_figures"`
	LargestPublished int     `json:"largest_published_batch"`
}

// ConvergenceAccuracy is the epochs-to-target table of `cnntime validate`.
type ConvergenceAccuracy struct {
	Fits []ConvergenceFit      `json:"fits"`
	Sets []ConvergenceSet      `json:"sets"`
	Rows []convergence.Checked `json:"rows"`
}

// Convergence refits every preset on the tuning figures of
// assets/validation/convergence.csv and predicts every figure with the shipped preset.
func Convergence() (*ConvergenceAccuracy, error) {
	figs, err := convergence.ParseFigures(assets.Convergence)
	if err != nil {
		return nil, fmt.Errorf("the embedded epochs-to-target figures are broken (a build mistake; report it): %w", err)
	}
	acc := &ConvergenceAccuracy{}
	for _, name := range convergence.PresetNames() {
		p, _ := convergence.Preset(name)
		tuning, held := convergence.Select(figs, name, "tuning"), convergence.Select(figs, name, "held out")
		f, err := FitConvergence(figs, name)
		if err != nil {
			return nil, err
		}
		f.EpochsMin, f.NoiseBatch, f.ErrorPct = p.EpochsMin, p.NoiseBatch, p.ErrorPct
		acc.Fits = append(acc.Fits, f)
		for _, part := range []struct {
			set  string
			figs []convergence.Figure
		}{{"tuning", tuning}, {"held out", held}} {
			if len(part.figs) == 0 {
				continue
			}
			rows := convergence.Evaluate(p, part.figs)
			s := ConvergenceSet{Dataset: name, Set: part.set, Rows: len(rows)}
			var anchored float64
			s.MAPEPct, anchored = convergence.MAPE(rows)
			if !math.IsNaN(anchored) {
				s.AnchoredMAPEPct = &anchored
			}
			acc.Sets = append(acc.Sets, s)
			acc.Rows = append(acc.Rows, rows...)
		}
	}
	return acc, nil
}

// FitConvergence fits dataset's epochs model to its tuning figures among figs and
// measures it as the presets are measured: its error is the larger of the tuning MAPE
// and the held-out MAPE of predictions anchored at each held-out source's smallest
// batch. What `cnntime calibrate --convergence` prints.
func FitConvergence(figs []convergence.Figure, dataset string) (ConvergenceFit, error) {
	tuning, held := convergence.Select(figs, dataset, "tuning"), convergence.Select(figs, dataset, "held out")
	emin, bn, err := convergence.Fit(tuning)
	if err != nil {
		return ConvergenceFit{}, fmt.Errorf("fit the %s epochs model: %w", dataset, err)
	}
	m := convergence.Model{Name: dataset, EpochsMin: emin, NoiseBatch: bn}
	tuneMAPE, _ := convergence.MAPE(convergence.Evaluate(m, tuning))
	errPct := tuneMAPE
	if len(held) > 0 {
		if _, a := convergence.MAPE(convergence.Evaluate(m, held)); a > errPct {
			errPct = a
		}
	}
	f := ConvergenceFit{Dataset: dataset, FitEpochsMin: emin, FitNoiseBatch: bn, FitErrorPct: errPct,
		TuningFigures: len(tuning), HeldOutFigures: len(held)}
	for _, x := range append(tuning, held...) {
		f.LargestPublished = max(f.LargestPublished, x.Batch)
	}
	return f, nil
}

// WriteConvergenceTable prints the epochs-to-target table.
func WriteConvergenceTable(w io.Writer, acc *ConvergenceAccuracy, number int) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintf(w, "\n%d. Epochs to a target accuracy vs global batch, E(B) = E_min·(1 + B/B_noise), vs published figures (convergence.csv)\n\n", number)
	for _, f := range acc.Fits {
		fmt.Fprintf(w, "%s: E_min %.2f epochs, critical batch B_noise %.0f, ±%.1f%% (refitted now: %.2f, %.0f, ±%.1f%%) on %d tuning figures, %d held out; published up to batch %d\n",
			f.Dataset, f.EpochsMin, f.NoiseBatch, f.ErrorPct, f.FitEpochsMin, f.FitNoiseBatch, f.FitErrorPct, f.TuningFigures, f.HeldOutFigures, f.LargestPublished)
	}
	fmt.Fprintln(w)
	for _, s := range acc.Sets {
		anchored := "-"
		if s.AnchoredMAPEPct != nil {
			anchored = fmt.Sprintf("%.1f%%", *s.AnchoredMAPEPct)
		}
		fmt.Fprintf(w, "%s %s: %d figures, MAPE %.1f%% (anchored at each source's smallest batch: %s)\n", s.Dataset, s.Set, s.Rows, s.MAPEPct, anchored)
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", "SOURCE", "DATASET", "BATCH", "PUBLISHED", "PREDICTED", "ERROR", "ANCHORED", "ERROR")
	for _, r := range acc.Rows {
		anchored, aerr := "anchor", "-"
		if !r.Anchor {
			anchored, aerr = fmt.Sprintf("%.1f", r.Anchored), fmt.Sprintf("%+.1f%%", r.AnchoredErrorPct)
		}
		t.Row(r.Set, r.Source, r.Dataset, strconv.Itoa(r.Batch), fmt.Sprintf("%.1f", r.Epochs), fmt.Sprintf("%.1f", r.Predicted),
			fmt.Sprintf("%+.1f%%", r.ErrorPct), anchored, aerr)
	}
	return t.Flush()
}
