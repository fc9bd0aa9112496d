package app

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// TestExplainMatchesCurves explains runs as the window and the CLI ask for them and
// checks that each explanation is the curve's point at that batch, split into phases
// that add up to it.
func TestExplainMatchesCurves(t *testing.T) {
	ctx := context.Background()
	eng, err := NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tiny, err := cnn.ParseCustom([]byte(`{"name": "tiny_explain", "input": [3, 32, 32], "classes": 10, "layers": [
		{"name": "conv", "op": "conv2d", "out": 16, "kernel": 3, "padding": 1},
		{"name": "relu", "op": "relu"},
		{"name": "pool", "op": "adaptiveavgpool2d", "size": 1},
		{"name": "flatten", "op": "flatten"},
		{"name": "fc", "op": "linear", "out": 10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.AddNetwork(tiny); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, model, target string
		prec                measure.Precision
		data                RunData
		nodes, batch        int
		input, gpus         int
		bound               string
		conv1               string // the first layer's shape
		comm, loaderWait    bool
	}{
		{"resnet50 on a p3.2xlarge", "resnet50", "aws/p3.2xlarge", measure.FP32, DefaultRunData(), 1, 128, 224, 1, "gpu", "3x224x224→64x112x112 k7x7 s2 p3", false, false},
		{"resnet50 amp on 4 vCPUs: the loader bounds it", "resnet50", "aws/g4dn.xlarge", measure.AMP, DefaultRunData(), 1, 256, 224, 1, "input", "3x224x224→64x112x112 k7x7 s2 p3", false, true},
		{"resnet18 on cifar-10 at 32 px", "resnet18", "t4", measure.FP32, RunData{Dataset: "cifar-10", Loader: "pytorch", MemoryFormat: "nchw"}, 1, 128, 32, 1, "gpu", "3x32x32→64x16x16 k7x7 s2 p3", false, false},
		{"resnet50 on two p3.16xlarge", "resnet50", "aws/p3.16xlarge", measure.FP32, RunData{}, 2, 512, 224, 16, "gpu", "3x224x224→64x112x112 k7x7 s2 p3", true, false},
		{"a custom model on a bare A100", "tiny_explain", "a100-sxm4-40gb", measure.AMP, RunData{}, 1, 64, 32, 1, "gpu", "3x32x32→16x32x32 k3x3 s1 p1", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tg Target
			if strings.Contains(tc.target, "/") {
				tg, err = eng.MachineTarget(tc.target)
			} else {
				tg, err = eng.GPUTarget(tc.target)
			}
			if err != nil {
				t.Fatal(err)
			}
			q := Query{Precision: tc.prec, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 3, Images: 100000}, Data: tc.data, Nodes: tc.nodes}
			x, err := eng.Explain(ctx, q, tc.model, tg, tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			q.Models, q.Targets, q.Batches = []string{tc.model}, []Target{tg}, []int{tc.batch}
			curves, err := eng.Curves(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			p := curves[0].Points[0]
			if x.IterMS != p.IterMS || x.Bound != p.Bound || x.Source != p.Source || x.ErrorPct != p.ErrorPct || x.TotalS != p.TotalS {
				t.Errorf("explained %.3f ms ±%.1f%% (%s, %s), the curve says %.3f ms ±%.1f%% (%s, %s)",
					x.IterMS, x.ErrorPct, x.Bound, x.Source, p.IterMS, p.ErrorPct, p.Bound, p.Source)
			}
			if got := x.Phases.Total(); math.Abs(got-p.IterMS) > 1e-9*p.IterMS {
				t.Errorf("phases add up to %.9f ms, the curve's iteration is %.9f ms", got, p.IterMS)
			}
			net, _ := eng.networkFor(tc.model, tc.data)
			if len(x.Layers) != len(net.Layers) || x.Input != tc.input || x.GPUCount != tc.gpus || x.Bound != tc.bound ||
				x.Layers[0].Shape != tc.conv1 {
				t.Errorf("%d layers (want %d), input %d (want %d), %d GPUs (want %d), bound %q (want %q), first layer %q (want %q)",
					len(x.Layers), len(net.Layers), x.Input, tc.input, x.GPUCount, tc.gpus, x.Bound, tc.bound, x.Layers[0].Shape, tc.conv1)
			}
			if (x.Phases.CommunicationMS > 0) != tc.comm || (x.Phases.LoaderMS > 0) != tc.loaderWait {
				t.Errorf("phases %+v: want an exposed all-reduce %t, a loader wait %t", x.Phases, tc.comm, tc.loaderWait)
			}
		})
	}
}

// TestExplainRefusesWhatCurvesRefuse: an unknown model, too small a batch for the
// GPUs, a batch that does not fit, bad run data, a cancelled context.
func TestExplainRefusesWhatCurvesRefuse(t *testing.T) {
	ctx := context.Background()
	eng, err := NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t4, _ := eng.GPUTarget("t4")
	p316, _ := eng.MachineTarget("aws/p3.16xlarge")
	q := Query{Precision: measure.FP32, Policy: measure.Heuristic}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name, model string
		tg          Target
		q           Query
		ctx         context.Context
		batch       int
		want        string
	}{
		{"unknown model", "resnet5", t4, q, ctx, 8, `did you mean "resnet50"`},
		{"fewer images than GPUs", "resnet50", p316, q, ctx, 4, "needs a batch of at least 8"},
		{"zero batch", "resnet50", t4, q, ctx, 0, "must be positive"},
		{"does not fit", "vgg16", t4, q, ctx, 4096, "the largest batch that fits is"},
		{"bad loader", "resnet50", t4, Query{Precision: measure.FP32, Data: RunData{Loader: "webdataset"}}, ctx, 8, "webdataset"},
		{"cancelled", "resnet50", t4, q, cancelled, 8, "cancelled"},
	} {
		_, err := eng.Explain(tc.ctx, tc.q, tc.model, tc.tg, tc.batch)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	_, err = eng.Explain(ctx, q, "vgg16", t4, 4096)
	var fe *predictor.FitError
	if !errors.As(err, &fe) || fe.MaxBatch <= 0 {
		t.Errorf("vgg16 at 4096 on a T4: %v, want a *predictor.FitError with the largest batch", err)
	}
}
