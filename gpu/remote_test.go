package gpu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/gpu"
	"cnntime/gpu/cpu"
	"cnntime/gpu/cudastatus"
	"cnntime/gpu/protocol"
	"cnntime/gpu/selftest"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// fakeWorkerEnv makes the test binary act as a worker process; its value picks how.
const fakeWorkerEnv = "CNNTIME_TEST_FAKE_WORKER"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeWorkerEnv) {
	case "":
		os.Exit(m.Run())
	case "cpu": // a well-behaved worker serving the CPU backend
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err := gpu.Serve(ctx, cpu.Worker{}, os.Stdin, os.Stdout)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cnntime-gpu:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "crash": // one measurement, then dies as a driver fault would
		dev := cpu.New().Device()
		w := protocol.NewWriter(os.Stdout)
		_ = w.Send(protocol.Message{Type: protocol.Device, Device: &dev})
		m := measure.Measurement{DeviceKey: dev.Key, ConfigKey: "relu:in=1x1x1,out=1x1x1", Batch: 1, Phase: measure.Forward,
			Precision: measure.FP32, Status: measure.OK, MedianMS: 1, Repeats: 1}
		_ = w.Send(protocol.Message{Type: protocol.Measurement, Measurement: &m})
		fmt.Fprintln(os.Stderr, "segmentation fault in the driver")
		os.Exit(3)
	case "hang": // starts an item and never answers again, ignoring interrupts
		signal.Ignore(os.Interrupt)
		if err := gpu.Serve(context.Background(), dyingWorker{hang: true}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "garbage": // a library prints junk on the protocol stream between good lines
		fmt.Println("cuDNN: something went to stdout")
		fmt.Println("{\"not\": \"a message\"}")
		err := gpu.Serve(context.Background(), cpu.Worker{}, os.Stdin, os.Stdout)
		fmt.Println("more junk after the end")
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "nogpu": // what the precheck does on a machine without a GPU
		fmt.Println(`{"type":"error","message":"no usable NVIDIA GPU on this machine: the CUDA driver could not start (CUDA_ERROR_NO_DEVICE)"}`)
		fmt.Fprintln(os.Stderr, "cnntime-gpu: no usable NVIDIA GPU on this machine: the CUDA driver could not start (CUDA_ERROR_NO_DEVICE).")
		os.Exit(3)
	case "selftest": // a worker with a self-test
		if err := gpu.Serve(context.Background(), selfTestWorker{}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "dies-on-batch-2": // the same item kills the worker every time
		if err := gpu.Serve(context.Background(), dyingWorker{}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "fails-on-batch-2", "sticky-on-batch-2", "sticky-from-batch-2": // an item returns an error
		w := failingWorker{sticky: os.Getenv(fakeWorkerEnv) != "fails-on-batch-2", always: os.Getenv(fakeWorkerEnv) == "sticky-from-batch-2"}
		if err := gpu.Serve(context.Background(), w, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "install-on-batch-2": // batch 2 fails as a cuDNN missing a sub-library does
		if err := gpu.Serve(context.Background(), failingWorker{install: true}, os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "chatty": // a library prints to stdout and exits, as gorgonia.org/cu's init does
		fmt.Println("Error in initialization, please refer to the docs: no CUDA-capable device is detected")
		os.Exit(1)
	}
}

// selfTestWorker is the CPU worker with a self-test that compares the CPU reference of
// a linear layer with itself, as the CUDA worker compares its results with it.
type selfTestWorker struct{ cpu.Worker }

func (selfTestWorker) SelfTest(ctx context.Context, index int) (selftest.Report, error) {
	c := cnn.Config{Op: cnn.OpLinear, In: cnn.Shape{C: 4, H: 1, W: 1}, Out: cnn.Shape{C: 3, H: 1, W: 1}, NumInputs: 1, Bias: true}
	ref, err := cpu.NewReference(c, 2, 1)
	if err != nil {
		return selftest.Report{}, err
	}
	e, _ := selftest.Compare(ref.Y, ref.Y, measure.FP32)
	return selftest.Report{
		Device:   cpu.New().Device(),
		Versions: selftest.Versions{Driver: "test"},
		Rows: []selftest.Row{{Layer: c.Key(), Kind: c.Op, Precision: measure.FP32, Phase: measure.Forward, Verdict: selftest.Pass, MaxError: e, Tolerance: selftest.Tolerance(measure.FP32)},
			{Layer: "gelu", Kind: cnn.OpGELU, Precision: measure.AMP, Phase: measure.Forward, Verdict: selftest.Unsupported, Why: "NVRTC is absent"},
			{Layer: "conv2d", Kind: cnn.OpConv2d, Precision: measure.FP32, Phase: measure.Forward, Verdict: selftest.Pass},
			{Layer: "batchnorm2d", Kind: cnn.OpBatchNorm, Precision: measure.FP32, Phase: measure.Forward, Verdict: selftest.Pass}},
		Sweep: selftest.Sweep{Items: 3, Measured: 3, Seconds: 0.5},
	}, nil
}

// dyingWorker is the CPU worker whose backend dies, as a driver fault would, whenever
// it is asked for batch 2.
type dyingWorker struct {
	cpu.Worker
	hang bool // hang instead of dying
}

func (w dyingWorker) Open(index int) (gpu.Backend, error) {
	b, err := w.Worker.Open(index)
	return dyingBackend{b, w.hang}, err
}

type dyingBackend struct {
	gpu.Backend
	hang bool
}

func (b dyingBackend) TimeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error) {
	if b.hang {
		time.Sleep(time.Hour)
	}
	if batch == 2 {
		fmt.Fprintln(os.Stderr, "Segmentation fault (core dumped)")
		os.Exit(139)
	}
	return b.Backend.TimeLayer(ctx, cfg, batch, phase, prec, policy, repeats)
}

// failingWorker is the CPU worker whose backend returns an error for batch 2, as a
// cuDNN EXECUTION_FAILED or a bad parameter would; when sticky, the error is a sticky
// CUDA error, after which every measurement in the process fails as CUDA's would, and
// when always, every item from batch 2 on fails that way.
type failingWorker struct {
	cpu.Worker
	sticky, always, install bool
}

func (w failingWorker) Open(index int) (gpu.Backend, error) {
	b, err := w.Worker.Open(index)
	return &failingBackend{Backend: b, sticky: w.sticky, always: w.always, install: w.install}, err
}

type failingBackend struct {
	gpu.Backend
	sticky, always, broken, install bool
}

func (b *failingBackend) TimeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error) {
	switch {
	case b.broken:
		return measure.Measurement{}, fmt.Errorf("run %s: CUDA_ERROR_ILLEGAL_ADDRESS (an earlier kernel broke the context): %w", cfg.Key(), gpu.ErrSticky)
	case batch == 2 && b.install:
		return measure.Measurement{}, fmt.Errorf("run %s: %w", cfg.Key(), &cudastatus.Error{Lib: "cuDNN", Call: "cudnnConvolutionForward",
			Text: "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", Code: 1008, Category: cudastatus.CuDNN(90600, 1008), Hint: cudastatus.CuDNNHint(90600, 1008)})
	case batch == 2 || (b.always && batch > 2):
		if b.sticky {
			b.broken = true
			return measure.Measurement{}, fmt.Errorf("run %s: CUDA_ERROR_ILLEGAL_ADDRESS: %w", cfg.Key(), gpu.ErrSticky)
		}
		return measure.Measurement{}, fmt.Errorf("run %s: cuDNN cudnnConvolutionForward: CUDNN_STATUS_EXECUTION_FAILED (5000)", cfg.Key())
	}
	return b.Backend.TimeLayer(ctx, cfg, batch, phase, prec, policy, repeats)
}

// fakeWorker points the worker lookup at this test binary in a mode, with a quarantine
// file of the test's own.
func fakeWorker(t *testing.T, mode string) string {
	t.Helper()
	t.Setenv(fakeWorkerEnv, mode)
	t.Setenv(gpu.QuarantineEnv, filepath.Join(t.TempDir(), "quarantine.json"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

func reluItems(n int) []gpu.Item {
	s := cnn.Shape{C: 8, H: 8, W: 8}
	relu := cnn.Config{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1}
	var items []gpu.Item
	for b := 1; b <= n; b++ {
		items = append(items, gpu.Item{Config: relu, Batch: b, Phase: measure.Forward})
	}
	return items
}

func TestRemoteRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := fakeWorker(t, "cpu")
	devs, err := gpu.ListDevices(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].Backend != "cpu" || devs[0].Key != cpu.New().Device().Key {
		t.Fatalf("devices = %+v, want this machine's CPU", devs)
	}
	r, err := gpu.OpenRemote(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	items := reluItems(3)
	items = append(items, gpu.Item{Config: items[0].Config, Batch: 2, Phase: measure.BackwardData})
	var got []measure.Measurement
	err = r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 2, Items: items}, gpu.Sink{
		Measured: func(m measure.Measurement) error { got = append(got, m); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(items) {
		t.Fatalf("got %d measurements, want %d", len(got), len(items))
	}
	for i, m := range got {
		if m.ConfigKey != items[i].Config.Key() || m.Batch != items[i].Batch || m.Phase != items[i].Phase {
			t.Errorf("measurement %d is %s/%d/%s, want item %+v", i, m.ConfigKey, m.Batch, m.Phase, items[i].Key())
		}
		if m.Status != measure.OK || m.MedianMS <= 0 || m.Repeats != 2 || m.DeviceKey != devs[0].Key {
			t.Errorf("measurement %d = %+v", i, m)
		}
	}
	if _, err := gpu.OpenRemote(ctx, path, 4); err == nil || !strings.Contains(err.Error(), "no CUDA device 4") {
		t.Errorf("device 4 of 1: error = %v", err)
	}
}

func TestRemoteFailuresAreErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		mode      string
		index     int
		wantErr   []string
		wantCount int
	}{
		{"crash", 0, []string{"stopped before it finished", "exit status 3", "segmentation fault in the driver"}, 1},
		{"chatty", 0, []string{"stopped before it finished", "not valid JSON"}, 0},
		{"cpu", 2, []string{"CUDA worker: there is no CPU device 2"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			r, err := gpu.OpenRemote(ctx, fakeWorker(t, "cpu"), 0)
			if err != nil {
				t.Fatal(err)
			}
			r.Index = tc.index
			t.Setenv(fakeWorkerEnv, tc.mode) // the same path now behaves as tc.mode
			n := 0
			err = r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(2)}, gpu.Sink{
				Measured: func(measure.Measurement) error { n++; return nil },
			})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n != tc.wantCount {
				t.Errorf("%d measurements arrived before the failure, want %d", n, tc.wantCount)
			}
		})
	}
}

func TestRemoteCancelStopsTheWorker(t *testing.T) {
	r, err := gpu.OpenRemote(context.Background(), fakeWorker(t, "cpu"), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err = r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(5000)}, gpu.Sink{
		Measured: func(measure.Measurement) error {
			n++
			if n == 3 {
				cancel()
			}
			return nil
		},
	})
	if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), "sweep stopped after")) {
		t.Fatalf("error = %v, want the sweep stopped", err)
	}
	// A worker that ignored the interrupt would go on sending all 5000 measurements
	// (the app reads until the worker's output ends); no clock is asserted.
	if n >= 5000 {
		t.Errorf("all %d items ran after cancel", n)
	}
}

