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
	"cnntime/gpu/protocol"
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
	case "chatty": // a library prints to stdout and exits, as gorgonia.org/cu's init does
		fmt.Println("Error in initialization, please refer to the docs: no CUDA-capable device is detected")
		os.Exit(1)
	}
}

// fakeWorker points the worker lookup at this test binary in a mode.
func fakeWorker(t *testing.T, mode string) string {
	t.Helper()
	t.Setenv(fakeWorkerEnv, mode)
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
	start := time.Now()
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
	if n >= 5000 {
		t.Errorf("all %d items ran after cancel", n)
	}
	if time.Since(start) > 8*time.Second {
		t.Errorf("stopping took %v: the worker did not stop on interrupt", time.Since(start))
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
