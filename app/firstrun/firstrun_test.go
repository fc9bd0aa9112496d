package firstrun

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/db"
	"cnntime/gpu"
	"cnntime/gpu/cpu"
	"cnntime/gpu/libfind"
	"cnntime/gpu/selftest"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// stand-in GPU: an A100 by name whose kernels take a time that grows with their output
// (tests have no GPU; the run's orchestration is what is tested).
var fakeA100 = measure.Device{Key: "cuda:GPU-f1r57", Backend: "cuda", Name: "NVIDIA A100-SXM4-80GB", UUID: "GPU-f1r57",
	ComputeCapability: "8.0", SMs: 108, MemoryBytes: 80 << 30, ClockMHz: 1410, CUDA: "12.4", CuDNN: "9.1.0", Driver: "550.54.15"}

type fakeGPU struct{ gpu.Backend }

func (f fakeGPU) Device() measure.Device { return fakeA100 }

// SetLayout takes channels_last: the stand-in measures the same either way.
func (f fakeGPU) SetLayout(string) error { return nil }

func (f fakeGPU) TimeLayer(ctx context.Context, c cnn.Config, batch int, ph measure.Phase, prec measure.Precision, pol measure.Policy, repeats int) (measure.Measurement, error) {
	ms := 0.002 + float64(int64(batch)*c.Out.Elems())/2e6
	return measure.Measurement{DeviceKey: fakeA100.Key, ConfigKey: c.Key(), Batch: batch, Precision: prec, Phase: ph, Policy: pol,
		Algorithm: "CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM", MedianMS: ms, Repeats: repeats, Status: measure.OK, At: time.Now().UTC()}, nil
}

// fakeMachine has a worker, a trusted self-test, the stand-in GPU and a PyTorch whose
// layers all take pytorchMS and whose resnet18 step at batch 2 takes stepMS.
func fakeMachine(pytorch error) Machine {
	const pytorchMS, stepMS = 0.25, 40.0
	return Machine{
		Libraries: func() []libfind.Candidate {
			return []libfind.Candidate{{Library: "cuDNN", Source: libfind.FromVirtualEnv, Path: "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9", Verdict: libfind.Load, Why: "the activated virtual environment"},
				{Library: "cuBLAS", Source: libfind.FromLoader, Path: "libcublas.so.12", Verdict: libfind.Load, Why: "the loader's cache"},
				{Library: "NVRTC", Source: libfind.FromLoader, Path: "libnvrtc.so.12", Verdict: libfind.Load, Why: "the loader's cache"},
				{Library: "NVML", Source: libfind.FromLoader, Path: "libnvidia-ml.so.1", Verdict: libfind.Load, Why: "the loader's cache"}}
		},
		NVIDIA:     func() (bool, bool) { return true, true },
		FindWorker: func() (string, error) { return "/opt/cnntime/cnntime-gpu", nil },
		SelfTest: func(ctx context.Context, worker string, device int) (selftest.Report, error) {
			var rows []selftest.Row
			for _, k := range []cnn.Op{cnn.OpConv2d, cnn.OpLinear, cnn.OpBatchNorm, cnn.OpReLU} {
				rows = append(rows, selftest.Row{Layer: string(k), Kind: k, Precision: measure.FP32, Phase: measure.Forward, Verdict: selftest.Pass, MS: 0.01})
			}
			return selftest.Report{Device: fakeA100, Versions: selftest.Versions{Driver: "550.54.15", CUDA: "12.4", CuDNN: "9.1.0", CuBLAS: "12.4.5",
				NVRTC: "12.4", Paths: map[string]string{"cuDNN": "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"}},
				Rows: rows, Sweep: selftest.Sweep{Items: 3, Measured: 3, Seconds: 1}}, nil
		},
		Sweeper: func(ctx context.Context, worker string, device int, quarantine string) (gpu.Sweeper, error) {
			return gpu.Local{Backend: fakeGPU{cpu.New()}}, nil
		},
		PyTorch: func(ctx context.Context, job PyTorchJob) (string, error) {
			if pytorch != nil {
				return "", pytorch
			}
			layers, err := os.Create(job.LayersCSV)
			if err != nil {
				return "", err
			}
			defer layers.Close()
			w := csv.NewWriter(layers)
			_ = w.Write([]string{"device", "config", "batch_size", "precision", "phase", "policy", "median_ms", "status"})
			for _, model := range job.Models {
				net, err := cnn.Build(model, cnn.Options{Resolution: job.Input})
				if err != nil {
					return "", err
				}
				for _, l := range net.Layers {
					for _, ph := range l.Phases() {
						for _, b := range job.Batches {
							for _, prec := range []measure.Precision{measure.FP32, measure.AMP, measure.TF32} {
								_ = w.Write([]string{fakeA100.Key + measure.PyTorchGPUSuffix, l.Config.Key(), fmt.Sprint(b), string(prec), string(ph), "heuristic", fmt.Sprint(pytorchMS), "ok"})
							}
						}
					}
				}
			}
			w.Flush()
			steps := fmt.Sprintf("gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n%s,resnet18,2,fp32,pytorch 2.5.1,%g,0.1,ok,pytorch_sweep.py on test,2026-11-27T10:00:00Z\n", fakeA100.Key, stepMS)
			return "torch 2.5.1+cu124", errors.Join(w.Error(), os.WriteFile(job.StepsCSV, []byte(steps), 0o644))
		},
		Validate: func(ctx context.Context, d *db.DB) (Validation, error) { // what it sees: the steps PyTorch timed
			steps, err := d.Steps(ctx, db.StepFilter{})
			return Validation{Steps: len(steps), MAPEPct: 12.5, Table: fmt.Sprintf("MAPE 12.5%% over %d steps\n", len(steps))}, err
		},
	}
}

