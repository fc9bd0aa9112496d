package cnn

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// torchvisionFigures are the num_params and GFLOPS that torchvision's documentation
// publishes for each model's ImageNet weights (GFLOPS there count multiply-accumulates),
// with the crop resolution those figures are taken at.
var torchvisionFigures = []struct {
	name       string
	params     int64
	gflops     float64
	resolution int
}{
	{"vgg11", 132863336, 7.61, 224},
	{"vgg11_bn", 132868840, 7.61, 224},
	{"vgg13", 133047848, 11.31, 224},
	{"vgg13_bn", 133053736, 11.31, 224},
	{"vgg16", 138357544, 15.47, 224},
	{"vgg16_bn", 138365992, 15.47, 224},
	{"vgg19", 143667240, 19.63, 224},
	{"vgg19_bn", 143678248, 19.63, 224},
	{"resnet18", 11689512, 1.81, 224},
	{"resnet34", 21797672, 3.66, 224},
	{"resnet50", 25557032, 4.09, 224},
	{"resnet101", 44549160, 7.80, 224},
	{"resnet152", 60192808, 11.51, 224},
	{"resnext50_32x4d", 25028904, 4.23, 224},
	{"resnext101_32x8d", 88791336, 16.41, 224},
	{"resnext101_64x4d", 83455272, 15.46, 224},
	{"wide_resnet50_2", 68883240, 11.40, 224},
	{"wide_resnet101_2", 126886696, 22.75, 224},
	{"mobilenet_v2", 3504872, 0.30, 224},
}

// macsTolerance is how far our MACs may be from a published GFLOPS figure: 1%, or half
// the published figure's last digit (0.005 G) where that rounding is larger.
func macsTolerance(gflops float64) float64 { return math.Max(0.01*gflops, 0.005) }

func TestZooMatchesTorchvision(t *testing.T) {
	for _, want := range torchvisionFigures {
		t.Run(want.name, func(t *testing.T) {
			net, err := Build(want.name, Options{Resolution: want.resolution})
			if err != nil {
				t.Fatal(err)
			}
			if got := net.Params(); got != want.params {
				t.Errorf("params = %d, torchvision has %d (off by %d)", got, want.params, got-want.params)
			}
			got := float64(net.MACs()) / 1e9
			if d := math.Abs(got - want.gflops); d > macsTolerance(want.gflops) {
				t.Errorf("MACs = %.4f G at %d, torchvision publishes %.2f G (%.2f%% off)", got, want.resolution, want.gflops, 100*d/want.gflops)
			}
		})
	}
}

func TestEveryZooModelIsPinned(t *testing.T) {
	pinned := map[string]bool{}
	for _, f := range torchvisionFigures {
		pinned[f.name] = true
	}
	for _, n := range Names() {
		if !pinned[n] {
			t.Errorf("%s is in the zoo but its torchvision figures are not in the test table", n)
		}
	}
	if len(Names()) != len(torchvisionFigures) {
		t.Errorf("zoo has %d models, the table %d", len(Names()), len(torchvisionFigures))
	}
}

func TestBuildShapesAndLoss(t *testing.T) {
	for _, name := range Names() {
		net, err := Build(name, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last := net.Layers[len(net.Layers)-1]
		if last.Op != OpLoss || last.In.C != 1000 {
			t.Errorf("%s: last layer is %s on %s, want the loss on 1000 classes", name, last.Op, last.In)
		}
		if first := net.Layers[0]; len(first.Inputs) != 1 || first.Inputs[0] != image {
			t.Errorf("%s: first layer %s has inputs %v, want [-1]", name, first.Name, first.Inputs)
		}
		for i, l := range net.Layers {
			if len(l.Inputs) != len(l.InShapes) || len(l.Inputs) == 0 {
				t.Fatalf("%s layer %d (%s): %d inputs, %d input shapes", name, i, l.Name, len(l.Inputs), len(l.InShapes))
			}
			for j, in := range l.Inputs {
				if in >= i || in < image {
					t.Fatalf("%s layer %d (%s): input %d is not an earlier layer", name, i, l.Name, in)
				}
				want := net.Input
				if in >= 0 {
					want = net.Layers[in].Out
				}
				if l.InShapes[j] != want {
					t.Fatalf("%s layer %d (%s): input shape %s, producer gives %s", name, i, l.Name, l.InShapes[j], want)
				}
			}
		}
	}
}

func TestBuildOptions(t *testing.T) {
	tests := []struct {
		name    string
		opt     Options
		wantIn  Shape
		wantCls int
	}{
		{"resnet50", Options{}, Shape{3, 224, 224}, 1000},
		{"resnet50", Options{Resolution: 32, Classes: 10}, Shape{3, 32, 32}, 10},
		{"vgg16", Options{Resolution: 32, Classes: 100}, Shape{3, 32, 32}, 100},
		{"mobilenet_v2", Options{Resolution: 96, Classes: 2}, Shape{3, 96, 96}, 2},
	}
	for _, tt := range tests {
		net, err := Build(tt.name, tt.opt)
		if err != nil {
			t.Fatalf("%s %+v: %v", tt.name, tt.opt, err)
		}
		if net.Input != tt.wantIn || net.Classes != tt.wantCls {
			t.Errorf("%s %+v: input %s classes %d, want %s and %d", tt.name, tt.opt, net.Input, net.Classes, tt.wantIn, tt.wantCls)
		}
		if got := net.Layers[len(net.Layers)-1].In.C; got != tt.wantCls {
			t.Errorf("%s %+v: loss over %d classes, want %d", tt.name, tt.opt, got, tt.wantCls)
		}
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		opt     Options
		wantErr string
	}{
		{"resnet51", Options{}, `unknown model "resnet51"`},
		{"resnet50", Options{Resolution: -3}, "input resolution -3"},
		{"resnet50", Options{Classes: -1}, "number of classes -1"},
		{"vgg16", Options{Resolution: 16}, "(features.30): maxpool2d on input 512x1x1: kernel 2"},
	}
	for _, tt := range tests {
		_, err := Build(tt.name, tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Build(%s, %+v) = %v, want an error containing %q", tt.name, tt.opt, err, tt.wantErr)
		}
	}
	if _, err := Build("nope", Options{}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown name: error %v does not wrap ErrUnknownModel", err)
	}
}

func BenchmarkBuildZoo(b *testing.B) {
	names := Names()
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			if _, err := Build(n, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
