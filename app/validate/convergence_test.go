package validate

import (
	"math"
	"strings"
	"testing"

	"cnntime/assets"
	"cnntime/predictor/convergence"
)

// TestConvergencePresetsAreTheFit keeps the shipped presets equal to what Fit makes of
// the embedded tuning figures (E_min to 0.01 epoch, B_noise to the image, the error to
// 0.1%), and their regimes' last published batch equal to the figures' largest.
func TestConvergencePresetsAreTheFit(t *testing.T) {
	figs, err := convergence.ParseFigures(assets.Convergence)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range convergence.PresetNames() {
		p, _ := convergence.Preset(name)
		f, err := FitConvergence(figs, name)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p.EpochsMin-f.FitEpochsMin) > 0.005 || math.Abs(p.NoiseBatch-f.FitNoiseBatch) > 1 || math.Abs(p.ErrorPct-f.FitErrorPct) > 0.05 {
			t.Errorf("%s preset: E_min %.2f, B_noise %.0f, ±%.1f%%; the fit gives %.4f, %.1f, ±%.3f%%: write those into predictor/convergence/presets.go",
				name, p.EpochsMin, p.NoiseBatch, p.ErrorPct, f.FitEpochsMin, f.FitNoiseBatch, f.FitErrorPct)
		}
		if last := p.Regimes[len(p.Regimes)-2].UpTo; last != f.LargestPublished {
			t.Errorf("%s preset: its last published regime ends at %d, the figures at %d", name, last, f.LargestPublished)
		}
		if f.TuningFigures == 0 || f.HeldOutFigures == 0 {
			t.Errorf("%s: %d tuning and %d held-out figures; both are needed", name, f.TuningFigures, f.HeldOutFigures)
		}
	}
}

// TestConvergenceHoldOut checks the hold-out: whole sources, about a third of the
// figures of each preset.
func TestConvergenceHoldOut(t *testing.T) {
	figs, err := convergence.ParseFigures(assets.Convergence)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range convergence.PresetNames() {
		all, held := convergence.Select(figs, name, ""), convergence.Select(figs, name, "held out")
		if frac := float64(len(held)) / float64(len(all)); frac < 0.25 || frac > 0.45 {
			t.Errorf("%s: %d of %d figures held out (%.0f%%); hold out about a third", name, len(held), len(all), 100*frac)
		}
	}
}

// TestConvergenceTable runs the validate table on the embedded figures: every preset
// has tuning and held-out sets, and the rows print.
func TestConvergenceTable(t *testing.T) {
	acc, err := Convergence()
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]bool{}
	for _, s := range acc.Sets {
		sets[s.Dataset+"/"+s.Set] = true
		if !(s.MAPEPct >= 0) || s.Rows == 0 {
			t.Errorf("%s %s: %d rows, MAPE %v", s.Dataset, s.Set, s.Rows, s.MAPEPct)
		}
	}
	for _, want := range []string{"imagenet-1k/tuning", "imagenet-1k/held out", "cifar-10/tuning", "cifar-10/held out"} {
		if !sets[want] {
			t.Errorf("no %s set in %v", want, sets)
		}
	}
	var b strings.Builder
	if err := WriteConvergenceTable(&b, acc, 6); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mlperf-rcp-google", "held out", "anchored", "B_noise"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}
