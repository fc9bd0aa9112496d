package app

import (
	"context"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/convergence"
)

func TestTrainingEpochsModel(t *testing.T) {
	imagenet := DefaultRunData()
	cifar100 := RunData{Dataset: "cifar-100"}
	for _, tc := range []struct {
		name    string
		tr      Training
		d       RunData
		want    string // the model's name; "" for none
		wantErr string
	}{
		{"fixed epochs", Training{}, imagenet, "", ""},
		{"fixed, explicit", Training{Mode: TrainEpochs}, cifar100, "", ""},
		{"imagenet preset", Training{Mode: TrainToTarget}, imagenet, "imagenet-1k", ""},
		{"cifar-10 preset", Training{Mode: TrainToTarget}, RunData{Dataset: "cifar-10"}, "cifar-10", ""},
		{"no preset", Training{Mode: TrainToTarget}, cifar100, "", "on cifar-100: no published epochs-to-target figures"},
		{"synthetic data", Training{Mode: TrainToTarget}, RunData{}, "", "on synthetic data"},
		{"custom on cifar-100", Training{Mode: TrainToTarget, Custom: convergence.Custom{Epochs: 200, Batch: 128, Like: "cifar-10"}}, cifar100, "custom", ""},
		{"custom figures in fixed mode", Training{Custom: convergence.Custom{Epochs: 200, Batch: 128, Like: "cifar-10"}}, cifar100, "", "train to-target"},
		{"bad custom", Training{Mode: TrainToTarget, Custom: convergence.Custom{Epochs: 200, Batch: 0, CriticalBatch: 10}}, cifar100, "", "reference batch 0"},
	} {
		m, err := tc.tr.EpochsModel(tc.d)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && m != nil, tc.want != "" && (m == nil || m.Name != tc.want):
			t.Errorf("%s: model %+v, want %q", tc.name, m, tc.want)
		}
	}
	for _, s := range []string{"", "epochs", "to-target", "TO-TARGET"} {
		if _, err := ParseTrainMode(s); err != nil {
			t.Errorf("ParseTrainMode(%q): %v", s, err)
		}
	}
	if _, err := ParseTrainMode("forever"); err == nil {
		t.Error("ParseTrainMode(forever) is not an error")
	}
}

func TestCapToImages(t *testing.T) {
	for _, tc := range []struct {
		batches []int
		images  int
		span    bool
		want    []int
		wantErr bool
	}{
		{[]int{1, 2, 3}, 0, false, []int{1, 2, 3}, false},
		{[]int{1, 50000, 60000}, 50000, false, []int{1, 50000}, false},
		{[]int{1, 49152, 51200}, 50000, true, []int{1, 49152, 50000}, false},
		{[]int{1, 49152, 51200}, 50000, false, []int{1, 49152}, false},
		{[]int{60000}, 50000, false, nil, true},
	} {
		got, err := capToImages(tc.batches, tc.images, tc.span)
		if (err != nil) != tc.wantErr || (!tc.wantErr && !equalInts(got, tc.want)) {
			t.Errorf("capToImages(%v, %d, %t) = %v, %v; want %v", tc.batches, tc.images, tc.span, got, err, tc.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCurvesStopAtTheDataset checks the window's query (a span up to memory) on CIFAR:
// every curve stops at 50,000 images, in both modes.
func TestCurvesStopAtTheDataset(t *testing.T) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	target, err := eng.MachineTarget("aws/p4d.24xlarge")
	if err != nil {
		t.Fatal(err)
	}
	m, _ := convergence.Preset("cifar-10")
	for _, run := range []predictor.Run{{Epochs: 90, Images: 50000}, {Images: 50000, ToTarget: &m}} {
		cs, err := eng.Curves(context.Background(), Query{Models: []string{"resnet50"}, Targets: []Target{target}, Span: BatchSpan{Min: 1},
			Precision: "fp32", Policy: "heuristic", Run: run, Data: RunData{Dataset: "cifar-10", Loader: "pytorch"}})
		if err != nil {
			t.Fatal(err)
		}
		pts := cs[0].Points
		if last := pts[len(pts)-1].Batch; last != 50000 {
			t.Errorf("%s: the curve ends at batch %d, want 50,000 (the images of an epoch)", run.EpochsSource(), last)
		}
		if b := pts[cs[0].Best].Batch; b > 50000 {
			t.Errorf("%s: best batch %d", run.EpochsSource(), b)
		}
	}
}
