package validate

import (
	"context"
	"math"
	"testing"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
)

// tuningMAPE is the mean absolute error of the scaling efficiency over the rows of set.
func scalingMAPE(rows []ScalingRow, set string) (float64, int) {
	var sum float64
	n := 0
	for _, r := range rows {
		if r.Set == set {
			sum += math.Abs(r.ErrorPct)
			n++
		}
	}
	return sum / float64(n), n
}

// The default network efficiency is the tuning rows' best in steps of 0.05, and the
// held-out rows are reported beside them.
func TestNetworkEfficiencyIsTheTuningRowsBest(t *testing.T) {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	best, bestMAPE := 0.0, math.Inf(1)
	for e := 0.05; e <= 1.0001; e += 0.05 {
		rows, err := ParseScalingRows(assets.MultinodeScaling)
		if err != nil {
			t.Fatal(err)
		}
		nm := predictor.DefaultNetworkModel
		nm.Efficiency = math.Round(e*100) / 100
		if err := PredictScaling(eng, rows, nm); err != nil {
			t.Fatal(err)
		}
		m, _ := scalingMAPE(rows, "tuning")
		if m < bestMAPE-1e-9 {
			best, bestMAPE = nm.Efficiency, m
		}
	}
	if got := predictor.DefaultNetworkModel.Efficiency; math.Abs(got-best) > 1e-9 {
		t.Errorf("DefaultNetworkModel.Efficiency = %v; the tuning rows' best is %v (MAPE %.1f%%)", got, best, bestMAPE)
	}
	acc, err := Multinode(eng)
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.Rows) != 10 || len(acc.Sets) != 2 {
		t.Fatalf("%d rows in %d sets; want 10 rows, tuning and held out", len(acc.Rows), len(acc.Sets))
	}
	for _, s := range acc.Sets {
		t.Logf("%s: %d rows, MAPE %.1f%%, bias %+.1f%%", s.Set, s.Rows, s.MAPEPct, s.BiasPct)
	}
	for _, r := range acc.Rows {
		t.Logf("%-8s %-22s %-9s %-4s measured %.3f predicted %.3f (%+.1f%%)", r.Set, r.Source, r.Model, r.Precision, r.Measured, r.Predicted, r.ErrorPct)
		if !(r.Predicted > 0 && r.Predicted <= 1) {
			t.Errorf("%s: predicted efficiency %v outside (0, 1]", r.Source, r.Predicted)
		}
	}
	// A model that misses published scaling by more than a quarter is no model.
	for _, s := range acc.Sets {
		if s.MAPEPct > 25 {
			t.Errorf("%s MAPE %.1f%% > 25%%", s.Set, s.MAPEPct)
		}
	}
}
