package cpu

import (
	"context"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// tinyNet is a residual network small enough to train in a test: conv, batch norm,
// ReLU, max pool, a residual add, global average pool, flatten, linear and the loss.
func tinyNet() *cnn.Network {
	s := func(c, h, w int) cnn.Shape { return cnn.Shape{C: c, H: h, W: w} }
	img, a, b, v := s(3, 8, 8), s(4, 8, 8), s(4, 4, 4), s(4, 1, 1)
	conv := func(in, out cnn.Shape) cnn.Config {
		return cnn.Config{Op: cnn.OpConv2d, In: in, Out: out, NumInputs: 1, Kernel: cnn.Pair{3, 3},
			Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	}
	layer := func(name string, c cnn.Config, params int64, inputs ...int) cnn.Layer {
		shapes := make([]cnn.Shape, len(inputs))
		for i := range shapes {
			shapes[i] = c.In
		}
		return cnn.Layer{Config: c, Name: name, Inputs: inputs, InShapes: shapes, Params: params}
	}
	return &cnn.Network{Name: "tiny", Input: img, Classes: 5, Layers: []cnn.Layer{
		layer("conv1", conv(img, a), 108, -1),
		layer("bn1", cnn.Config{Op: cnn.OpBatchNorm, In: a, Out: a}, 8, 0),
		layer("relu", cnn.Config{Op: cnn.OpReLU, In: a, Out: a}, 0, 1),
		layer("pool", cnn.Config{Op: cnn.OpMaxPool, In: a, Out: b, Kernel: cnn.Pair{2, 2}, Stride: cnn.Pair{2, 2}}, 0, 2),
		layer("conv2", conv(b, b), 144, 3),
		layer("add", cnn.Config{Op: cnn.OpAdd, In: b, Out: b, NumInputs: 2}, 0, 4, 3),
		layer("avgpool", cnn.Config{Op: cnn.OpAdaptiveAvg, In: b, Out: v}, 0, 5),
		layer("flatten", cnn.Config{Op: cnn.OpFlatten, In: v, Out: v}, 0, 6),
		layer("fc", cnn.Config{Op: cnn.OpLinear, In: v, Out: s(5, 1, 1), Bias: true}, 25, 7),
		layer("loss", cnn.Config{Op: cnn.OpLoss, In: s(5, 1, 1), Out: s(1, 1, 1)}, 0, 8),
	}}
}

func TestTrainingStepLowersTheLoss(t *testing.T) {
	g, err := newGraph(tinyNet(), 6)
	if err != nil {
		t.Fatal(err)
	}
	first := g.step(0.05)
	var last float32
	for i := 0; i < 60; i++ {
		last = g.step(0.05)
	}
	if !(last < 0.7*first) {
		t.Errorf("loss went from %v to %v in 60 SGD steps on fixed data; backward or update is wrong", first, last)
	}
}

func TestRunStep(t *testing.T) {
	ctx := context.Background()
	b := New()
	zoo := func(name string) *cnn.Network {
		n, err := cnn.Build(name, cnn.Options{Resolution: 32, Classes: 10})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cases := []struct {
		name   string
		net    *cnn.Network
		batch  int
		prec   measure.Precision
		limit  int64
		status measure.Status
	}{
		{"tiny", tinyNet(), 4, measure.FP32, 1 << 30, measure.OK},
		{"resnet18 at 32px", zoo("resnet18"), 2, measure.FP32, 1 << 30, measure.OK},
		{"mobilenet_v2 at 32px", zoo("mobilenet_v2"), 2, measure.FP32, 1 << 30, measure.OK},
		{"amp is not a CPU precision", tinyNet(), 4, measure.AMP, 1 << 30, measure.Unsupported},
		{"larger than memory", zoo("resnet18"), 64, measure.FP32, 10 << 20, measure.OutOfMemory},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.MemoryLimit = tc.limit
			s, err := b.RunStep(ctx, tc.net, tc.batch, tc.prec, 2)
			if err != nil {
				t.Fatal(err)
			}
			if s.Status != tc.status {
				t.Fatalf("status %q, want %q", s.Status, tc.status)
			}
			if err := s.Validate(); err != nil {
				t.Error(err)
			}
			if s.Status == measure.OK && (s.MedianMS <= 0 || s.SpreadMS < 0) {
				t.Errorf("step time %v ± %v ms", s.MedianMS, s.SpreadMS)
			}
			if s.Model != tc.net.Name || s.Batch != tc.batch || s.DeviceKey != b.Device().Key {
				t.Errorf("step identifies %s/%d/%s", s.Model, s.Batch, s.DeviceKey)
			}
		})
	}
}

func TestTimeLayer(t *testing.T) {
	ctx := context.Background()
	b := New()
	conv := convCase(8, 16, 16, 16, 3, 1, 1, 1, 1, false)
	relu := cnn.Config{Op: cnn.OpReLU, In: conv.Out, Out: conv.Out}
	cases := []struct {
		name   string
		cfg    cnn.Config
		phase  measure.Phase
		prec   measure.Precision
		status measure.Status
		algo   string
	}{
		{"conv forward", conv, measure.Forward, measure.FP32, measure.OK, "im2col-gemm"},
		{"conv input gradient", conv, measure.BackwardData, measure.FP32, measure.OK, "im2col-gemm"},
		{"conv weight gradient", conv, measure.BackwardWeights, measure.FP32, measure.OK, "im2col-gemm"},
		{"depthwise forward", convCase(8, 16, 16, 8, 3, 1, 1, 1, 8, false), measure.Forward, measure.FP32, measure.OK, "direct-depthwise"},
		{"relu backward", relu, measure.BackwardData, measure.FP32, measure.OK, ""},
		{"relu has no weights", relu, measure.BackwardWeights, measure.FP32, measure.Unsupported, ""},
		{"tf32 is not a CPU precision", conv, measure.Forward, measure.TF32, measure.Unsupported, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := b.TimeLayer(ctx, tc.cfg, 4, tc.phase, tc.prec, measure.Heuristic, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Error(err)
			}
			if m.Status != tc.status || m.Algorithm != tc.algo {
				t.Errorf("status %q algorithm %q, want %q %q", m.Status, m.Algorithm, tc.status, tc.algo)
			}
			if m.ConfigKey != tc.cfg.Key() || m.Phase != tc.phase || m.Batch != 4 || m.Policy != measure.NoPolicy {
				t.Errorf("measurement identifies %s %s %d %q", m.ConfigKey, m.Phase, m.Batch, m.Policy)
			}
			if m.Status == measure.OK && m.Repeats != 3 {
				t.Errorf("repeats = %d, want 3", m.Repeats)
			}
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.TimeLayer(cancelled, conv, 4, measure.Forward, measure.FP32, measure.NoPolicy, 3); err == nil {
		t.Error("a cancelled context still timed the layer")
	}
}

func BenchmarkConvForward(b *testing.B) {
	// resnet's layer2 3×3 convolution at 32px input, batch 16.
	cfg := convCase(128, 4, 4, 128, 3, 1, 1, 1, 1, false)
	benchPhase(b, cfg, 16, measure.Forward)
}

func BenchmarkConvBackwardWeights(b *testing.B) {
	benchPhase(b, convCase(64, 16, 16, 64, 3, 1, 1, 1, 1, false), 8, measure.BackwardWeights)
}

func BenchmarkDepthwiseForward(b *testing.B) {
	benchPhase(b, convCase(96, 16, 16, 96, 3, 1, 1, 1, 96, false), 16, measure.Forward)
}

func benchPhase(b *testing.B, cfg cnn.Config, batch int, phase measure.Phase) {
	o, err := newOp(cfg, inShapesOf(cfg), batch)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float32, batch*int(cfg.In.Elems()))
	y := make([]float32, batch*int(cfg.Out.Elems()))
	fillRandom(x, 1, 1)
	fillRandom(y, 1, 2)
	flops := 2 * float64(cfg.Out.Elems()) * float64(batch) * float64(cfg.In.C/max(cfg.Groups, 1)*cfg.Kernel[0]*cfg.Kernel[1])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if phase == measure.Forward {
			o.forward([][]float32{x}, y)
		} else {
			o.backwardWeights([][]float32{x}, y, y)
		}
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// A step's source names its input where it is not the model's default: the predictions
// at the default input are not anchored to it.
func TestStepSourceNamesAnotherInput(t *testing.T) {
	at := func(name string, resolution int) *cnn.Network {
		n, err := cnn.Build(name, cnn.Options{Resolution: resolution})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		net  *cnn.Network
		want string
	}{
		{"resnet18 at 32 px", at("resnet18", 32), "cnntime sweep --step, input 32"},
		{"resnet18 at its default 224 px", at("resnet18", 0), "cnntime sweep --step"},
		{"efficientnet_b4 at its default 380 px", at("efficientnet_b4", 0), "cnntime sweep --step"},
		{"a custom network", tinyNet(), "cnntime sweep --step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stepSource(tc.net); got != tc.want {
				t.Errorf("source %q, want %q", got, tc.want)
			}
		})
	}
}