func TestFindWorker(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(gpu.WorkerEnv, filepath.Join(dir, "missing"))
	if _, err := gpu.FindWorker(); !errors.Is(err, gpu.ErrNoWorker) {
		t.Errorf("missing $%s: error = %v", gpu.WorkerEnv, err)
	}
	t.Setenv(gpu.WorkerEnv, "")
	t.Setenv("PATH", dir)
	_, err := gpu.FindWorker()
	if !errors.Is(err, gpu.ErrNoWorker) || !strings.Contains(err.Error(), "make gpu-worker") {
		t.Errorf("no worker anywhere: error = %v, want one saying how to build it", err)
	}
	exe := filepath.Join(dir, gpu.WorkerName)
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := gpu.FindWorker(); err != nil || got != exe {
		t.Errorf("worker on PATH: FindWorker = %q, %v; want %q", got, err, exe)
	}
}

func TestServeRejectsBadRequests(t *testing.T) {
	cases := []struct {
		in      string
		wantErr string
	}{
		{"", "no request on stdin"},
		{"{not json\n", "not valid JSON"},
		{`{"type":"dance"}` + "\n", `unknown request type "dance"`},
		{`{"type":"sweep","precision":"fp64","repeats":1}` + "\n", "unknown precision"},
		{`{"type":"sweep","precision":"fp32","repeats":0}` + "\n", "repeats is 0"},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		err := gpu.Serve(context.Background(), cpu.Worker{}, strings.NewReader(tc.in), &out)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Serve(%q) error = %v, want %q", tc.in, err, tc.wantErr)
		}
		if !strings.Contains(out.String(), `"type":"error"`) {
			t.Errorf("Serve(%q) told the app %q, want an error message", tc.in, out.String())
		}
	}
}

