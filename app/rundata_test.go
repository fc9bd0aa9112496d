package app

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"cnntime/predictor"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

// TestRunDataShapesThePrediction predicts the cases with the default run data
// (ImageNet-1k through a PyTorch DataLoader, NCHW) and checks what each curve says.
func TestRunDataShapesThePrediction(t *testing.T) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	target := func(id string) Target {
		var tg Target
		var err error
		if strings.Contains(id, "/") {
			tg, err = eng.MachineTarget(id)
		} else {
			tg, err = eng.GPUTarget(id)
		}
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	perWorker := 1000 / (pipeline.PerImageOverheadMS + 1000/pipeline.WorkerImagesPerS)
	for _, tc := range []struct {
		name      string
		model     string
		target    string
		data      RunData
		prec      measure.Precision
		batch     int
		input     int
		loader    pipeline.Loader
		workers   int
		rate      float64 // loader images/s over the machine; 0: synthetic
		bound     string
		wantImgs  int
		formatOut predictor.MemoryFormat
	}{
		{"efficientnet_b4 at its 380 px", "efficientnet_b4", "a100-sxm4-80gb", DefaultRunData(), measure.FP32, 64, 380, pipeline.PyTorch, 8,
			8 * 1000 / (0.1 + 0.8/pipeline.WorkerImagesPerS*1000 + 0.2/pipeline.WorkerImagesPerS*1000*380*380/(224*224)), "gpu", 1281167, predictor.NCHW},
		{"resnet50 on 4 vCPUs", "resnet50", "aws/g4dn.xlarge", DefaultRunData(), measure.AMP, 256, 224, pipeline.PyTorch, 3, 3.5 / 3.2 * 2.5 * 3 / 4 * perWorker, "input", 1281167, predictor.NCHW},
		{"resnet50 on p4d: 11 workers per GPU", "resnet50", "aws/p4d.24xlarge", DefaultRunData(), measure.AMP, 2048, 224, pipeline.PyTorch, 11, 3.6 / 3.2 * 8 * 7.5 * 11 / 12 * perWorker, "input", 1281167, predictor.NCHW},
		{"cifar-10 at 32 px", "resnet18", "aws/g4dn.xlarge", RunData{Dataset: "cifar-10", Loader: "pytorch", MemoryFormat: "nchw"}, measure.FP32, 128, 32, pipeline.PyTorch, 3,
			3.5 / 3.2 * 2.5 * 3 / 4 * 1000 / (0.1 + 0.2/pipeline.WorkerImagesPerS*1000*1024/50176), "gpu", 50000, predictor.NCHW},
		{"synthetic benchmark", "resnet50", "a100-sxm4-80gb", RunData{}, measure.AMP, 256, 224, pipeline.Synthetic, 0, 0, "gpu", 0, ""},
		{"an input override", "resnet50", "a100-sxm4-80gb", RunData{Dataset: "imagenet-1k", Input: 160, Loader: "synthetic", MemoryFormat: "nhwc"}, measure.AMP, 256, 160, pipeline.Synthetic, 0, 0, "gpu", 1281167, predictor.NHWC},
	} {
		images := tc.data.Images()
		if images != tc.wantImgs {
			t.Errorf("%s: Images() = %d, want %d", tc.name, images, tc.wantImgs)
		}
		if images == 0 {
			images = 1281167
		}
		curves, err := eng.Curves(context.Background(), Query{Models: []string{tc.model}, Targets: []Target{target(tc.target)},
			Batches: []int{tc.batch}, Precision: tc.prec, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: images}, Data: tc.data})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		c := curves[0]
		p := c.Points[0]
		if c.Input != tc.input || c.Loader != tc.loader || c.Workers != tc.workers || math.Abs(c.LoaderImagesPerS-tc.rate) > 1e-6*math.Max(1, tc.rate) || c.Format != tc.formatOut {
			t.Errorf("%s: input %d, loader %s × %d at %.2f images/s, format %q; want %d, %s × %d at %.2f, %q",
				tc.name, c.Input, c.Loader, c.Workers, c.LoaderImagesPerS, c.Format, tc.input, tc.loader, tc.workers, tc.rate, tc.formatOut)
		}
		if p.Bound != tc.bound {
			t.Errorf("%s: bound %q at %.0f images/s, want %q", tc.name, p.Bound, p.ImagesPerS, tc.bound)
		}
		// An input-bound step over N GPUs waits, as every step does, for the slowest
		// worker: StepJitter × sqrt(2 ln N) of the step more.
		want := tc.rate
		if n := float64(c.GPUCount); n > 1 {
			want /= 1 + predictor.DefaultOverheads.StepJitter*math.Sqrt(2*math.Log(n))
		}
		if tc.bound == "input" && math.Abs(p.ImagesPerS-want)/want > 0.02 {
			t.Errorf("%s: input-bound at %.1f images/s, want the loader's %.1f less the stragglers' wait: %.1f", tc.name, p.ImagesPerS, tc.rate, want)
		}
	}
}

func TestRunDataRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		d    RunData
		want string
	}{
		{RunData{Dataset: "mnist"}, "unknown dataset"},
		{RunData{Input: -4}, "input size -4"},
		{RunData{Classes: -1}, "classes -1"},
		{RunData{Loader: "webdataset"}, "unknown loader"}, {RunData{Script: "keras"}, "unknown script"},
		{RunData{Workers: -2}, "workers -2"},
		{RunData{MemoryFormat: "chwn"}, "unknown memory format"},
	} {
		if err := tc.d.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%+v) = %v, want an error with %q", tc.d, err, tc.want)
		}
	}
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := eng.GPUTarget("v100-sxm2-16gb")
	_, err = eng.Curves(context.Background(), Query{Models: []string{"resnet18"}, Targets: []Target{tg}, Batches: []int{64},
		Precision: measure.FP32, Run: predictor.Run{Epochs: 1, Images: 50000}, Data: RunData{Dataset: "cifar-10", Loader: "dali"}})
	if err == nil || !strings.Contains(err.Error(), "held in memory") {
		t.Errorf("dali on cifar-10: %v, want a refusal", err)
	}
}

// TestSessionRemembersRunData saves the run data to the preferences and reads it back,
// and refuses a bad setting without changing anything.
func TestSessionRemembersRunData(t *testing.T) {
	prefs := &mapPrefs{}
	s := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	if got := s.Settings().Data; got != DefaultRunData() {
		t.Errorf("a fresh session's run data = %+v, want the CLI's default %+v", got, DefaultRunData())
	}
	want := RunData{Dataset: "cifar-100", Input: 64, Loader: "dali", Workers: 5, MemoryFormat: "nhwc", Script: "lean", Framework: "pytorch1"}
	if err := s.Update(func(st *SessionSettings) { st.Data = want }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(st *SessionSettings) { st.Data.Loader = "webdataset" }); err == nil {
		t.Error("the session accepted the loader webdataset")
	}
	if err := s.Update(func(st *SessionSettings) { st.Data.Framework = "jax" }); err == nil {
		t.Error("the session accepted the framework jax")
	}
	s.Close()
	again := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	defer again.Close()
	if got := again.Settings().Data; got != want {
		t.Errorf("remembered run data = %+v, want %+v", got, want)
	}
}
