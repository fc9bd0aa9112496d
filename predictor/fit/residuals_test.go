package fit

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/pipeline"
)

func TestNetworkKind(t *testing.T) {
	for _, tc := range []struct{ model, want string }{
		{"resnet50", "dense"}, {"vgg16", "dense"}, {"resnext50_32x4d", "grouped"},
		{"mobilenet_v2", "depthwise"}, {"efficientnet_b0", "depthwise+SE"}, {"mobilenet_v3_large", "depthwise+SE"},
	} {
		net, err := cnn.Build(tc.model, cnn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := NetworkKind(net); got != tc.want {
			t.Errorf("NetworkKind(%s) = %q, want %q", tc.model, got, tc.want)
		}
	}
}

func TestResidualsGroupAndSign(t *testing.T) {
	r50, _ := cnn.Build("resnet50", cnn.Options{})
	eff, _ := cnn.Build("efficientnet_b0", cnn.Options{})
	v100 := hw.GPU{ID: "v100", ComputeCapability: "7.0"}
	k80 := hw.GPU{ID: "k80", ComputeCapability: "3.7"}
	cases := []Case{
		{Anchor: Anchor{ImagesPerS: 100}, Net: r50, Dev: v100},
		{Anchor: Anchor{ImagesPerS: 100}, Net: r50, Dev: v100},
		{Anchor: Anchor{ImagesPerS: 200, Held: true}, Net: eff, Dev: v100},
		{Anchor: Anchor{ImagesPerS: 50, Held: true}, Net: r50, Dev: k80},
		{Anchor: Anchor{ImagesPerS: 100, Held: true, Loader: pipeline.PyTorch}, Net: r50, Dev: v100},
	}
	preds := []Prediction{{ImagesPerS: 110}, {ImagesPerS: 80}, {ImagesPerS: 260}, {ImagesPerS: 100}, {ImagesPerS: 90}}
	got := Residuals(cases, preds)
	want := []Residual{
		{Set: "tuning", Family: "volta", Kind: "dense", Data: "synthetic", Rows: 2, MAPEPct: 15, BiasPct: -5},
		{Set: "held out", Family: "volta", Kind: "dense", Data: "pytorch", Rows: 1, MAPEPct: 10, BiasPct: -10},
		{Set: "held out", Family: "kepler", Kind: "dense", Data: "synthetic", Rows: 1, MAPEPct: 100, BiasPct: 100},
		{Set: "held out", Family: "volta", Kind: "depthwise+SE", Data: "synthetic", Rows: 1, MAPEPct: 30, BiasPct: 30},
	}
	if len(got) != len(want) {
		t.Fatalf("Residuals = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Set != w.Set || g.Family != w.Family || g.Kind != w.Kind || g.Data != w.Data || g.Rows != w.Rows ||
			math.Abs(g.MAPEPct-w.MAPEPct) > 1e-9 || math.Abs(g.BiasPct-w.BiasPct) > 1e-9 {
			t.Errorf("group %d = %+v, want %+v", i, g, w)
		}
	}
}
