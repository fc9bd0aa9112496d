package views

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/predictor/convergence"
)

// TestTrainControls switches the Run tab between N epochs and to target accuracy,
// types a recipe of one's own and checks that every valid change reaches the session,
// that the fields follow the mode, and that bad input changes nothing: a dataset
// without a preset, a reference batch of 0, a critical batch below 1.
func TestTrainControls(t *testing.T) {
	newTestApp(t)
	s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	var reported []error
	p := NewSelectionPanel(s, fakeMachines, nil, func(err error) { reported = append(reported, err) }, nil)
	c := p.Train
	if c.Mode.Selected != trainForEpochs || p.Epochs.Disabled() || !c.RefEpochs.Disabled() || !strings.Contains(c.Basis.Text, "90 epochs") {
		t.Fatalf("starts at %q (epochs field disabled %t, recipe disabled %t): %q", c.Mode.Selected, p.Epochs.Disabled(), c.RefEpochs.Disabled(), c.Basis.Text)
	}

	c.Mode.SetSelected(trainToTarget)
	st := s.Settings()
	if st.Train.Mode != app.TrainToTarget || st.Train.HasCustom() || !p.Epochs.Disabled() || c.RefEpochs.Disabled() {
		t.Fatalf("to target: settings %+v, epochs field disabled %t", st.Train, p.Epochs.Disabled())
	}
	if err := s.Update(func(st *app.SessionSettings) { st.Models = []string{"resnet50"} }); err != nil {
		t.Fatal(err)
	}
	p.showTrain(s.Settings())
	if !strings.Contains(c.Basis.Text, "resnet50: recipe torchvision-v1/resnet50 to 76.13% top-1 on imagenet-1k, 90 epochs at batch 256 (linear-scaling law on 64–8,192)") {
		t.Errorf("the basis line %q does not name resnet50's recipe, target and law", c.Basis.Text)
	}
	// A built-in recipe by name and a lower target reach the session; a target the
	// recipe was never shown to reach is refused and changes nothing.
	if c.Recipe.Disabled() || c.Target.Disabled() {
		t.Fatal("the recipe and target fields are disabled to a target")
	}
	c.Recipe.SetSelected("mlperf-lars")
	c.Target.SetText("75")
	if st := s.Settings(); st.Train.Recipe != "mlperf-lars" || st.Train.TargetTop1 != 75 || !strings.Contains(c.Basis.Text, "mlperf-lars/resnet50 to 75% top-1") {
		t.Errorf("recipe mlperf-lars to 75%%: %+v, basis %q", st.Train, c.Basis.Text)
	}
	// Above the recipe's accuracy: it applies, and that CNN is not predicted, saying why
	// (a CNN whose recipe cannot take the setting is a partial answer, as any other).
	c.Target.SetText("77")
	if st := s.Settings(); st.Train.TargetTop1 != 77 || !strings.Contains(c.Basis.Text, "resnet50: target accuracy 77%: recipe mlperf-lars/resnet50 is published at 75.9%") {
		t.Errorf("a target of 77%% above MLPerf's 75.9%%: %+v, basis %q", st.Train, c.Basis.Text)
	}
	c.Target.SetText("")
	c.Recipe.SetSelected(app.OwnRecipeChoice)
	if st := s.Settings(); st.Train.Recipe != "" || st.Train.TargetTop1 != 0 {
		t.Errorf("back to each CNN's own recipe: %+v", st.Train)
	}

	// CIFAR-100 has no preset: the dataset is refused and stays ImageNet.
	p.RunData.Dataset.SetSelected("cifar-100")
	if got := s.Settings().Data.Dataset; got != "imagenet-1k" || p.RunData.Dataset.Selected != "imagenet-1k" {
		t.Errorf("to target on cifar-100 applied: dataset %q (select %q)", got, p.RunData.Dataset.Selected)
	}
	if len(reported) == 0 || !strings.Contains(reported[len(reported)-1].Error(), "cifar-100") {
		t.Errorf("no error said why cifar-100 was refused: %v", errors.Join(reported...))
	}

	// A recipe of one's own: 200 epochs at 128, like CIFAR-10.
	p.RunData.Dataset.SetSelected("cifar-10")
	c.RefEpochs.SetText("200")
	c.RefBatch.SetText("128")
	c.Like.SetSelected("cifar-10")
	want := convergence.Custom{Epochs: 200, Batch: 128, Like: "cifar-10"}
	if got := s.Settings().Train.Custom; got != want {
		t.Errorf("recipe %+v, want %+v", got, want)
	}
	c.CriticalBatch.SetText("0.5")
	if got := s.Settings().Train.Custom; got != want || c.CriticalBatch.Validate() == nil || !strings.Contains(c.CriticalBatch.Validate().Error(), "critical batch 0.5") {
		t.Errorf("critical batch 0.5: recipe %+v, validation %v; want it refused", got, c.CriticalBatch.Validate())
	}
	c.CriticalBatch.SetText("4000")
	if got := s.Settings().Train.Custom; got.CriticalBatch != 4000 || got.Like != "" {
		t.Errorf("critical batch 4000: recipe %+v", got)
	}
	c.RefBatch.SetText("0")
	if got := s.Settings().Train.Custom; got.Batch != 128 || c.RefBatch.Validate() == nil {
		t.Errorf("reference batch 0 applied: %+v", got)
	}
	c.RefBatch.SetText("128")

	// Back to N epochs: the recipe stays on screen but is not used.
	c.Mode.SetSelected(trainForEpochs)
	if st := s.Settings(); st.Train.Mode != app.TrainEpochs || st.Train.HasCustom() || p.Epochs.Disabled() || !c.RefEpochs.Disabled() {
		t.Errorf("back to epochs: %+v, epochs field disabled %t", st.Train, p.Epochs.Disabled())
	}
}

