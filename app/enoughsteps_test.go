package app

import (
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// cifarCurve is a fixed-epoch curve on CIFAR-10's 50,000 images whose total time falls
// with the batch all the way to one step an epoch, as on an 8-GPU machine.
func cifarCurve() predictor.Curve {
	c := predictor.Curve{Model: "resnet18", Machine: "aws/p4d.24xlarge", GPUCount: 8, Images: 50_000, Best: -1}
	for i, b := range []int{256, 512, 1000, 1024, 2048, 8192, 50_000} {
		c.Points = append(c.Points, predictor.Point{Batch: b, Fits: true, Epochs: 30, TotalS: 1000 - float64(i)})
		c.Best = i
	}
	c.Recommended, c.NearMin, c.NearMax = 50_000, 50_000, 50_000
	return c
}

func TestEnoughStepsSetsAsideBatchesOfTooFewSteps(t *testing.T) {
	toTarget := cifarCurve()
	toTarget.Recipe = &recipe.Plan{Network: "resnet18"}
	tests := []struct {
		name      string
		curve     predictor.Curve
		train     Training
		best      int // batch
		fastest   int
		warnsWith string
	}{
		{"fixed epochs: the best of at least 50 steps", cifarCurve(), Training{}, 1000, 50_000,
			"the fastest batch, 50,000, makes 1 step an epoch of 50,000 images: set aside for the best batch of at least 50 steps an epoch"},
		{"the user lets any batch be best", cifarCurve(), Training{AnyBatch: true}, 50_000, 0, "an epoch of 50,000 images is 1 step at batch 50,000"},
		{"to a target: the epochs law decides", toTarget, Training{Mode: TrainToTarget}, 50_000, 0, ""},
	}
	for _, tc := range tests {
		in := []predictor.Curve{tc.curve}
		got := EnoughSteps(in, tc.train)
		c := got[0]
		if c.Points[c.Best].Batch != tc.best || c.FastestBatch != tc.fastest {
			t.Errorf("%s: best %d, fastest set aside %d; want %d, %d", tc.name, c.Points[c.Best].Batch, c.FastestBatch, tc.best, tc.fastest)
		}
		if in[0].Points[in[0].Best].Batch != 50_000 {
			t.Errorf("%s: the prediction's own curve was changed", tc.name)
		}
		if w := strings.Join(AdviceWarnings(&c), "; "); !strings.Contains(w, tc.warnsWith) {
			t.Errorf("%s: warnings %q; want one with %q", tc.name, w, tc.warnsWith)
		}
	}
}
