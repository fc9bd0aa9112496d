package app

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// A launched run's steps.csv (or a sweep's --step rows) imported into the cache shows
// beside the explanation of the same model on the same GPU at the same precision: the
// steps nearest its per-GPU batch, the one at its batch with the prediction as one GPU
// runs it; other precisions, models, GPUs and failed rows stay out.
func TestMeasuredStepsBesideTheExplanation(t *testing.T) {
	ctx := context.Background()
	d := openCache(t)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	step := func(gpu, model string, batch int, p measure.Precision, ms float64, status measure.Status, fw string) measure.Step {
		return measure.Step{DeviceKey: "gpu:" + gpu, Model: model, Batch: batch, Precision: p, Framework: fw, Source: "lab",
			MedianMS: ms, SpreadMS: ms / 100, Status: status, At: at}
	}
	const run = "pytorch 2.8.0 cnntime_train.py"
	if err := d.PutSteps(ctx, []measure.Step{
		step("v100-sxm2-16gb", "resnet50", 128, measure.AMP, 190, measure.OK, run),
		step("v100-sxm2-16gb", "resnet50", 64, measure.AMP, 100, measure.OK, run),
		step("v100-sxm2-16gb", "resnet50", 512, measure.AMP, 0, measure.OutOfMemory, run),
		step("v100-sxm2-16gb", "resnet50", 128, measure.FP32, 400, measure.OK, run),
		step("v100-sxm2-16gb", "resnet18", 128, measure.AMP, 60, measure.OK, run),
		step("a100-sxm4-40gb", "resnet50", 128, measure.AMP, 120, measure.OK, run),
	}); err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Precision: measure.AMP, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: 100000}, Data: DefaultRunData(), Nodes: 1}
	for _, tc := range []struct {
		name, machine string
		batch         int
		want          []int // the measured per-GPU batches listed
		at            int   // the one with the prediction beside it (0: none)
	}{
		{"one V100 at a measured batch", "aws/p3.2xlarge", 128, []int{64, 128}, 128},
		{"eight V100s at 128 each", "aws/p3.16xlarge", 1024, []int{64, 128}, 128},
		{"one V100 between them", "aws/p3.2xlarge", 96, []int{64, 128}, 0},
		{"a T4: none measured", "aws/g4dn.xlarge", 128, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := eng.MachineTarget(tc.machine)
			if err != nil {
				t.Fatal(err)
			}
			x, err := eng.Explain(ctx, q, "resnet50", tg, tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range x.Measured {
				got = append(got, m.PerGPUBatch)
				// The prediction beside each is the explanation's own at that per-GPU batch.
				at := x
				if m.PerGPUBatch != x.PerGPUBatch {
					if at, err = eng.Explain(ctx, q, "resnet50", tg, m.PerGPUBatch*x.GPUCount); err != nil {
						t.Fatal(err)
					}
				}
				want := at.IterMS - at.Phases.LoaderMS - at.Phases.CommunicationMS
				if m.PredictedMS != want || !(want > 0) || m.Framework != run || m.Source != "lab" || m.MeasuredAt != "2026-11-01" {
					t.Errorf("measured %+v: want the prediction %v beside it, from %q, lab, 2026-11-01", m, want, run)
				}
			}
			if tc.at != 0 && !slices.Contains(got, x.PerGPUBatch) {
				t.Errorf("the explanation's own per-GPU batch %d is not among the measured %v", x.PerGPUBatch, got)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("measured batches %v, want %v", got, tc.want)
			}
			if text := WhyText(&x, nil); (len(tc.want) > 0) != strings.Contains(text, "Measured steps of resnet50 on this GPU at amp:") {
				t.Errorf("the Why text does not say the measured steps as it should:\n%s", text)
			}
		})
	}
}

// MeasuredStepText says the step, its spread and where it comes from, and how far the
// prediction beside it is.
func TestMeasuredStepText(t *testing.T) {
	for _, tc := range []struct {
		m    predictor.MeasuredStep
		want string
	}{
		{predictor.MeasuredStep{PerGPUBatch: 256, StepMS: 300, SpreadMS: 3, Framework: "pytorch 2.8.0", Source: "lab", MeasuredAt: "2026-11-01", PredictedMS: 171},
			"per-GPU batch 256: 300 ms ±3.00 ms (pytorch 2.8.0; lab; 2026-11-01); predicted 171 ms, 43% less"},
		{predictor.MeasuredStep{PerGPUBatch: 1024, StepMS: 200, Source: "lab", PredictedMS: 250},
			"per-GPU batch 1,024: 200 ms (lab); predicted 250 ms, 25% more"},
		{predictor.MeasuredStep{PerGPUBatch: 8, StepMS: 20, Framework: "x\x1b[2Jy", PredictedMS: 20.05},
			`per-GPU batch 8: 20.0 ms (x\x1b[2Jy); predicted 20.1 ms, the same`},
		{predictor.MeasuredStep{PerGPUBatch: 64, StepMS: 100}, "per-GPU batch 64: 100 ms"},
	} {
		if got := MeasuredStepText(tc.m); got != tc.want {
			t.Errorf("MeasuredStepText(%+v)\n got %q\nwant %q", tc.m, got, tc.want)
		}
	}
}
