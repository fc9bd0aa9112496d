package launch

import (
	"regexp"
	"strings"
	"testing"

	"cnntime/app/launch/skypilotschema"
)

// skyPilotSchema is SkyPilot's task schema (skypilotschema's README says where it
// comes from and how to refresh it).
func skyPilotSchema(t *testing.T) *skypilotschema.Schema {
	t.Helper()
	s, err := skypilotschema.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every task `launch skypilot` writes validates against SkyPilot's own schema: each
// cloud's machines (RunPod's by SkyPilot's instance-type names, CoreWeave through
// Kubernetes), spot with buckets, a command of the user's own, synthetic data, every
// precision, and the hostile names the quoting test uses.
func TestEveryTaskValidatesAgainstSkyPilotsSchema(t *testing.T) {
	schema := skyPilotSchema(t)
	var runs []Run
	add := func(change func(r *Run)) {
		r := p4d()
		change(&r)
		runs = append(runs, r)
	}
	add(func(r *Run) {})
	add(func(r *Run) {
		r.Spot, r.Checkpoints, r.Data, r.DataCopy = true, "s3://ckpt/resnet50", "gs://data/imagenet", true
	})
	add(func(r *Run) { r.Command = "python train.py --lr $LR" })
	add(func(r *Run) {
		r.Cloud, r.Instance, r.Accelerator, r.GPUs, r.CPUs, r.Region, r.Nodes, r.Batch = "runpod", "1x_RTX4090_SECURE", "RTX4090", 1, 0, "", 1, 256
	})
	add(func(r *Run) {
		r.Cloud, r.Kubernetes, r.Instance, r.Accelerator, r.GPUs, r.Region, r.Nodes, r.Batch = "", true, "", "GB200", 4, "", 2, 1024
	})
	add(func(r *Run) {
		r.Cloud, r.Instance, r.Accelerator, r.GPUs, r.Region = "gcp", "n1-standard-8", "V100", 1, "us-central1"
	})
	add(func(r *Run) { r.Cloud, r.Instance, r.Region = "azure", "Standard_ND96asr_v4", "eastus" })
	add(func(r *Run) { r.Synthetic, r.Data = true, "" })
	for _, p := range precisions {
		add(func(r *Run) { r.Precision, r.ChannelsLast, r.Compile = p, true, "reduce-overhead" })
	}
	for _, v := range hostile {
		add(func(r *Run) {
			r.Model, r.Zoo, r.Command, r.Prediction = v, false, "echo "+v, v
			if !strings.Contains(v, "\n") {
				r.Region, r.Data, r.Checkpoints = v, "/data/"+v, "/ckpt/"+v
			}
		})
	}
	for _, r := range runs {
		task, err := SkyPilot(r)
		if err != nil {
			t.Errorf("%s on %s (%s): %v", r.Model, r.Cloud, r.Precision, err)
			continue
		}
		if err := schema.Check(task); err != nil {
			t.Errorf("%q on %q, infra %q: SkyPilot's schema refuses the task: %v\n%.1500s", r.Model, r.Cloud, r.infra(), err, task)
		}
		if r.Cloud == "runpod" && !regexp.MustCompile(`(?m)^  instance_type: "[0-9]+x_[A-Za-z0-9-]+_SECURE"$`).Match(task) {
			t.Errorf("RunPod's instance type is not SkyPilot's {count}x_{GPU}_SECURE:\n%.800s", task)
		}
	}
}

// The schema has teeth: it refuses what cnntime's tasks used to hold (issue 39: cloud
// coreweave, which SkyPilot knows only as storage) and other mistakes, so the test
// above can fail.
func TestSkyPilotsSchemaRefusesMistakes(t *testing.T) {
	schema := skyPilotSchema(t)
	good, err := SkyPilot(p4d())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to string }{
		{"cloud coreweave", `infra: "aws/us-east-1"`, `cloud: "coreweave"`},
		{"infra coreweave", `infra: "aws/us-east-1"`, `infra: "coreweave"`},
		{"an unknown resources key", `use_spot: false`, `spot: false`},
		{"use_spot as a string", `use_spot: false`, `use_spot: "no"`},
		{"an environment variable name with a dash", `  MODEL: "resnet50"`, `  MODEL-NAME: "resnet50"`},
		{"num_nodes as a string", `num_nodes: 4`, `num_nodes: "4"`},
		{"a storage mode SkyPilot lacks", `name: "cnntime-resnet50"`, "name: \"x\"\nfile_mounts:\n  /data:\n    source: \"s3://b\"\n    mode: \"STREAM\""},
	} {
		bad := strings.Replace(string(good), tc.from, tc.to, 1)
		if bad == string(good) {
			t.Fatalf("%s: %q is not in the task", tc.name, tc.from)
		}
		if err := schema.Check([]byte(bad)); err == nil {
			t.Errorf("%s: the schema takes it", tc.name)
		}
	}
}
