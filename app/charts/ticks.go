package charts

import (
	"math"
	"strings"

	"gonum.org/v1/plot"

	"cnntime/app/numfmt"
)

// logTicks labels a logarithmic axis at the powers of ten, and at 2× and 5× them where
// the range spans less than two decades; the other integer multiples are minor ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	dense := math.Log10(hi/lo) < 2
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		base := math.Pow10(e)
		for i := 1; i < 10; i++ {
			v := base * float64(i)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if i == 1 || (dense && (i == 2 || i == 5)) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// pow2Ticks labels a logarithmic batch-size axis at the powers of two, every second
// (third, …) one where there would be more than maxLabels labels (10 when 0): draw sets
// maxLabels from the plot's width, so "4,096" and "16,384" never run into each other
// on a narrow chart.
type pow2Ticks struct{ maxLabels int }

func (p pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	first, last := int(math.Ceil(math.Log2(lo))), int(math.Floor(math.Log2(hi)))
	most := p.maxLabels
	if most <= 0 {
		most = 10
	}
	step := max(1, (last-first+most)/most) // ceil((last-first+1)/most)
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Ldexp(1, e)}
		if (e-first)%step == 0 {
			t.Label = tickLabel(t.Value)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// pow2LabelWidth is the room one batch-size label takes ("65,536" at 9 points, and a
// gap).
const pow2LabelWidth = 40 // points

// tickLabel is a tick's value in the one style of every axis: a plain decimal with
// thousands separators ("0.005", "100,000", "1,000,000"), never an exponent.
func tickLabel(v float64) string { return numfmt.Tick(v) }

// linearTicks labels a linear axis at 1, 2 or 5 × a power of ten, about six labels
// across the range, with a minor tick between labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo/step*2) / 2; k*step <= hi+step*1e-9; k += 0.5 {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		t := plot.Tick{Value: v}
		if k == math.Trunc(k) {
			t.Label = tickLabel(roundTo(v, step))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// roundTo removes floating-point noise below a tenth of the step (0.30000000000000004 → 0.3).
func roundTo(v, step float64) float64 {
	digits := max(0, 1-int(math.Floor(math.Log10(step))))
	p := math.Pow10(digits)
	return math.Round(v*p) / p
}

// A time axis is labelled in the unit its values read best in, as numfmt.Seconds
// writes a duration: a CIFAR-10 run of 7 to 18 seconds is "7" to "18" on an axis in
// s, not "0.002" to "0.005" h. The chart's values keep their metric's unit (marks,
// zoom and the pointer's readout are unchanged); only the ticks and the label move.
type timeUnit struct {
	name    string
	seconds float64
	from    float64 // the axis's largest value, in seconds, from which this unit is used
}

// timeUnits are the units an axis of total or epoch time may take, the smallest first;
// iteration axes stay in milliseconds until 10 s (iterUnits).
var (
	timeUnits = []timeUnit{{"s", 1, 0}, {"min", 60, 120}, {"h", 3600, 2 * 3600}, {"days", 86400, 72 * 3600}}
	iterUnits = []timeUnit{{"ms", 0.001, 0}, {"s", 1, 10}}
)

// unitFor is the unit of units for an axis whose largest value is hi seconds.
func unitFor(units []timeUnit, hi float64) timeUnit {
	u := units[0]
	for _, c := range units[1:] {
		if hi >= c.from {
			u = c
		}
	}
	return u
}

// scaledTicks are inner's ticks of an axis in another unit: per of the ticks' unit
// make one of the axis's.
type scaledTicks struct {
	inner plot.Ticker
	per   float64
}

func (s scaledTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := s.inner.Ticks(lo*s.per, hi*s.per)
	for i := range ts {
		ts[i].Value /= s.per
	}
	return ts
}

// timeAxis labels ax, whose values are times of unitSeconds each (3600 for hours) and
// whose label ends in its unit ("(h)"): a logarithmic axis at durations people name,
// each with its unit ("10 s", "1 min", "10 min", "1 h", "1 day"), the label without
// one; a linear axis in the unit of units its largest value reads best in.
func timeAxis(ax *plot.Axis, unitSeconds float64, units []timeUnit, logScale bool) {
	if !(ax.Max > 0) || isBad(ax.Max) {
		return
	}
	label := func(unit string) {
		if i := strings.LastIndex(ax.Label.Text, " ("); i >= 0 && strings.HasSuffix(ax.Label.Text, ")") {
			ax.Label.Text = ax.Label.Text[:i]
			if unit != "" {
				ax.Label.Text += " (" + unit + ")"
			}
		}
	}
	if logScale {
		if len(durationTicks{unitSeconds}.Ticks(ax.Min, ax.Max)) > 0 {
			label("")
			ax.Tick.Marker = durationTicks{unitSeconds}
		}
		return
	}
	u := unitFor(units, ax.Max*unitSeconds)
	if u.seconds == unitSeconds {
		return
	}
	label(u.name)
	ax.Tick.Marker = scaledTicks{inner: ax.Tick.Marker, per: unitSeconds / u.seconds}
}

// durationSteps are the durations, in seconds, a logarithmic time axis is labelled at,
// about a decade apart; denseSteps are added where the axis spans less than two of them.
var (
	durationSteps = []float64{0.001, 0.01, 0.1, 1, 10, 60, 600, 3600, 36000, 86400, 864000, 8640000, 86400000}
	denseSteps    = []float64{0.002, 0.005, 0.02, 0.05, 0.2, 0.5, 2, 5, 20, 30, 120, 300, 1200, 1800, 7200, 18000,
		172800, 432000, 1728000, 4320000, 17280000, 43200000}
)

// durationTicks labels a logarithmic axis of times (unitSeconds each) at durationSteps,
// with denseSteps where few of them fall in its range. It has no ticks where fewer than
// two labels would show: timeAxis then keeps the axis's numbers.
type durationTicks struct{ unitSeconds float64 }

func (d durationTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	los, his := lo*d.unitSeconds, hi*d.unitSeconds
	in := func(steps []float64) []float64 {
		var out []float64
		for _, v := range steps {
			if v >= los*(1-1e-9) && v <= his*(1+1e-9) {
				out = append(out, v)
			}
		}
		return out
	}
	major, dense := in(durationSteps), in(denseSteps)
	labelDense := len(major) < 3
	if len(major)+len(dense) < 2 || (!labelDense && len(major) < 2) || (labelDense && len(major)+len(dense) < 2) {
		return nil
	}
	var ticks []plot.Tick
	for _, v := range major {
		ticks = append(ticks, plot.Tick{Value: v / d.unitSeconds, Label: durationLabel(v)})
	}
	for _, v := range dense {
		t := plot.Tick{Value: v / d.unitSeconds}
		if labelDense {
			t.Label = durationLabel(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// durationLabel is a tick's duration in its own unit: "5 ms", "30 s", "10 min", "1 h",
// "1 day", "10 days".
func durationLabel(s float64) string {
	switch {
	case s < 1:
		return numfmt.Tick(s*1000) + " ms"
	case s < 60:
		return numfmt.Tick(s) + " s"
	case s < 3600:
		return numfmt.Tick(s/60) + " min"
	case s < 86400:
		return numfmt.Tick(s/3600) + " h"
	case s == 86400:
		return "1 day"
	}
	return numfmt.Tick(s/86400) + " days"
}

// secondsPer is how many seconds one unit of the metric's axis is, and the units its
// axis may take; 0 for a metric that is not a time.
func (m Metric) secondsPer() (float64, []timeUnit) {
	switch m {
	case MetricIter:
		return 0.001, iterUnits
	case MetricEpoch:
		return 60, timeUnits
	case MetricTotal, "":
		return 3600, timeUnits
	}
	return 0, nil
}
