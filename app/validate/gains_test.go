package validate

import (
	"context"
	"math"
	"slices"
	"testing"

	"cnntime/app"
	"cnntime/predictor/pipeline"
)

// TestGains finds each series of two batch sizes or more in tables 3, 4 (one GPU, one
// file) and 8, compares the gain from its smallest to its largest batch, and keeps each
// series in its rows' set.
func TestGains(t *testing.T) {
	rep := &Report{
		Public: []PublicSourceAccuracy{{Source: "bench", Set: "tuning"}},
		// Table 3: ms per iteration; 8 images in 10 ms, 64 in 40 ms: 2× the throughput.
		Rows: []PublicComparison{
			{Source: "bench", GPU: "v100", Model: "vgg19", Framework: "Torch7", Precision: "fp32", Batch: 8, MeasuredMS: 10, PredictedMS: 10},
			{Source: "bench", GPU: "v100", Model: "vgg19", Framework: "Torch7", Precision: "fp32", Batch: 64, MeasuredMS: 40, PredictedMS: 50},
			{Source: "bench", GPU: "v100", Model: "vgg19", Framework: "Torch7", Precision: "fp32", Batch: 16, MeasuredMS: 15, PredictedMS: 16},
			{Source: "bench", GPU: "k80", Model: "vgg19", Framework: "Torch7", Precision: "fp32", Batch: 16, MeasuredMS: 99, PredictedMS: 99},
		},
		Modern: &ModernAccuracy{Rows: []ModernComparison{
			{Source: "gear", Where: "a.csv", Set: "held out", GPU: "rtx-4090", Model: "resnet50", Stack: "graph", Precision: "amp", Software: "ngc-23.02",
				Batch: 64, GPUs: 1, MeasuredIPS: 1000, PredictedIPS: 1100},
			{Source: "gear", Where: "a.csv", Set: "held out", GPU: "rtx-4090", Model: "resnet50", Stack: "graph", Precision: "amp", Software: "ngc-23.02",
				Batch: 256, GPUs: 1, MeasuredIPS: 1200, PredictedIPS: 1100},
			// Two machines in two files at two batches: not a sweep.
			{Source: "lab", Where: "x/run1", Set: "tuning", GPU: "a100", Model: "resnet50", Stack: "pytorch1", Precision: "amp", Batch: 640, GPUs: 1, MeasuredIPS: 1300, PredictedIPS: 1200},
			{Source: "lab", Where: "y/run2", Set: "tuning", GPU: "a100", Model: "resnet50", Stack: "pytorch1", Precision: "amp", Batch: 720, GPUs: 1, MeasuredIPS: 1200, PredictedIPS: 1200},
			// Eight GPUs: not a one-GPU curve.
			{Source: "gear", Where: "a.csv", Set: "held out", GPU: "rtx-4090", Model: "resnet50", Stack: "graph", Precision: "amp", Software: "ngc-23.02",
				Batch: 128, GPUs: 8, MeasuredIPS: 8000, PredictedIPS: 8000},
		}},
		StepBatch: &StepBatchAccuracy{Rows: []StepBatchRow{
			{Source: "trace", Set: "held out", GPU: "t4", Model: "resnet50", Framework: "PyTorch", Precision: "amp", Batch: 20, Measured: 100, Predicted: 50},
			{Source: "trace", Set: "held out", GPU: "t4", Model: "resnet50", Framework: "PyTorch", Precision: "amp", Batch: 200, Measured: 500, Predicted: 500},
		}},
	}
	acc := Gains(rep)
	want := []struct {
		set, source, gpu    string
		from, to, points    int
		measured, predicted float64 // gains, percent
	}{
		{"tuning", "bench", "v100", 8, 64, 3, 100, 60},
		{"held out", "gear", "rtx-4090", 64, 256, 2, 20, 0},
		{"held out", "trace", "t4", 20, 200, 2, 100, 0},
	}
	if len(acc.Series) != len(want) {
		t.Fatalf("%d series, want %d: %+v", len(acc.Series), len(want), acc.Series)
	}
	for i, w := range want {
		s := acc.Series[i]
		wantErr := 100 * ((1+w.predicted/100)/(1+w.measured/100) - 1)
		if s.Set != w.set || s.Source != w.source || s.GPU != w.gpu || s.FromBatch != w.from || s.ToBatch != w.to || s.Points != w.points ||
			math.Abs(s.MeasuredGainPct-w.measured) > 1e-9 || math.Abs(s.PredictedGainPct-w.predicted) > 1e-9 || math.Abs(s.ErrorPct-wantErr) > 1e-9 {
			t.Errorf("series %d = %+v; want %+v (error %+.2f%%)", i, s, w, wantErr)
		}
	}
	// Tuning: one series at −20%; held out: −16.7% and −50%.
	if len(acc.Sets) != 2 || acc.Sets[0].Set != "tuning" || math.Abs(acc.Sets[0].MAPEPct-20) > 1e-9 ||
		acc.Sets[1].Series != 2 || math.Abs(acc.Sets[1].MAPEPct-(100.0/6+50)/2) > 1e-9 || math.Abs(acc.TuningMAPE()-20) > 1e-9 {
		t.Errorf("sets %+v: want tuning 1 series at 20%%, held out 2 at 33.3%%", acc.Sets)
	}
}

