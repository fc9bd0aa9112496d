package charts

import (
	"math"
	"testing"
)

// A deadline or budget widens its axis to show its line when it lies within
// limitReach of the runs, and is left off the axis (said in the legend) beyond it;
// what is not a positive number is no limit.
func TestScatterLimitWidensAxesWithinReach(t *testing.T) {
	curves := fleet(2, 3)
	plain := Scatter(curves, Options{})
	xmax, ymax := plain.plot.X.Max, plain.plot.Y.Max
	var xdata, ydata float64
	for _, m := range plain.Marks() {
		xdata, ydata = math.Max(xdata, m.XHi), math.Max(ydata, m.YHi)
	}
	for _, tc := range []struct {
		name               string
		opt                Options
		limit              bool
		wantXMax, wantYMax float64 // the data the axis must reach; 0: as without a limit
		legend             string
	}{
		{"deadline inside", Options{DeadlineS: xdata / 2 * 3600}, true, 0, 0, "deadline"},
		{"deadline twice the runs", Options{DeadlineS: 2 * xdata * 3600}, true, 2 * xdata, 0, "deadline"},
		{"deadline too far", Options{DeadlineS: 10 * xdata * 3600}, true, 0, 0, "deadline"},
		{"budget three times", Options{BudgetUSD: 3 * ydata}, true, 0, 3 * ydata, "budget"},
		{"both", Options{DeadlineS: 1.5 * xdata * 3600, BudgetUSD: 1.5 * ydata}, true, 1.5 * xdata, 1.5 * ydata, "deadline"},
		{"negative", Options{DeadlineS: -3600, BudgetUSD: -5}, false, 0, 0, ""},
		{"not a number", Options{DeadlineS: math.NaN(), BudgetUSD: math.Inf(1)}, false, 0, 0, ""},
	} {
		tc.opt.Legend = true
		c := Scatter(curves, tc.opt)
		if (c.limit != nil) != tc.limit {
			t.Errorf("%s: limit drawn %v, want %v", tc.name, c.limit != nil, tc.limit)
			continue
		}
		wantX, wantY := xmax, ymax
		if tc.wantXMax > 0 {
			wantX = tc.wantXMax
		}
		if tc.wantYMax > 0 {
			wantY = tc.wantYMax
		}
		if c.plot.X.Max < wantX || (tc.wantXMax == 0 && c.plot.X.Max != xmax) {
			t.Errorf("%s: x axis to %.3g, want %.3g", tc.name, c.plot.X.Max, wantX)
		}
		if c.plot.Y.Max < wantY || (tc.wantYMax == 0 && c.plot.Y.Max != ymax) {
			t.Errorf("%s: y axis to %.3g, want %.3g", tc.name, c.plot.Y.Max, wantY)
		}
		if tc.limit && c.limit.words()[:len(tc.legend)] != tc.legend {
			t.Errorf("%s: legend %q, want it to start %q", tc.name, c.limit.words(), tc.legend)
		}
	}
	if got := (&limitPlotter{x: 24, y: 100}).words(); got != "deadline 24.0 h, budget $100.00" {
		t.Errorf("words = %q", got)
	}
}