// TestFirstRunEndToEnd runs every check on a stand-in GPU (the CPU backend under an
// A100's name) and a stand-in PyTorch, and reads the report back: the checks in order,
// the versions and library paths, the worker's layers against PyTorch's (each ratio the
// worker's time over PyTorch's 0.25 ms) and PyTorch's step against the predicted one.
func TestFirstRunEndToEnd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "first run")
	o := DefaultOptions(dir)
	o.Models, o.Batches, o.Input, o.Repeats = []string{"resnet18"}, []int{2}, 32, 1
	rep, err := Run(context.Background(), o, fakeMachine(nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name+":"+c.Verdict)
	}
	if got := strings.Join(names, " "); got != "libraries:ok selftest:ok sweep:ok pytorch:ok validate:ok" {
		t.Fatalf("checks %s", got)
	}
	if rep.Verdict != OK || rep.GPU == nil || rep.GPU.Key != fakeA100.Key || rep.Versions.CuBLAS != "12.4.5" {
		t.Errorf("verdict %s (%s), GPU %+v, versions %+v", rep.Verdict, rep.Reason, rep.GPU, rep.Versions)
	}
	if s := rep.Sweep; s == nil || fmt.Sprint(s.Precisions) != "[fp32 amp bf16]" || fmt.Sprint(s.ChannelsLast) != "[amp]" || s.Measured == 0 {
		t.Fatalf("sweep %+v: want fp32 (TF32 convolutions), amp and bf16 (an A100), and amp in channels_last measured", s)
	}
	if len(rep.Layers) == 0 || len(rep.Kinds) == 0 {
		t.Fatalf("no layer compared with PyTorch: %d layers, %d kinds", len(rep.Layers), len(rep.Kinds))
	}
	for _, l := range rep.Layers {
		if l.PyTorchMS != 0.25 || l.Ratio != l.WorkerMS/0.25 {
			t.Fatalf("layer %+v: want PyTorch's 0.25 ms and the worker's time over it", l)
		}
	}
	if len(rep.Steps) != 1 {
		t.Fatalf("steps %+v: want resnet18 at batch 2 in fp32", rep.Steps)
	}
	s := rep.Steps[0]
	if s.MeasuredMS != 40 || !(s.PredictedMS > 0) || s.ErrorPct != 100*(s.PredictedMS-40)/40 || !(s.WorkerLayersMS > 0) || !(s.PyTorchLayerMS > 0) {
		t.Errorf("step %+v", s)
	}
	data, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil || back.Version != ReportVersion || len(back.Layers) != len(rep.Layers) || back.Verdict != OK {
		t.Errorf("first-run.json reads back as %+v, %v", back.Verdict, err)
	}
	text, err := os.ReadFile(filepath.Join(dir, TextFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cnntime first run", ": OK", "driver 550.54.15, CUDA 12.4, cuDNN 9.1.0, cuBLAS 12.4.5", "libcudnn.so.9",
		"the worker's layer times against PyTorch's (torch 2.5.1+cu124)", "conv2d", "whole steps: measured against predicted", "resnet18", "the worker's self-test",
		"cnntime validate --table steps, on the run's cache:\nMAPE 12.5% over 1 steps"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("first-run.txt lacks %q:\n%s", want, text)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cache.db")); err != nil {
		t.Errorf("the run's own cache: %v", err)
	}
}

