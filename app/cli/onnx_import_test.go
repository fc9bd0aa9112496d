package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/db"
	ot "cnntime/predictor/cnn/onnx/onnxtest"

	"google.golang.org/protobuf/proto"
)

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func importModel(t *testing.T, dbPath string, args ...string) ImportedModel {
	t.Helper()
	code, out, errOut := runCLIWithDB(t, dbPath, append([]string{"model", "import", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("model import %v: exit %d: %s", args, code, errOut)
	}
	var m ImportedModel
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("model import %v: %v\n%s", args, err, out)
	}
	return m
}

// An ONNX model imported into the cache works wherever a zoo model does: the models
// list, model, predict, best, explain, export, a CPU sweep, and it goes again with
// model remove.
func TestImportedONNXModelWorksEverywhere(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cache.db")
	file := writeFile(t, dir, "tiny.onnx", ot.TinyCNN(16, 4).Bytes())

	m := importModel(t, dbPath, file, "--name", "tiny_onnx")
	if m.Name != "tiny_onnx" || m.Params != ot.TinyCNNParams(4) || !m.Custom || m.Replaced || m.InputSize != 16 {
		t.Fatalf("imported %+v: want tiny_onnx, %d params, 16×16 input, custom, not replacing", m, ot.TinyCNNParams(4))
	}

	code, out, errOut := runCLIWithDB(t, dbPath, "models", "--json")
	var rows []ModelSummary
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
		t.Fatalf("models: exit %d: %s", code, errOut)
	}
	if i := slices.IndexFunc(rows, func(r ModelSummary) bool { return r.Name == "tiny_onnx" }); i < 0 || !rows[i].Custom || rows[i].Params != m.Params {
		t.Errorf("models lists no custom tiny_onnx with %d params", m.Params)
	}

	code, out, errOut = runCLIWithDB(t, dbPath, "model", "tiny_onnx", "--json")
	var detail ModelDetail
	if code != 0 || json.Unmarshal([]byte(out), &detail) != nil {
		t.Fatalf("model tiny_onnx: exit %d: %s", code, errOut)
	}
	if detail.Params != m.Params || detail.Classes != 4 || len(detail.Layers) != 13 {
		t.Errorf("model tiny_onnx: %d params, %d classes, %d layers; want %d, 4, 13", detail.Params, detail.Classes, len(detail.Layers), m.Params)
	}

	// Predicted by name exactly as the custom model file the import wrote.
	net, err := app.ReadCustomModelFile(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	imported := predictRows(t, dbPath, "--model", "tiny_onnx", "--gpu", "t4", "--batches", "64")
	jsonFile := writeFile(t, dir, "tiny_onnx.json", mustJSONOf(t, dbPath, "tiny_onnx"))
	fromJSON := predictRows(t, filepath.Join(dir, "other.db"), "--model", jsonFile, "--gpu", "t4", "--batches", "64")
	if len(imported) != 1 || imported[0].IterMS == nil || fromJSON[0].IterMS == nil || *imported[0].IterMS != *fromJSON[0].IterMS {
		t.Errorf("predict tiny_onnx %+v, its JSON file %+v: want the same step time", imported, fromJSON)
	}
	if net.Params() != m.Params {
		t.Errorf("the file read straight from disk has %d params, the saved model %d", net.Params(), m.Params)
	}

	code, out, errOut = runCLIWithDB(t, dbPath, "best", "--json", "--model", "tiny_onnx", "--gpu", "t4", "--batches", "1-256")
	var best []BestRow
	if code != 0 || json.Unmarshal([]byte(out), &best) != nil || len(best) != 1 || best[0].Best == nil || best[0].Model != "tiny_onnx" {
		t.Errorf("best tiny_onnx: exit %d: %s %s", code, out, errOut)
	}
	code, out, errOut = runCLIWithDB(t, dbPath, "explain", "--json", "--model", "tiny_onnx", "--gpu", "t4", "--batch", "64")
	if code != 0 || !strings.Contains(out, "\"tiny_onnx\"") || !strings.Contains(out, "conv2d") {
		t.Errorf("explain tiny_onnx: exit %d: %s %s", code, errOut, out)
	}
	csvPath := filepath.Join(dir, "curves.csv")
	code, _, errOut = runCLIWithDB(t, dbPath, "export", "--models", "tiny_onnx", "--gpus", "t4", "--table", "curves", "--csv", csvPath)
	if text, _ := os.ReadFile(csvPath); code != 0 || !strings.Contains(string(text), "\ntiny_onnx,gpu/t4,") {
		t.Errorf("export curves of tiny_onnx: exit %d: %s\n%s", code, errOut, text)
	}
	code, _, errOut = runCLIWithDB(t, dbPath, "sweep", "--device", "cpu", "--models", "tiny_onnx", "--batches", "1-2", "--repeats", "1")
	if code != 0 {
		t.Errorf("sweep of tiny_onnx on the CPU: exit %d: %s", code, errOut)
	}

	if again := importModel(t, dbPath, file, "--name", "tiny_onnx"); !again.Replaced {
		t.Errorf("importing tiny_onnx again: replaced %t, want true", again.Replaced)
	}
	if code, _, errOut = runCLIWithDB(t, dbPath, "model", "remove", "tiny_onnx"); code != 0 {
		t.Fatalf("model remove tiny_onnx: exit %d: %s", code, errOut)
	}
	if code, _, errOut = runCLIWithDB(t, dbPath, "model", "tiny_onnx"); code == 0 || !strings.Contains(errOut, "unknown model") {
		t.Errorf("model tiny_onnx after its removal: exit %d: %s", code, errOut)
	}
	if code, _, errOut = runCLIWithDB(t, dbPath, "model", "remove", "tiny_onnx"); code != 2 || !strings.Contains(errOut, `there is no custom model "tiny_onnx"`) {
		t.Errorf("removing tiny_onnx twice: exit %d: %s", code, errOut)
	}
	if code, _, errOut = runCLIWithDB(t, dbPath, "model", "remove", "resnet50"); code != 2 || !strings.Contains(errOut, "resnet50 is a zoo model") {
		t.Errorf("removing resnet50: exit %d: %s", code, errOut)
	}
}

// mustJSONOf reads a saved custom model's file from the cache.
func mustJSONOf(t *testing.T, dbPath, name string) []byte {
	t.Helper()
	d, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	saved, err := d.CustomModels(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range saved {
		if m.Name == name {
			return m.JSON
		}
	}
	t.Fatalf("no saved model %s", name)
	return nil
}

// snapshot reads every file in dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// Broken and hostile ONNX files are refused with a message that says what is wrong, and
// the cache is left byte for byte as it was.
func TestModelImportRefusesBadFilesAndChangesNothing(t *testing.T) {
	files := t.TempDir()
	cacheDir := t.TempDir()
	dbPath := filepath.Join(cacheDir, "cache.db")
	importModel(t, dbPath, writeFile(t, files, "tiny.onnx", ot.TinyCNN(16, 4).Bytes()), "--name", "tiny_onnx")

	tiny := ot.TinyCNN(16, 4).Bytes()
	mutate := func(f func(g *ot.Graph)) []byte {
		g := ot.TinyCNN(16, 4)
		f(g)
		return g.Bytes()
	}
	// A file of a million nodes, and one whose first weight has a gigabyte of data
	// (sparse on disk: the test writes only its ends).
	head, node := ot.ManyNodes(1_000_000)
	many := bytes.NewBuffer(head)
	for i := 0; i < 1_000_000; i++ {
		many.Write(node)
	}
	const gb = 1 << 30
	hugeHead, hugeTail := ot.HugeInitializer(gb)
	huge, err := os.Create(filepath.Join(files, "huge.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := huge.Write(hugeHead); err == nil {
		if _, err = huge.Seek(gb, 1); err == nil {
			_, err = huge.Write(hugeTail)
		}
	}
	if err := errors.Join(err, huge.Close()); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		data []byte // written to name.onnx unless nil (huge.onnx is already there)
		args []string
		want string
		code int // 1: a bad file; 2: a bad name (a mistake on the command line)
	}{
		{"truncated", tiny[:len(tiny)/2], nil, "it is truncated", 1},
		{"million_nodes", many.Bytes(), nil, "the graph has more than 100000 nodes", 1},
		{"cycle", mutate(func(g *ot.Graph) {
			n := g.Model.Graph.Node
			n[0].Input[0] = n[len(n)-1].Output[0]
		}), nil, "is on a cycle", 1},
		{"unknown_op", mutate(func(g *ot.Graph) { g.Model.Graph.Node[2].OpType = proto.String("FancyOp") }), nil, `(FancyOp): cnntime has no layer for FancyOp`, 1},
		{"evil_op", mutate(func(g *ot.Graph) { g.Model.Graph.Node[2].OpType = proto.String("Evil\x1b[2J\x1b[31mRED") }), nil, `("Evil\x1b[2J\x1b[31mRED"): cnntime has no layer for "Evil\x1b[2J\x1b[31mRED"`, 1},
		{"op_with_a_line_break", mutate(func(g *ot.Graph) { g.Model.Graph.Node[2].OpType = proto.String("Op\nInjected line") }), nil, `("Op\nInjected line"): cnntime has no layer`, 1},
		{"negative_dims", mutate(func(g *ot.Graph) { g.Model.Graph.Initializer[0].Dims[0] = -8 }), nil, "dimension -8 is negative", 1},
		{"negative_input", mutate(func(g *ot.Graph) {
			g.Model.Graph.Input[0] = ot.ValueInfo("image", 1, 3, -16, 16)
		}), nil, "negative dimension -16", 1},
		{"huge", nil, nil, "it holds 1.1 GB of data, but its dims [8 3 3 3] of FLOAT need 864 bytes", 1},
		{"dynamic", mutate(func(g *ot.Graph) {
			g.Model.Graph.Input[0] = ot.ValueInfo("image", ot.Dynamic, 3, ot.Dynamic, ot.Dynamic)
		}), nil, "give the input size (--input N", 1},
		{"empty", []byte{}, nil, "the file is empty", 1},
		{"json_inside", []byte(`{"name": "x"}`), nil, "like a JSON file", 1},
		{"zoo_name", tiny, []string{"--name", "resnet50"}, `model name "resnet50" is a zoo model's`, 2},
		{"bad_name", tiny, []string{"--name", "my,net"}, `model name "my,net": use 1 to 64 letters`, 2},
	}
	before := snapshot(t, cacheDir)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(files, tc.name+".onnx")
			if tc.data != nil {
				writeFile(t, files, tc.name+".onnx", tc.data)
			}
			code, out, errOut := runCLIWithDB(t, dbPath, append([]string{"model", "import", path}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and a message saying %q", code, out, errOut, tc.code, tc.want)
			}
			if strings.ContainsRune(errOut, 0x1b) || (tc.code == 1 && strings.Count(errOut, "\n") > 1) {
				t.Errorf("stderr holds what the file says raw: %q", errOut)
			}
			after := snapshot(t, cacheDir)
			if len(after) != len(before) {
				t.Fatalf("the cache's directory holds %d files, %d before", len(after), len(before))
			}
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Errorf("%s changed", name)
				}
			}
		})
	}
	if code, out, _ := runCLIWithDB(t, dbPath, "models"); code != 0 || !strings.Contains(out, "tiny_onnx") {
		t.Errorf("the model saved before is gone: %s", out)
	}
}

// The line that says a model was imported escapes the file's path as every table does.
func TestModelImportEscapesThePath(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "ti\x1b[2Jny.onnx", ot.TinyCNN(16, 4).Bytes())
	code, out, errOut := runCLIWithDB(t, filepath.Join(dir, "cache.db"), "model", "import", file)
	if code != 0 || !strings.Contains(out, `ti\x1b[2Jny.onnx`) || strings.ContainsRune(out+errOut, 0x1b) {
		t.Errorf("exit %d, stdout %q, stderr %q; want the path escaped", code, out, errOut)
	}
}
