package convergence

import (
	"fmt"
	"math"
)

// The range the critical batch is searched in, log10 of images.
const (
	minLogNoise = 1 // 10 images
	maxLogNoise = 7 // 10 million: beyond any training set's batch, "no effect"
)

// Fit fits E(B) = E_min·(1 + B/B_noise) to figures of one dataset, by least squares on
// the logarithm of the epochs. Each source gets an intercept of its own (its recipe:
// how many epochs it needs at a small batch), so the critical batch is learnt from how
// each source's epochs change with its batch, not from the differences between
// recipes; E_min is then the geometric mean over all the figures of the epochs their
// batch would need far below the critical batch. B_noise is found on a logarithmic
// grid from 10 to 10⁷ and refined by golden-section search. Sources with only one
// batch size inform E_min alone; without any source of two batch sizes the critical
// batch is unknown and the fit is an error.
func Fit(figs []Figure) (epochsMin, noiseBatch float64, err error) {
	if len(figs) == 0 {
		return 0, 0, fmt.Errorf("no figures to fit")
	}
	bySource := map[string][]Figure{}
	var order []string
	informative := false
	for _, f := range figs {
		if _, ok := bySource[f.Source]; !ok {
			order = append(order, f.Source)
		}
		bySource[f.Source] = append(bySource[f.Source], f)
	}
	for _, s := range order {
		for _, f := range bySource[s][1:] {
			if f.Batch != bySource[s][0].Batch {
				informative = true
			}
		}
	}
	if !informative {
		return 0, 0, fmt.Errorf("no source gives two batch sizes: the critical batch cannot be fitted")
	}
	sse := func(logNoise float64) float64 {
		bn := math.Pow(10, logNoise)
		total := 0.0
		for _, s := range order {
			rows := bySource[s]
			res := make([]float64, len(rows))
			mean := 0.0
			for i, f := range rows {
				res[i] = math.Log(f.Epochs) - math.Log1p(float64(f.Batch)/bn)
				mean += res[i]
			}
			mean /= float64(len(rows))
			for _, r := range res {
				total += (r - mean) * (r - mean)
			}
		}
		return total
	}
	const steps = 600
	best, bestX := math.Inf(1), float64(minLogNoise)
	for i := 0; i <= steps; i++ {
		x := minLogNoise + float64(i)*(maxLogNoise-minLogNoise)/steps
		if v := sse(x); v < best {
			best, bestX = v, x
		}
	}
	h := float64(maxLogNoise-minLogNoise) / steps
	lo, hi := math.Max(minLogNoise, bestX-h), math.Min(maxLogNoise, bestX+h)
	g := (math.Sqrt(5) - 1) / 2
	a, b := hi-g*(hi-lo), lo+g*(hi-lo)
	fa, fb := sse(a), sse(b)
	for hi-lo > 1e-9 {
		if fa <= fb {
			hi, b, fb = b, a, fa
			a = hi - g*(hi-lo)
			fa = sse(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + g*(hi-lo)
			fb = sse(b)
		}
	}
	noiseBatch = math.Pow(10, (lo+hi)/2)
	logMin := 0.0
	for _, f := range figs {
		logMin += math.Log(f.Epochs) - math.Log1p(float64(f.Batch)/noiseBatch)
	}
	return math.Exp(logMin / float64(len(figs))), noiseBatch, nil
}

// Checked is a figure with the model's prediction of it: Predicted from the model
// alone, and Anchored from the figure's own source, scaled from that source's smallest
// batch by the model's critical batch, as the custom mode does with a user's figures.
// The source's anchor figure has no anchored prediction (Anchor true).
type Checked struct {
	Figure
	Predicted        float64 `json:"predicted_epochs"`
	ErrorPct         float64 `json:"error_pct"` // signed, (predicted − published)/published
	Anchor           bool    `json:"anchor"`
	Anchored         float64 `json:"anchored_epochs,omitempty"`
	AnchoredErrorPct float64 `json:"anchored_error_pct,omitempty"`
}

// Evaluate predicts every figure with m.
func Evaluate(m Model, figs []Figure) []Checked {
	anchor := map[string]Figure{}
	for _, f := range figs {
		if a, ok := anchor[f.Source]; !ok || f.Batch < a.Batch {
			anchor[f.Source] = f
		}
	}
	out := make([]Checked, len(figs))
	seen := map[string]bool{}
	for i, f := range figs {
		c := Checked{Figure: f, Predicted: m.Epochs(f.Batch)}
		c.ErrorPct = 100 * (c.Predicted - f.Epochs) / f.Epochs
		a := anchor[f.Source]
		if a == f && !seen[f.Source] {
			c.Anchor, seen[f.Source] = true, true
		} else {
			c.Anchored = a.Epochs * (1 + float64(f.Batch)/m.NoiseBatch) / (1 + float64(a.Batch)/m.NoiseBatch)
			c.AnchoredErrorPct = 100 * (c.Anchored - f.Epochs) / f.Epochs
		}
		out[i] = c
	}
	return out
}

// MAPE is the mean absolute percentage error of the checked figures: of the model's
// own predictions, and of the anchored ones (anchors left out; NaN when none).
func MAPE(rows []Checked) (preset, anchored float64) {
	n, na := 0, 0
	for _, r := range rows {
		preset += math.Abs(r.ErrorPct)
		n++
		if !r.Anchor {
			anchored += math.Abs(r.AnchoredErrorPct)
			na++
		}
	}
	preset /= float64(n)
	if na == 0 {
		return preset, math.NaN()
	}
	return preset, anchored / float64(na)
}
