package cli

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/db"

	_ "modernc.org/sqlite"
)

// saveRawModel saves a custom model in the cache at path as an older cnntime's import
// (or another program) may have: past every check a save makes now.
func saveRawModel(t *testing.T, path, name, json string) {
	t.Helper()
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`INSERT INTO custom_models (name, json, added_at) VALUES (?, ?, 1)`, name, json); err != nil {
		t.Fatal(err)
	}
}

// A saved custom model that no longer reads (broken JSON, a million layers, a zoo
// model's name, a name with a terminal escape) is left out of the lists with a warning
// that prints its name as text and says how to remove it, and 'cnntime model remove
// NAME' removes it, a zoo model's name included, without touching the zoo model.
func TestModelRemoveTakesOutSavedModelsThatNoLongerRead(t *testing.T) {
	tests := []struct {
		name, model, json string
		warn              string // what the warning of 'cnntime models' says
	}{
		{"broken JSON", "broken", `{"name": "broken", "layers": [`, "broken saved in"},
		{"a million layers", "huge", `{"name": "huge", "input": [3, 8, 8], "classes": 4, "layers": [{}` + strings.Repeat(`,{}`, 999999) + `]}`, "from 1 to 10000 layers"},
		{"a zoo model's name", "resnet50", tinyModelJSON("resnet50"), "has the name of a zoo model"},
		{"an ANSI escape in its name", "red\x1b[31m", tinyModelJSON(`red\u001b[31m`), `red\x1b[31m`},
		{"a kernel larger than its input", "badkernel", strings.Replace(tinyModelJSON("badkernel"), `"kernel": 3`, `"kernel": 99`, 1), "kernel 99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.db")
			saveRawModel(t, path, tc.model, tc.json)

			code, out, errOut := runCLIWithDB(t, path, "models")
			if code != 0 || !strings.Contains(errOut, tc.warn) || !strings.Contains(errOut, "'cnntime model remove NAME'") {
				t.Errorf("models: exit %d, stderr %q: want a warning containing %q and how to remove the model", code, errOut, tc.warn)
			}
			if strings.Contains(out+errOut, "\x1b") {
				t.Errorf("models printed a raw escape: %q", out+errOut)
			}

			code, out, errOut = runCLIWithDB(t, path, "model", "remove", tc.model)
			if code != 0 || !strings.Contains(out, "removed the custom model") || strings.Contains(out, "\x1b") {
				t.Fatalf("model remove: exit %d, stdout %q, stderr %q: want it removed, its name printed as text", code, out, errOut)
			}
			d, err := db.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			saved, err := d.CustomModels(context.Background())
			d.Close()
			if err != nil || len(saved) != 0 {
				t.Errorf("after model remove the cache holds %d custom models (%v), want none", len(saved), err)
			}
			if code, _, errOut = runCLIWithDB(t, path, "models"); code != 0 || errOut != "" {
				t.Errorf("models after the removal: exit %d, stderr %q: want no warning", code, errOut)
			}
			if code, out, _ = runCLIWithDB(t, path, "model", "resnet50"); code != 0 || !strings.Contains(out, "resnet50 (ResNet)") {
				t.Errorf("the zoo's resnet50 after the removal: exit %d\n%s", code, out)
			}
			if code, _, errOut = runCLIWithDB(t, path, "model", "remove", tc.model); code != 2 || !strings.Contains(errOut, "no custom model") && !strings.Contains(errOut, "is a zoo model") {
				t.Errorf("a second model remove: exit %d, stderr %q: want exit 2, nothing to remove", code, errOut)
			}
		})
	}
}