func TestExecuteInfersOutOfMemoryAboveAFailedBatch(t *testing.T) {
	b := cpu.New()
	s := cnn.Shape{C: 64, H: 64, W: 64}
	relu := cnn.Config{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1}
	// Each sample of the relu needs 4 tensors of 1 MiB: 16 samples need 64 MiB.
	b.MemoryLimit = 40 << 20
	var items []gpu.Item
	for _, n := range []int{16, 1, 32, 8} {
		items = append(items, gpu.Item{Config: relu, Batch: n, Phase: measure.Forward})
	}
	var got []measure.Measurement
	err := gpu.Execute(context.Background(), b, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: items}, gpu.Sink{
		Measured: func(m measure.Measurement) error { got = append(got, m); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status  measure.Status
		repeats int
	}{{measure.OutOfMemory, 0}, {measure.OK, 1}, {measure.OutOfMemory, 0}, {measure.OK, 1}}
	for i, w := range want {
		if got[i].Status != w.status || got[i].Repeats != w.repeats {
			t.Errorf("batch %d: status %s repeats %d, want %s %d", got[i].Batch, got[i].Status, got[i].Repeats, w.status, w.repeats)
		}
	}
}

type collected struct {
	batches  []int
	warnings []string
	failures []gpu.Failure
}

func (c *collected) sink() gpu.Sink {
	return gpu.Sink{
		Measured: func(m measure.Measurement) error { c.batches = append(c.batches, m.Batch); return nil },
		Warning:  func(s string) { c.warnings = append(c.warnings, s) },
		Failed:   func(f gpu.Failure) error { c.failures = append(c.failures, f); return nil },
	}
}

// TestRemoteRecordsAFailedItemAndGoesOn: an item whose measurement returns an error (a
// failed execution) is handed to the sink with its reason and quarantined, and the
// sweep measures the rest; a later sweep skips it.
func TestRemoteRecordsAFailedItemAndGoesOn(t *testing.T) {
	ctx := context.Background()
	r, err := gpu.OpenRemote(ctx, fakeWorker(t, "fails-on-batch-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got collected
	if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(3)}, got.sink()); err != nil {
		t.Fatalf("a failed item stopped the sweep: %v", err)
	}
	if fmt.Sprint(got.batches) != "[1 3]" {
		t.Errorf("measured %v, want [1 3] around the failed item", got.batches)
	}
	if len(got.failures) != 1 || got.failures[0].Item.Batch != 2 || got.failures[0].Sticky ||
		!strings.Contains(got.failures[0].Reason, "CUDNN_STATUS_EXECUTION_FAILED") || got.failures[0].Quarantine != r.Quarantine.Path {
		t.Fatalf("failures %+v: want batch 2 with cuDNN's reason, quarantined", got.failures)
	}
	if s := got.failures[0].String(); !strings.Contains(s, "relu:in=8x8x8,out=8x8x8 at batch 2 (fwd) failed: ") || !strings.Contains(s, "quarantined") {
		t.Errorf("failure reads %q", s)
	}
	list, err := r.Quarantine.List()
	if err != nil || len(list) != 1 || list[0].Batch != 2 || !strings.HasPrefix(list[0].Reason, "failed (") || !strings.Contains(list[0].Reason, "EXECUTION_FAILED") {
		t.Fatalf("quarantine %+v, %v: want batch 2, failed with its reason", list, err)
	}
	var again collected
	if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(3)}, again.sink()); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again.batches) != "[1 3]" || len(again.failures) != 0 || len(again.warnings) != 1 || !strings.Contains(again.warnings[0], "skipped relu:in=8x8x8,out=8x8x8 at batch 2") {
		t.Errorf("second sweep: measured %v, failures %v, warnings %q: want batch 2 skipped with a warning", again.batches, again.failures, again.warnings)
	}
}

