package db

import (
	"context"
	"testing"

	"cnntime/predictor/measure"
)

func TestCountsByDevice(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	oom := kernel("cuda:A", "conv/2", 4096, measure.BackwardData, 0)
	oom.Status = measure.OutOfMemory
	ms := []measure.Measurement{
		kernel("cuda:A", "conv/1", 32, measure.Forward, 2.5),
		kernel("cuda:A", "conv/1", 64, measure.Forward, 4.75),
		oom,
		kernel("cpu:h:x", "conv/1", 32, measure.Forward, 90),
	}
	if err := d.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	step := measure.Step{DeviceKey: "cpu:h:x", Model: "resnet18", Batch: 2, Precision: measure.FP32, MedianMS: 40, Status: measure.OK, At: t0}
	if err := d.PutSteps(ctx, []measure.Step{step}); err != nil {
		t.Fatal(err)
	}
	got, err := d.CountsByDevice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]HoldingCounts{
		"cuda:A":  {Kernels: 3, OutOfMemory: 1},
		"cpu:h:x": {Kernels: 1, Steps: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("counts for %d devices %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
}
