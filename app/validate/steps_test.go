package validate

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// TestStepsFromLayerMeasurements puts a CPU device's layer measurements of
// resnet18 at 32×32 (every phase 0.5 ms) and its measured steps into a cache, and a step
// on a device without layer measurements: the first are predicted at the input the
// measurements cover, with the error from the prediction; the other is named as skipped.
func TestStepsFromLayerMeasurements(t *testing.T) {
	ctx := context.Background()
	dev := measure.Device{Key: "cpu:test:Some CPU", Backend: "cpu", Name: "Some CPU", SMs: 2}
	d := newCache(t, dev)
	net := smallNet(t, "resnet18")
	seen := map[string]bool{}
	var ms []measure.Measurement
	for i := range net.Layers {
		key := net.Layers[i].Config.Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		if err := d.PutConfig(ctx, key, ""); err != nil {
			t.Fatal(err)
		}
		for _, b := range []int{2, 4} {
			for _, ph := range measure.Phases {
				ms = append(ms, measure.Measurement{DeviceKey: dev.Key, ConfigKey: key, Batch: b, Precision: measure.FP32,
					Phase: ph, Policy: measure.NoPolicy, MedianMS: 0.5, Repeats: 3, Status: measure.OK, At: measuredAt})
			}
		}
	}
	if err := d.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	steps := []measure.Step{
		{DeviceKey: dev.Key, Model: "resnet18", Batch: 2, Precision: measure.FP32, Framework: "cnntime-cpu", Source: "test", MedianMS: 40, Status: measure.OK, At: measuredAt},
		{DeviceKey: dev.Key, Model: "resnet18", Batch: 4, Precision: measure.FP32, Framework: "cnntime-cpu", Source: "test", MedianMS: 80, Status: measure.OK, At: measuredAt},
		{DeviceKey: "cpu:other:CPU:pytorch-2-threads", Model: "resnet18", Batch: 2, Precision: measure.FP32, Framework: "pytorch 1.13", Source: "test", MedianMS: 30, Status: measure.OK, At: measuredAt},
	}
	if err := d.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	v := stepsOf(t, d)
	if len(v.Rows) != 2 {
		t.Fatalf("rows = %+v, want resnet18 at batches 2 and 4", v.Rows)
	}
	var mape float64
	for i, want := range []struct {
		batch    int
		measured float64
	}{{2, 40}, {4, 80}} {
		r := v.Rows[i]
		if r.Device != dev.Key || r.Model != "resnet18" || r.Batch != want.batch || r.Input != 32 || r.MeasuredMS != want.measured || r.Framework != "cnntime-cpu" {
			t.Errorf("row %d = %+v, want resnet18 batch %d at 32×32 measured %v ms", i, r, want.batch, want.measured)
		}
		// Every layer has its forward and backward phases at 0.5 ms: at least 1 ms a layer configuration.
		if r.PredictedMS < float64(len(seen)) {
			t.Errorf("row %d predicted %v ms, want at least %d", i, r.PredictedMS, len(seen))
		}
		if e := 100 * (r.PredictedMS - r.MeasuredMS) / r.MeasuredMS; math.Abs(e-r.ErrorPct) > 1e-9 {
			t.Errorf("row %d error %v%%, want %v%%", i, r.ErrorPct, e)
		}
		mape += math.Abs(r.ErrorPct) / 2
	}
	if math.Abs(mape-v.MAPEPct) > 1e-9 {
		t.Errorf("mape_pct = %v, want %v", v.MAPEPct, mape)
	}
	if len(v.Skipped) != 1 || !strings.Contains(v.Skipped[0], "cpu:other:CPU:pytorch-2-threads") {
		t.Errorf("skipped = %q, want the step of the device without layer measurements", v.Skipped)
	}
}

