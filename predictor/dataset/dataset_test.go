package dataset

import (
	"strings"
	"testing"
)

func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		images, input, classs int
		inMemory              bool
		pixels                float64
	}{
		{"imagenet-1k", 1281167, 0, 1000, false, 140000},
		{"cifar-10", 50000, 32, 10, true, 0},
		{"CIFAR-100", 50000, 32, 100, true, 0},
	} {
		d, err := Preset(tc.name)
		if err != nil {
			t.Fatalf("Preset(%q): %v", tc.name, err)
		}
		if d.Images != tc.images || d.Input != tc.input || d.Classes != tc.classs || d.InMemory != tc.inMemory || d.SourcePixels() != tc.pixels {
			t.Errorf("Preset(%q) = %+v (source %v px)", tc.name, d, d.SourcePixels())
		}
	}
	if _, err := Preset("mnist"); err == nil || !strings.Contains(err.Error(), "cifar-10, cifar-100, imagenet-1k") {
		t.Errorf("Preset(mnist) error = %v, want one listing the presets", err)
	}
}

func TestWithAndInputFor(t *testing.T) {
	in, _ := Preset("imagenet-1k")
	for _, tc := range []struct {
		o           Overrides
		wantErr     string
		input, cls  int
		images      int
		modelInput  int
		trainsInput int
	}{
		{o: Overrides{}, input: 0, cls: 1000, images: 1281167, modelInput: 380, trainsInput: 380},
		{o: Overrides{Input: 160}, input: 160, cls: 1000, images: 1281167, modelInput: 380, trainsInput: 160},
		{o: Overrides{Classes: 200, Images: 100000}, input: 0, cls: 200, images: 100000, modelInput: 224, trainsInput: 224},
		{o: Overrides{Input: -1}, wantErr: "input size -1"},
		{o: Overrides{Classes: -5}, wantErr: "classes -5"},
		{o: Overrides{Images: -2}, wantErr: "images -2"},
	} {
		got, err := in.With(tc.o)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("With(%+v) error = %v, want %q", tc.o, err, tc.wantErr)
			}
			if got != in {
				t.Errorf("With(%+v) failed but changed the dataset: %+v", tc.o, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("With(%+v): %v", tc.o, err)
		}
		if got.Input != tc.input || got.Classes != tc.cls || got.Images != tc.images {
			t.Errorf("With(%+v) = %+v", tc.o, got)
		}
		if g := got.InputFor(tc.modelInput); g != tc.trainsInput {
			t.Errorf("With(%+v).InputFor(%d) = %d, want %d", tc.o, tc.modelInput, g, tc.trainsInput)
		}
	}
	c, _ := Preset("cifar-10")
	if g := c.InputFor(224); g != 32 {
		t.Errorf("cifar-10 InputFor(224) = %d, want 32", g)
	}
}
