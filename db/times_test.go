package db

import (
	"context"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/measure"
)

// A row stamped ahead of this computer's clock (20 h: within the slack a clock running
// ahead is allowed) never hides a measurement made now: the new one replaces it, through
// a sweep's write and through an import. (It was kept until its time came.) Beyond the
// slack, a time is refused.
func TestAStepStampedAheadDoesNotHideOneMadeNow(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	ahead := time.Now().Add(20 * time.Hour).UTC().Truncate(time.Second)
	step := func(at time.Time, ms float64) measure.Step {
		return measure.Step{DeviceKey: "cpu:test", Model: "resnet18", Batch: 8, Precision: measure.FP32, Framework: "cnntime-cpu",
			MedianMS: ms, Status: measure.OK, At: at}
	}
	if err := d.PutSteps(ctx, []measure.Step{step(ahead, 999)}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if err := d.PutSteps(ctx, []measure.Step{step(now, 12.5)}); err != nil {
		t.Fatal(err)
	}
	got, err := d.Steps(ctx, StepFilter{DeviceKey: "cpu:test"})
	if err != nil || len(got) != 1 || got[0].MedianMS != 12.5 {
		t.Fatalf("steps %+v (%v): want the one measured now, 12.5 ms", got, err)
	}

	csv := "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n" +
		"cpu:test,resnet50,8,fp32,cnntime-cpu,999,0,ok,lab," + ahead.Format(time.RFC3339) + "\n"
	if _, err := d.ImportStepsCSV(ctx, strings.NewReader(csv), "ahead.csv"); err != nil {
		t.Fatal(err)
	}
	csv = strings.ReplaceAll(strings.ReplaceAll(csv, ahead.Format(time.RFC3339), now.Format(time.RFC3339)), ",999,", ",20.5,")
	if _, err := d.ImportStepsCSV(ctx, strings.NewReader(csv), "now.csv"); err != nil {
		t.Fatal(err)
	}
	got, err = d.Steps(ctx, StepFilter{DeviceKey: "cpu:test", Model: "resnet50"})
	if err != nil || len(got) != 1 || got[0].MedianMS != 20.5 {
		t.Errorf("imported steps %+v (%v): want the one measured now, 20.5 ms", got, err)
	}

	if err := d.PutSteps(ctx, []measure.Step{step(time.Now().Add(30*time.Hour), 1)}); err == nil || !strings.Contains(err.Error(), "is in the future") {
		t.Errorf("a step 30 h ahead: %v, want it refused", err)
	}
}
