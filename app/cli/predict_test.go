package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

func runPredictCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	db := filepath.Join(t.TempDir(), "cache.db")
	code := RunCLI(context.Background(), append([]string{"--db", db}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPredictJSONRows(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "predict", "--model", "resnet18", "--machine", "aws/p3.16xlarge", "--gpu", "t4",
		"--batches", "8,64", "--epochs", "2", "--images", "1000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []PredictRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("output is not JSON rows: %v\n%s", err, out)
	}
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4 (2 machines × 2 batches)", len(rows))
	}
	for _, r := range rows {
		if r.Model != "resnet18" || !r.Fits || r.IterMS == nil || *r.IterMS <= 0 || r.Source == "" {
			t.Errorf("row %+v: want a fitting, timed resnet18 prediction", r)
			continue
		}
		// Throughput and run time follow from the step time: 1000 images, 2 epochs.
		if got, want := *r.ImagesPerS, float64(r.Batch)/(*r.IterMS/1000); abs(got-want)/want > 0.01 {
			t.Errorf("%s batch %d: %.1f images/s, want %.1f from the step time", r.Machine, r.Batch, got, want)
		}
		if abs(*r.TotalS-2**r.EpochS) > 0.11 {
			t.Errorf("%s batch %d: total %.1f s is not 2 epochs of %.1f s", r.Machine, r.Batch, *r.TotalS, *r.EpochS)
		}
	}
	byMachine := map[string]PredictRow{}
	for _, r := range rows {
		byMachine[fmt.Sprintf("%s@%d", r.Machine, r.Batch)] = r
	}
	p3, t4 := byMachine["aws/p3.16xlarge@8"], byMachine["gpu/t4@8"]
	if p3.GPUCount != 8 || p3.CostUSD == nil || *p3.CostUSD <= 0 {
		t.Errorf("p3.16xlarge row %+v: want 8 GPUs and a known cost", p3)
	}
	if t4.GPUCount != 1 || t4.CostUSD != nil {
		t.Errorf("bare T4 row: %d GPUs, cost %v; want 1 GPU and an unknown (null) cost", t4.GPUCount, t4.CostUSD)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestPredictRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown model", []string{"--model", "resnet5", "--gpu", "t4", "--batch", "8"}, 2, `did you mean "resnet50"`},
		{"unknown machine", []string{"--model", "resnet50", "--machine", "aws/p3.2xlarg", "--batch", "8"}, 2, `did you mean "aws/p3.2xlarge"`},
		{"unknown GPU", []string{"--model", "resnet50", "--gpu", "a100-sxm4-40g", "--batch", "8"}, 2, `a100-sxm4-40gb`},
		{"zero batch", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "0"}, 2, "must be positive"},
		{"negative batch range", []string{"--model", "resnet50", "--gpu", "t4", "--batches", "0-8"}, 2, "must be positive"},
		{"zero epochs", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--epochs", "0"}, 2, "--epochs 0"},
		{"negative images", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--images", "-1"}, 2, "--images -1"},
		{"bad precision", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--precision", "fp8"}, 2, "fp32, fp32-strict, tf32, amp or bf16"},
		{"no machine", []string{"--model", "resnet50", "--batch", "8"}, 2, "give --machine or --gpu"},
		{"both batch flags", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--batches", "1-4"}, 2, "not both"},
		{"does not fit", []string{"--model", "vgg16", "--gpu", "t4", "--batch", "4096"}, 1, "does not fit"},
		{"fewer images than GPUs", []string{"--model", "resnet50", "--machine", "aws/p3.16xlarge", "--batch", "4"}, 1, "at least 8"},
		{"epochs past int64's use", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--epochs", "9223372036854775807"}, 2, "--epochs 9223372036854775807: give 1 to 100000"},
		{"images past a sensible epoch", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--images", "9223372036854775807"}, 2, "give 1 to 10000000000"},
		{"a hexadecimal network", []string{"--model", "resnet50", "--machine", "aws/p3.16xlarge", "--batch", "64", "--nodes", "2", "--network-gbps", "0x1p4"}, 2, `"0x1p4" is not a decimal number`},
		{"a NaN budget", []string{"best", "--model", "resnet50", "--machine", "aws/p3.16xlarge", "--nodes", "1,2", "--budget", "NaN"}, 2, `"NaN" is not a decimal number`},
		{"an infinite budget", []string{"best", "--model", "resnet50", "--machine", "aws/p3.16xlarge", "--nodes", "1,2", "--budget", "Inf"}, 2, `"Inf" is not a decimal number`},
	}
	for _, tc := range tests {
		args := append([]string{"predict"}, tc.args...)
		if tc.args[0] == "best" {
			args = tc.args
		}
		code, out, errOut := runPredictCLI(t, args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d, a message containing %q and no output",
				tc.name, code, errOut, out, tc.code, tc.want)
		}
	}
}

func TestBestFindsTheFastestBatch(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "best", "--model", "mobilenet_v2,vgg16", "--gpu", "t4", "--batches", "1-256", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []BestRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	for _, r := range rows {
		if r.Best == nil || r.Best.Batch > r.MaxBatch || r.Best.Batch < 1 {
			t.Errorf("%s: best %+v with max batch %d: want a best batch that fits", r.Model, r.Best, r.MaxBatch)
			continue
		}
		// The best batch is no slower than any batch predict gives for the same run.
		code, out, _ := runPredictCLI(t, "predict", "--model", r.Model, "--gpu", "t4", "--batches", "1-256", "--json")
		if code != 0 {
			t.Fatalf("predict failed for %s", r.Model)
		}
		var pts []PredictRow
		json.Unmarshal([]byte(out), &pts)
		for _, p := range pts {
			if p.Fits && *p.TotalS < *r.Best.TotalS {
				t.Errorf("%s: batch %d takes %.1f s, less than the best batch %d's %.1f s", r.Model, p.Batch, *p.TotalS, r.Best.Batch, *r.Best.TotalS)
			}
		}
	}
}

func TestParseBatches(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"64", []int{64}, ""},
		{"1-4", []int{1, 2, 3, 4}, ""},
		{"16, 8,7-9", []int{7, 8, 9, 16}, ""},
		{"8-4", nil, "runs backwards"},
		{"0", nil, "must be positive"},
		{"abc", nil, "is not a whole number"},
		{"1-99999", nil, "out of range"},
		{"1-2000", nil, "above the largest this tool predicts (1024)"},
	}
	for _, tc := range tests {
		got, err := app.ParseBatches(tc.in, 1024)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseBatches(%q) error %v, want one containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseBatches(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("ParseBatches(%q) = %v, want %v", tc.in, got, tc.want)
				break
			}
		}
	}
}

func TestEngineAnswersForEveryGPUAndModel(t *testing.T) {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var targets []app.Target
	for _, id := range eng.Catalog().GPUIDs() {
		tg, err := eng.GPUTarget(id)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	curves, err := eng.Curves(context.Background(), app.Query{Models: cnn.Names(), Targets: targets, Batches: []int{1, 32},
		Precision: measure.AMP, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cnn.Names()) * len(targets); len(curves) != want {
		t.Fatalf("%d curves, want %d", len(curves), want)
	}
	for _, c := range curves {
		p := c.Points[0]
		if !p.Fits || !(p.IterMS > 0) || p.Source == "" || c.Best < 0 {
			t.Errorf("%s on %s at batch 1: %+v; want a fitting, timed prediction with a source", c.Model, c.GPU, p)
		}
	}
}
