package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// exportDriver runs scripts/export_model.py's main once for each argument list of a
// JSON list in one Python process (importing PyTorch takes seconds), and prints a JSON
// line for each: the error that ended it, "" when it wrote its file.
const exportDriver = `
import importlib.util, io, json, sys, contextlib
spec = importlib.util.spec_from_file_location("export_model", sys.argv[1])
export_model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(export_model)
for argv in json.loads(sys.argv[2]):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            export_model.main(argv)
        error = ""
    except SystemExit as e:
        error = str(e.code) + "\n" + err.getvalue()
    except Exception as e:
        error = repr(e) + "\n" + err.getvalue()
    print(json.dumps(error), flush=True)
`

// exportTorchvision runs scripts/export_model.py for each model into dir (files named
// after the zoo model, ending in ext), in two Python processes at once, each exporting
// its half of the models in turn, and returns each model's file or why it has none.
func exportTorchvision(t *testing.T, py, dir string, models []torchvisionExport, ext string) (files, errs map[string]string) {
	t.Helper()
	files, errs = map[string]string{}, map[string]string{}
	var jobs [2][][]string
	var names [2][]string
	for i, m := range models {
		out := filepath.Join(dir, m.zoo+ext)
		files[m.zoo] = out
		argv := append([]string{"torchvision.models:" + m.zoo, "--out", out, "--name", "fx_" + m.zoo}, m.args...)
		jobs[i%2] = append(jobs[i%2], argv)
		names[i%2] = append(names[i%2], m.zoo)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for half := range jobs {
		if len(jobs[half]) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			list, _ := json.Marshal(jobs[half])
			out, err := exec.Command(py, "-c", exportDriver, "../../scripts/export_model.py", string(list)).Output()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			mu.Lock()
			defer mu.Unlock()
			for i, name := range names[half] {
				var e string
				switch {
				case i >= len(lines) || json.Unmarshal([]byte(lines[i]), &e) != nil:
					e = fmt.Sprintf("export_model.py did not get to it: %v\n%s", err, out)
				}
				if e != "" {
					errs[name] = "export_model.py " + strings.Join(jobs[half][i], " ") + ": " + e
				}
			}
		}()
	}
	wg.Wait()
	return files, errs
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
	files, errs := exportTorchvision(t, py, dir, torchvisionExports, ".onnx")
	for _, m := range torchvisionExports {
		t.Run(m.zoo, func(t *testing.T) {
			if err := errs[m.zoo]; err != "" {
				t.Fatal(err)
			}
			file := files[m.zoo]
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
	models := []torchvisionExport{{"resnet50", nil}, {"efficientnet_b0", nil}, {"convnext_tiny", nil}, {"densenet121", nil}}
	files, errs := exportTorchvision(t, py, dir, models, ".json")
	for _, m := range models {
		t.Run(m.zoo, func(t *testing.T) {
			if err := errs[m.zoo]; err != "" {
				t.Fatal(err)
			}
			file := files[m.zoo]
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