// TestRemoteDoesNotQuarantineABrokenInstall: an item that failed because cuDNN cannot
// run as installed (a sub-library missing) is not quarantined: after the install is
// fixed the next sweep measures it.
func TestRemoteDoesNotQuarantineABrokenInstall(t *testing.T) {
	ctx := context.Background()
	r, err := gpu.OpenRemote(ctx, fakeWorker(t, "install-on-batch-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		var got collected
		if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(3)}, got.sink()); err != nil {
			t.Fatal(err)
		}
		if len(got.failures) != 1 || !got.failures[0].Install || got.failures[0].Quarantine != "" ||
			!strings.Contains(got.failures[0].String(), "not quarantined: the install failed") {
			t.Fatalf("round %d: failures %+v, want batch 2 failed by the install, not quarantined", round, got.failures)
		}
		if len(got.warnings) != 0 {
			t.Errorf("round %d: warnings %q: batch 2 was skipped", round, got.warnings)
		}
	}
	if list, err := r.Quarantine.List(); err != nil || len(list) != 0 {
		t.Errorf("quarantine %+v, %v: want empty", list, err)
	}
}

// TestQuarantineIsPerWorkerBuildAndCuDNN: an item quarantined under another worker build
// or another cuDNN is tried again; under the same ones it is skipped.
func TestQuarantineIsPerWorkerBuildAndCuDNN(t *testing.T) {
	ctx := context.Background()
	path := fakeWorker(t, "cpu")
	r, err := gpu.OpenRemote(ctx, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	item := reluItems(2)[1]
	entry := gpu.Quarantined{DeviceKey: r.Device().Key, Worker: gpu.WorkerBuild(path), CuDNN: r.Device().CuDNN, ConfigKey: item.Config.Key(),
		Batch: 2, Phase: measure.Forward, Precision: measure.FP32, Reason: "failed (cuDNN: CUDNN_STATUS_EXECUTION_FAILED)"}
	for _, c := range []struct {
		name    string
		change  func(q *gpu.Quarantined)
		skipped bool
	}{
		{"an older worker build", func(q *gpu.Quarantined) { q.Worker = "0123456789ab" }, false},
		{"another cuDNN", func(q *gpu.Quarantined) { q.CuDNN = "8.9.7" }, false},
		{"a quarantine from before versions were recorded", func(q *gpu.Quarantined) { q.Worker, q.CuDNN = "", "" }, false},
		{"the same build and cuDNN", func(q *gpu.Quarantined) {}, true},
	} {
		r.Quarantine = &gpu.Quarantine{Path: filepath.Join(t.TempDir(), "q.json")}
		q := entry
		c.change(&q)
		if err := r.Quarantine.Add(q); err != nil {
			t.Fatal(err)
		}
		var got collected
		if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(2)}, got.sink()); err != nil {
			t.Fatal(err)
		}
		if skipped := fmt.Sprint(got.batches) == "[1]"; skipped != c.skipped {
			t.Errorf("%s: measured %v, warnings %q; want batch 2 skipped %v", c.name, got.batches, got.warnings, c.skipped)
		}
	}
	if gpu.WorkerBuild(path) == "" || gpu.WorkerBuild(path) != gpu.WorkerBuild(path) || gpu.WorkerBuild(filepath.Join(t.TempDir(), "absent")) != "" {
		t.Error("WorkerBuild is not a stable identity of a readable file")
	}
}

