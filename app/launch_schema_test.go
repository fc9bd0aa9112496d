package app

import (
	"context"
	"strings"
	"testing"

	"cnntime/app/launch/skypilotschema"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// Every catalog machine's SkyPilot task, as launch writes it (a ResNet-50 run with a
// data bucket, on demand and on spot with a checkpoint bucket), validates against
// SkyPilot's own task schema (app/launch/skypilotschema, from sky/utils/schemas.py),
// RunPod's and CoreWeave's included; a machine SkyPilot cannot launch is refused with a
// reason, never written wrong.
func TestLaunchedTasksValidateAgainstSkyPilotsSchema(t *testing.T) {
	schema, err := skypilotschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	refusals := []string{"wheels start at", "does not fit", "no SkyPilot accelerator name", "not a cloud machine", "Community Cloud"}
	written, refused, providers := 0, 0, map[string]int{}
	for _, id := range eng.MachineIDs() {
		target, err := eng.MachineTarget(id)
		if err != nil || target.Machine.GPUCount < 1 {
			continue
		}
		data := DefaultRunData()
		for _, spot := range []bool{false, true} {
			q := Query{Models: []string{"resnet50"}, Targets: []Target{target}, Batches: []int{32 * target.Machine.GPUCount},
				Precision: measure.AMP, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 90, Images: data.Images()}, Data: data}
			q.Price.Spot = spot
			req := LaunchRequest{Kind: LaunchSkyPilot, Data: "s3://my-bucket/imagenet", Checkpoints: "s3://my-bucket/ckpt"}
			r, err := eng.LaunchRun(context.Background(), q, req)
			var task []byte
			if err == nil {
				task, err = LaunchFile(r, req)
			}
			if err != nil {
				known := false
				for _, why := range refusals {
					known = known || strings.Contains(err.Error(), why)
				}
				if !known && !(spot && strings.Contains(err.Error(), "no spot")) && !strings.Contains(err.Error(), "price") {
					t.Errorf("%s (spot %v): refused without a known reason: %v", id, spot, err)
				}
				refused++
				t.Logf("%s (spot %v) refused: %v", id, spot, err)
				continue
			}
			if err := schema.Check(task); err != nil {
				t.Errorf("%s (spot %v): SkyPilot's schema refuses the task: %v", id, spot, err)
			}
			written++
			providers[target.Machine.Provider]++
		}
	}
	for _, p := range []string{"aws", "gcp", "azure", "lambda", "runpod", "coreweave"} {
		if providers[p] == 0 {
			t.Errorf("no %s task was written (tasks per provider %v, %d refused)", p, providers, refused)
		}
	}
	t.Logf("%d tasks validated (%v), %d refused with a reason", written, providers, refused)
}
