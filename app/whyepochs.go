package app

import (
	"fmt"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// WhyEpochs says, for a run to a target accuracy, where its epochs come from beside
// what the batch costs per step: the epochs and their band, the target and the recipe
// (its optimizer, schedule and published run), whether the batch is inside the
// evidence of the recipe's law or extrapolated and why, the epoch and the time to the
// target; "" for fixed epochs.
func WhyEpochs(x *predictor.Explanation) string {
	if x.EpochsAt == nil || x.Recipe == nil {
		return ""
	}
	m, at := x.Recipe, x.EpochsAt
	return fmt.Sprintf("\nEpochs: %.1f ±%.0f%% to %s, %s. %s; %s an epoch, %s to the target.",
		at.Epochs, at.ErrorPct, m.TargetName(), RecipeText(m), LawText(m, x.Batch), charts.FormatSeconds(x.EpochS), charts.FormatSeconds(x.TotalS))
}

// RecipeText is a plan's recipe in a phrase: "recipe torchvision-v1/resnet50: sgd,
// lr 0.1 (scaled linearly), steplr, 90 epochs at batch 256 to 76.13%".
func RecipeText(m *recipe.Plan) string {
	r := m.Recipe
	if r.Name == recipe.CustomName {
		return fmt.Sprintf("your figures: %g epochs at batch %s", r.Epochs, charts.FormatCount(int64(r.GlobalBatch)))
	}
	var parts []string
	scaled := map[string]string{"linear": "scaled linearly", "sqrt": "scaled by the square root", "none": "not scaled"}[r.LRScaling]
	parts = append(parts, r.Opt, fmt.Sprintf("lr %g %s", r.LR, scaled), r.LRScheduler)
	if r.LRWarmupEpochs > 0 {
		parts = append(parts, fmt.Sprintf("%g warm-up epochs", r.LRWarmupEpochs))
	}
	if r.LabelSmoothing > 0 {
		parts = append(parts, fmt.Sprintf("label smoothing %g", r.LabelSmoothing))
	}
	if r.MixupAlpha > 0 || r.CutmixAlpha > 0 {
		parts = append(parts, fmt.Sprintf("mixup %g/cutmix %g", r.MixupAlpha, r.CutmixAlpha))
	}
	if r.AutoAugment != "" {
		parts = append(parts, "auto-augment "+r.AutoAugment)
	}
	if r.ModelEMA {
		parts = append(parts, "EMA")
	}
	s := fmt.Sprintf("recipe %s (%s; published: %g epochs at batch %s to %s)", r.ID(), strings.Join(parts, ", "), r.Epochs,
		charts.FormatCount(int64(r.GlobalBatch)), recipe.FormatTop1(r.Top1))
	if m.TargetFactor != 1 {
		s += fmt.Sprintf(", its schedule compressed ×%.2f for a target %.2f points lower (2^(−Δ/%.2f), FFCV's schedules; ±%.0f%% more)",
			m.TargetFactor, r.Top1-m.Target, recipe.TargetPointsPerDoubling, m.TargetErrorPct)
	}
	return s
}

// LawText says how the epochs at batch b follow from the plan's law: inside its
// evidence, or extrapolated and why.
func LawText(m *recipe.Plan, b int) string {
	l, at := m.Recipe.Law, m.At(b)
	if at.Extrapolated {
		return fmt.Sprintf("Extrapolated: %s; the epochs follow %s's law (critical batch %s) from the nearest batch shown, the band growing %.1f%% per doubling",
			at.Why, m.Reference.Recipe, charts.FormatCount(int64(m.Reference.CriticalBatch+0.5)), m.Reference.SpreadPerDoublingPct)
	}
	switch l.Kind {
	case recipe.LinearScaling:
		return fmt.Sprintf("Batch %s is inside the linear-scaling law's evidence (%s: the epochs stay, the rate scales): %s", charts.FormatCount(int64(b)), l.BatchRange(), l.Basis)
	case recipe.NoiseScale:
		if m.Recipe.Name == recipe.CustomName {
			return fmt.Sprintf("E(B) = %.2f·(1 + B/%.0f), your law (%s)", l.EpochsMin, l.CriticalBatch, l.Basis)
		}
		return fmt.Sprintf("Batch %s is inside the noise-scale law's evidence (%s, critical batch %s): %s", charts.FormatCount(int64(b)), l.BatchRange(), charts.FormatCount(int64(l.CriticalBatch+0.5)), l.Basis)
	}
	return fmt.Sprintf("Batch %s is the recipe's own", charts.FormatCount(int64(b)))
}

// WhyText is everything the Why tab's header says about one point of curve c (nil when
// it is not at hand): the headline (WhyHeadline), to a target where the epochs come
// from (WhyEpochs), the cache's measured steps of its model on its GPU beside the
// prediction (MeasuredStepText), and the warnings a person should read before following it
// (RunWarnings).
func WhyText(x *predictor.Explanation, c *predictor.Curve) string {
	text := WhyHeadline(x) + WhyEpochs(x)
	for i, m := range x.Measured {
		if i == 0 {
			text += "\nMeasured steps of " + Printable(x.Model) + " on this GPU at " + string(x.Precision) + ":"
		}
		text += "\n  " + MeasuredStepText(m)
	}
	if x.AnchoredMS > 0 {
		text += "\nAnchored: " + AnchoredText(x) + "."
	}
	if c == nil {
		return text
	}
	for _, w := range RunWarnings(c, x.Batch) {
		text += "\nWarning: " + w + "."
	}
	return text
}
