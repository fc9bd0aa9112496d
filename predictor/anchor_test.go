package predictor

import (
	"math"
	"slices"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// A curve with measured whole steps passes through them: tinyNet's predicted step is
// 20.45 ms per image (linearTimer, no overheads); measured twice that at per-GPU batch
// 4 and exactly it at 16, the step is the measurement there (source measured, the
// spread its band), the prediction times the ratio interpolated in log-batch between
// them (1.5 at 8), and the outermost ratio beyond them; on two GPUs the all-reduce
// stays as predicted.
func TestCurvePassesThroughMeasuredSteps(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	gpu := testGPU
	gpu.MemoryGB = 0 // every batch fits
	steps := []MeasuredStep{
		{PerGPUBatch: 16, StepMS: 16 * tinyPerSampleMS, SpreadMS: 16 * tinyPerSampleMS / 100, Framework: "pytorch 2.8.0", Source: "lab"},
		{PerGPUBatch: 4, StepMS: 2 * 4 * tinyPerSampleMS, SpreadMS: 4 * tinyPerSampleMS / 10, Framework: "pytorch 2.8.0", Source: "lab"},
	}
	given := slices.Clone(steps)
	curve := func(gpus int, batches []int, anchors []MeasuredStep) Curve {
		t.Helper()
		c, err := e.Curve(Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: gpus}, GPU: gpu,
			Precision: measure.FP32, Batches: batches, Run: Run{Epochs: 1, Images: 4096}, Anchors: anchors})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	batches := []int{2, 4, 8, 16, 32}
	one := curve(1, batches, steps)
	for i, tc := range []struct {
		batch    int
		ratio    float64
		source   Source
		errorPct float64 // 0: the prediction's own (10%)
	}{
		{2, 2, Anchored, 0},
		{4, 2, Measured, 100 * 0.4 / 8},
		{8, 1.5, Anchored, 0},
		{16, 1, Measured, 1},
		{32, 1, Anchored, 0},
	} {
		p := one.Points[i]
		if want := tc.ratio * tinyPerSampleMS * float64(tc.batch); p.Batch != tc.batch || math.Abs(p.IterMS-want) > 1e-9 {
			t.Errorf("batch %d: step %v ms, want %v ms", p.Batch, p.IterMS, want)
		}
		want := tc.errorPct
		if want == 0 {
			want = 10
		}
		if p.Source != tc.source || math.Abs(p.ErrorPct-want) > 1e-9 {
			t.Errorf("batch %d: %s ±%v%%, want %s ±%v%%", p.Batch, p.Source, p.ErrorPct, tc.source, want)
		}
	}
	if len(one.Anchors) != 2 || one.Anchors[0].PerGPUBatch != 4 || one.Anchors[0].PredictedMS != 4*tinyPerSampleMS ||
		one.Anchors[1].PerGPUBatch != 16 || one.Anchors[1].PredictedMS != 16*tinyPerSampleMS {
		t.Errorf("anchors %+v: want batches 4 and 16 with their predictions beside them", one.Anchors)
	}
	if !slices.Equal(steps, given) {
		t.Errorf("the request's steps were changed: %+v, given %+v", steps, given)
	}

	// Two GPUs at 4 each: the measured step, and the all-reduce as predicted without it.
	two, plain := curve(2, []int{8}, steps), curve(2, []int{8}, nil)
	if d := two.Points[0].IterMS - plain.Points[0].IterMS; math.Abs(d-4*tinyPerSampleMS) > 1e-9 || plain.Points[0].Source != Estimated {
		t.Errorf("two GPUs at 4 each: %v ms, %v ms without the measured step (%s): want 4 × 20.45 ms more", two.Points[0].IterMS, plain.Points[0].IterMS, plain.Points[0].Source)
	}
	if plain.Anchors != nil {
		t.Errorf("a curve without measured steps has anchors %+v", plain.Anchors)
	}
}

// The steps measured at one per-GPU batch count once: their medians' median, the spread
// the larger of their median spread and half their range; a step beyond memory or
// without a time is left out.
func TestAnchorStepsOnePerBatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steps     []MeasuredStep
		perGPUMax int
		want      []MeasuredStep
	}{
		{"three runs at one batch", []MeasuredStep{{PerGPUBatch: 8, StepMS: 100, SpreadMS: 1}, {PerGPUBatch: 8, StepMS: 110, SpreadMS: 2}, {PerGPUBatch: 8, StepMS: 104, SpreadMS: 3}},
			-1, []MeasuredStep{{PerGPUBatch: 8, StepMS: 104, SpreadMS: 5}}},
		{"two runs close together", []MeasuredStep{{PerGPUBatch: 8, StepMS: 100, SpreadMS: 3}, {PerGPUBatch: 8, StepMS: 102, SpreadMS: 5}},
			-1, []MeasuredStep{{PerGPUBatch: 8, StepMS: 101, SpreadMS: 4}}},
		{"beyond memory and without a time", []MeasuredStep{{PerGPUBatch: 64, StepMS: 300}, {PerGPUBatch: 16, StepMS: 0}, {PerGPUBatch: 8, StepMS: 50}},
			32, []MeasuredStep{{PerGPUBatch: 8, StepMS: 50}}},
		{"none", nil, -1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := anchorSteps(tc.steps, tc.perGPUMax); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
