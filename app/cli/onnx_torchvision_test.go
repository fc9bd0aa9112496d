package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// torchvisionExport is a torchvision model as scripts/export_model.py exports it, and the
// zoo model it is checked against.
type torchvisionExport struct {
	zoo  string
	args []string // export_model.py's flags beyond --out
}

// The ten families the import is held to (issue 24): torchvision builds each without
// weights, in training mode. inception_v3 without its auxiliary head (torchvision's
// aux_logits=False; the zoo's keeps it, as training does, and the checks leave it out).
var torchvisionExports = []torchvisionExport{
	{"resnet50", nil},
	{"mobilenet_v3_large", nil},
	{"efficientnet_b0", nil},
	{"densenet121", nil},
	{"inception_v3", []string{"--arg", "aux_logits=False", "--arg", "init_weights=False", "--input", "299"}},
	{"regnet_y_400mf", nil},
	{"convnext_tiny", nil},
	{"shufflenet_v2_x1_0", nil},
	{"squeezenet1_1", nil},
	{"vgg11_bn", nil},
}

// exportTorchvision runs scripts/export_model.py for one model into dir.
func exportTorchvision(t *testing.T, py, dir string, m torchvisionExport, ext string) string {
	t.Helper()
	out := filepath.Join(dir, m.zoo+ext)
	args := append([]string{"../../scripts/export_model.py", "torchvision.models:" + m.zoo, "--out", out, "--name", "fx_" + m.zoo}, m.args...)
	cmd := exec.Command(py, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export_model.py %s: %v\n%s", strings.Join(args[1:], " "), err, b)
	}
	return out
}

// zooFigures is a zoo model's parameters and MACs as `cnntime model NAME --json` gives
// them, without the auxiliary head's layers (AuxLogits.*) when noAux is set.
func zooFigures(t *testing.T, dbPath, name string, noAux bool) (params, macs int64) {
	t.Helper()
	code, out, errOut := runCLIWithDB(t, dbPath, "model", name, "--json")
	var d ModelDetail
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("model %s: exit %d: %s", name, code, errOut)
	}
	for _, l := range d.Layers {
		if noAux && strings.HasPrefix(l.Name, "AuxLogits.") {
			continue
		}
		params += l.Params
		macs += l.MACs
	}
	return params, macs
}

// stepMS predicts one model's training step at batch 64 on an A100 (80 GB, so every
// model fits), the input pipeline out of the way (synthetic data).
func stepMS(t *testing.T, dbPath, model string) float64 {
	t.Helper()
	rows := predictRows(t, dbPath, "--model", model, "--gpu", "a100-sxm4-80gb", "--batches", "64", "--loader", "synthetic")
	if len(rows) != 1 || rows[0].IterMS == nil || !rows[0].Fits {
		t.Fatalf("predict %s at batch 64: %+v", model, rows)
	}
	return *rows[0].IterMS
}

// TestImportTorchvisionONNX exports ten torchvision CNNs of different families to ONNX with
// Debian's PyTorch (scripts/export_model.py, weights left out), imports each with `cnntime
// model import` and checks it against `cnntime model NAME` of the zoo model: exactly the
// parameters, the MACs within 1%, and the predicted training step at batch 64 within 2%.
func TestImportTorchvisionONNX(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("exports ten torchvision models with PyTorch (a few minutes); not with -short")
	}
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cache.db")
	for _, m := range torchvisionExports {
		t.Run(m.zoo, func(t *testing.T) {
			file := exportTorchvision(t, py, dir, m, ".onnx")
			imported := importModel(t, dbPath, file, "--name", "onnx_"+m.zoo)
			params, macs := zooFigures(t, dbPath, m.zoo, m.zoo == "inception_v3")
			if imported.Params != params {
				t.Errorf("%d parameters, the zoo's %s has %d", imported.Params, m.zoo, params)
			}
			if d := float64(imported.MACs-macs) / float64(macs); d > 0.01 || d < -0.01 {
				t.Errorf("%d MACs, the zoo's %s has %d (%+.2f%%)", imported.MACs, m.zoo, macs, 100*d)
			}
			got, want := stepMS(t, dbPath, "onnx_"+m.zoo), stepMS(t, dbPath, m.zoo)
			if d := (got - want) / want; d > 0.02 || d < -0.02 {
				t.Errorf("batch 64 on an A100: %.3f ms a step, the zoo's %s %.3f ms (%+.2f%%)", got, m.zoo, want, 100*d)
			}
			t.Logf("%s: %d layers, params %d (zoo %d), MACs %d (zoo %d), step at batch 64 %.3f ms (zoo %.3f ms); notes %q",
				m.zoo, imported.Layers, imported.Params, params, imported.MACs, macs, got, want, imported.Notes)
		})
	}
}

// TestExportModelJSONRoute makes cnntime custom model files of torchvision CNNs with
// export_model.py's torch.fx route and checks them as the ONNX ones: exact parameters and
// MACs, the step at batch 64 within 2%.
func TestExportModelJSONRoute(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("traces torchvision models with PyTorch (a minute); not with -short")
	}
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cache.db")
	for _, m := range []torchvisionExport{{"resnet50", nil}, {"efficientnet_b0", nil}, {"convnext_tiny", nil}, {"densenet121", nil}} {
		t.Run(m.zoo, func(t *testing.T) {
			file := exportTorchvision(t, py, dir, m, ".json")
			code, out, errOut := runCLIWithDB(t, dbPath, "model", file, "--json")
			var d ModelDetail
			if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
				t.Fatalf("model %s: exit %d: %s", file, code, errOut)
			}
			params, macs := zooFigures(t, dbPath, m.zoo, false)
			if d.Params != params || d.MACs != macs {
				t.Errorf("%d parameters and %d MACs, the zoo's %s %d and %d", d.Params, d.MACs, m.zoo, params, macs)
			}
			got, want := stepMS(t, dbPath, file), stepMS(t, dbPath, m.zoo)
			if r := (got - want) / want; r > 0.02 || r < -0.02 {
				t.Errorf("batch 64 on an A100: %.3f ms a step, the zoo's %s %.3f ms", got, m.zoo, want)
			}
		})
	}
}
