package charts

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"cnntime/app/numfmt"
	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// The Format functions are numfmt's (cnntime's one way of writing a number, the same
// in the window, the CLI and the exported charts), under the names the views use.

// FormatSeconds writes a duration for people: "850 ms", "12.3 s", "14.5 min", "5.2 h",
// "3.1 days" (numfmt.Seconds).
func FormatSeconds(s float64) string { return numfmt.Seconds(s) }

// FormatMS writes a time in milliseconds with three significant digits: "0.842 ms",
// "84.2 ms", "1,234 ms", "<0.001 ms" (numfmt.MS).
func FormatMS(ms float64) string { return numfmt.MS(ms) }

// FormatUSD writes an amount of US dollars: "$0.42", "$12.34", "$1,234", and an
// amount under a cent to two significant digits, "$0.0042", never "$0.00" (numfmt.USD).
func FormatUSD(usd float64) string { return numfmt.USD(usd) }

// FormatKWh writes an energy in kilowatt-hours: "6.7 kWh", and under 1 kWh to two
// significant digits, "0.012 kWh", never "0.0 kWh" (numfmt.KWh).
func FormatKWh(kwh float64) string { return numfmt.KWh(kwh) }

// FormatShare writes part of whole as a percentage with one decimal, "42.3%": "<0.1%"
// for a part that is not zero but rounds to it, "–" when there is no whole.
func FormatShare(part, whole float64) string { return numfmt.Share(part, whole) }

// FormatRate writes images per second: "1,875", and under 100 to three significant
// digits, "0.17", never "0" (numfmt.Rate).
func FormatRate(v float64) string { return numfmt.Rate(v) }

// FormatCount writes an integer with thousands separators: "1,281,167".
func FormatCount(n int64) string { return numfmt.Count(n) }

// Tooltip is the text a hover shows for one point of a curve: CNN, machine, batch,
// iteration, epoch and total time, images/s, cost and where the prediction comes from.
func Tooltip(c predictor.Curve, p predictor.Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s\n", c.Model, c.Machine)
	fmt.Fprintf(&b, "batch size %d", p.Batch)
	if !p.Fits {
		b.WriteString(": out of memory")
		return b.String()
	}
	if m := c.Recipe; m != nil {
		regime := ""
		if p.Regime == recipe.Extrapolated {
			regime = ", extrapolated"
		}
		fmt.Fprintf(&b, "\niteration %s\nepoch %s\nto %s %s (±%.0f%%)\n%.1f epochs (%s%s)\n%s images/s\ncost %s\nsource: %s%s",
			FormatMS(p.IterMS), FormatSeconds(p.EpochS), m.TargetName(), FormatSeconds(p.TotalS), p.RunErrorPct(), p.Epochs, c.EpochsSource, regime,
			FormatRate(p.ImagesPerS), costText(c, p), SourceText(&c, p), errorNote(p))
		return b.String()
	}
	fmt.Fprintf(&b, "\niteration %s\nepoch %s\ntotal %s\n%s images/s\ncost %s\nsource: %s%s",
		FormatMS(p.IterMS), FormatSeconds(p.EpochS), FormatSeconds(p.TotalS),
		FormatRate(p.ImagesPerS), costText(c, p), SourceText(&c, p), errorNote(p))
	return b.String()
}

// SourceText is where point p of curve c comes from: its source, and for a point
// scaled through measured whole steps how many ("anchored to 2 measured steps").
func SourceText(c *predictor.Curve, p predictor.Point) string {
	if p.Source == predictor.Anchored && len(c.Anchors) > 0 {
		return "anchored to " + Count(len(c.Anchors), "measured step", "measured steps")
	}
	return string(p.Source)
}

// costText is a point's cost, or why it has none.
func costText(c predictor.Curve, p predictor.Point) string {
	if !c.CostKnown {
		return "unknown (the machine has no price)"
	}
	return FormatUSD(p.CostUSD)
}

