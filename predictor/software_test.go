package predictor

import (
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

func TestParseSoftware(t *testing.T) {
	tests := []struct {
		in      string
		name    string
		month   hw.Month
		wantErr string
	}{
		{"", "pytorch-2.11", hw.MonthOf(2026, 3), ""},
		{" Current ", "pytorch-2.11", hw.MonthOf(2026, 3), ""},
		{"pytorch-1.13", "pytorch-1.13", hw.MonthOf(2022, 10), ""},
		{"torch-2.6.0", "pytorch-2.6", hw.MonthOf(2025, 1), ""},
		{"PyTorch-1.7", "pytorch-1.7", hw.MonthOf(2020, 10), ""},
		{"ngc-22.10", "ngc-22.10", hw.MonthOf(2022, 10), ""},
		{"NGC-20.06", "ngc-20.06", hw.MonthOf(2020, 6), ""},
		{"2017-11", "2017-11", hw.MonthOf(2017, 11), ""},
		{"pytorch-0.4", "", 0, "cnntime knows PyTorch 1.0 to 2.11"},
		{"ngc-22.13", "", 0, "ngc-YY.MM"},
		{"ngc-30.01", "", 0, "after the newest release cnntime knows (pytorch-2.11, 2026-03)"},
		{"2010-01", "", 0, "before the oldest GPU architecture cnntime dates (2012-11)"},
		{"cuda-12", "", 0, "pytorch-X.Y"},
		{"2020-13", "", 0, "pytorch-X.Y"},
	}
	for _, tc := range tests {
		got, err := ParseSoftware(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseSoftware(%q) = %+v, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Name != tc.name || got.Month != tc.month || got.Note == "" {
			t.Errorf("ParseSoftware(%q) = %+v, %v; want %s of %s with a note", tc.in, got, err, tc.name, tc.month)
		}
	}
}

func TestSoftwareAndFramework(t *testing.T) {
	tests := []struct {
		software string
		def      Framework
		refused  []Framework
		allowed  []Framework
	}{
		{"pytorch-1.13", PyTorch1, []Framework{PyTorch2, "", Compiled, CompiledGraphs}, []Framework{PyTorch1, Graph, Optimized}},
		{"pytorch-2.4", PyTorch2, nil, []Framework{PyTorch1, PyTorch2, Compiled, CompiledGraphs, Graph, Optimized}},
		{"ngc-20.10", PyTorch2, nil, []Framework{PyTorch1, PyTorch2, Compiled, Graph}},
		{"current", PyTorch2, nil, []Framework{PyTorch1, PyTorch2, Compiled}},
	}
	for _, tc := range tests {
		s, err := ParseSoftware(tc.software)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.DefaultFramework(); got != tc.def {
			t.Errorf("%s: default framework %s, want %s", tc.software, got, tc.def)
		}
		for _, f := range tc.refused {
			if err := s.CheckFramework(f); err == nil {
				t.Errorf("%s runs %q: want it refused", tc.software, f)
			}
		}
		for _, f := range tc.allowed {
			if err := s.CheckFramework(f); err != nil {
				t.Errorf("%s refuses %q: %v", tc.software, f, err)
			}
		}
	}
}

// TestSoftwareSetsTheKernelsMaturity predicts the same ResNet-50 step on a young and an
// old GPU with libraries released at the young one's launch and two years later: only
// the young GPU's step moves, by the calibration's maturity of its architecture, and a
// request for each release gets its own step table.
func TestSoftwareSetsTheKernelsMaturity(t *testing.T) {
	cal := kernels.PriorCalibration()
	cal.MaturityDeficit, cal.MaturityMonths = 0.3, 8
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	net, err := cnn.Build("resnet50", cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h100 := hw.GPU{ID: "h100", ComputeCapability: "9.0", SMs: 132, BoostClockMHz: 1980, FP32TFLOPS: 67, TF32TFLOPS: 494.7,
		FP16TFLOPS: 989.4, MemoryGB: 80, MemoryBandwidthGBs: 3350}
	v100 := hw.GPU{ID: "v100", ComputeCapability: "7.0", SMs: 80, BoostClockMHz: 1530, FP32TFLOPS: 15.7, FP16TFLOPS: 125,
		MemoryGB: 16, MemoryBandwidthGBs: 900}
	e := NewEngine(kernels.NewModel(cal, nil, nil, nil), DefaultOverheads, DefaultMemoryModel)
	gpuMS := func(g hw.GPU, software string) (float64, Curve) {
		s, err := ParseSoftware(software)
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Curve(Request{Network: net, GPU: g, Machine: hw.Machine{ID: g.ID, GPUCount: 1}, Precision: measure.AMP,
			Batches: []int{256}, Run: Run{Epochs: 1, Images: 256}, Framework: Graph, Software: s})
		if err != nil {
			t.Fatal(err)
		}
		return c.Points[0].IterMS, c
	}
	young, c := gpuMS(h100, "ngc-22.10")
	mature, _ := gpuMS(h100, "ngc-24.10")
	if c.Software.Name != "ngc-22.10" {
		t.Errorf("the curve names software %q, want ngc-22.10", c.Software.Name)
	}
	if !(young > 1.1*mature) {
		t.Errorf("H100 on ngc-22.10 (its launch) %.2f ms, on ngc-24.10 %.2f ms: want the launch's libraries well over 10%% slower", young, mature)
	}
	oldYoung, _ := gpuMS(v100, "ngc-22.10")
	oldMature, _ := gpuMS(v100, "ngc-24.10")
	if d := oldYoung/oldMature - 1; d > 1e-4 || d < -1e-4 {
		t.Errorf("V100 (five years old in 2022): %.3f ms on ngc-22.10, %.3f ms on ngc-24.10; want the same", oldYoung, oldMature)
	}
	if _, c := gpuMS(h100, ""); c.Software.Name != CurrentSoftware.Name {
		t.Errorf("a request with no software is predicted for %q, want the current release %q", c.Software.Name, CurrentSoftware.Name)
	}
}

func TestRequestRefusesSoftwareItCannotRun(t *testing.T) {
	net, err := cnn.Build("resnet18", cnn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ParseSoftware("pytorch-1.12")
	req := Request{Network: net, GPU: hw.GPU{ID: "g"}, Precision: measure.FP32, Batches: []int{8}, Run: Run{Epochs: 1, Images: 8},
		Framework: Compiled, Software: s}
	if err := req.Check(); err == nil || !strings.Contains(err.Error(), "torch.compile") {
		t.Errorf("compiled on PyTorch 1.12: %v; want an error naming torch.compile", err)
	}
	req.Software = Software{Name: "2040-01", Month: hw.MonthOf(2040, 1)}
	req.Framework = PyTorch2
	if err := req.Check(); err == nil || !strings.Contains(err.Error(), "after the newest release") {
		t.Errorf("software from 2040: %v; want refused", err)
	}
}
