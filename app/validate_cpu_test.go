package app

import (
	"context"
	"math"
	"testing"
)

// The CPU backend's whole step must be the sum of its layers' phases timed alone: a
// reduced table 1 (two CNNs × two batch sizes at 32×32). The bounds (25% on average,
// 50% on any one step) are wide because other processes share the test machine's
// cores; missing work shows as a bias on every row (the SGD update left out of the
// kernels made squeezenet's steps 10% and VGG's 40% longer than their layers).
func TestCPUStepIsTheSumOfItsLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("measures real kernels for a few seconds")
	}
	opts := CPUValidationOptions{Models: []string{"squeezenet1_1", "mobilenet_v2"}, Batches: []int{1, 4}, Input: 32, Rounds: 3, Repeats: 2}
	acc, err := CPUValidation(context.Background(), nil, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.Rows) != 4 {
		t.Fatalf("%d rows, want 2 models × 2 batch sizes", len(acc.Rows))
	}
	sum := 0.0
	for _, r := range acc.Rows {
		t.Logf("%s at batch %d: predicted %.2f ms, measured %.2f ms (%+.1f%%)", r.Model, r.Batch, r.PredictedMS, r.MeasuredMS, r.ErrorPct)
		if !(r.MeasuredMS > 0 && r.PredictedMS > 0) {
			t.Fatalf("%s at batch %d: measured %v ms, predicted %v ms; both must be positive", r.Model, r.Batch, r.MeasuredMS, r.PredictedMS)
		}
		if want := 100 * (r.PredictedMS - r.MeasuredMS) / r.MeasuredMS; math.Abs(r.ErrorPct-want) > 1e-9 {
			t.Errorf("%s at batch %d: error %v%%, want %v%%", r.Model, r.Batch, r.ErrorPct, want)
		}
		if math.Abs(r.ErrorPct) > 50 {
			t.Errorf("%s at batch %d: predicted %.2f ms, measured %.2f ms (%+.1f%%): the step does work its layers' timings miss",
				r.Model, r.Batch, r.PredictedMS, r.MeasuredMS, r.ErrorPct)
		}
		sum += math.Abs(r.ErrorPct)
	}
	if math.Abs(acc.MAPEPct-sum/4) > 1e-9 {
		t.Errorf("MAPE %v%%, want the mean of the rows' %v%%", acc.MAPEPct, sum/4)
	}
	if acc.MAPEPct > 25 {
		t.Errorf("MAPE %.1f%% over the 4 steps (load average %.1f → %.1f): the sum of the layers' timings is not the step",
			acc.MAPEPct, acc.LoadBefore, acc.LoadAfter)
	}
}

func TestCPUValidationRejectsEmptyOptions(t *testing.T) {
	good := CPUValidationOptions{Models: []string{"squeezenet1_1"}, Batches: []int{1}, Input: 32, Rounds: 1, Repeats: 1}
	tests := []struct {
		name   string
		change func(*CPUValidationOptions)
	}{
		{"no models", func(o *CPUValidationOptions) { o.Models = nil }},
		{"no batches", func(o *CPUValidationOptions) { o.Batches = nil }},
		{"no rounds", func(o *CPUValidationOptions) { o.Rounds = 0 }},
		{"no repeats", func(o *CPUValidationOptions) { o.Repeats = 0 }},
		{"no input", func(o *CPUValidationOptions) { o.Input = 0 }},
		{"unknown model", func(o *CPUValidationOptions) { o.Models = []string{"resnet9000"} }},
	}
	for _, tc := range tests {
		o := good
		tc.change(&o)
		if acc, err := CPUValidation(context.Background(), nil, o, nil); err == nil {
			t.Errorf("%s: no error, got %+v", tc.name, acc)
		}
	}
}
