package db

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

const (
	tinyModel  = `{"name": "tiny", "input": [3, 8, 8], "classes": 2, "layers": [{"name": "fc", "op": "linear", "out": 2}]}`
	tinyModel2 = `{"name": "tiny", "input": [3, 16, 16], "classes": 2, "layers": [{"name": "fc", "op": "linear", "out": 2}]}`
	otherModel = `{"name": "other", "input": [3, 8, 8], "classes": 4, "layers": []}`
)

func customNames(t *testing.T, d *DB) []string {
	t.Helper()
	ms, err := d.CustomModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return names
}

func TestPutCustomModelRefusesBadInput(t *testing.T) {
	tests := []struct {
		name, model, data, wantErr string
	}{
		{"no name", "", tinyModel, "it has no name"},
		{"empty file", "tiny", "", "not valid JSON"},
		{"broken JSON", "tiny", `{"name": "tiny", "layers": [`, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := openTemp(t)
			err := d.PutCustomModel(context.Background(), tc.model, []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("PutCustomModel(%q, %q) = %v, want an error with %q", tc.model, tc.data, err, tc.wantErr)
			}
			if names := customNames(t, d); len(names) != 0 {
				t.Errorf("a refused model was saved: %v", names)
			}
		})
	}
}

func TestCustomModelsKeepOrderReplaceAndRemove(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ name, data string }{{"tiny", tinyModel}, {"other", otherModel}, {"tiny", tinyModel2}} {
		if err := d.PutCustomModel(ctx, m.name, []byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()

	// Reopened, the models come back in the order first saved, tiny with its new text.
	d, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ms, err := d.CustomModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "tiny" || ms[1].Name != "other" {
		t.Fatalf("CustomModels() = %+v, want tiny then other", ms)
	}
	if string(ms[0].JSON) != tinyModel2 || string(ms[1].JSON) != otherModel {
		t.Errorf("saved texts = %q, %q; want the replaced tiny and other as written", ms[0].JSON, ms[1].JSON)
	}
	if ms[0].AddedAt.IsZero() || ms[1].AddedAt.Before(ms[0].AddedAt) {
		t.Errorf("added times %v, %v: want set and in order", ms[0].AddedAt, ms[1].AddedAt)
	}

	if err := d.RemoveCustomModel(ctx, "tiny"); err != nil {
		t.Fatal(err)
	}
	if names := customNames(t, d); len(names) != 1 || names[0] != "other" {
		t.Errorf("after removing tiny: %v, want [other]", names)
	}
	if err := d.RemoveCustomModel(ctx, "tiny"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `no custom model "tiny"`) {
		t.Errorf("removing tiny twice: %v, want ErrNotFound naming it", err)
	}
}

func TestMigrateVersion3AddsCustomModels(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v3.db")
	old, err := openUnmigrated(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.migrateTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	// A user machine as version 3's cnntime wrote it (the columns it had).
	if _, err := old.sqldb().ExecContext(ctx, `INSERT INTO user_machines (id, gpu_count) VALUES ('my/box', 1)`); err != nil {
		t.Fatal(err)
	}
	if err := old.PutCustomModel(ctx, "tiny", []byte(tinyModel)); err == nil {
		t.Fatal("a version-3 cache already has custom_models")
	}
	old.sqldb().Close()

	d, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a version-3 cache: %v", err)
	}
	defer d.Close()
	if v, _ := d.SchemaVersion(ctx); v != latestVersion {
		t.Errorf("schema version after Open = %d, want %d", v, latestVersion)
	}
	if ms, err := d.UserMachines(ctx); err != nil || len(ms) != 1 {
		t.Errorf("user machines after the migration: %v, %v; want the one saved", ms, err)
	}
	if err := d.PutCustomModel(ctx, "tiny", []byte(tinyModel)); err != nil {
		t.Fatal(err)
	}
	if names := customNames(t, d); len(names) != 1 || names[0] != "tiny" {
		t.Errorf("custom models = %v, want [tiny]", names)
	}
}

func TestExportWholeCacheKeepsCustomModels(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.PutCustomModel(ctx, "tiny", []byte(tinyModel)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		file   string
		filter ExportFilter
		want   int
	}{{"whole.db", ExportFilter{}, 1}, {"device.db", ExportFilter{DeviceKey: "cuda:A"}, 0}} {
		path := filepath.Join(dir, tc.file)
		if _, err := d.ExportCache(ctx, path, tc.filter); err != nil {
			t.Fatal(err)
		}
		out, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if names := customNames(t, out); len(names) != tc.want {
			t.Errorf("%s: custom models %v, want %d", tc.file, names, tc.want)
		}
		out.Close()
	}
}

func TestImportMergesCustomModelsByName(t *testing.T) {
	ctx := context.Background()
	local := openTemp(t)
	for _, m := range []struct{ name, data string }{{"tiny", tinyModel}, {"mine", otherModel}, {"same", tinyModel}} {
		if err := local.PutCustomModel(ctx, m.name, []byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	otherPath := filepath.Join(t.TempDir(), "other.db")
	other, err := Open(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	// "tiny" is another definition under the same name; "same" is the same definition
	// laid out differently; "theirs" is new.
	spaced := strings.ReplaceAll(tinyModel, ", ", ",\n    ")
	for _, m := range []struct{ name, data string }{{"theirs", otherModel}, {"tiny", tinyModel2}, {"same", spaced}} {
		if err := other.PutCustomModel(ctx, m.name, []byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	other.Close()

	tests := []struct {
		name        string
		wantAdded   int
		wantClashes []string
	}{
		{"first import", 1, []string{"tiny"}},
		{"again", 0, []string{"tiny"}}, // nothing new; the clash is still reported
	}
	for _, tc := range tests {
		rep, err := local.Import(ctx, otherPath)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rep.CustomModels != tc.wantAdded || strings.Join(rep.CustomModelClashes, ",") != strings.Join(tc.wantClashes, ",") {
			t.Errorf("%s: added %d, clashes %v; want %d, %v", tc.name, rep.CustomModels, rep.CustomModelClashes, tc.wantAdded, tc.wantClashes)
		}
		ms, err := local.CustomModels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Name+"="+string(m.JSON))
		}
		want := []string{"tiny=" + tinyModel, "mine=" + otherModel, "same=" + tinyModel, "theirs=" + otherModel}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: custom models after the import:\n%s\nwant (the local definitions kept):\n%s", tc.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		info, err := local.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.CustomModels != 4 {
			t.Errorf("%s: Info().CustomModels = %d, want 4", tc.name, info.CustomModels)
		}
	}
}

func TestSameJSON(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a": 1, "b": [2, 3]}`, `{"a":1,"b":[2,3]}`, true},
		{`{"a": 1}`, `{"a": 2}`, false},
		{`{"a": 1, "b": 2}`, `{"b": 2, "a": 1}`, true},
		{`{"a": [1, 2]}`, `{"a": [2, 1]}`, false},
		{`not json`, `not json`, true},
		{`not json`, `{}`, false},
	}
	for _, tc := range tests {
		if got := sameJSON(tc.a, tc.b); got != tc.want {
			t.Errorf("sameJSON(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