// ColumnTooltip is what a crosshair over the curves chart reads: the point nearest the
// pointer in full (as Tooltip), then every series' value of the metric at the hovered
// batch size (column, as Frame.Column finds it), largest first, so that series hidden
// under another line are read too. Marks index curves.
func ColumnTooltip(curves []predictor.Curve, metric Metric, nearest Mark, column []Mark) string {
	if nearest.Curve < 0 || nearest.Curve >= len(curves) || nearest.Point < 0 || nearest.Point >= len(curves[nearest.Curve].Points) {
		return ""
	}
	if metric == "" {
		metric = MetricTotal
	}
	c := curves[nearest.Curve]
	p := c.Points[nearest.Point]
	text := Tooltip(c, p)
	if len(column) < 2 {
		return text
	}
	type row struct {
		name  string
		batch int
		v     float64
	}
	var rows []row
	for _, m := range column {
		if m.Curve < 0 || m.Curve >= len(curves) || m.Point < 0 || m.Point >= len(curves[m.Curve].Points) {
			continue
		}
		if m.Curve == nearest.Curve {
			m = nearest // the hovered series at the point read out above, never another of its batches
		}
		cv := curves[m.Curve]
		pt := cv.Points[m.Point]
		v, ok := metric.Value(pt)
		if !ok {
			continue
		}
		rows = append(rows, row{name: cv.Model + " · " + cv.Machine, batch: pt.Batch, v: v})
	}
	if len(rows) < 2 {
		return text
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].v > rows[b].v })
	var b strings.Builder
	b.WriteString(text)
	fmt.Fprintf(&b, "\n\n%s at batch %d, every series:", metric.TitleFor(curves), p.Batch)
	for _, r := range rows {
		at := ""
		if r.batch != p.Batch {
			at = fmt.Sprintf(" (batch %d)", r.batch)
		}
		fmt.Fprintf(&b, "\n  %s: %s%s", r.name, formatMetric(metric, r.v), at)
	}
	return b.String()
}

// formatMetric writes a value of a metric in its unit as people read it.
func formatMetric(m Metric, v float64) string {
	switch m {
	case MetricIter:
		return FormatMS(v)
	case MetricEpoch:
		return FormatSeconds(v * 60)
	case MetricThroughput:
		return FormatRate(v) + " images/s"
	case MetricCost:
		return FormatUSD(v)
	default:
		return FormatSeconds(v * 3600)
	}
}

// ScatterTooltip is the text a hover shows for a point of the scatter (a curve's best
// batch): CNN, machine, batch, total time and cost with the range of their expected
// error, and where the prediction comes from.
func ScatterTooltip(c predictor.Curve, p predictor.Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s\nbest batch size %d", c.Model, c.Machine, p.Batch)
	if !p.Fits {
		b.WriteString(": out of memory")
		return b.String()
	}
	if m := c.Recipe; m != nil {
		extra := ""
		if p.Regime == recipe.Extrapolated {
			extra = ", extrapolated"
		}
		fmt.Fprintf(&b, "\n%.1f epochs (%s%s) to %s", p.Epochs, c.EpochsSource, extra, m.TargetName())
	}
	fmt.Fprintf(&b, "\ntotal time %s", FormatSeconds(p.TotalS))
	lo, hi, _ := MetricTotal.Range(p)
	if hi > lo {
		fmt.Fprintf(&b, " (%s to %s)", FormatSeconds(lo*3600), FormatSeconds(hi*3600))
	}
	fmt.Fprintf(&b, "\ncost %s", FormatUSD(p.CostUSD))
	if hi > lo && p.CostUSD > 0 && p.TotalS > 0 {
		k := p.CostUSD / (p.TotalS / 3600)
		fmt.Fprintf(&b, " (%s to %s)", FormatUSD(lo*k), FormatUSD(hi*k))
	}
	fmt.Fprintf(&b, "\nsource: %s%s", SourceText(&c, p), errorNote(p))
	if c.Recommended > 0 && c.Recommended != p.Batch {
		fmt.Fprintf(&b, "\nrecommended batch %s (within %g%%: %s to %s)", FormatCount(int64(c.Recommended)), predictor.NearBestPct, FormatCount(int64(c.NearMin)), FormatCount(int64(c.NearMax)))
	} else if c.Recommended > 0 && c.NearMax > c.NearMin {
		fmt.Fprintf(&b, "\nrecommended too (within %g%%: %s to %s)", predictor.NearBestPct, FormatCount(int64(c.NearMin)), FormatCount(int64(c.NearMax)))
	}
	return b.String()
}

func errorNote(p predictor.Point) string {
	if p.ErrorPct > 0 && !isBad(p.ErrorPct) {
		return fmt.Sprintf(" (±%.0f%%)", p.ErrorPct)
	}
	return ""
}

// Count writes a number of things with the noun that agrees with it: "1 curve",
// "6 curves", "0 curves", "1,281,167 images".
func Count(n int, singular, pluralForm string) string {
	if n == 1 || n == -1 {
		return FormatCount(int64(n)) + " " + singular
	}
	return FormatCount(int64(n)) + " " + pluralForm
}

func isBad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