// TestRemoteRestartsTheWorkerAfterAStickyError: after a sticky CUDA error every call in
// the worker's process fails, so the item is quarantined and a new worker measures the
// rest; a second sticky error right after the restart stops the sweep instead of
// quarantining every item.
func TestRemoteRestartsTheWorkerAfterAStickyError(t *testing.T) {
	ctx := context.Background()
	r, err := gpu.OpenRemote(ctx, fakeWorker(t, "sticky-on-batch-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got collected
	if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(4)}, got.sink()); err != nil {
		t.Fatalf("a sticky error stopped the sweep: %v", err)
	}
	if fmt.Sprint(got.batches) != "[1 3 4]" { // the same process would fail 3 and 4 too
		t.Errorf("measured %v, want [1 3 4] from a restarted worker", got.batches)
	}
	if len(got.failures) != 1 || got.failures[0].Item.Batch != 2 || !got.failures[0].Sticky {
		t.Errorf("failures %+v: want batch 2, sticky", got.failures)
	}
	if len(got.warnings) != 1 || !strings.Contains(got.warnings[0], "restarting the CUDA worker after a sticky error, with the 2 items left") {
		t.Errorf("warnings %q: want one saying the worker restarts", got.warnings)
	}
	if list, _ := r.Quarantine.List(); len(list) != 1 || list[0].Batch != 2 {
		t.Errorf("quarantine %+v: want batch 2", list)
	}

	r, err = gpu.OpenRemote(ctx, fakeWorker(t, "sticky-from-batch-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var dead collected
	err = r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(5)}, dead.sink())
	if err == nil || !strings.Contains(err.Error(), "again right after a restart") {
		t.Fatalf("a GPU failing every item: error %v, want the sweep stopped after one restart", err)
	}
	if fmt.Sprint(dead.batches) != "[1]" || len(dead.failures) != 2 {
		t.Errorf("measured %v with %d failures: want [1] and the two sticky items", dead.batches, len(dead.failures))
	}
	if list, _ := r.Quarantine.List(); len(list) != 2 {
		t.Errorf("quarantine holds %d items, want the 2 that failed", len(list))
	}
}