// TestStepsComposesPyTorchCPUWithItsKernels: a CPU that PyTorch measured
// (scripts/pytorch_sweep.py --layers) has only the phases PyTorch runs (no view, batch
// norm's one backward, no gradient for the image or through an add), and its step is
// composed of exactly those: every phase at 0.5 ms gives 0.5 ms × PyTorch's kernels.
func TestStepsComposesPyTorchCPUWithItsKernels(t *testing.T) {
	ctx := context.Background()
	d := newCache(t)
	key := "cpu:test:Some CPU:pytorch-2-threads"
	net := smallNet(t, "mobilenet_v2")
	kernels, everyPhase := 0, 0
	timed := map[string]bool{}
	var ms []measure.Measurement
	for i := range net.Layers {
		l := &net.Layers[i]
		kernels += len(l.Phases())
		everyPhase += len(predictor.EveryPhaseKernels.Phases(l))
		for _, ph := range l.Phases() {
			k := l.Config.Key() + "/" + string(ph)
			if timed[k] {
				continue
			}
			timed[k] = true
			ms = append(ms, measure.Measurement{DeviceKey: key, ConfigKey: l.Config.Key(), Batch: 4, Precision: measure.FP32,
				Phase: ph, MedianMS: 0.5, Repeats: 3, Status: measure.OK, At: measuredAt})
		}
	}
	if err := d.PutMeasurements(ctx, ms); err != nil { // the device is known by its key alone, as a bare CSV import leaves it
		t.Fatal(err)
	}
	if err := d.PutSteps(ctx, []measure.Step{{DeviceKey: key, Model: "mobilenet_v2", Batch: 4, Precision: measure.FP32,
		Framework: "pytorch 1.13.0 cpu 2 threads", Source: "test", MedianMS: 100, Status: measure.OK, At: measuredAt}}); err != nil {
		t.Fatal(err)
	}
	v := stepsOf(t, d)
	if len(v.Rows) != 1 || len(v.Skipped) != 0 {
		t.Fatalf("rows %+v, skipped %q; want mobilenet_v2 at batch 4", v.Rows, v.Skipped)
	}
	if want := 0.5 * float64(kernels); math.Abs(v.Rows[0].PredictedMS-want) > 1e-9*want || kernels == everyPhase {
		t.Errorf("predicted %v ms, want 0.5 ms × %d PyTorch kernels = %v ms (the Go backend's rule runs %d)", v.Rows[0].PredictedMS, kernels, want, everyPhase)
	}
	if v.Rows[0].Input != 32 || v.Rows[0].Framework != "pytorch 1.13.0 cpu 2 threads" {
		t.Errorf("row %+v, want input 32 and the step's framework", v.Rows[0])
	}
}

func TestLoadAverageOfAStepsSource(t *testing.T) {
	tests := []struct{ source, want string }{
		{"pytorch_sweep.py on vm (AMD EPYC, pytorch 1.13.0a0 cpu 1 threads, input 32, CPU time, load average 1.34-1.92)", "1.34-1.92"},
		{"pytorch_sweep.py on vm (input 32, load average 7)", "7"},
		{"cnntime sweep, load 2.5", "2.5"},
		{"pytorch_sweep.py on vm (AMD EPYC, input 32, CPU time)", ""},
		{"downloaded from a workload 3 server", ""},
	}
	for _, tt := range tests {
		if got := loadAverageOf(tt.source); got != tt.want {
			t.Errorf("loadAverageOf(%q) = %q, want %q", tt.source, got, tt.want)
		}
	}
}

