package app

import (
	"fmt"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// WhyEpochs says, for a run to a target accuracy, what the batch costs in epochs beside
// what it costs per step: the epochs, the factor 1 + B/B_noise over a small batch's,
// the time to the target and the optimizer regime the epochs assume; "" for fixed
// epochs.
func WhyEpochs(x *predictor.Explanation) string {
	if x.EpochsFactor <= 0 {
		return ""
	}
	regime := ""
	if x.Regime != nil && x.Regime.Name != "sgd" {
		regime = " Regime: " + x.Regime.Label + "."
	}
	return fmt.Sprintf("\nEpochs: %.1f ±%.0f%% to the target (%s) = %.2f × %.3f: batch %s against the critical batch %s costs %.1f%% more epochs than a small batch; %s an epoch, %s to the target.%s",
		x.Epochs, x.EpochsErrorPct, x.EpochsSource, x.Epochs/x.EpochsFactor, x.EpochsFactor, charts.FormatCount(int64(x.Batch)),
		charts.FormatCount(int64(x.CriticalBatch+0.5)), 100*(x.EpochsFactor-1), charts.FormatSeconds(x.EpochS), charts.FormatSeconds(x.TotalS), regime)
}

// WhyText is everything the Why tab's header says about one point of curve c (nil when
// it is not at hand): the headline (WhyHeadline), to a target what the batch costs in
// epochs (WhyEpochs) and on what the epochs rest (EpochsBasis), and the warnings a
// person should read before following it (RunWarnings).
func WhyText(x *predictor.Explanation, c *predictor.Curve) string {
	text := WhyHeadline(x) + WhyEpochs(x)
	if c == nil {
		return text
	}
	if c.Convergence != nil {
		text += " Epochs " + EpochsBasis(c) + "."
	}
	for _, w := range RunWarnings(c, x.Batch) {
		text += "\nWarning: " + w + "."
	}
	return text
}