// TestExecuteGoesOnPastAFailedItem: in the worker's own loop, a failed item goes to
// sink.Failed and the rest are measured; without sink.Failed the first error stops it;
// a sticky failure stops it after the sink heard of it.
func TestExecuteGoesOnPastAFailedItem(t *testing.T) {
	for _, c := range []struct {
		sticky, withFailed bool
		measured           string
		failures           int
		stops              bool
	}{
		{false, true, "[1 3]", 1, false},
		{false, false, "[1]", 0, true},
		{true, true, "[1]", 1, true},
	} {
		b, _ := failingWorker{sticky: c.sticky}.Open(0)
		var got collected
		sink := got.sink()
		if !c.withFailed {
			sink.Failed = nil
		}
		err := gpu.Execute(context.Background(), b, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(3)}, sink)
		if (err != nil) != c.stops || fmt.Sprint(got.batches) != c.measured || len(got.failures) != c.failures {
			t.Errorf("sticky %v, sink.Failed %v: error %v, measured %v, %d failures; want stopped %v, %s, %d", c.sticky, c.withFailed, err, got.batches, len(got.failures), c.stops, c.measured, c.failures)
		}
		if c.sticky && !errors.Is(err, gpu.ErrSticky) {
			t.Errorf("a sticky failure ended Execute with %v, want ErrSticky", err)
		}
	}
}

func TestRemoteQuarantinesAnItemThatKillsTheWorker(t *testing.T) {
	ctx := context.Background()
	r, err := gpu.OpenRemote(ctx, fakeWorker(t, "dies-on-batch-2"), 0)
	if err != nil {
		t.Fatal(err)
	}
	job := gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(3)}
	var first collected
	err = r.Sweep(ctx, job, first.sink())
	var crash *gpu.WorkerCrash
	if !errors.As(err, &crash) || crash.Hung || crash.Quarantined == nil || crash.Quarantined.Batch != 2 {
		t.Fatalf("first sweep: got %v, want a crash with batch 2 quarantined", err)
	}
	for _, want := range []string{"relu:in=8x8x8,out=8x8x8 at batch 2 (fwd, fp32)", "quarantined", "Segmentation fault", "exit status 139"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash error %q lacks %q", err, want)
		}
	}
	if fmt.Sprint(first.batches) != "[1]" {
		t.Errorf("first sweep measured batches %v, want [1] before the crash", first.batches)
	}
	list, err := r.Quarantine.List()
	if err != nil || len(list) != 1 || list[0].Batch != 2 || list[0].Reason != "crashed the worker" || list[0].DeviceKey != r.Device().Key {
		t.Fatalf("quarantine after the crash: %+v, %v", list, err)
	}
	// A resumed sweep (what is left) skips the item, says so, and finishes.
	var second collected
	if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(3)[1:]}, second.sink()); err != nil {
		t.Fatalf("resumed sweep: %v", err)
	}
	if fmt.Sprint(second.batches) != "[3]" {
		t.Errorf("resumed sweep measured %v, want [3]", second.batches)
	}
	if len(second.warnings) != 1 || !strings.Contains(second.warnings[0], "skipped relu:in=8x8x8,out=8x8x8 at batch 2") || !strings.Contains(second.warnings[0], r.Quarantine.Path) {
		t.Errorf("resumed sweep warnings %q: want one naming the skipped item and the file", second.warnings)
	}
	// The same item under another precision is not the quarantined one.
	if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32Strict, Repeats: 1, Items: reluItems(3)[1:2]}, gpu.Sink{Measured: func(measure.Measurement) error { return nil }}); err == nil {
		t.Error("batch 2 under fp32-strict was skipped: quarantine must match the precision")
	}
	if list, _ := r.Quarantine.List(); len(list) != 2 {
		t.Errorf("quarantine holds %d items, want 2 (fp32 and fp32-strict)", len(list))
	}
}