// The gains table on the embedded sources: every source in one set, at least a third of
// them held out, each series' error the ratio of its predicted and measured gains, the
// sets' counts the series', and the queued kernel, eager operator and handoff refitted
// together on values of their grids.
func TestGainsTableOnThePublishedSeries(t *testing.T) {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if rep.Rows, err = Public(context.Background(), eng); err != nil {
		t.Fatal(err)
	}
	rep.Public = BySource(rep.Rows)
	if rep.Modern, err = Modern(eng); err != nil {
		t.Fatal(err)
	}
	if rep.StepBatch, err = StepBatch(eng); err != nil {
		t.Fatal(err)
	}
	acc, err := GainsWithRefit(eng, &rep)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{}
	perSet := map[string]int{}
	for _, s := range acc.Series {
		if set, ok := sets[s.Source]; ok && set != s.Set {
			t.Errorf("%s has series in both %q and %q: hold out whole sources", s.Source, set, s.Set)
		}
		sets[s.Source] = s.Set
		perSet[s.Set]++
		want := 100 * ((1+s.PredictedGainPct/100)/(1+s.MeasuredGainPct/100) - 1)
		if s.FromBatch >= s.ToBatch || s.Points < 2 || math.Abs(s.ErrorPct-want) > 1e-9 {
			t.Errorf("%s %s %s: batches %d→%d (%d), error %.3f%%, want %.3f%%", s.Source, s.GPU, s.Model, s.FromBatch, s.ToBatch, s.Points, s.ErrorPct, want)
		}
	}
	held := 0
	for _, set := range sets {
		if set == "held out" {
			held++
		}
	}
	if len(sets) < 3 || 3*held < len(sets) {
		t.Errorf("%d sources, %d held out: want at least 3, a third held out", len(sets), held)
	}
	for _, g := range acc.Sets {
		if g.Series != perSet[g.Set] || !(g.MAPEPct > 0) {
			t.Errorf("set %s: %d series at %.1f%%, the table has %d", g.Set, g.Series, g.MAPEPct, perSet[g.Set])
		}
	}
	o := eng.Predictor().Overheads()
	if acc.Shipped.LaunchUS != eng.Kernels().Calibration().LaunchUS || acc.Shipped.EagerOpUS != o.EagerOpUS ||
		acc.Shipped.HandoffMS != pipeline.DataLoaderHandoffMS || acc.Shipped.TuningMAPEPct != acc.TuningMAPE() ||
		!(acc.Shipped.TuningStepMAPEPct > 0) {
		t.Errorf("shipped %+v: want the calibration's %v µs, %v µs per eager operator and %v ms handoff at the tuning MAPE %.2f%% and table 8's",
			acc.Shipped, eng.Kernels().Calibration().LaunchUS, o.EagerOpUS, pipeline.DataLoaderHandoffMS, acc.TuningMAPE())
	}
	if !slices.Contains(QueuedKernelGrid, acc.Refit.LaunchUS) || !slices.Contains(StepFitGrid.EagerOpUS, acc.Refit.EagerOpUS) ||
		!slices.Contains(StepFitGrid.HandoffMS, acc.Refit.HandoffMS) || !(acc.Refit.TuningMAPEPct > 0) || !(acc.Refit.TuningStepMAPEPct > 0) {
		t.Errorf("refit %+v: want values of %v, %v and %v with their tuning MAPEs", acc.Refit, QueuedKernelGrid, StepFitGrid.EagerOpUS, StepFitGrid.HandoffMS)
	}
	cal := eng.Kernels().Calibration()
	if acc.Shipped.MaturityLaunchUS != cal.MaturityLaunchUS {
		t.Errorf("shipped cost per convolution on young libraries %v µs, want the calibration's %v", acc.Shipped.MaturityLaunchUS, cal.MaturityLaunchUS)
	}
	// The maturity refit moves that cost alone: the three others stay the shipped ones,
	// and at the shipped cost it would give the shipped tuning errors.
	m := acc.MaturityRefit
	if !slices.Contains(MaturityLaunchGrid, m.MaturityLaunchUS) || m.LaunchUS != acc.Shipped.LaunchUS || m.EagerOpUS != acc.Shipped.EagerOpUS ||
		m.HandoffMS != acc.Shipped.HandoffMS || !(m.TuningMAPEPct > 0) || !(m.TuningStepMAPEPct > 0) {
		t.Errorf("maturity refit %+v: want a value of %v, the shipped other costs %+v and tuning MAPEs", m, MaturityLaunchGrid, acc.Shipped)
	}
	if m.MaturityLaunchUS == acc.Shipped.MaturityLaunchUS && (math.Abs(m.TuningMAPEPct-acc.Shipped.TuningMAPEPct) > 1e-9 || math.Abs(m.TuningStepMAPEPct-acc.Shipped.TuningStepMAPEPct) > 1e-9) {
		t.Errorf("the maturity refit at the shipped cost gives %.3f%% and %.3f%%, the shipped report %.3f%% and %.3f%%",
			m.TuningMAPEPct, m.TuningStepMAPEPct, acc.Shipped.TuningMAPEPct, acc.Shipped.TuningStepMAPEPct)
	}
}