// TestStepsComposesMeasuredGPUSteps: a cache holding a CUDA GPU's step rows (cnntime's
// worker's at fp32 and amp, PyTorch's at fp32) and its layer rows (the worker's under the
// GPU's key, PyTorch's under its ":pytorch" key, each phase PyTorch runs at the layer's
// kernel precision): every step is predicted with the GPU step model on the catalog's
// T4, from the layer rows of the framework that ran it, none is "not covered". The CPU's
// rule (every phase of every layer, views included, FP32 alone) covered none of them.
func TestStepsComposesMeasuredGPUSteps(t *testing.T) {
	ctx := context.Background()
	dev := measure.Device{Key: "cuda:GPU-0123", Backend: "cuda", Name: "Tesla T4", UUID: "GPU-0123", GPUID: "t4",
		ComputeCapability: "7.5", SMs: 40, MemoryBytes: 16 << 30}
	d := newCache(t, dev)
	net := smallNet(t, "resnet18")
	cat, err := app.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	t4, err := cat.GPU("t4")
	if err != nil {
		t.Fatal(err)
	}
	kernelCount := 0
	for i := range net.Layers {
		kernelCount += len(net.Layers[i].Phases())
	}
	var ms []measure.Measurement
	seen := map[string]bool{}
	for i := range net.Layers {
		l := &net.Layers[i]
		for _, prec := range []measure.Precision{measure.FP32, measure.AMP} {
			kp := predictor.KernelPrecision(prec, l.Config.Op, t4)
			for _, ph := range l.Phases() {
				for _, rows := range []struct {
					key string
					ms  float64
				}{{dev.Key, 0.5}, {dev.Key + measure.PyTorchGPUSuffix, 1.0}} {
					k := rows.key + l.Config.Key() + string(kp) + string(ph)
					if seen[k] {
						continue
					}
					seen[k] = true
					for _, b := range []int{8, 16} {
						ms = append(ms, measure.Measurement{DeviceKey: rows.key, ConfigKey: l.Config.Key(), Batch: b, Precision: kp,
							Phase: ph, Policy: measure.Heuristic, MedianMS: rows.ms, Repeats: 3, Status: measure.OK, At: measuredAt})
					}
				}
			}
		}
	}
	if err := d.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	step := func(framework string, prec measure.Precision, batch int, ms float64) measure.Step {
		return measure.Step{DeviceKey: dev.Key, Model: "resnet18", Batch: batch, Precision: prec, Framework: framework,
			Source: "first run", MedianMS: ms, Status: measure.OK, At: measuredAt}
	}
	if err := d.PutSteps(ctx, []measure.Step{
		step("cnntime-cuda", measure.FP32, 8, 60), step("cnntime-cuda", measure.FP32, 16, 70),
		step("cnntime-cuda", measure.AMP, 8, 50), step("cnntime-cuda", measure.AMP, 16, 55),
		step("pytorch 2.5.1", measure.FP32, 8, 120), step("pytorch 2.5.1", measure.FP32, 16, 130),
	}); err != nil {
		t.Fatal(err)
	}
	v := stepsOf(t, d)
	if len(v.Rows) != 6 || len(v.Skipped) != 0 {
		t.Fatalf("rows %+v, skipped %q; want all six GPU steps predicted", v.Rows, v.Skipped)
	}
	predicted := map[string]float64{}
	for _, r := range v.Rows {
		key := fmt.Sprintf("%s %s %d", r.Framework, r.Precision, r.Batch)
		predicted[key] = r.PredictedMS
		perKernel := 0.5
		if strings.HasPrefix(r.Framework, "pytorch") {
			perKernel = 1.0
		}
		// The step is at least its kernels, one after another, and the step model adds
		// the host's launches, the optimizer and the loss, not a multiple of them.
		if sum := perKernel * float64(kernelCount); r.PredictedMS < sum || r.PredictedMS > 2*sum || r.Input != 32 || r.Device != dev.Key {
			t.Errorf("%s: predicted %v ms at input %d on %s; want from the %d kernels' %v ms up to twice that, at 32 px", key, r.PredictedMS, r.Input, r.Device, kernelCount, sum)
		}
		if e := 100 * (r.PredictedMS - r.MeasuredMS) / r.MeasuredMS; math.Abs(e-r.ErrorPct) > 1e-9 {
			t.Errorf("%s: error %v%%, want %v%%", key, r.ErrorPct, e)
		}
	}
	if w, p := predicted["cnntime-cuda fp32 8"], predicted["pytorch 2.5.1 fp32 8"]; !(p > 1.8*w) {
		t.Errorf("PyTorch's step at batch 8 predicted %v ms, the worker's %v ms: want PyTorch's from its own (twice as slow) layer rows", p, w)
	}
	var table strings.Builder
	if err := WriteStepsTable(&table, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "PRECISION") || !strings.Contains(table.String(), "amp") || strings.Contains(table.String(), "not predicted") {
		t.Errorf("the table:\n%s", table.String())
	}
}

