package validate

import (
	"math"
	"testing"
)

// TestRatios pairs rows of one source, model, precision and stack (per GPU, at the
// nearest batch), marks a ratio tuning only when both rows are, and joins two sources
// only for the optimised stack when no one source ran both GPUs.
func TestRatios(t *testing.T) {
	row := func(source, set, gpu, stack string, batch, gpus int, measured, predicted float64) ModernComparison {
		return ModernComparison{Source: source, Set: set, GPU: gpu, Model: "resnet50", Precision: "amp", Stack: stack, Batch: batch, GPUs: gpus,
			MeasuredIPS: measured, PredictedIPS: predicted}
	}
	m := &ModernAccuracy{Rows: []ModernComparison{
		row("lambda", "tuning", "a100-sxm4-80gb", "pytorch1", 1280, 1, 1600, 1700),
		row("lambda", "tuning", "h100-sxm", "pytorch1", 1280, 1, 2800, 2720),
		row("lambda", "held out", "h100-pcie", "pytorch1", 1280, 1, 1900, 2100),
		row("dle", "tuning", "a100-sxm4-80gb", "optimized", 512, 1, 3400, 3500),
		row("page", "tuning", "h100-sxm", "optimized", 400, 8, 8*7000, 8*6300),
		row("other", "tuning", "rtx-4090", "pytorch1", 448, 1, 1300, 1000), // no reference of its source
	}}
	acc := Ratios(m)
	want := map[string]struct {
		set       string
		pub, pred float64
	}{
		"lambda h100-sxm/a100-sxm4-80gb":   {"tuning", 2800.0 / 1600, 2720.0 / 1700},
		"lambda h100-pcie/a100-sxm4-80gb":  {"held out", 1900.0 / 1600, 2100.0 / 1700},
		"lambda h100-pcie/h100-sxm":        {"held out", 1900.0 / 2800, 2100.0 / 2720},
		"page+dle h100-sxm/a100-sxm4-80gb": {"tuning", 7000.0 / 3400, 6300.0 / 3500},
	}
	if len(acc.Rows) != len(want) {
		t.Fatalf("%d ratios, want %d: %+v", len(acc.Rows), len(want), acc.Rows)
	}
	for _, r := range acc.Rows {
		w, ok := want[r.Source+" "+r.GPU+"/"+r.Reference]
		if !ok {
			t.Errorf("unexpected ratio %+v", r)
			continue
		}
		if r.Set != w.set || math.Abs(r.Published-w.pub) > 1e-12 || math.Abs(r.Predicted-w.pred) > 1e-12 ||
			math.Abs(r.ErrorPct-100*(w.pred-w.pub)/w.pub) > 1e-9 {
			t.Errorf("%s %s/%s: %+v, want set %s, published %.4f, predicted %.4f", r.Source, r.GPU, r.Reference, r, w.set, w.pub, w.pred)
		}
	}
	if len(acc.Sets) != 2 || acc.Sets[0].Set != "tuning" || acc.Sets[0].Rows != 2 || acc.Sets[1].Rows != 2 {
		t.Errorf("sets %+v: want 2 tuning and 2 held-out ratios, tuning first", acc.Sets)
	}
	if Ratios(nil) != nil {
		t.Errorf("no table 4, no table 9")
	}
}
