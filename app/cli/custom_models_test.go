package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cnntime/db"
)

func TestCacheImportAndInfoCountCustomModels(t *testing.T) {
	dir := t.TempDir()
	local, other := filepath.Join(dir, "local.db"), filepath.Join(dir, "other.db")
	putModels(t, local, [2]string{"mine", tinyModelJSON("mine")}, [2]string{"shared", tinyModelJSON("shared")})
	theirShared := strings.Replace(tinyModelJSON("shared"), `"classes": 4`, `"classes": 8`, 1)
	putModels(t, other, [2]string{"theirs", tinyModelJSON("theirs")}, [2]string{"shared", theirShared})

	code, out, errOut := runCLIWithDB(t, local, "cache", "import", other)
	if code != 0 {
		t.Fatalf("cache import: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"0 user machines and 1 custom models added", "custom models not imported: shared (this cache has a different model of the same name and keeps it"} {
		if !strings.Contains(out, want) {
			t.Errorf("import report lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLIWithDB(t, local, "cache", "import", other, "--json")
	var rep db.ImportReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.CustomModels != 0 || !slices.Equal(rep.CustomModelClashes, []string{"shared"}) {
		t.Errorf("second import --json (exit %d, %v): %+v", code, err, rep)
	}

	code, out, _ = runCLIWithDB(t, local, "cache", "info")
	if code != 0 || !strings.Contains(out, "; 3 custom models") {
		t.Errorf("cache info (exit %d) does not count 3 custom models:\n%s", code, out)
	}
	code, out, _ = runCLIWithDB(t, local, "cache", "info", "--json")
	var info db.Info
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.CustomModels != 3 {
		t.Errorf("cache info --json (exit %d, %v): custom_models %d, want 3", code, err, info.CustomModels)
	}
	code, out, _ = runCLIWithDB(t, local, "model", "theirs")
	if code != 0 || !strings.Contains(out, "theirs (Custom)") {
		t.Errorf("the imported model is not found by name (exit %d):\n%s", code, out)
	}
}

// A custom model's name follows one rule however it comes (the ONNX import's): from a
// custom model file given to model import, predict or model, and from a colleague's
// cache, names that could never be selected or that a terminal or a spreadsheet would
// act on are refused, and nothing is saved. A byte-order mark before the file is taken
// off by every command alike ("model import" said the file was not JSON while "model
// FILE.json" passed it).
func TestCustomModelNamesFollowOneRule(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.db")
	for i, name := range []string{"a,b", " lead", "../x", "=cmd|x", strings.Repeat("n", 3000), "net\u202egnp"} {
		file := filepath.Join(dir, fmt.Sprintf("m%d.json", i))
		os.WriteFile(file, []byte(strings.Replace(tinyModelJSON("NAME"), `"NAME"`, strconv.Quote(name), 1)), 0o644)
		for _, args := range [][]string{{"model", "import", file}, {"predict", "--model", file, "--gpu", "t4", "--batch", "8"}, {"model", file}} {
			code, _, errOut := runCLIWithDB(t, cache, args...)
			if code == 0 || !strings.Contains(errOut, "use 1 to 64 letters, digits, '_', '-', '.' or '+'") && !strings.Contains(errOut, "control or formatting character") {
				t.Errorf("%.60q via %s: exit %d, stderr %q; want the name refused", name, args[0]+" "+args[1], code, errOut)
			}
		}
	}
	if code, out, _ := runCLIWithDB(t, cache, "--json", "models"); code != 0 || strings.Contains(out, `"custom": true`) {
		t.Errorf("a refused model was saved: %s", out)
	}

	// A colleague's cache that holds such a model: refused too.
	other := filepath.Join(dir, "other.db")
	putModels(t, other, [2]string{"a,b", strings.Replace(tinyModelJSON("NAME"), `"NAME"`, `"a,b"`, 1)})
	if code, _, errOut := runCLIWithDB(t, cache, "cache", "import", other); code == 0 || !strings.Contains(errOut, "use 1 to 64 letters") {
		t.Errorf("cache import of a model named a,b: exit %d, %q", code, errOut)
	}

	bom := filepath.Join(dir, "bom.json")
	os.WriteFile(bom, append([]byte("\ufeff"), tinyModelJSON("bom_net")...), 0o644)
	for _, args := range [][]string{{"model", bom}, {"model", "import", bom}, {"model", "bom_net"}, {"predict", "--model", bom, "--gpu", "t4", "--batch", "8"}} {
		if code, _, errOut := runCLIWithDB(t, cache, args...); code != 0 {
			t.Errorf("%v with a byte-order mark: exit %d, %q", args, code, errOut)
		}
	}
}
