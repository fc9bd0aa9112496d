package validate

import (
	"context"
	"math"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor/pipeline"
)

// The step-time table: whole sources held out (none in both sets), at least three
// sources with a third held out; the shipped per-step figures are what the fit on the
// tuning sources finds; modelling the step's intercept lowers the tuning sources' small-
// batch error below the model without it, and brings each tuning series' intercept
// within 5 ms of the measured line's.
func TestStepBatchTable(t *testing.T) {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := StepBatch(eng)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{}
	for _, r := range acc.Rows {
		if s, ok := sets[r.Source]; ok && s != r.Set {
			t.Errorf("%s has rows in both %q and %q: hold out whole sources", r.Source, s, r.Set)
		}
		sets[r.Source] = r.Set
		if want := 100 * (r.Predicted - r.Measured) / r.Measured; !(r.Predicted > 0) || math.Abs(want-r.ErrorPct) > 1e-9 {
			t.Errorf("%s %s b%d: predicted %v, error %v%% (want %v%%)", r.Source, r.Model, r.Batch, r.Predicted, r.ErrorPct, want)
		}
	}
	held := 0
	for _, s := range sets {
		if s == "held out" {
			held++
		}
	}
	if len(sets) < 3 || 3*held < len(sets) {
		t.Errorf("%d sources, %d held out: want at least 3, a third held out", len(sets), held)
	}
	if acc.Refit.EagerOpUS != acc.Shipped.EagerOpUS || acc.Refit.HandoffMS != pipeline.DataLoaderHandoffMS {
		t.Errorf("shipped %+v, the fit on the tuning rows finds %+v: update predictor.DefaultOverheads.EagerOpUS and pipeline.DataLoaderHandoffMS",
			acc.Shipped, acc.Refit)
	}
	for _, g := range acc.Sets {
		if g.Set == "tuning" && !(g.SmallMAPEPct < g.BeforeSmallMAPE) {
			t.Errorf("tuning, batch ≤ %d: MAPE %.1f%%, %.1f%% without the intercept's model", SmallBatchMaxBatch, g.SmallMAPEPct, g.BeforeSmallMAPE)
		}
	}
	for _, l := range acc.Lines {
		if l.Set == "tuning" && math.Abs(l.PInterceptMS-l.InterceptMS) > 5 {
			t.Errorf("%s %s %s: intercept %.1f ms predicted, %.1f ms measured", l.Source, l.GPU, l.Model, l.PInterceptMS, l.InterceptMS)
		}
	}
}

func TestParseStepBatchRefusesBadRows(t *testing.T) {
	head := "source,where,gpu,model,framework,script,precision,batch,dataset,loader,workers,cpu,cpu_turbo_ghz,step_ms,set\n"
	for name, row := range map[string]string{
		"unknown script":  "a,b,t4,resnet50,PyTorch 1.x,train.py,fp32,16,imagenet-1k,pytorch,4,,,50,tuning\n",
		"no script":       "a,b,t4,resnet50,PyTorch 1.x,,fp32,16,imagenet-1k,pytorch,4,,,50,tuning\n",
		"bad precision":   "a,b,t4,resnet50,PyTorch 1.x,examples,int8,16,imagenet-1k,pytorch,4,,,50,tuning\n",
		"unknown dataset": "a,b,t4,resnet50,PyTorch 1.x,examples,fp32,16,places365,pytorch,4,,,50,tuning\n",
		"zero batch":      "a,b,t4,resnet50,PyTorch 1.x,examples,fp32,0,imagenet-1k,pytorch,4,,,50,tuning\n",
		"NaN step":        "a,b,t4,resnet50,PyTorch 1.x,examples,fp32,16,imagenet-1k,pytorch,4,,,NaN,tuning\n",
		"bad set":         "a,b,t4,resnet50,PyTorch 1.x,examples,fp32,16,imagenet-1k,pytorch,4,,,50,maybe\n",
		"no gpu":          "a,b,,resnet50,PyTorch 1.x,examples,fp32,16,imagenet-1k,pytorch,4,,,50,tuning\n",
	} {
		if _, err := ParseStepBatch([]byte(head + row)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if rows, err := ParseStepBatch(assets.StepBatch); err != nil || len(rows) == 0 {
		t.Errorf("the embedded file: %d rows, %v", len(rows), err)
	}
	if _, err := ParseStepBatch([]byte("source,where\n")); err == nil || !strings.Contains(err.Error(), "lacks column") {
		t.Errorf("a short header: %v", err)
	}
}
