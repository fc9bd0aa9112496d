package app

import (
	"context"
	"path/filepath"
	"testing"

	"cnntime/db"
	"cnntime/predictor/measure"
)

func TestSweepPausesAndRecordsSteps(t *testing.T) {
	ctx := context.Background()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	sw, err := OpenSweeper(ctx, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats, req.Steps = []string{"resnet18"}, 32, []int{2}, 1, true
	plan, err := PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 1 || plan.Policy != measure.NoPolicy {
		t.Fatalf("plan has %d steps and policy %q; want 1 and none for the CPU", len(plan.Steps), plan.Policy)
	}
	pctx, pause := context.WithCancelCause(ctx)
	defer pause(nil)
	var seen []SweepProgress
	res, err := RunSweep(pctx, cache, sw, plan, func(p SweepProgress) {
		seen = append(seen, p)
		if p.Done == 10 {
			pause(ErrSweepPaused)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != db.SweepPaused || res.Done != 10 {
		t.Fatalf("paused sweep: state %s after %d results; want paused after 10", res.State, res.Done)
	}
	for i, p := range seen {
		if p.Done != i+1 || p.Total != plan.Total() || p.Measurement == nil {
			t.Fatalf("progress %d = %+v", i, p)
		}
	}
	sweeps, err := cache.Sweeps(ctx)
	if err != nil || len(sweeps) != 1 || sweeps[0].State != db.SweepPaused || sweeps[0].Done != 10 {
		t.Fatalf("recorded sweeps %+v, %v", sweeps, err)
	}
	// Resume to the end: the rest of the kernels, then the step.
	plan, err = PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	var last SweepProgress
	res, err = RunSweep(ctx, cache, sw, plan, func(p SweepProgress) { last = p })
	if err != nil || res.State != db.SweepDone {
		t.Fatalf("resumed: %+v, %v", res, err)
	}
	if last.Step == nil || last.Step.Status != measure.OK || last.Step.MedianMS <= 0 {
		t.Fatalf("last result %+v, want the timed step", last)
	}
	steps, err := cache.Steps(ctx, db.StepFilter{DeviceKey: sw.Device().Key})
	if err != nil || len(steps) != 1 || steps[0].Model != "resnet18" || steps[0].Batch != 2 {
		t.Fatalf("cached steps %+v, %v", steps, err)
	}
}
