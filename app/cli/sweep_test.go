package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/db"
	"cnntime/gpu/cpu"
)

// smallSweepArgs is a CPU sweep of two small CNNs (zoo networks at 32×32 pixels).
var smallSweepArgs = []string{"sweep", "--device", "cpu", "--models", "resnet18,mobilenet_v2", "--input", "32", "--batches", "1-2", "--repeats", "1"}

func TestSweepChild(t *testing.T) {
	path := os.Getenv(childSweepEnv)
	if path == "" {
		t.Skip("runs only as the child process of TestSweepSurvivesKillAndResumes")
	}
	var out, errOut bytes.Buffer
	if code := RunCLI(context.Background(), append([]string{"--db", path}, smallSweepArgs...), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

func TestSweepCommandLine(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no models", []string{"sweep"}, 2, "--models is required"},
		{"bad batches", []string{"sweep", "--models", "resnet18", "--batches", "8-2"}, 2, "runs backwards: write 2-8"},
		{"bad device", []string{"sweep", "--models", "resnet18", "--device", "tpu"}, 2, `unknown device "tpu"`},
		{"bad cuda index", []string{"sweep", "--models", "resnet18", "--device", "cuda:x"}, 2, "write cuda:N"},
		{"amp on the cpu", []string{"sweep", "--models", "resnet18", "--precision", "amp"}, 2, "the CPU measures fp32 only"},
		{"unknown model", []string{"sweep", "--models", "resnet19"}, 2, `did you mean "resnet18"`},
		{"bad policy", []string{"sweep", "--models", "resnet18", "--policy", "random"}, 2, "use heuristic or fastest"},
		{"tiny sweep", []string{"sweep", "--models", "resnet18", "--input", "32", "--batches", "1", "--repeats", "1"}, 0, "kernels of"},
		{"devices", []string{"devices"}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			dbPath := filepath.Join(t.TempDir(), "cache.db")
			code := RunCLI(context.Background(), append([]string{"--db", dbPath}, tc.args...), nil, &out, &errOut)
			if code != tc.code || !strings.Contains(errOut.String(), tc.inStderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), tc.code, tc.inStderr)
			}
		})
	}
}

func TestDevicesJSON(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	var out, errOut bytes.Buffer
	if code := RunCLI(context.Background(), []string{"--json", "devices"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var list app.DeviceList
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Devices) != 1 || list.Devices[0].ID != "cpu" || list.Devices[0].Device.Key != cpu.New().Device().Key {
		t.Errorf("devices = %+v, want the CPU only", list.Devices)
	}
	if !strings.Contains(list.CUDA, "CUDA worker not found") {
		t.Errorf("cuda note %q, want why there are no CUDA devices", list.CUDA)
	}
}

func measurementsByKey(t *testing.T, path string) map[string]time.Time {
	t.Helper()
	cache, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	ms, err := cache.Measurements(context.Background(), cpu.New().Device().Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, m := range ms {
		out[fmt.Sprintf("%s|%s|%d", m.ConfigKey, m.Phase, m.Batch)] = m.At
	}
	return out
}

func TestSweepSurvivesKillAndResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^TestSweepChild$", "-test.count=1")
	child.Env = append(os.Environ(), childSweepEnv+"="+path)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the child (SIGKILL: no chance to clean up) once it has stored some results.
	deadline := time.Now().Add(40 * time.Second)
	var before map[string]time.Time
	for {
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(path); err == nil {
			if before = measurementsByKey(t, path); len(before) >= 40 {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			t.Fatalf("the child stored only %d measurements in 40 s", len(before))
		}
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	before = measurementsByKey(t, path)

	cache, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	ctx := context.Background()
	sw, err := app.OpenSweeper(ctx, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	req := app.DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18", "mobilenet_v2"}, 32, []int{1, 2}, 1
	plan, err := app.PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	total := plan.Kernels.Cached + len(plan.Kernels.Items)
	if plan.Kernels.Cached != len(before) || len(before) >= total {
		t.Fatalf("after the kill the cache holds %d measurements, the plan counts %d cached of %d", len(before), plan.Kernels.Cached, total)
	}
	res, err := app.RunSweep(ctx, cache, sw, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != db.SweepDone || res.Done != total-len(before) {
		t.Errorf("resumed sweep %s with %d results, want done with %d", res.State, res.Done, total-len(before))
	}
	after := measurementsByKey(t, path)
	if len(after) != total {
		t.Errorf("cache holds %d measurements after resuming, want all %d", len(after), total)
	}
	for k, at := range before {
		if !after[k].Equal(at) {
			t.Errorf("%s was measured again after the resume (%v, then %v)", k, at, after[k])
		}
	}
	again, err := app.PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Kernels.Items) != 0 {
		t.Errorf("a third sweep would measure %d kernels again", len(again.Kernels.Items))
	}
}

func TestDevicesCheckWithoutAGPU(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("CNNTIME_GPU_QUARANTINE", filepath.Join(t.TempDir(), "q.json"))
	// Without an NVIDIA GPU on the PCI bus that is the reason given first.
	reason := "cnntime devices: CUDA worker not found"
	if present, known := app.NVIDIAPresence(); known && !present {
		reason = "cnntime devices: this computer has no NVIDIA GPU"
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"text", []string{"devices", "--check"}, 1},
		{"json", []string{"--json", "devices", "--check"}, 1},
		{"bad device", []string{"devices", "--check", "--device", "-1"}, 2},
	} {
		var out, errOut bytes.Buffer
		code := RunCLI(context.Background(), append([]string{"--db", filepath.Join(t.TempDir(), "c.db")}, c.args...), nil, &out, &errOut)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errOut.String())
		}
		if c.code == 1 && (!strings.Contains(errOut.String(), reason) || strings.Count(strings.TrimSpace(errOut.String()), "\n") > 0) {
			t.Errorf("%s: stderr %q does not give the reason in one line", c.name, errOut.String())
		}
		if c.name == "json" {
			var res app.GPUCheck
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.NoGPU || res.Trusted || !strings.Contains(res.Reason, "CUDA worker not found") {
				t.Errorf("json: %+v, %v (%q)", res, err, out.String())
			}
		}
	}
}
