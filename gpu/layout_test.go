package gpu

import (
	"context"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// layoutBackend records the precision and layout each layer was timed in.
type layoutBackend struct {
	layout string
	timed  []measure.Precision
	nhwc   bool // it can measure NHWC
}

func (b *layoutBackend) Device() measure.Device {
	return measure.Device{Key: "cuda:GPU-1", Backend: "cuda"}
}

func (b *layoutBackend) TimeLayer(_ context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, _ int) (measure.Measurement, error) {
	b.timed = append(b.timed, prec)
	return measure.Measurement{DeviceKey: "cuda:GPU-1", ConfigKey: cfg.Key(), Batch: batch, Phase: phase, Precision: prec, Policy: policy,
		Status: measure.OK, MedianMS: 1, Repeats: 1}, nil
}

func (b *layoutBackend) RunStep(context.Context, *cnn.Network, int, measure.Precision, int) (measure.Step, error) {
	return measure.Step{}, nil
}

// nhwcBackend can measure channels_last.
type nhwcBackend struct{ *layoutBackend }

func (b nhwcBackend) SetLayout(l string) error { b.layout = l; return nil }

// TestExecuteRunsEachItemInItsPrecisionAndLayout: an item carrying its own kernel
// precision runs in it (the job's otherwise); a channels_last job sets the backend's
// layout and stores every row, inferred out-of-memory ones too, under the device's
// ":nhwc" key; a backend without NHWC is refused before it measures anything.
func TestExecuteRunsEachItemInItsPrecisionAndLayout(t *testing.T) {
	s := cnn.Shape{C: 4, H: 4, W: 4}
	conv := cnn.Config{Op: cnn.OpConv2d, In: s, Out: s, NumInputs: 1, Kernel: cnn.Pair{1, 1}, Stride: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	relu := cnn.Config{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1}
	items := []Item{{Config: conv, Batch: 2, Phase: measure.Forward, Precision: measure.TF32}, {Config: relu, Batch: 2, Phase: measure.Forward}}
	for _, c := range []struct {
		layout  string
		nhwc    bool
		wantKey string
		refused string
	}{
		{"", false, "cuda:GPU-1", ""},
		{NHWC, true, "cuda:GPU-1:nhwc", ""},
		{NHWC, false, "", "measures NCHW only"},
		{"hwcn", true, "", "unknown memory layout"},
	} {
		lb := &layoutBackend{}
		var b Backend = lb
		if c.nhwc {
			b = nhwcBackend{lb}
		}
		var keys []string
		err := Execute(context.Background(), b, Job{Precision: measure.FP32, Policy: measure.Heuristic, Repeats: 1, Items: items, Layout: c.layout},
			Sink{Measured: func(m measure.Measurement) error { keys = append(keys, m.DeviceKey); return nil }})
		if c.refused != "" {
			if err == nil || !strings.Contains(err.Error(), c.refused) || len(lb.timed) > 0 {
				t.Errorf("layout %q: %v after %d items, want a refusal saying %q before any", c.layout, err, len(lb.timed), c.refused)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(lb.timed) != 2 || lb.timed[0] != measure.TF32 || lb.timed[1] != measure.FP32 {
			t.Errorf("layout %q: timed in %v, want the convolution in tf32 and the relu in the job's fp32", c.layout, lb.timed)
		}
		if lb.layout != c.layout {
			t.Errorf("the backend measured in %q, want %q", lb.layout, c.layout)
		}
		for _, k := range keys {
			if k != c.wantKey {
				t.Errorf("layout %q: a row stored under %q, want %q", c.layout, k, c.wantKey)
			}
		}
	}
	q := quarantineKey(measure.Device{Key: "cuda:GPU-1"}, "w", Job{Precision: measure.FP32, Layout: NHWC}, items[0])
	if q.DeviceKey != "cuda:GPU-1:nhwc" || q.Precision != measure.TF32 {
		t.Errorf("quarantined as %s in %s, want the channels_last key and the item's tf32", q.DeviceKey, q.Precision)
	}
}

// l2Backend takes an L2 mode and has a word to say when the sweep is done.
type l2Backend struct {
	*layoutBackend
	mode string
}

func (b *l2Backend) SetL2Mode(m string) error { b.mode = m; return nil }
func (b *l2Backend) Finish() string           { return "1 other process(es) started on the GPU during the sweep" }

// TestExecuteSetsTheL2ModeAndWarnsAtTheEnd: a producer-hot job sets the backend's mode
// before it measures, a backend without modes refuses one, and the backend's word after
// the sweep (another process started on the GPU) reaches the sink as a warning.
func TestExecuteSetsTheL2ModeAndWarnsAtTheEnd(t *testing.T) {
	s := cnn.Shape{C: 4, H: 4, W: 4}
	items := []Item{{Config: cnn.Config{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1}, Batch: 2, Phase: measure.Forward}}
	b := &l2Backend{layoutBackend: &layoutBackend{}}
	var warnings []string
	sink := Sink{Measured: func(measure.Measurement) error { return nil }, Warning: func(w string) { warnings = append(warnings, w) }}
	if err := Execute(context.Background(), b, Job{Precision: measure.FP32, Repeats: 1, Items: items, L2: "producer-hot"}, sink); err != nil {
		t.Fatal(err)
	}
	if b.mode != "producer-hot" || len(warnings) != 1 || !strings.Contains(warnings[0], "started on the GPU") {
		t.Errorf("mode %q, warnings %q; want producer-hot and the backend's word after the sweep", b.mode, warnings)
	}
	err := Execute(context.Background(), &layoutBackend{}, Job{Precision: measure.FP32, Repeats: 1, Items: items, L2: "producer-hot"}, sink)
	if err == nil || !strings.Contains(err.Error(), "no L2 timing modes") {
		t.Errorf("a backend without L2 modes: %v, want a refusal", err)
	}
}
