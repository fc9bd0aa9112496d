package app

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cnntime/db"
)

// brokenSaved is a model an older cnntime could have saved: a 9×9 kernel on an 8×8 input.
const brokenSaved = `{"name": "broken", "input": [3, 8, 8], "classes": 2, "layers": [{"name": "c", "op": "conv2d", "out": 4, "kernel": 9}]}`

// putModels saves custom model files, in order, in the cache at path.
func putModels(t *testing.T, path string, models ...[2]string) {
	t.Helper()
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, m := range models {
		if err := d.PutCustomModel(context.Background(), m[0], []byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
}

func customChoices(b *EngineBackend) []string {
	var names []string
	for _, c := range b.ModelChoices() {
		if c.Custom {
			names = append(names, c.Name)
		}
	}
	return names
}

func TestEngineBackendRemovesCustomModels(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cache.db")
	putModels(t, path, [2]string{"tiny_a", tinyModelJSON("tiny_a")}, [2]string{"broken", brokenSaved}, [2]string{"tiny_b", tinyModelJSON("tiny_b")})
	b, err := OpenEngineBackend(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := NewSession(b, nil, time.Millisecond)
	defer s.Close()

	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], "custom model broken saved in "+path+" was left out") {
		t.Fatalf("start-up warnings = %q, want one about broken", w)
	}
	if got := customChoices(b); !slices.Equal(got, []string{"tiny_a", "tiny_b"}) {
		t.Fatalf("custom choices = %v", got)
	}
	if got, err := s.RemovableModels(ctx); err != nil || !slices.Equal(got, []string{"tiny_a", "broken", "tiny_b"}) {
		t.Fatalf("RemovableModels() = %v, %v; want the saved ones, broken included", got, err)
	}
	if err := s.SetModel("tiny_a", true); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		remove, wantErr string
		wantChoices     []string
		wantSaved       []string
		wantWarnings    int
	}{
		{"tiny_c", `no custom model "tiny_c" (did you mean "tiny_a"?)`, []string{"tiny_a", "tiny_b"}, []string{"tiny_a", "broken", "tiny_b"}, 1},
		{"resnet50", `no custom model "resnet50"`, []string{"tiny_a", "tiny_b"}, []string{"tiny_a", "broken", "tiny_b"}, 1},
		{"broken", "", []string{"tiny_a", "tiny_b"}, []string{"tiny_a", "tiny_b"}, 0},
		{"tiny_a", "", []string{"tiny_b"}, []string{"tiny_b"}, 0},
		{"tiny_a", `no custom model "tiny_a"`, []string{"tiny_b"}, []string{"tiny_b"}, 0},
	}
	for _, st := range steps {
		err := s.RemoveCustomModel(ctx, st.remove)
		if (st.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), st.wantErr)) {
			t.Errorf("remove %s: %v, want error %q", st.remove, err, st.wantErr)
		}
		if got := customChoices(b); !slices.Equal(got, st.wantChoices) {
			t.Errorf("after removing %s: choices %v, want %v", st.remove, got, st.wantChoices)
		}
		saved, err := b.DB().CustomModels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range saved {
			names = append(names, m.Name)
		}
		if !slices.Equal(names, st.wantSaved) {
			t.Errorf("after removing %s: cache holds %v, want %v", st.remove, names, st.wantSaved)
		}
		if w := s.Warnings(); len(w) != st.wantWarnings {
			t.Errorf("after removing %s: warnings %q, want %d", st.remove, w, st.wantWarnings)
		}
	}
	if models := s.Settings().Models; slices.Contains(models, "tiny_a") {
		t.Errorf("the removed tiny_a is still selected: %v", models)
	}
}

func TestRemovingAModelAddedThisSessionSurvivesReload(t *testing.T) {
	ctx := context.Background()
	for _, withCache := range []bool{true, false} {
		path := ""
		if withCache {
			path = filepath.Join(t.TempDir(), "cache.db")
		}
		b, err := OpenEngineBackend(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.AddCustomModel([]byte(tinyModelJSON("mine"))); err != nil {
			t.Fatal(err)
		}
		if err := b.RemoveCustomModel(ctx, "mine"); err != nil {
			t.Fatalf("cache %v: %v", withCache, err)
		}
		if err := b.Reload(ctx); err != nil { // an import or a sweep reloads
			t.Fatal(err)
		}
		if got := customChoices(b); len(got) != 0 {
			t.Errorf("cache %v: after remove and reload the custom models are %v, want none", withCache, got)
		}
		b.Close()
	}
}
