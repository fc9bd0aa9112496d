package app

import (
	"context"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// TestOneModelThatCannotRunLeavesTheOthers: ten CNNs switched to CIFAR-10, one of
// which (inception_v3) cannot take 32 px, still predicts the other nine: the one says
// why and has no points. A query none of whose curves can be predicted is still an
// error, and an unknown model name is one.
func TestOneModelThatCannotRunLeavesTheOthers(t *testing.T) {
	ctx := context.Background()
	e, err := NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for _, id := range []string{"aws/p3.2xlarge", "aws/g4dn.xlarge"} {
		tg, err := e.MachineTarget(id)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	models := []string{"resnet18", "inception_v3", "mobilenet_v2", "vgg11", "densenet121", "efficientnet_b0",
		"regnet_y_400mf", "shufflenet_v2_x1_0", "squeezenet1_0", "convnext_tiny"}
	q := Query{Models: models, Targets: targets, Batches: []int{64, 256}, Precision: measure.FP32,
		Run: predictor.Run{Epochs: 30, Images: 50000}, Data: RunData{Dataset: "cifar-10"}}
	curves, err := e.Curves(ctx, q)
	if err != nil {
		t.Fatalf("ten CNNs at CIFAR-10 with one that cannot take 32 px: %v", err)
	}
	if len(curves) != len(models)*len(targets) {
		t.Fatalf("%d curves, want %d", len(curves), len(models)*len(targets))
	}
	for _, c := range curves {
		switch {
		case c.Model == "inception_v3":
			if c.Unavailable == "" || len(c.Points) != 0 || c.Best != -1 || !strings.Contains(c.Unavailable, "inception_v3") {
				t.Errorf("inception_v3 on %s at 32 px: unavailable %q, %d points, best %d; want why, no points", c.Machine, c.Unavailable, len(c.Points), c.Best)
			}
			if w := AdviceWarnings(&c); len(w) != 1 || !strings.HasPrefix(w[0], "not predicted: ") {
				t.Errorf("inception_v3's warnings %q, want one saying it was not predicted", w)
			}
		case c.Unavailable != "" || len(c.Points) != 2 || c.Best < 0:
			t.Errorf("%s on %s: unavailable %q, %d points, best %d; want it predicted", c.Model, c.Machine, c.Unavailable, len(c.Points), c.Best)
		}
	}
	rows := Summarize(curves)
	if len(rows) != len(curves) {
		t.Errorf("%d results rows for %d curves", len(rows), len(curves))
	}
	for _, r := range rows {
		if (r.Model == "inception_v3") != (len(r.Warnings) == 1 && strings.HasPrefix(r.Warnings[0], "not predicted")) {
			t.Errorf("results row %s on %s: warnings %q", r.Model, r.Machine, r.Warnings)
		}
	}

	for _, tc := range []struct {
		name   string
		models []string
		want   string
	}{
		{"every curve unavailable", []string{"inception_v3"}, "inception_v3"},
		{"an unknown model", []string{"resnet18", "resnet5O"}, `unknown model "resnet5O"`},
	} {
		q.Models = tc.models
		if _, err := e.Curves(ctx, q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
