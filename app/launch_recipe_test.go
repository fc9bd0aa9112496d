package app

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/recipe"
)

// A recipe of the book becomes the training script's flags: the rate scaled to the
// batch by the recipe's rule (with Goyal's warm-up when scaled up linearly), the
// schedule stretched to the run's epochs, train.py's defaults where the recipe leaves
// them, the EMA as train.py adjusts it, and what the script does not run said.
func TestScriptRecipe(t *testing.T) {
	book, err := Recipes()
	if err != nil {
		t.Fatal(err)
	}
	find := func(id string) recipe.Recipe {
		r, err := book.Find(id, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, tc := range []struct {
		name          string
		id, network   string
		batch         int
		epochs        float64
		input         int
		optimizer     string
		lr, warmup    float64
		schedule      string
		stepSize      float64
		gamma, power  float64
		emaDecay      float64
		raReps        int
		differs, note string
	}{
		// torchvision's ResNet recipe at 3,328 for MLPerf's 37.04 epochs: 0.1 × 3328/256, steps every 30 × 37.04/90
		{"ResNet-50, scaled up and compressed", "torchvision-v1/resnet50", "resnet50", 3328, 37.04, 224, "sgd", 1.3, 5, "step", 12.35, 0.1, 0, 0, 0, "",
			"lr = 0.1 × 3328/256 = 1.3 (linear scaling), warmed up over 5 epochs (Goyal et al. 2017)"},
		// below the recipe's batch: no warm-up added
		{"ResNet-18 at 128", "torchvision-v1/resnet18", "resnet18", 128, 90, 224, "sgd", 0.05, 0, "step", 30, 0.1, 0, 0, 0, "", "0.1 × 128/256"},
		// ConvNeXt: AdamW at 1,024 (its own batch), cosine, EMA adjusted as train.py does:
		// alpha = 2e-5 × 1024 × 32 / 600 = 0.00109; per step (1 − alpha)^(1/32)
		{"ConvNeXt-Tiny", "torchvision-v1/convnext_tiny", "convnext_tiny", 1024, 600, 176, "adamw", 0.001, 5, "cosine", 0, 0, 0,
			math.Pow(1-(1-0.99998)*1024*32/600, 1.0/32), 4, "", "adamw"},
		// MobileNetV3: RMSProp, ×0.973 every 2 epochs of 600, stretched to 300
		{"MobileNetV3 in half its epochs", "torchvision-v1/mobilenet_v3_large", "mobilenet_v3_large", 1024, 300, 224, "rmsprop", 0.064, 0, "step", 1, 0.973, 0, 0, 0, "", "rmsprop"},
		// MLPerf's LARS: the rate as published (a table per batch), polynomial decay of power 2
		{"MLPerf LARS", "mlperf-lars/resnet50", "resnet50", 32768, 40, 224, "lars", 10.5, 2, "poly", 0, 0, 2, 0, 0, "", "as published at batch 3264"},
		// FFCV: triangular = linear decay to 0; its progressive resizing is not run
		{"FFCV 16 epochs", "ffcv-16/resnet50", "resnet50", 1024, 16, 192, "sgd", 1.7 / 4, 2, "poly", 0, 0, 1, 0, 0, "progressive resizing", "ffcv-16/resnet50"},
		// another network's recipe says so
		{"a recipe of another network", "torchvision-v1/resnet50", "my_net", 256, 90, 224, "sgd", 0.1, 0, "step", 30, 0.1, 0, 0, 0, "", "published for resnet50, not my_net"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := find(tc.id)
			got, differs, err := scriptRecipe(rc, tc.network == rc.Model, tc.network, tc.batch, tc.epochs, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			if got.Optimizer != tc.optimizer || !near(got.LR, tc.lr) || got.WarmupEpochs != tc.warmup || got.Schedule != tc.schedule ||
				math.Abs(got.StepSize-tc.stepSize) > 0.005 || !near(got.Gamma, tc.gamma) && tc.schedule != "exponential" || got.Power != tc.power ||
				!near(got.EMADecay, tc.emaDecay) || got.RAReps != tc.raReps {
				t.Errorf("%+v\nwant %s lr %v warm-up %v, %s step %v gamma %v power %v, EMA %v, RA %d", got, tc.optimizer, tc.lr, tc.warmup, tc.schedule,
					tc.stepSize, tc.gamma, tc.power, tc.emaDecay, tc.raReps)
			}
			if joined := strings.Join(differs, "; "); tc.differs == "" && tc.input == rc.TrainCropSize && len(differs) > 0 || tc.differs != "" && !strings.Contains(joined, tc.differs) {
				t.Errorf("differs %q, want %q", differs, tc.differs)
			}
			if !strings.Contains(got.Note, tc.note) || !strings.Contains(got.Note, rc.Source) {
				t.Errorf("note %q lacks %q or the source", got.Note, tc.note)
			}
		})
	}
	// A schedule the script does not run is refused, not swapped.
	odd := find("torchvision-v1/resnet50")
	odd.LRScheduler = "onecycle"
	if _, _, err := scriptRecipe(odd, true, "resnet50", 256, 90, 224); err == nil || !strings.Contains(err.Error(), "onecycle") {
		t.Errorf("a schedule the script lacks: %v", err)
	}
	// The exponential schedule keeps its decay over the whole run when stretched: γ^(1/s) per epoch.
	exp := find("torchvision-v1/resnet50")
	exp.LRScheduler, exp.LRGamma = "exponentiallr", 0.9
	got, _, err := scriptRecipe(exp, true, "resnet50", 256, 45, 224)
	if err != nil || got.Schedule != "exponential" || !near(math.Pow(got.Gamma, 45), math.Pow(0.9, 90)) {
		t.Errorf("exponential over half the epochs: %+v, %v", got, err)
	}
}