// TestStepsOnARealH200Cache runs the steps table on the cache that `cnntime devices
// --first-run` wrote on an NVIDIA H200 (driver 580.159.04, CUDA 13.0, cuDNN 9.19,
// PyTorch 2.11.0+cu130; 2026-11-27): the worker's and PyTorch's layer rows of resnet18
// and mobilenet_v2 at batch 16 and 64, and PyTorch's eight measured steps. Before the
// GPU rule every step there was "not covered" (the CPU rule wanted fp32 convolutions, and
// PyTorch's fp32 runs them in TF32 on Hopper). Each step is composed from PyTorch's own
// layer rows, so it is at least their sum as the first run's report added them
// (pytorch_layers_ms in its first-run.json) and the step model adds the host and the
// optimizer, not a multiple.
func TestStepsOnARealH200Cache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	data, err := os.ReadFile(filepath.Join("testdata", "h200-first-run.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v := stepsOf(t, d)
	const device = "cuda:GPU-df685e46-1c23-da29-bd09-7632e5cd939c"
	// model, batch, precision: PyTorch's measured step and its layers' sum (ms).
	want := map[string]struct{ measured, layers float64 }{
		"mobilenet_v2 16 amp":  {19.5795, 31.823},
		"mobilenet_v2 64 amp":  {31.2023, 42.281},
		"mobilenet_v2 16 fp32": {19.9012, 29.477},
		"mobilenet_v2 64 fp32": {29.3798, 41.511},
		"resnet18 16 amp":      {10.9679, 14.007},
		"resnet18 64 amp":      {14.7098, 17.933},
		"resnet18 16 fp32":     {10.4654, 13.914},
		"resnet18 64 fp32":     {14.5569, 19.328},
	}
	if len(v.Skipped) != 0 || len(v.Rows) != len(want) {
		t.Fatalf("%d rows, skipped %q; want the %d measured steps predicted", len(v.Rows), v.Skipped, len(want))
	}
	for _, r := range v.Rows {
		key := fmt.Sprintf("%s %d %s", r.Model, r.Batch, r.Precision)
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected row %s", key)
			continue
		}
		if r.Device != device || r.Input != 224 || !strings.HasPrefix(r.Framework, "pytorch 2.11.0") || math.Abs(r.MeasuredMS-w.measured) > 1e-3 {
			t.Errorf("%s: %s at %d px by %q measured %v ms; want %s at 224 px by PyTorch 2.11, %v ms", key, r.Device, r.Input, r.Framework, r.MeasuredMS, device, w.measured)
		}
		if r.PredictedMS < w.layers || r.PredictedMS > 1.5*w.layers {
			t.Errorf("%s: predicted %.2f ms; want from PyTorch's layers' %.2f ms up to 1.5 times that", key, r.PredictedMS, w.layers)
		}
	}
}

// stepsOf is the steps table of cache d with the embedded calibration, as cnntime
// validate makes it.
func stepsOf(t *testing.T, d *db.DB) StepsAccuracy {
	t.Helper()
	ctx := context.Background()
	eng, err := app.NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Steps(ctx, d, eng.Kernels().Calibration())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// measuredAt is when the steps tests' rows were measured.
var measuredAt = time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)

// newCache is an empty cache in a temporary folder, closed when the test ends, that
// knows devs.
func newCache(t *testing.T, devs ...measure.Device) *db.DB {
	t.Helper()
	d, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	for _, dev := range devs {
		if err := d.PutDevice(context.Background(), dev); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// smallNet is zoo model name at 32×32 pixels.
func smallNet(t *testing.T, name string) *cnn.Network {
	t.Helper()
	net, err := cnn.Build(name, cnn.Options{Resolution: 32})
	if err != nil {
		t.Fatal(err)
	}
	return net
}
