package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"cnntime/app/numfmt"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// What a measured step records of how it ran, read from the texts the scripts write.
func TestStepSettingsOf(t *testing.T) {
	for _, tc := range []struct {
		framework, source string
		want              stepSettings
	}{
		{"pytorch 2.8.0 cnntime_train.py", "cnntime_train.py on lab (NVIDIA A100, 1 processes, 8 workers each, input 224; 90 steps timed)",
			stepSettings{known: true, backend: "pytorch", framework: predictor.PyTorch2, format: predictor.NCHW, input: 224, processes: 1}},
		{"pytorch 2.8.0 cnntime_train.py compile default channels_last", "cnntime_train.py on lab (H100, 8 processes, 8 workers each, input 176)",
			stepSettings{known: true, backend: "pytorch", framework: predictor.Compiled, format: predictor.NHWC, input: 176, processes: 8}},
		{"pytorch 2.8.0 cnntime_train.py compile reduce-overhead", "lab",
			stepSettings{known: true, backend: "pytorch", framework: predictor.CompiledGraphs, format: predictor.NCHW}},
		{"pytorch 2.8.0 cnntime_train.py compile max-autotune", "lab",
			stepSettings{backend: "pytorch", framework: predictor.PyTorch2, format: predictor.NCHW}},
		{"pytorch 1.13.1", "pytorch_sweep.py on lab (Tesla V100, cudnn.benchmark=True, input default)",
			stepSettings{known: true, backend: "pytorch", framework: predictor.PyTorch1, format: predictor.NCHW, policy: measure.Fastest}},
		{"pytorch 2.5.1 cpu 8 threads", "pytorch_sweep.py on lab (Xeon, pytorch 2.5.1 cpu 8 threads, input 32, clock)",
			stepSettings{known: true, cpu: true, backend: "pytorch", framework: predictor.PyTorch2, format: predictor.NCHW, input: 32}},
		{"cnntime-cpu", "cnntime sweep --step", stepSettings{known: true, cpu: true, backend: "cnntime-cpu"}},
		{"cnntime-cpu", "cnntime sweep --step, input 32", stepSettings{known: true, cpu: true, backend: "cnntime-cpu", input: 32}},
		{"tensorflow 2.15", "a paper", stepSettings{}},
		{"pytorch", "no version", stepSettings{}},
		{"", "", stepSettings{}},
	} {
		t.Run(tc.framework, func(t *testing.T) {
			if got := stepSettingsOf(measure.Step{Framework: tc.framework, Source: tc.source}); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The engine's curves pass through the cache's steps that suit them, and the results
// table and the note under a table say so; the engine's own step rows stay as they were.
func TestCurvesAnchoredToTheCachesSteps(t *testing.T) {
	ctx := context.Background()
	d := openCache(t)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	step := func(batch int, p measure.Precision, ms float64, fw string) measure.Step {
		return measure.Step{DeviceKey: "gpu:v100-sxm2-16gb", Model: "resnet50", Batch: batch, Precision: p, Framework: fw, Source: "lab",
			MedianMS: ms, SpreadMS: ms / 50, Status: measure.OK, At: at}
	}
	if err := d.PutSteps(ctx, []measure.Step{
		step(64, measure.AMP, 100, "pytorch 2.8.0 cnntime_train.py"),
		step(128, measure.AMP, 180, "pytorch 2.8.0 cnntime_train.py"),
		step(128, measure.AMP, 120, "pytorch 2.8.0 cnntime_train.py compile default"),
	}); err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := eng.MachineTarget("aws/p3.2xlarge")
	if err != nil {
		t.Fatal(err)
	}
	data := DefaultRunData()
	data.Loader = "synthetic"
	for _, tc := range []struct {
		name      string
		framework string
		precision measure.Precision
		want      map[int]float64 // batch → step ms where measured
		anchors   int
		cell      string // the results table's source at the best batch's, when anchored
	}{
		{"eager PyTorch 2", "", measure.AMP, map[int]float64{64: 100, 128: 180}, 2, "anchored to 2 measured steps"},
		{"torch.compile", "compiled", measure.AMP, map[int]float64{128: 120}, 1, "anchored to 1 measured step"},
		{"fp32: none", "", measure.FP32, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := data
			d.Framework = tc.framework
			q := Query{Models: []string{"resnet50"}, Targets: []Target{tg}, Batches: []int{32, 64, 96, 128, 192}, Precision: tc.precision,
				Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: 100000}, Data: d}
			curves, err := eng.Curves(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			c := curves[0]
			if len(c.Anchors) != tc.anchors {
				t.Fatalf("anchored to %+v, want %d steps", c.Anchors, tc.anchors)
			}
			for _, p := range c.Points {
				want, measured := tc.want[p.Batch]
				switch {
				case !p.Fits && tc.precision == measure.FP32:
					continue // fp32 at 192 is beyond a V100's 16 GB
				case !p.Fits:
					t.Fatalf("batch %d does not fit a V100", p.Batch)
				case measured && (p.Source != predictor.Measured || p.IterMS != want):
					t.Errorf("batch %d: %v ms, %s; want the measured %v ms", p.Batch, p.IterMS, p.Source, want)
				case !measured && tc.anchors > 0 && p.Source != predictor.Anchored:
					t.Errorf("batch %d: %s, want anchored", p.Batch, p.Source)
				case tc.anchors == 0 && (p.Source == predictor.Anchored || p.Source == predictor.Measured):
					t.Errorf("batch %d: %s without a step that suits it", p.Batch, p.Source)
				}
			}
			x, err := eng.Explain(ctx, q, "resnet50", tg, 128)
			if err != nil {
				t.Fatal(err)
			}
			why := WhyText(&x, &c)
			if (x.AnchoredMS > 0) != (tc.anchors > 0) || (tc.anchors > 0 && !strings.Contains(why, "\nAnchored: "+numfmt.MS(c.Points[3].IterMS)+" (measured) in predict")) {
				t.Errorf("explained at 128: anchored %v ms (%s); the Why tab says:\n%s", x.AnchoredMS, x.AnchoredSource, why)
			}
			note, row := AnchorNote(&c), Summarize(curves)[0]
			if tc.anchors == 0 {
				if note != "" || row.AnchoredTo != 0 {
					t.Errorf("without steps: note %q, anchored to %d", note, row.AnchoredTo)
				}
				return
			}
			if !strings.HasPrefix(note, "anchored to "+tc.cell[len("anchored to "):]+" (per-GPU batch ") || row.AnchoredTo != tc.anchors {
				t.Errorf("note %q, results row anchored to %d: want %q", note, row.AnchoredTo, tc.cell)
			}
			if cell := row.Cell(ColumnSource); cell != tc.cell && cell != string(predictor.Measured) {
				t.Errorf("results table's source %q at batch %d, want %q or measured", cell, row.BestBatch, tc.cell)
			}
		})
	}
	for _, s := range eng.steps[stepKey{"gpu:v100-sxm2-16gb", "resnet50", measure.AMP}] {
		if s.MedianMS != 100 && s.MedianMS != 180 && s.MedianMS != 120 {
			t.Errorf("the engine's step rows changed: %+v", s)
		}
	}
}
