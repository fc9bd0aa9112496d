package predictor

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
	"cnntime/predictor/recipe"
)

// testPlan is a recipe plan whose epochs are 10·(1 + B/16) from batch 1 to 32 (its
// law's evidence, regime sgd) and extrapolated beyond, ±20% inside.
func testPlan() recipe.Plan {
	r := recipe.Recipe{Name: "test", Model: "tiny", Dataset: "x", Opt: "sgd", Epochs: 15, GlobalBatch: 8,
		Law: recipe.Law{Kind: recipe.NoiseScale, MinBatch: 1, MaxBatch: 32, EpochsMin: 10, CriticalBatch: 16, ErrorPct: 20, Regime: "sgd"}}
	return recipe.Plan{Recipe: r, Network: "tiny", OwnNetwork: true, Target: 76, TargetFactor: 1,
		Reference: recipe.Reference{CriticalBatch: 16, SpreadPerDoublingPct: 10}}
}

// TestTimeToTarget checks a curve trained to a target: every point's run is its
// epochs model's epochs times its epoch (ceil(N/B) steps, as with fixed epochs), the
// cost follows the time, the best batch is the one with the least time to target, the
// points say their regime, and the fixed-epoch curve of the same request is today's:
// total = epoch × epochs, bit for bit.
func TestTimeToTarget(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	gpu := testGPU
	gpu.MemoryGB = 0
	m := testPlan()
	req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1, PriceUSDPerHour: 3.6}, GPU: gpu,
		Precision: measure.FP32, Batches: []int{1, 8, 16, 64, 100}, Run: Run{Epochs: 90, Images: 100}}
	fixed, err := e.Curve(req)
	if err != nil {
		t.Fatal(err)
	}
	req.Run.ToTarget = &m
	target, err := e.Curve(req)
	if err != nil {
		t.Fatal(err)
	}
	if fixed.EpochsSource != "fixed" || fixed.Recipe != nil || target.EpochsSource != "test/tiny" || target.Recipe == nil {
		t.Fatalf("sources %q/%v and %q/%v", fixed.EpochsSource, fixed.Recipe, target.EpochsSource, target.Recipe)
	}
	for i, p := range target.Points {
		f := fixed.Points[i]
		if f.TotalS != f.EpochS*90 || f.Epochs != 90 || f.EpochsErrorPct != 0 || f.Regime != "" || f.RunErrorPct() != f.ErrorPct {
			t.Errorf("fixed batch %d: total %v, epoch %v × 90 = %v, epochs %v, regime %q", f.Batch, f.TotalS, f.EpochS, f.EpochS*90, f.Epochs, f.Regime)
		}
		want := 10 * (1 + float64(p.Batch)/16)
		if p.Epochs != want || p.TotalS != p.EpochS*want || p.EpochS != f.EpochS || p.IterMS != f.IterMS {
			t.Errorf("batch %d: %v epochs × %v s = %v s; want %v epochs of the fixed curve's %v s", p.Batch, p.Epochs, p.EpochS, p.TotalS, want, f.EpochS)
		}
		if math.Abs(p.CostUSD-p.TotalS/3600*3.6) > 1e-12 {
			t.Errorf("batch %d: cost %v for %v s", p.Batch, p.CostUSD, p.TotalS)
		}
		wantRegime, wantErr := "sgd", 20.0
		if p.Batch > 32 {
			wantRegime, wantErr = recipe.Extrapolated, 20+10*math.Log2(float64(p.Batch)/32)
		}
		if p.Regime != wantRegime || math.Abs(p.EpochsErrorPct-wantErr) > 1e-9 || math.Abs(p.RunErrorPct()-math.Hypot(p.ErrorPct, wantErr)) > 1e-9 {
			t.Errorf("batch %d: regime %q ± %v%% (run ± %v%%); want %q ± %v%%", p.Batch, p.Regime, p.EpochsErrorPct, p.RunErrorPct(), wantRegime, wantErr)
		}
	}
	for i, p := range target.Points {
		if p.TotalS < target.Points[target.Best].TotalS {
			t.Errorf("best is batch %d (%v s) but batch %d takes %v s", target.Points[target.Best].Batch, target.Points[target.Best].TotalS, target.Points[i].Batch, p.TotalS)
		}
	}
	// The step is linear in the batch here, so an epoch takes the same at every batch
	// and the fixed-epoch run is flat: training to a target, the smallest batch wins.
	if target.Points[target.Best].Batch != 1 {
		t.Errorf("time to target is least at batch %d, want 1 (epochs grow with the batch, the epoch does not shrink)", target.Points[target.Best].Batch)
	}
	// A broken model is refused, and nothing is predicted.
	bad := m
	bad.Recipe.Law.EpochsMin = math.NaN()
	req.Run.ToTarget = &bad
	if _, err := e.Curve(req); err == nil || !strings.Contains(err.Error(), "smallest epochs NaN") {
		t.Errorf("a NaN epochs model: %v", err)
	}
	// Training to a target needs no fixed epochs.
	req.Run = Run{Images: 100, ToTarget: &m}
	if _, err := e.Curve(req); err != nil {
		t.Errorf("to target without fixed epochs: %v", err)
	}
}

// TestExplainSaysTheRecipe checks the explanation of a point trained to a target: its
// epochs and what the recipe's plan says at its batch (extrapolated past the law's
// batches, and why).
func TestExplainSaysTheRecipe(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	m := testPlan()
	req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: testGPU, Precision: measure.FP32,
		Run: Run{Images: ImageNetImages, ToTarget: &m}}
	for _, tc := range []struct {
		batch  int
		regime string
	}{{16, "sgd"}, {64, recipe.Extrapolated}} {
		x, err := e.Explain(req, tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		want := m.At(tc.batch)
		if x.EpochsSource != "test/tiny" || x.Epochs != want.Epochs || x.EpochsAt == nil || *x.EpochsAt != want || x.EpochsAt.Regime != tc.regime || x.Recipe == nil || x.Recipe.Recipe.ID() != "test/tiny" {
			t.Errorf("batch %d: %v epochs from %q, at %+v; want %+v", tc.batch, x.Epochs, x.EpochsSource, x.EpochsAt, want)
		}
	}
	req.Run = Run{Epochs: 90, Images: ImageNetImages}
	if x, err := e.Explain(req, 64); err != nil || x.Epochs != 90 || x.EpochsSource != "fixed" || x.EpochsAt != nil || x.Recipe != nil {
		t.Errorf("fixed: %v epochs from %q, at %v, %v", x.Epochs, x.EpochsSource, x.EpochsAt, err)
	}
}