// The Run tab's Best batch check ("50+ steps/epoch", on) keeps a fixed-epoch run's best
// batch to those that make enough steps an epoch; off, any batch may be best; to a
// target it has no say (the epochs law weighs every batch).
func TestMinStepsCheck(t *testing.T) {
	newTestApp(t)
	s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	p := NewSelectionPanel(s, fakeMachines, nil, func(error) {}, nil)
	c := p.Train
	if !c.MinSteps.Checked || c.MinSteps.Disabled() || s.Settings().Train.AnyBatch {
		t.Fatalf("starts checked %t, disabled %t, any batch %t; want on and enabled", c.MinSteps.Checked, c.MinSteps.Disabled(), s.Settings().Train.AnyBatch)
	}
	c.MinSteps.SetChecked(false)
	if !s.Settings().Train.AnyBatch {
		t.Error("unchecking it did not reach the session")
	}
	c.Mode.SetSelected(trainToTarget)
	if !c.MinSteps.Disabled() {
		t.Error("to a target the check stays enabled")
	}
	c.Mode.SetSelected(trainForEpochs)
	if c.MinSteps.Disabled() || !s.Settings().Train.AnyBatch {
		t.Errorf("back to epochs: disabled %t, any batch %t; want enabled and still any", c.MinSteps.Disabled(), s.Settings().Train.AnyBatch)
	}
	// The label is short: the selection panel keeps its width (a longer one pushed
	// the charts and tabs 65 px right, off the end-to-end tests' points).
	if w := c.MinSteps.MinSize().Width; w > 170 {
		t.Errorf("the check is %.0f px wide; want at most 170 so the panel keeps its width", w)
	}
}

// Instances is disabled while only this computer's devices are selected: no instance
// count multiplies them.
func TestInstancesDisabledForLocalDevices(t *testing.T) {
	newTestApp(t)
	s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	p := NewSelectionPanel(s, fakeMachines, nil, func(error) {}, nil)
	tests := []struct {
		machines []string
		disabled bool
	}{
		{[]string{"local/cpu"}, true},
		{[]string{"local/cpu", "user/workstation"}, true},
		{[]string{"local/cpu", "aws/p3.2xlarge"}, false},
		{nil, false},
	}
	for _, tc := range tests {
		p.showNodes(tc.machines)
		if p.Nodes.Disabled() != tc.disabled {
			t.Errorf("%v: Instances disabled %t, want %t", tc.machines, p.Nodes.Disabled(), tc.disabled)
		}
	}
}
