package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/db"
	"cnntime/gpu/cpu"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// customModelFile is the custom model the cnn package tests parse: a small CIFAR ResNet.
const customModelFile = "../../predictor/cnn/testdata/cifar_resnet.json"

// customModelName is the name inside customModelFile.
const customModelName = "cifar_resnet_mini"

// writeModel writes a custom model file into dir and returns its path.
func writeModel(t *testing.T, dir, file, text string) string {
	t.Helper()
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCLIWithDB(t *testing.T, dbPath string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := RunCLI(context.Background(), append([]string{"--db", dbPath}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func predictRows(t *testing.T, dbPath string, args ...string) []PredictRow {
	t.Helper()
	code, out, errOut := runCLIWithDB(t, dbPath, append([]string{"predict", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("predict %v: exit %d: %s", args, code, errOut)
	}
	var rows []PredictRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("predict %v: output is not JSON rows: %v\n%s", args, err, out)
	}
	return rows
}

func TestPredictCustomModelFromFile(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	rows := predictRows(t, dbPath, "--model", customModelFile+",resnet18", "--gpu", "t4", "--batches", "32,64", "--loader", "synthetic", "--script", "lean")
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4 (2 models × 2 batches)", len(rows))
	}

	// The same network predicted straight through the predictor, with nothing measured.
	data, err := os.ReadFile(customModelFile)
	if err != nil {
		t.Fatal(err)
	}
	net, err := cnn.ParseCustom(data)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	target, err := eng.GPUTarget("t4")
	if err != nil {
		t.Fatal(err)
	}
	want, err := eng.Predictor().Curve(predictor.Request{Network: net, Machine: target.Machine, GPU: target.GPU,
		Precision: measure.FP32, Policy: measure.Heuristic, Batches: []int{32, 64}, Run: predictor.Run{Epochs: 1, Images: predictor.ImageNetImages}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows[:2] {
		p := want.Points[i]
		if r.Model != customModelName || r.Batch != p.Batch || !r.Fits || r.IterMS == nil || *r.IterMS != round(p.IterMS, 3) || r.Source != "estimated" {
			t.Errorf("row %d = %+v, want %s at batch %d: %.3f ms, estimated", i, r, customModelName, p.Batch, p.IterMS)
		}
	}
	if rows[2].Model != "resnet18" || rows[3].Model != "resnet18" {
		t.Errorf("rows 3 and 4 are %s and %s, want resnet18 after the custom model", rows[2].Model, rows[3].Model)
	}
	// ResNet-18 at 224×224 does far more work per image than the 32×32 custom model.
	if *rows[2].IterMS < 5**rows[0].IterMS {
		t.Errorf("resnet18 %.3f ms vs the CIFAR model %.3f ms at batch 32: want resnet18 far slower", *rows[2].IterMS, *rows[0].IterMS)
	}
}

func TestBestAndExportTakeCustomModelFiles(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cache.db")
	code, out, errOut := runCLIWithDB(t, dbPath, "best", "--json", "--model", customModelFile, "--gpu", "t4", "--batches", "1-256")
	if code != 0 {
		t.Fatalf("best: exit %d: %s", code, errOut)
	}
	var best []BestRow
	if err := json.Unmarshal([]byte(out), &best); err != nil || len(best) != 1 {
		t.Fatalf("best output %q: %v; want one row", out, err)
	}
	if b := best[0]; b.Model != customModelName || b.Best == nil || b.Best.Batch < 1 || b.Best.Batch > 256 {
		t.Errorf("best row %+v: want the custom model's best batch in 1-256", b)
	}

	csvPath := filepath.Join(dir, "results.csv")
	code, _, errOut = runCLIWithDB(t, dbPath, "export", "--models", customModelFile+",resnet18", "--gpus", "t4", "--csv", csvPath)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	text, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(text)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], customModelName+",gpu/t4,") || !strings.HasPrefix(lines[2], "resnet18,gpu/t4,") {
		t.Errorf("results CSV:\n%s\nwant a header, then the custom model and resnet18 on the T4", text)
	}
}

func TestModelEntriesRefusedWithClearErrors(t *testing.T) {
	dir := t.TempDir()
	badLayer := writeModel(t, dir, "bad_layer.json", `{"name": "bad", "input": [3, 32, 32], "classes": 10, "layers": [
		{"name": "conv1", "op": "conv2d", "out": 16, "kernel": 3},
		{"name": "conv2", "op": "conv2d", "in": 8, "out": 16, "kernel": 3}]}`)
	zooName := writeModel(t, dir, "zoo_name.json", tinyModelJSON("resnet50"))
	first := writeModel(t, dir, "first.json", tinyModelJSON("mine"))
	second := writeModel(t, dir, "second.json", tinyModelJSON("mine"))
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name  string
		model string
		want  []string
	}{
		{"missing file", missing, []string{"read custom model file", missing}},
		{"layer mistake", badLayer, []string{badLayer, "layer 1 (conv2): channel mismatch"}},
		{"zoo name in a file", zooName, []string{zooName, `"resnet50" has the name of a zoo model`}},
		{"two files, one name", first + "," + second, []string{first, second, `both define a model called "mine"`}},
		{"unknown zoo name", "resnt50", []string{`did you mean "resnet50"`}},
	}
	for _, tc := range tests {
		for _, cmd := range [][]string{{"predict", "--model", tc.model, "--gpu", "t4", "--batch", "8"},
			{"best", "--model", tc.model, "--gpu", "t4"},
			{"export", "--models", tc.model, "--gpus", "t4", "--csv", filepath.Join(dir, "out.csv")}} {
			code, out, errOut := runCLIWithDB(t, filepath.Join(dir, "cache.db"), cmd...)
			ok := code == 2 && out == ""
			for _, w := range tc.want {
				ok = ok && strings.Contains(errOut, w)
			}
			if !ok {
				t.Errorf("%s: %s: exit %d, stderr %q, stdout %q; want exit 2 and a message with %q", tc.name, cmd[0], code, errOut, out, tc.want)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.csv")); err == nil {
		t.Error("export wrote a CSV for a refused model")
	}
}

// putMeasuredDevice saves a CUDA device of catalog GPU gpuID and a made-up time for
// every phase of every layer configuration of net at each batch size.
func putMeasuredDevice(t *testing.T, dbPath, gpuID string, net *cnn.Network, batches []int) {
	t.Helper()
	ctx := context.Background()
	cache, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	dev := measure.Device{Key: "cuda:GPU-test", Backend: "cuda", Name: "Tesla V100-SXM2-16GB", UUID: "GPU-test", GPUID: gpuID}
	if err := cache.PutDevice(ctx, dev); err != nil {
		t.Fatal(err)
	}
	configs, _ := net.Configs()
	var ms []measure.Measurement
	for _, c := range configs {
		for _, ph := range measure.Phases {
			for _, b := range batches {
				ms = append(ms, measure.Measurement{DeviceKey: dev.Key, ConfigKey: c.Key(), Batch: b, Precision: measure.FP32,
					Phase: ph, Policy: measure.Heuristic, MedianMS: 0.01 * float64(b), Repeats: 5, Status: measure.OK, At: time.Unix(1, 0)})
			}
		}
	}
	if err := cache.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
}

// The engine does not target the CPU (a prediction is for a catalog GPU, and only a
// CUDA device of a catalog GPU counts as measured), so a custom model's measured and
// interpolated sources are checked on a V100 whose kernels the cache holds.
func TestCustomModelUsesTheCachesMeasurements(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	net, err := app.ReadCustomModelFile(context.Background(), customModelFile)
	if err != nil {
		t.Fatal(err)
	}
	putMeasuredDevice(t, dbPath, "v100-sxm2-16gb", net, []int{8, 32})
	tests := []struct {
		gpu    string
		batch  int
		source string
	}{
		{"v100-sxm2-16gb", 8, "measured"},
		{"v100-sxm2-16gb", 32, "measured"},
		{"v100-sxm2-16gb", 16, "interpolated"},
		{"v100-sxm2-32gb", 16, "transferred"}, // another Volta: scaled from the measured one
	}
	for _, tc := range tests {
		rows := predictRows(t, dbPath, "--model", customModelFile, "--gpu", tc.gpu, "--batch", strconv.Itoa(tc.batch))
		if len(rows) != 1 || rows[0].Model != customModelName || rows[0].Source != tc.source {
			t.Errorf("%s batch %d: rows %+v, want one %s row with source %s", tc.gpu, tc.batch, rows, customModelName, tc.source)
		}
	}
	// The measured step is at least the sum of the made-up kernel times (0.08 ms each at
	// batch 8) of every kernel PyTorch runs.
	rows := predictRows(t, dbPath, "--model", customModelFile, "--gpu", "v100-sxm2-16gb", "--batch", "8")
	kernels := 0
	for i := range net.Layers {
		kernels += len(predictor.FrameworkKernels.Phases(&net.Layers[i]))
	}
	if least := 0.08 * float64(kernels); kernels < 10 || *rows[0].IterMS < least {
		t.Errorf("measured step %.3f ms, want at least %.3f ms from %d kernels of 0.08 ms", *rows[0].IterMS, least, kernels)
	}
}

func TestSweepTakesACustomModelFile(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cache.db")
	model := writeModel(t, dir, "tiny.json", tinyModelJSON("tiny_net"))
	code, _, errOut := runCLIWithDB(t, dbPath, "sweep", "--device", "cpu", "--models", model, "--batches", "1-2", "--repeats", "1")
	if code != 0 {
		t.Fatalf("sweep of %s: exit %d: %s", model, code, errOut)
	}
	net, err := app.ReadCustomModelFile(context.Background(), model)
	if err != nil {
		t.Fatal(err)
	}
	configs, _ := net.Configs()
	cache, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	keys := make([]string, len(configs))
	for i, c := range configs {
		keys[i] = c.Key()
	}
	ms, err := cache.Measurements(context.Background(), cpu.New().Device().Key, keys)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, m := range ms {
		if m.Status == measure.OK && m.MedianMS > 0 {
			measured[m.ConfigKey] = true
		}
	}
	for _, k := range keys {
		if !measured[k] && !strings.HasPrefix(k, "flatten") {
			t.Errorf("the sweep measured nothing of %s", k)
		}
	}
}

func TestCustomModelsSurviveReopeningTheCache(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	data, err := os.ReadFile(customModelFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := app.OpenEngineBackend(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AddCustomModel([]byte(tinyModelJSON("resnet18"))); err == nil {
		t.Error("a custom model with a zoo model's name was added")
	}
	if name, err := b.AddCustomModel(data); err != nil || name != customModelName {
		t.Fatalf("AddCustomModel = %q, %v", name, err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// A model saved by another cnntime that this one cannot read is left out with a warning.
	cache, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.PutCustomModel(ctx, "future", []byte(`{"name": "future", "layers": [{"name": "x", "op": "quantum_conv"}]}`)); err != nil {
		t.Fatal(err)
	}
	cache.Close()

	b, err = app.OpenEngineBackend(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var custom []string
	for _, c := range b.ModelChoices() {
		if c.Custom {
			custom = append(custom, c.Name)
		}
	}
	if strings.Join(custom, ",") != customModelName {
		t.Errorf("custom model choices after reopening: %v, want [%s]", custom, customModelName)
	}
	if w := b.Warnings(); len(w) != 1 || !strings.Contains(w[0], "future") {
		t.Errorf("warnings %q: want one about the unreadable saved model", w)
	}
	s := app.DefaultSessionSettings()
	s.Models, s.Machines, s.BatchMax = []string{customModelName}, []string{"aws/p3.2xlarge"}, 64
	curves, err := b.PredictCurves(ctx, s)
	if err != nil || len(curves) != 1 || curves[0].Model != customModelName || curves[0].Best < 0 {
		t.Errorf("PredictCurves of the saved model: %d curves, %v", len(curves), err)
	}

	// The CLI finds it by name in the same cache.
	rows := predictRows(t, dbPath, "--model", customModelName, "--gpu", "t4", "--batch", "16")
	if len(rows) != 1 || rows[0].Model != customModelName || !rows[0].Fits {
		t.Errorf("predict --model %s: %+v", customModelName, rows)
	}
}

// cnntime model FILE.json refuses a custom model with a zoo model's name as predict
// does, and every command reads a file that starts with a byte-order mark.
func TestModelFileChecksAsPredictDoes(t *testing.T) {
	dir := t.TempDir()
	zooName := writeModel(t, dir, "zoo_name.json", tinyModelJSON("resnet50"))
	bom := writeModel(t, dir, "bom.json", "\ufeff"+tinyModelJSON("with_bom"))
	db := filepath.Join(dir, "cache.db")
	if code, out, errOut := runCLIWithDB(t, db, "model", zooName); code == 0 || out != "" || !strings.Contains(errOut, `"resnet50" has the name of a zoo model`) {
		t.Errorf("model %s: exit %d, stdout %q, stderr %q; want it refused as predict refuses it", zooName, code, out, errOut)
	}
	for _, cmd := range [][]string{{"model", bom}, {"predict", "--model", bom, "--gpu", "t4", "--batch", "8"}} {
		if code, out, errOut := runCLIWithDB(t, db, cmd...); code != 0 || !strings.Contains(out, "with_bom") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want the model read", cmd, code, out, errOut)
		}
	}
}
