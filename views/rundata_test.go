package views

import (
	"strings"
	"testing"
	"time"

	"cnntime/app"
)

// TestRunDataFieldsApply picks a dataset, a loader, workers and a memory format in
// the settings form and checks that each reaches the session (the dataset's images
// with it), and that a bad number changes nothing.
func TestRunDataFieldsApply(t *testing.T) {
	newTestApp(t)
	s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	p := NewSelectionPanel(s, fakeMachines, nil, func(error) {}, nil)
	r := p.RunData
	if r.Dataset.Selected != "imagenet-1k" || r.Loader.Selected != "pytorch" || r.Format.Selected != "nchw" {
		t.Fatalf("form starts at %q, %q, %q; want the session's defaults", r.Dataset.Selected, r.Loader.Selected, r.Format.Selected)
	}
	r.Dataset.SetSelected("cifar-10")
	r.Loader.SetSelected("dali")
	r.Format.SetSelected("nhwc")
	r.Workers.SetText("6")
	r.Input.SetText("4")
	if r.Framework.Selected != "pytorch2" {
		t.Errorf("framework starts at %q, want pytorch2 (the default the CLI uses)", r.Framework.Selected)
	}
	r.Framework.SetSelected("graph")
	got := s.Settings()
	// The script is left alone here: it stays the session's default.
	want := app.RunData{Dataset: "cifar-10", Input: 4, Loader: "dali", Workers: 6, MemoryFormat: "nhwc", Script: app.DefaultRunData().Script, Framework: "graph"}
	if got.Data != want || got.Images != 50000 || p.Images.Text != "50000" {
		t.Errorf("session run data %+v, images %d (field %q); want %+v and 50000", got.Data, got.Images, p.Images.Text, want)
	}
	r.Workers.SetText("-3")
	if s.Settings().Data.Workers != 6 || r.Workers.Validate() == nil || !strings.Contains(r.Workers.Validate().Error(), "workers") {
		t.Errorf("workers -3: session has %d, validation %v; want 6 kept and an error", s.Settings().Data.Workers, r.Workers.Validate())
	}
}
