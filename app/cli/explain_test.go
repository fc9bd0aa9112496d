package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
)

// TestExplainJSONListsEveryLayer: the example lists every layer of resnet50,
// names the bound, and takes apart the iteration time predict gives for the same run.
func TestExplainJSONListsEveryLayer(t *testing.T) {
	run := []string{"--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batch", "128", "--json"}
	code, out, errOut := runPredictCLI(t, append([]string{"explain"}, run...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var x predictor.Explanation
	if err := json.Unmarshal([]byte(out), &x); err != nil {
		t.Fatalf("output is not an explanation: %v\n%s", err, out)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	for _, key := range []string{"bound", "layers", "phases", "kinds", "slowest", "iter_ms", "error_pct", "source", "memory_gb"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("no %q in the JSON", key)
		}
	}
	net, err := cnn.Build("resnet50", cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Layers) != len(net.Layers) || len(x.Layers) != 176 {
		t.Fatalf("%d layers, resnet50 has %d", len(x.Layers), len(net.Layers))
	}
	for i, l := range x.Layers {
		if l.Name != net.Layers[i].Name || l.Kind == "" || l.Shape == "" || (l.Kind != "flatten" && (l.Source == "" || !(l.MS() > 0))) {
			t.Errorf("layer %d: %+v, want %s with a kind, shape, time and source", i, l, net.Layers[i].Name)
		}
	}
	if x.Bound != "gpu" || x.Batch != 128 || x.PerGPUBatch != 128 || x.Model != "resnet50" || x.Machine != "aws/p3.2xlarge" ||
		x.GPU != "v100-sxm2-16gb" || x.Loader != "pytorch" || x.Input != 224 || !x.Fits || x.MaxBatch < 128 {
		t.Errorf("header %+v: want resnet50 on the p3.2xlarge's V100 at 128, bound by the GPU, fed by pytorch at 224 px", x)
	}
	if got := x.Phases.Total(); math.Abs(got-x.IterMS) > 1e-9*x.IterMS {
		t.Errorf("phases add up to %.9f ms, the iteration is %.9f ms", got, x.IterMS)
	}
	if x.Kinds[0].Kind != "conv2d" || x.Kinds[0].SharePct < 50 || len(x.Slowest) != 10 || x.Slowest[0].Kind != "conv2d" {
		t.Errorf("kinds %+v, slowest %+v: want the convolutions first", x.Kinds[:2], x.Slowest[:1])
	}
	// The copy of a batch of 224-px float32 images over the V100's PCIe 3.0 ×16 is
	// on the GPU side of the step; the loader keeps up.
	if !(x.Phases.InputMS > 3) || x.Phases.LoaderMS != 0 || x.Phases.CommunicationMS != 0 {
		t.Errorf("phases %+v: want the input copy, no loader wait, no all-reduce", x.Phases)
	}
	// predict gives the same iteration for the same run.
	code, out, _ = runPredictCLI(t, append([]string{"predict"}, run...)...)
	var rows []PredictRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 1 {
		t.Fatalf("predict: exit %d, %v", code, err)
	}
	if r := rows[0]; math.Abs(*r.IterMS-x.IterMS) > 0.0005 || r.Bound != x.Bound || r.Source != string(x.Source) {
		t.Errorf("predict says %.3f ms (%s, %s), explain %.3f ms (%s, %s)", *r.IterMS, r.Bound, r.Source, x.IterMS, x.Bound, x.Source)
	}
}

// TestExplainTableAndCSV: the table's parts, --layers, and one CSV row per layer.
func TestExplainTableAndCSV(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "explain", "--model", "resnet50", "--machine", "aws/g4dn.xlarge", "--batch", "256", "--precision", "amp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"model      resnet50, input 224, amp, nchw", "machine    aws/g4dn.xlarge (1×t4)", "batch      256\n",
		"bound      input: the pytorch loader (3 workers per GPU) delivers", "source     ", "\nPHASE ", "\nforward ", "\nloader ",
		"\niteration ", "\nKIND ", "\nconv2d ", "the 10 slowest of 176 layers (--layers 0 lists them all)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runPredictCLI(t, "explain", "--model", "mobilenet_v2", "--gpu", "t4", "--batch", "64", "--layers", "0")
	net, _ := cnn.Build("mobilenet_v2", cnn.Options{})
	if code != 0 || !strings.Contains(out, fmt.Sprintf("all %d layers, in order:", len(net.Layers))) || strings.Count(out, "\n") < len(net.Layers)+30 ||
		!strings.Contains(out, "conv2d-depthwise") || !strings.Contains(out, "\n0    features.0.0 ") {
		t.Errorf("--layers 0 (exit %d) does not list mobilenet_v2's %d layers in order:\n%s", code, len(net.Layers), out)
	}
	code, out, _ = runPredictCLI(t, "explain", "--model", "resnet18", "--gpu", "t4", "--batch", "32", "--csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	net, _ = cnn.Build("resnet18", cnn.Options{})
	if code != 0 || err != nil || len(recs) != len(net.Layers)+1 || strings.Join(recs[0], ",") != strings.Join(app.ExplainCSVHeader, ",") {
		t.Fatalf("--csv (exit %d, %v): %d records, want a header and %d layers", code, err, len(recs), len(net.Layers))
	}
	if r := recs[1]; r[1] != "conv1" || r[2] != "conv2d" || r[3] != "3x224x224→64x112x112 k7x7 s2 p3" || r[5] != "0" || r[8] != "estimated" {
		t.Errorf("first row %v: want conv1, a conv2d without a data gradient, estimated", r)
	}
}

// TestExplainCSVNeutralisesFormulas: a custom model's layer named like a formula is
// written as text.
func TestExplainCSVNeutralisesFormulas(t *testing.T) {
	file := filepath.Join(t.TempDir(), "evil.json")
	model := `{"name": "evil", "input": [3, 16, 16], "classes": 4, "layers": [
		{"name": "=HYPERLINK(\"http://x\")", "op": "conv2d", "out": 8, "kernel": 3, "padding": 1},
		{"name": "@relu", "op": "relu"},
		{"name": "pool", "op": "adaptiveavgpool2d", "size": 1},
		{"name": "flatten", "op": "flatten"},
		{"name": "-fc", "op": "linear", "out": 4}]}`
	if err := os.WriteFile(file, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runPredictCLI(t, "explain", "--model", file, "--gpu", "t4", "--batch", "8", "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 7 { // the header, 5 layers and the loss
		t.Fatalf("%v: %d records:\n%s", err, len(recs), out)
	}
	for i, want := range []string{`'=HYPERLINK("http://x")`, "'@relu", "pool", "flatten", "'-fc"} {
		if recs[i+1][1] != want {
			t.Errorf("row %d name %q, want %q", i+1, recs[i+1][1], want)
		}
	}
}

func TestExplainRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no batch", []string{"--model", "resnet50", "--gpu", "t4"}, 2, "--batch is required: the global batch size to explain, e.g. --batch 128"},
		{"a batch range", []string{"--model", "resnet50", "--gpu", "t4", "--batches", "1-8"}, 2, "flag provided but not defined: -batches"},
		{"machine and gpu", []string{"--model", "resnet50", "--machine", "aws/p3.2xlarge", "--gpu", "t4", "--batch", "8"}, 2, "give --machine or --gpu, not both"},
		{"two machines", []string{"--model", "resnet50", "--machine", "aws/p3.2xlarge,aws/g4dn.xlarge", "--batch", "8"}, 2, "explain takes one machine"},
		{"two models", []string{"--model", "resnet50,vgg16", "--gpu", "t4", "--batch", "8"}, 2, "explain takes one model, e.g. --model resnet50"},
		{"unknown model", []string{"--model", "resnet5", "--gpu", "t4", "--batch", "8"}, 2, `did you mean "resnet50"`},
		{"unknown machine", []string{"--model", "resnet50", "--machine", "aws/p3.2xlarg", "--batch", "8"}, 2, `did you mean "aws/p3.2xlarge"`},
		{"no machine", []string{"--model", "resnet50", "--batch", "8"}, 2, "give --machine or --gpu"},
		{"json and csv", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--json", "--csv"}, 2, "not both"},
		{"negative layers", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--layers", "-1"}, 2, "--layers -1"},
		{"bad loader", []string{"--model", "resnet50", "--gpu", "t4", "--batch", "8", "--loader", "webdataset"}, 2, "--loader"},
		{"two node counts", []string{"--model", "resnet50", "--machine", "aws/p3.16xlarge", "--batch", "64", "--nodes", "1,2"}, 2, "takes one node count"},
		{"does not fit", []string{"--model", "vgg16", "--gpu", "t4", "--batch", "4096"}, 1, "the largest batch that fits is"},
		{"fewer images than GPUs", []string{"--model", "resnet50", "--machine", "aws/p3.16xlarge", "--batch", "4"}, 1, "at least 8"},
	}
	for _, tc := range tests {
		code, out, errOut := runPredictCLI(t, append([]string{"explain"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit %d, a message containing %q and no output",
				tc.name, code, errOut, out, tc.code, tc.want)
		}
	}
	code, _, errOut := runPredictCLI(t, "explain", "--model", "vgg16", "--gpu", "t4", "--batch", "4096")
	if code != 1 || !strings.Contains(errOut, "; try --batch ") {
		t.Errorf("a batch that does not fit (exit %d): %q, want a --batch to try", code, errOut)
	}
}

func TestExplainHelpAndMultiNode(t *testing.T) {
	code, out, _ := runPredictCLI(t, "help", "explain")
	for _, want := range []string{"usage: cnntime explain --model M (--machine ID | --gpu ID) --batch B", "--layers", "communication",
		"--dataset", "--nodes", "--memory-format"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help explain (exit %d) lacks %q", code, want)
		}
	}
	if strings.Contains(out, "-batches") {
		t.Errorf("help explain offers --batches, which explain does not take")
	}
	code, out, _ = runPredictCLI(t, "help")
	if !strings.Contains(out, "explain ") {
		t.Errorf("help (exit %d) does not list explain", code)
	}
	code, out, errOut := runPredictCLI(t, "explain", "--model", "resnet50", "--machine", "aws/p3.16xlarge", "--nodes", "2", "--batch", "512", "--json")
	var x predictor.Explanation
	if err := json.Unmarshal([]byte(out), &x); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", code, err, errOut)
	}
	if x.GPUCount != 16 || x.Nodes != 2 || x.PerGPUBatch != 32 || x.Network == nil || !(x.Phases.CommunicationMS > 0) {
		t.Errorf("two p3.16xlarge: %d GPUs, %d nodes, %d per GPU, network %v, all-reduce %.2f ms; want 16, 2, 32, a network and an exposed all-reduce",
			x.GPUCount, x.Nodes, x.PerGPUBatch, x.Network, x.Phases.CommunicationMS)
	}
}

// A run's measured steps, imported from its steps.csv, are read beside the prediction:
// a "measured" row in the table, measured_steps in the JSON.
func TestExplainShowsTheImportedSteps(t *testing.T) {
	dir := t.TempDir()
	dbPath, steps := filepath.Join(dir, "cache.db"), filepath.Join(dir, "steps.csv")
	if err := os.WriteFile(steps, []byte("gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n"+
		"a100-sxm4-80gb,resnet50,256,amp,pytorch 2.8.0 cnntime_train.py,300,3,ok,lab,2026-11-01T12:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "cache", "import", steps); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut)
	}
	args := []string{"explain", "--model", "resnet50", "--gpu", "a100-sxm4-80gb", "--batch", "256", "--precision", "amp", "--loader", "synthetic"}
	code, out, errOut := runCLIWithDB(t, dbPath, append(args, "--json")...)
	var x predictor.Explanation
	if code != 0 || json.Unmarshal([]byte(out), &x) != nil {
		t.Fatalf("explain --json: exit %d: %s", code, errOut)
	}
	if len(x.Measured) != 1 || x.Measured[0].StepMS != 300 || x.Measured[0].PredictedMS != x.IterMS-x.Phases.LoaderMS {
		t.Fatalf("measured steps %+v beside a %v ms step", x.Measured, x.IterMS)
	}
	code, out, errOut = runCLIWithDB(t, dbPath, args...)
	if want := "measured   " + app.MeasuredStepText(x.Measured[0]) + "\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("explain: exit %d, no row %q in\n%s%s", code, want, out, errOut)
	}
	// Another precision has no measured step to show.
	if code, out, _ = runCLIWithDB(t, dbPath, append(args[:len(args)-4], "--precision", "fp32", "--json")...); code != 0 || strings.Contains(out, "measured_steps") {
		t.Errorf("fp32: exit %d, measured steps listed:\n%s", code, out)
	}
}
