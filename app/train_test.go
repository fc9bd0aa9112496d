package app

import (
	"context"
	"math"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/convergence"
	"cnntime/predictor/recipe"
)

// TestTrainingPlan checks what each training choice gives a network: nothing for fixed
// epochs, its own default recipe, a named one, a recipe file, the user's figures, and
// every mistake refused with what to give.
func TestTrainingPlan(t *testing.T) {
	imagenet := DefaultRunData()
	cifar10, cifar100 := RunData{Dataset: "cifar-10"}, RunData{Dataset: "cifar-100"}
	mine, err := recipe.ParseFile([]byte(`{"name": "mine", "dataset": "imagenet-1k", "opt": "sgd", "lr": 0.1, "lr_scaling": "linear",
		"lr_scheduler": "cosineannealinglr", "train_crop_size": 224, "val_resize_size": 256, "val_crop_size": 224, "epochs": 40,
		"global_batch": 512, "top1": 75, "source": "my notes"}`), "mine.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		tr      Training
		network string
		d       RunData
		want    string // the plan's recipe ID; "" for none
		epochs  float64
		wantErr string
	}{
		{name: "fixed epochs", tr: Training{}, network: "resnet50", d: imagenet},
		{name: "fixed, explicit", tr: Training{Mode: TrainEpochs}, network: "resnet50", d: cifar100},
		{name: "resnet50's own", tr: Training{Mode: TrainToTarget}, network: "resnet50", d: imagenet, want: "torchvision-v1/resnet50", epochs: 90},
		{name: "convnext's own", tr: Training{Mode: TrainToTarget}, network: "convnext_tiny", d: imagenet, want: "torchvision-v1/convnext_tiny", epochs: 600},
		{name: "a name", tr: Training{Mode: TrainToTarget, Recipe: "torchvision-v2"}, network: "resnet50", d: imagenet, want: "torchvision-v2/resnet50", epochs: 600},
		{name: "an ID for another network", tr: Training{Mode: TrainToTarget, Recipe: "mlperf-lars/resnet50"}, network: "convnext_tiny", d: imagenet, want: "mlperf-lars/resnet50", epochs: 34.50 * (1 + 1024/45458.0)},
		{name: "a lower target", tr: Training{Mode: TrainToTarget, TargetTop1: 76.13 - 2.03}, network: "resnet50", d: imagenet, want: "torchvision-v1/resnet50", epochs: 45},
		{name: "a file", tr: Training{Mode: TrainToTarget, RecipeFile: &mine}, network: "my_cnn", d: imagenet, want: "mine", epochs: 40 * (1 + 1024/45458.0) / (1 + 512/45458.0)},
		{name: "cifar-10 fallback", tr: Training{Mode: TrainToTarget}, network: "resnet18", d: cifar10, want: "dawnbench/resnet9", epochs: 19.86 * (1 + 1024/5071.0)},
		{name: "custom figures", tr: Training{Mode: TrainToTarget, Custom: convergence.Custom{Epochs: 200, Batch: 128, Like: "cifar-10"}}, network: "resnet18", d: cifar100, want: "custom", epochs: 200 * (1 + 1024/5071.0) / (1 + 128/5071.0)},
		{name: "no recipe for cifar-100", tr: Training{Mode: TrainToTarget}, network: "resnet50", d: cifar100, wantErr: "on cifar-100: no recipe for it is built in"},
		{name: "synthetic data", tr: Training{Mode: TrainToTarget}, network: "resnet50", d: RunData{}, wantErr: "on synthetic data"},
		{name: "custom figures in fixed mode", tr: Training{Custom: convergence.Custom{Epochs: 200, Batch: 128, Like: "cifar-10"}}, network: "resnet50", d: cifar100, wantErr: "train to-target"},
		{name: "a recipe in fixed mode", tr: Training{Recipe: "mlperf-lars"}, network: "resnet50", d: imagenet, wantErr: "train to-target"},
		{name: "figures and a recipe", tr: Training{Mode: TrainToTarget, Recipe: "mlperf-lars", Custom: convergence.Custom{Epochs: 200, Batch: 128, Like: "cifar-10"}}, network: "resnet50", d: imagenet, wantErr: "not both"},
		{name: "bad custom", tr: Training{Mode: TrainToTarget, Custom: convergence.Custom{Epochs: 200, Batch: 0, CriticalBatch: 10}}, network: "resnet50", d: cifar100, wantErr: "reference batch 0"},
		{name: "unknown recipe", tr: Training{Mode: TrainToTarget, Recipe: "adam-forever"}, network: "resnet50", d: imagenet, wantErr: `recipe "adam-forever": no such recipe`},
		{name: "a recipe of another dataset", tr: Training{Mode: TrainToTarget, Recipe: "dawnbench"}, network: "resnet50", d: imagenet, wantErr: "this run trains on imagenet-1k"},
		{name: "a file of another dataset", tr: Training{Mode: TrainToTarget, RecipeFile: &mine}, network: "resnet50", d: cifar10, wantErr: "this run trains on cifar-10"},
		{name: "a name not published for the network", tr: Training{Mode: TrainToTarget, Recipe: "torchvision-v1"}, network: "googlenet", d: imagenet, wantErr: "googlenet: recipe torchvision-v1 is published for"},
		{name: "a higher target", tr: Training{Mode: TrainToTarget, TargetTop1: 80}, network: "resnet50", d: imagenet, wantErr: "torchvision-v2/resnet50 reaches 80.86%"},
		{name: "a target out of range", tr: Training{Mode: TrainToTarget, TargetTop1: 120}, network: "resnet50", d: imagenet, wantErr: "up to 100"},
	} {
		p, err := tc.tr.Plan(tc.network, tc.d)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && p != nil:
			t.Errorf("%s: plan %+v, want none", tc.name, p)
		case tc.want != "" && (p == nil || p.Recipe.ID() != tc.want || math.Abs(p.At(1024).Epochs-tc.epochs) > 1e-9*tc.epochs):
			t.Errorf("%s: plan %+v at 1,024, want %s with %.3f epochs", tc.name, p, tc.want, tc.epochs)
		}
	}
	for _, s := range []string{"", "epochs", "to-target", "TO-TARGET"} {
		if _, err := ParseTrainMode(s); err != nil {
			t.Errorf("ParseTrainMode(%q): %v", s, err)
		}
	}
	if _, err := ParseTrainMode("forever"); err == nil {
		t.Error("ParseTrainMode(forever) is not an error")
	}
}

