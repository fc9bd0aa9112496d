package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBatchGrid(t *testing.T) {
	tests := []struct {
		lo, hi    int
		wantLen   int
		wantFirst int
		wantLast  int
		contains  []int
		excludes  []int
	}{
		{1, 1024, 64 + 56 + 16, 1, 1024, []int{1, 63, 64, 72, 512, 544, 1024}, []int{65, 513, 530}},
		{100, 130, 6, 100, 130, []int{104, 128}, []int{101}},
		{7, 7, 1, 7, 7, []int{7}, nil},
	}
	for _, tt := range tests {
		got := BatchGrid(tt.lo, tt.hi)
		if len(got) != tt.wantLen || got[0] != tt.wantFirst || got[len(got)-1] != tt.wantLast {
			t.Errorf("BatchGrid(%d, %d): %d sizes from %d to %d; want %d from %d to %d", tt.lo, tt.hi, len(got), got[0], got[len(got)-1], tt.wantLen, tt.wantFirst, tt.wantLast)
		}
		in := map[int]bool{}
		for _, b := range got {
			in[b] = true
		}
		for _, b := range tt.contains {
			if !in[b] {
				t.Errorf("BatchGrid(%d, %d) lacks %d", tt.lo, tt.hi, b)
			}
		}
		for _, b := range tt.excludes {
			if in[b] {
				t.Errorf("BatchGrid(%d, %d) has %d", tt.lo, tt.hi, b)
			}
		}
	}
}

func TestEngineBackendPredictsZooAndCustomModels(t *testing.T) {
	ctx := context.Background()
	b, err := OpenEngineBackend(ctx, filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	machines, err := b.MachineChoices(ctx)
	if err != nil || len(machines) < 10 {
		t.Fatalf("MachineChoices: %d machines, %v", len(machines), err)
	}
	custom, err := os.ReadFile("../predictor/cnn/testdata/cifar_resnet.json")
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(b, nil, time.Millisecond)
	defer s.Close()
	name, err := s.AddCustomModel(custom)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddCustomModel([]byte(`{"name": "x", "layers": [`)); err == nil || !strings.Contains(err.Error(), "custom model") {
		t.Errorf("broken custom model file: %v", err)
	}
	choices := b.ModelChoices()
	if last := choices[len(choices)-1]; last.Name != name || !last.Custom || last.Family != "Custom" {
		t.Errorf("last model choice = %+v, want the custom %q", last, name)
	}
	err = s.Update(func(st *SessionSettings) {
		st.Models = []string{"resnet50", name}
		st.Machines = []string{machines[0].ID, machines[1].ID}
		st.BatchMax = 256
	})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	st := s.State()
	if st.Err != nil || len(st.Curves) != 4 {
		t.Fatalf("prediction: %d curves, %v", len(st.Curves), st.Err)
	}
	for i, c := range st.Curves {
		wantModel := []string{"resnet50", "resnet50", name, name}[i]
		if c.Model != wantModel || c.Best < 0 || c.Points[c.Best].TotalS <= 0 {
			t.Errorf("curve %d: model %s (want %s), best %d", i, c.Model, wantModel, c.Best)
		}
	}
	if err := s.SetMachine("aws/no-such-instance", true); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	if st := s.State(); st.Err == nil || !strings.Contains(st.Err.Error(), "no-such-instance") {
		t.Errorf("unknown machine: err %v", st.Err)
	}
}

// A first launch predicts the example comparison with no clicks; each machine's curve
// runs up to the largest batch that fits it, so the 8-GPU machine's runs past 1024;
// a second launch restores what the first saved, not the example.
func TestFirstLaunchPredictsTheExampleUpToEachMachinesMemory(t *testing.T) {
	ctx := context.Background()
	b, err := OpenEngineBackend(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	prefs := &mapPrefs{}
	s := NewSession(b, prefs, time.Millisecond)
	if !s.FirstLaunch() {
		t.Fatal("empty preferences: not a first launch")
	}
	waitIdle(t, s)
	st := s.State()
	if st.Err != nil || len(st.Curves) != len(FirstLaunchModels)*len(firstLaunchMachines) {
		t.Fatalf("first launch: %d curves, %v", len(st.Curves), st.Err)
	}
	for _, c := range st.Curves {
		last := c.Points[len(c.Points)-1]
		if c.MaxBatch <= 0 || last.Fits || last.Batch <= c.MaxBatch || c.Points[len(c.Points)-2].Batch > c.MaxBatch {
			t.Errorf("%s: the curve should end one size past its largest fitting batch %d, ends at %d (fits %v)", c.Machine, c.MaxBatch, last.Batch, last.Fits)
		}
		if c.GPUCount == 8 && c.MaxBatch <= 1024 {
			t.Errorf("%s: 8 GPUs fit only %d", c.Machine, c.MaxBatch)
		}
	}
	if err := s.SetModel("vgg16", true); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	s.Close()

	again := NewSession(b, prefs, time.Millisecond)
	defer again.Close()
	if again.FirstLaunch() {
		t.Error("a second launch was taken for a first")
	}
	if got := again.Settings().Models; len(got) != 2 || got[1] != "vgg16" {
		t.Errorf("second launch models = %v, want resnet50 and vgg16", got)
	}
	if again.Settings().BatchMax != 0 {
		t.Errorf("batch cap = %d, want none", again.Settings().BatchMax)
	}
}

// TestWindowTrainsToTheTarget: the window's curves, its Why and its launch file all
// train to the target when the Run tab says so (the window's query once left the
// training out: its curves counted fixed epochs under a status line naming the target).
func TestWindowTrainsToTheTarget(t *testing.T) {
	ctx := context.Background()
	b, err := OpenEngineBackend(ctx, filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := DefaultSessionSettings()
	s.Models, s.Machines = []string{"resnet50"}, []string{"aws/p4d.24xlarge"}
	s.Train = Training{Mode: TrainToTarget, Recipe: "mlperf-lars"}
	curves, err := b.PredictCurves(ctx, s)
	if err != nil || len(curves) != 1 {
		t.Fatalf("PredictCurves: %d curves, %v", len(curves), err)
	}
	c := curves[0]
	if c.Recipe == nil || c.Recipe.Recipe.ID() != "mlperf-lars/resnet50" || c.Best < 0 || c.Points[c.Best].Epochs > 60 {
		t.Fatalf("the window's curve to MLPerf's target: recipe %v, best %d; want mlperf-lars/resnet50's plan and its ~35 epochs", c.Recipe, c.Best)
	}
	batch := c.Points[c.Best].Batch
	x, err := b.Explain(ctx, s, "resnet50", "aws/p4d.24xlarge", batch)
	if err != nil || x.Recipe == nil || x.Recipe.Recipe.ID() != "mlperf-lars/resnet50" {
		t.Errorf("Explain to the target: recipe %v, %v", x.Recipe, err)
	}
	file, err := b.LaunchFile(ctx, s, "resnet50", "aws/p4d.24xlarge", batch, LaunchRequest{Kind: LaunchSlurm})
	if err != nil || !strings.Contains(string(file), "mlperf-lars/resnet50") || !strings.Contains(string(file), "--optimizer lars") {
		t.Errorf("the window's launch file to the target: %v\n%.2000s", err, file)
	}
}