func TestRemoteKillsAndQuarantinesAHungWorker(t *testing.T) {
	ctx := context.Background()
	r, err := gpu.OpenRemote(ctx, fakeWorker(t, "hang"), 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Stall = 300 * time.Millisecond
	err = r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(1)}, gpu.Sink{Measured: func(measure.Measurement) error { return nil }})
	var crash *gpu.WorkerCrash
	if !errors.As(err, &crash) || !crash.Hung || crash.Item != 0 {
		t.Fatalf("got %v, want a hung worker with item 0 in flight", err)
	}
	if !strings.Contains(err.Error(), "stopped answering and was killed") {
		t.Errorf("hang error %q does not say the worker was killed", err)
	}
	list, _ := r.Quarantine.List()
	if len(list) != 1 || list[0].Reason != "hung the worker" {
		t.Errorf("quarantine after a hang: %+v", list)
	}
}

func TestRemoteReadsPastGarbageOnStdout(t *testing.T) {
	ctx := context.Background()
	r, err := gpu.OpenRemote(ctx, fakeWorker(t, "garbage"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var got collected
	if err := r.Sweep(ctx, gpu.Job{Precision: measure.FP32, Repeats: 1, Items: reluItems(2)}, got.sink()); err != nil {
		t.Fatalf("sweep through a chatty worker: %v", err)
	}
	if fmt.Sprint(got.batches) != "[1 2]" {
		t.Errorf("measured %v, want [1 2]", got.batches)
	}
}

func TestSelfTestTravelsOverTheProtocol(t *testing.T) {
	ctx := context.Background()
	rep, err := gpu.SelfTest(ctx, fakeWorker(t, "selftest"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 || rep.Rows[0].Verdict != selftest.Pass || rep.Rows[1].Why != "NVRTC is absent" || rep.Sweep.Measured != 3 || rep.Versions.Driver != "test" {
		t.Errorf("report after the round trip: %+v", rep)
	}
	if !rep.Trustworthy() {
		t.Errorf("a report whose FP32 convolution, linear and batch norm pass, with an unsupported amp GELU, must be trustworthy: %q", rep.Problems())
	}
	if _, err := gpu.SelfTest(ctx, fakeWorker(t, "cpu"), 0); err == nil || !strings.Contains(err.Error(), "no self-test") {
		t.Errorf("a worker without a self-test: got %v", err)
	}
	if _, err := gpu.SelfTest(ctx, fakeWorker(t, "chatty"), 0); err == nil {
		t.Error("a worker that dies at start-up gave no error")
	}
}

func TestNoGPUIsOneSentence(t *testing.T) {
	_, err := gpu.SelfTest(context.Background(), fakeWorker(t, "nogpu"), 0)
	if !errors.Is(err, gpu.ErrNoGPU) {
		t.Fatalf("got %v, want ErrNoGPU", err)
	}
	if want := "no usable NVIDIA GPU on this machine: the CUDA driver could not start (CUDA_ERROR_NO_DEVICE)"; err.Error() != want {
		t.Errorf("error = %q, want the worker's sentence %q", err, want)
	}
	if _, err := gpu.ListDevices(context.Background(), fakeWorker(t, "nogpu")); !errors.Is(err, gpu.ErrNoGPU) {
		t.Errorf("device list on a machine without a GPU: %v", err)
	}
}