// TestRecipeBatchIsTheAdvice: the batch the advice prefers is the recipe's own, in
// either mode; none on synthetic data.
func TestRecipeBatchIsTheAdvice(t *testing.T) {
	for _, tc := range []struct {
		tr      Training
		network string
		d       RunData
		want    int
	}{
		{Training{}, "efficientnet_b0", DefaultRunData(), 768},
		{Training{}, "convnext_tiny", DefaultRunData(), 1024},
		{Training{}, "my_cnn", DefaultRunData(), 256},
		{Training{}, "resnet50", RunData{}, 0},
		{Training{Mode: TrainToTarget, Recipe: "mlperf-lars"}, "resnet50", DefaultRunData(), 3264},
	} {
		p, err := tc.tr.Plan(tc.network, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.tr.RecipeBatch(tc.network, tc.d, p); got != tc.want {
			t.Errorf("%s %+v on %q: recipe batch %d, want %d", tc.network, tc.tr, tc.d.Dataset, got, tc.want)
		}
	}
}

func TestCapToImages(t *testing.T) {
	for _, tc := range []struct {
		batches []int
		images  int
		span    bool
		want    []int
		wantErr bool
	}{
		{[]int{1, 2, 3}, 0, false, []int{1, 2, 3}, false},
		{[]int{1, 50000, 60000}, 50000, false, []int{1, 50000}, false},
		{[]int{1, 49152, 51200}, 50000, true, []int{1, 49152, 50000}, false},
		{[]int{1, 49152, 51200}, 50000, false, []int{1, 49152}, false},
		{[]int{60000}, 50000, false, nil, true},
	} {
		got, err := capToImages(tc.batches, tc.images, tc.span)
		if (err != nil) != tc.wantErr || (!tc.wantErr && !equalInts(got, tc.want)) {
			t.Errorf("capToImages(%v, %d, %t) = %v, %v; want %v", tc.batches, tc.images, tc.span, got, err, tc.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCurvesStopAtTheDataset checks the window's query (a span up to memory) on CIFAR:
// every curve stops at 50,000 images, in both modes.
func TestCurvesStopAtTheDataset(t *testing.T) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	target, err := eng.MachineTarget("aws/p4d.24xlarge")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []TrainMode{TrainEpochs, TrainToTarget} {
		cs, err := eng.Curves(context.Background(), Query{Models: []string{"resnet50"}, Targets: []Target{target}, Span: BatchSpan{Min: 1},
			Precision: "fp32", Policy: "heuristic", Run: predictor.Run{Epochs: 90, Images: 50000}, Train: Training{Mode: mode},
			Data: RunData{Dataset: "cifar-10", Loader: "pytorch"}})
		if err != nil {
			t.Fatal(err)
		}
		pts := cs[0].Points
		if last := pts[len(pts)-1].Batch; last != 50000 {
			t.Errorf("%s: the curve ends at batch %d, want 50,000 (the images of an epoch)", mode, last)
		}
		if b := pts[cs[0].Best].Batch; b > 50000 {
			t.Errorf("%s: best batch %d", mode, b)
		}
		if mode == TrainToTarget && (cs[0].EpochsSource != "dawnbench/resnet9" || pts[len(pts)-1].Regime != recipe.Extrapolated) {
			t.Errorf("to target on CIFAR-10: epochs from %s, regime %q at 50,000", cs[0].EpochsSource, pts[len(pts)-1].Regime)
		}
	}
}

// TestRecipeForRun: what a launch file gets of a run's recipe at its batch: the rate
// scaled, a warm-up added where it grows, the epochs and their band, and a header that
// says extrapolated where the batch is outside the law's evidence.
func TestRecipeForRun(t *testing.T) {
	book, err := Recipes()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, network string
		batch         int
		lr, warmup    float64
		header        string
	}{
		{"torchvision-v1", "resnet50", 1024, 0.4, 5, "recipe torchvision-v1/resnet50 at batch 1,024 (sgd, lr 0.4, steplr, 5 warm-up epochs): 90.0 epochs ±5% to 76.13% top-1 on imagenet-1k"},
		{"torchvision-v1", "convnext_tiny", 256, 0.00025, 5, "recipe torchvision-v1/convnext_tiny at batch 256 (adamw, lr 0.00025, cosineannealinglr, 5 warm-up epochs): 590.1 epochs ±42% to 82.52% top-1 on imagenet-1k; extrapolated: batch 256 is 2.0 doublings below the recipe's published batch (1,024)"},
	} {
		p, err := book.Plan(tc.name, tc.network, "imagenet-1k", 0)
		if err != nil {
			t.Fatal(err)
		}
		c := predictor.Curve{Recipe: &p}
		rr, ok := RecipeForRun(&c, tc.batch)
		if !ok || math.Abs(rr.Recipe.LR-tc.lr) > 1e-12 || rr.Recipe.LRWarmupEpochs != tc.warmup || rr.Recipe.GlobalBatch != tc.batch || rr.Header != tc.header || rr.Epochs != p.At(tc.batch) {
			t.Errorf("%s at %d: %+v\n header %q\n want   %q", tc.network, tc.batch, rr.Recipe, rr.Header, tc.header)
		}
	}
	if _, ok := RecipeForRun(&predictor.Curve{}, 256); ok {
		t.Error("a fixed-epoch curve has a run recipe")
	}
	if r, own, ok := DefaultRecipe("googlenet", DefaultRunData()); !ok || own || r.ID() != "torchvision-v1/resnet50" {
		t.Errorf("googlenet's default: %s own %v ok %v", r.ID(), own, ok)
	}
}
