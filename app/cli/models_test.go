package cli

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cnntime/db"
	"cnntime/predictor/cnn"
)

func TestModelsCommand(t *testing.T) {
	code, out, errOut := runCLI(t, "models", "--json")
	if code != 0 {
		t.Fatalf("models --json exited %d: %s", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("models --json is not a JSON list: %v", err)
	}
	if len(rows) < 60 {
		t.Errorf("models lists %d CNNs, want at least 60", len(rows))
	}
	byName := map[string]map[string]any{}
	for _, r := range rows {
		if len(r) != 6 {
			t.Errorf("row %v has %d fields, want name, family, params, macs, input_size, layers", r["name"], len(r))
		}
		byName[r["name"].(string)] = r
	}
	tests := []struct {
		name, family string
		params       float64
		inputSize    float64
	}{
		{"resnet50", "ResNet", 25557032, 224},
		{"vgg16", "VGG", 138357544, 224},
		{"inception_v3", "Inception", 27161264, 299},
		{"convnext_tiny", "ConvNeXt", 28589128, 224},
	}
	for _, tt := range tests {
		r, ok := byName[tt.name]
		if !ok {
			t.Errorf("%s missing from models --json", tt.name)
			continue
		}
		if r["family"] != tt.family || r["params"] != tt.params || r["input_size"] != tt.inputSize || r["macs"].(float64) <= 0 || r["layers"].(float64) <= 0 {
			t.Errorf("%s: %v", tt.name, r)
		}
	}

	code, out, _ = runCLI(t, "models")
	if code != 0 || !strings.Contains(out, "resnet50") || !strings.Contains(out, "25,557,032") || !strings.Contains(out, "4.09") {
		t.Errorf("models table (exit %d) lacks resnet50's row:\n%s", code, out)
	}
}

func TestModelCommand(t *testing.T) {
	dir := t.TempDir()
	custom := filepath.Join(dir, "net.json")
	os.WriteFile(custom, []byte(`{"name": "tiny", "input": [3, 8, 8], "classes": 2, "layers": [
		{"name": "c", "op": "conv2d", "out": 4, "kernel": 3},
		{"name": "r", "op": "relu", "inplace": true},
		{"op": "flatten"}, {"name": "fc", "op": "linear", "out": 2}]}`), 0o644)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"name": "b", "input": [3, 8, 8], "classes": 2, "layers": [{"name": "c", "op": "conv2d", "out": 4, "kernel": 9}]}`), 0o644)

	tests := []struct {
		what     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"table", []string{"model", "resnet18"}, 0, "layer4.1.conv2 ", ""},
		{"flags after name", []string{"model", "resnet18", "--input", "32", "--classes", "10"}, 0, "input 3x32x32, 10 classes", ""},
		{"flags before name", []string{"model", "--input", "64", "mobilenet_v2"}, 0, "input 3x64x64", ""},
		{"custom file", []string{"model", custom}, 0, "tiny (Custom): input 3x8x8, 2 classes, 402 params", ""},
		{"unknown suggests", []string{"model", "resnt50"}, 2, "", `unknown model "resnt50" (did you mean "resnet50"?)`},
		{"no name", []string{"model"}, 2, "", "name a model"},
		{"two names", []string{"model", "resnet18", "vgg16"}, 2, "", `unexpected argument "vgg16"`},
		{"negative input", []string{"model", "resnet18", "--input", "-5"}, 2, "", "--input -5"},
		{"too small", []string{"model", "alexnet", "--input", "32"}, 1, "", "layer 12 (features.12): maxpool2d on input 256x1x1: kernel 3 is larger than its padded input 1: alexnet needs an input of at least 63x63"},
		{"broken file", []string{"model", broken}, 1, "", "layer 0 (c): conv2d on input 3x8x8: kernel 9 is larger than its padded input 8"},
		{"missing file", []string{"model", filepath.Join(dir, "none.json")}, 1, "", "read custom model"},
		{"flags on a file", []string{"model", custom, "--input", "32"}, 2, "", "a custom model file sets its own input"},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s\nwant stdout with %q, stderr with %q", code, tt.wantCode, out, errOut, tt.wantOut, tt.wantErr)
			}
		})
	}
}

func TestModelCommandJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "model", "resnet50", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d ModelDetail
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Params != 25557032 || d.Input != [3]int{3, 224, 224} || len(d.Layers) == 0 {
		t.Fatalf("resnet50: params %d input %v with %d layers", d.Params, d.Input, len(d.Layers))
	}
	var params, macs int64
	for _, l := range d.Layers {
		params += l.Params
		macs += l.MACs
	}
	if params != d.Params || macs != d.MACs {
		t.Errorf("layers sum to %d params and %d MACs, the model says %d and %d", params, macs, d.Params, d.MACs)
	}
	first, relu := d.Layers[0], d.Layers[2]
	if first.Name != "conv1" || first.Inputs[0] != -1 || first.Out != [3]int{64, 112, 112} || first.ActivationBytes != 4*64*112*112 {
		t.Errorf("first layer: %+v", first)
	}
	if relu.Op != "relu" || relu.ActivationBytes != 0 || relu.SavedBytes != 4*64*112*112 || !relu.InPlace {
		t.Errorf("in-place relu: %+v, want no new activation and its output saved", relu)
	}
	// The configuration keys and phases are what scripts/pytorch_sweep.py --layers times.
	if want := "conv2d:in=3x224x224,out=64x112x112,k=7x7,s=2x2,p=3x3,d=1x1,g=1,bias=false"; first.Config != want {
		t.Errorf("conv1's config %q, want %q", first.Config, want)
	}
	if !slices.Equal(first.Phases, []string{"fwd", "bwd_weights"}) {
		t.Errorf("conv1 on the image runs %v, want fwd and bwd_weights", first.Phases)
	}
	if bn := d.Layers[1]; !slices.Equal(bn.Phases, []string{"fwd", "bwd_data"}) {
		t.Errorf("batch norm runs %v, want fwd and one fused backward (bwd_data)", bn.Phases)
	}
	for _, l := range d.Layers {
		if l.Op == "flatten" && len(l.Phases) != 0 {
			t.Errorf("flatten (a view) runs %v, want nothing", l.Phases)
		}
	}
}

// saveModels writes a cache at a temp path holding the given custom model files.
func saveModels(t *testing.T, models map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range slices.Sorted(maps.Keys(models)) {
		if err := d.PutCustomModel(context.Background(), name, []byte(models[name])); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestModelsListsSavedCustomModels(t *testing.T) {
	// "broken" was saved by an older cnntime whose format allowed a 9×9 kernel on 8×8.
	broken := `{"name": "broken", "input": [3, 8, 8], "classes": 2, "layers": [{"name": "c", "op": "conv2d", "out": 4, "kernel": 9}]}`
	dbPath := saveModels(t, map[string]string{"tiny_a": tinyModelJSON("tiny_a"), "broken": broken})

	code, out, errOut := runCLIWithDB(t, dbPath, "models", "--json")
	if code != 0 {
		t.Fatalf("models --json exited %d: %s", code, errOut)
	}
	var rows []ModelSummary
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	zoo := len(cnn.Names())
	if len(rows) != zoo+1 {
		t.Fatalf("models lists %d rows, want the %d zoo models and tiny_a", len(rows), zoo)
	}
	for _, r := range rows[:zoo] {
		if r.Custom {
			t.Errorf("zoo model %s marked custom", r.Name)
		}
	}
	// tiny_a: conv 3→4 3×3 with bias (112 params, 4·64·27 MACs), fc 4→4 (20, 16).
	want := ModelSummary{Name: "tiny_a", Family: "Custom", Params: 132, MACs: 4*64*27 + 16, InputSize: 8, Layers: 6, Custom: true}
	if rows[zoo] != want {
		t.Errorf("custom row = %+v, want %+v", rows[zoo], want)
	}
	if !strings.Contains(errOut, "broken") || !strings.Contains(errOut, "kernel 9 is larger") {
		t.Errorf("stderr does not say why broken was left out: %q", errOut)
	}

	code, out, _ = runCLIWithDB(t, dbPath, "models")
	if code != 0 || !regexp.MustCompile(`(?m)^tiny_a +Custom \* +132 `).MatchString(out) || !strings.Contains(out, "* your own model, saved in the cache "+dbPath) {
		t.Errorf("models table (exit %d) does not mark tiny_a as custom:\n%s", code, out)
	}
}

func TestModelFindsSavedCustomModel(t *testing.T) {
	broken := `{"name": "broken", "input": [3, 8, 8], "classes": 2, "layers": [{"name": "c", "op": "conv2d", "out": 4, "kernel": 9}]}`
	dbPath := saveModels(t, map[string]string{"tiny_a": tinyModelJSON("tiny_a"), "broken": broken})
	tests := []struct {
		what     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"saved by name", []string{"model", "tiny_a"}, 0, "tiny_a (Custom): input 3x8x8, 4 classes, 132 params", ""},
		{"saved, misspelt", []string{"model", "tiny_b"}, 2, "", `unknown model "tiny_b" (did you mean "tiny_a"?)`},
		{"saved with --input", []string{"model", "tiny_a", "--input", "32"}, 2, "", "the custom model tiny_a sets its own input"},
		{"saved but broken", []string{"model", "broken"}, 1, "", "custom model broken: layer 0 (c): conv2d on input 3x8x8: kernel 9 is larger than its padded input 8 (saved in the cache " + dbPath},
		{"zoo still", []string{"model", "resnet18", "--input", "32"}, 0, "input 3x32x32", ""},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			code, out, errOut := runCLIWithDB(t, dbPath, tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s\nwant stdout with %q, stderr with %q", code, tt.wantCode, out, errOut, tt.wantOut, tt.wantErr)
			}
		})
	}
}

func TestModelsDoesNotCreateTheCache(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "none", "cache.db")
	for _, args := range [][]string{{"models"}, {"model", "nosuch"}} {
		runCLIWithDB(t, dbPath, args...)
		if _, err := os.Stat(dbPath); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v created the cache %s (stat: %v)", args, dbPath, err)
		}
	}
}

// 'models' takes no argument; one that looks meant for 'model' is pointed there.
func TestModelsArgumentPointsAtModel(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"resnet50", "run 'cnntime model resnet50'"},
		{"add", "run 'cnntime model import FILE.onnx'"},
		{"import", "run 'cnntime model import FILE.onnx'"},
		{"remove", "run 'cnntime model remove NAME'"},
	} {
		code, _, errOut := runCLI(t, "models", tc.arg)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("models %s: exit %d, stderr %q; want 2 and %q", tc.arg, code, errOut, tc.want)
		}
	}
}
