package app

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/db"

	_ "modernc.org/sqlite"
)

// manyLayersJSON is a custom model of n ReLU layers.
func manyLayersJSON(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"name": %q, "input": [3, 8, 8], "classes": 4, "layers": [`, name)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name": "r%d", "op": "relu"}`, i)
	}
	b.WriteString("]}")
	return b.String()
}

const tinyCustomJSON = `{"name": %q, "input": [3, 8, 8], "classes": 4, "layers": [
	{"name": "conv", "op": "conv2d", "out": 4, "kernel": 3, "padding": 1},
	{"name": "pool", "op": "adaptiveavgpool2d", "size": 1},
	{"name": "flatten", "op": "flatten"},
	{"name": "fc", "op": "linear", "out": 4}]}`

// A cache whose custom models do not read, are too large or take a zoo model's name is
// refused by an import through OpenCache, which changes nothing; a good one is taken.
func TestCacheImportChecksCustomModels(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, model, json string
		wantErr           string // "": imported
	}{
		{"good", "mine", fmt.Sprintf(tinyCustomJSON, "mine"), ""},
		{"broken JSON", "broken", `{"name": "broken", "layers": [`, `custom model "broken" cannot be used`},
		{"20000 layers", "deep", manyLayersJSON("deep", 20000), "from 1 to 10000 layers"},
		{"a million layers", "huge", manyLayersJSON("huge", 1000000), "more than a custom model may be"},
		{"a zoo model's name", "resnet50", fmt.Sprintf(tinyCustomJSON, "resnet50"), "has the name of a zoo model"},
		{"saved under another name", "alias", fmt.Sprintf(tinyCustomJSON, "other"), `saved as "alias" but its file names it "other"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "theirs.db")
			other, err := db.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			other.Close()
			raw, err := sql.Open("sqlite", src) // as another program (or an older cnntime) may have saved it
			if err != nil {
				t.Fatal(err)
			}
			if _, err := raw.Exec(`INSERT INTO custom_models (name, json, added_at) VALUES (?, ?, 1)`, tc.model, tc.json); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			mine, err := OpenCache(filepath.Join(dir, "mine.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer mine.Close()
			rep, err := mine.Import(ctx, src)
			saved, lerr := mine.CustomModels(ctx)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if tc.wantErr == "" {
				if err != nil || rep.CustomModels != 1 || len(saved) != 1 {
					t.Errorf("Import = %+v, %v; %d models saved, want the model imported", rep, err, len(saved))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "the cache was not changed") {
				t.Errorf("Import error = %v, want one containing %q", err, tc.wantErr)
			}
			if len(saved) != 0 {
				t.Errorf("the refused import saved %d custom models", len(saved))
			}
		})
	}
}