// TestFirstRunWithoutAGPU: no worker and no NVIDIA GPU on the PCI bus, or a worker that
// finds no usable GPU: the run ends with a NoGPUError and a report saying why.
func TestFirstRunWithoutAGPU(t *testing.T) {
	for _, c := range []struct {
		name string
		m    func(Machine) Machine
		want string
	}{
		{"no worker, no NVIDIA GPU", func(m Machine) Machine {
			m.FindWorker = func() (string, error) {
				return "", fmt.Errorf("%w: cnntime-gpu is not beside cnntime", gpu.ErrNoWorker)
			}
			m.NVIDIA = func() (bool, bool) { return false, true }
			return m
		}, "this computer has no NVIDIA GPU"},
		{"the worker finds none", func(m Machine) Machine {
			m.SelfTest = func(context.Context, string, int) (selftest.Report, error) {
				return selftest.Report{}, fmt.Errorf("%w: the CUDA driver could not start (CUDA_ERROR_NO_DEVICE)", gpu.ErrNoGPU)
			}
			return m
		}, "CUDA_ERROR_NO_DEVICE"},
	} {
		dir := t.TempDir()
		rep, err := Run(context.Background(), DefaultOptions(dir), c.m(fakeMachine(nil)))
		var noGPU *NoGPUError
		if !errors.As(err, &noGPU) || !errors.Is(err, gpu.ErrNoGPU) {
			t.Fatalf("%s: %v, want a NoGPUError", c.name, err)
		}
		if rep.Verdict != NoGPU || !strings.Contains(rep.Reason, c.want) || rep.Sweep != nil || len(rep.Libraries) == 0 {
			t.Errorf("%s: report %s %q, sweep %v, %d library candidates", c.name, rep.Verdict, rep.Reason, rep.Sweep, len(rep.Libraries))
		}
		text, err := os.ReadFile(filepath.Join(dir, TextFile))
		if err != nil || !strings.Contains(string(text), "NO GPU") || !strings.Contains(string(text), c.want) {
			t.Errorf("%s: first-run.txt %q, %v", c.name, text, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "cache.db")); err == nil {
			t.Errorf("%s: a cache was created with nothing to measure", c.name)
		}
	}
}

// TestFirstRunWithoutPyTorch: no PyTorch with CUDA skips its check and the comparisons;
// a skipped check passed nothing, so the run does not pass (the first container runs
// skipped PyTorch and validate and called it ok).
func TestFirstRunWithoutPyTorch(t *testing.T) {
	o := DefaultOptions(t.TempDir())
	o.Models, o.Batches, o.Input, o.Repeats = []string{"resnet18"}, []int{1}, 32, 1
	rep, err := Run(context.Background(), o, fakeMachine(fmt.Errorf("%w: /usr/bin/python3 has no PyTorch with torchvision", ErrNoPyTorch)))
	if err != nil {
		t.Fatal(err)
	}
	c := rep.check("pytorch")
	if c == nil || c.Verdict != Skipped || rep.Verdict != Problem || len(rep.Layers) != 0 || !strings.Contains(rep.Reason, "a check was skipped") || !strings.Contains(rep.Reason, "pytorch: ") {
		t.Errorf("pytorch check %+v, run %s (%s), %d layers compared", c, rep.Verdict, rep.Reason, len(rep.Layers))
	}
}

// The report is written as every file in a folder the user names: with the user's
// umask (0666 less 002 is 0664; os.WriteFile's 0644 ignored a group-writable umask),
// through a temporary file of its own (a leftover first-run.json.tmp stopped the old
// writer), leaving nothing else in the folder.
func TestReportFilesFollowTheUmask(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, JSONFile+".tmp"), 0o755); err != nil { // a leftover in the way
		t.Fatal(err)
	}
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	rep := &Report{Version: ReportVersion, Dir: dir, Verdict: NoGPU, Reason: "no GPU here"}
	if err := rep.Save(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{JSONFile, TextFile} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o664 {
			t.Errorf("%s: %v, mode %v; want 0664", name, err, st.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %v; want the two report files beside the leftover", names)
	}
}
