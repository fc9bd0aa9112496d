package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/gpu"
	"cnntime/gpu/selftest"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// The PCI bus tells an NVIDIA GPU (vendor 0x10de, display class) from other devices,
// with no driver; an unreadable bus is unknown, not "no GPU".
func TestNVIDIAOnThePCIBus(t *testing.T) {
	dev := func(root, name, vendor, class string) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{"vendor": vendor + "\n", "class": class + "\n"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	none, gpuBox, audio := t.TempDir(), t.TempDir(), t.TempDir()
	dev(none, "0000:00:00.0", "0x8086", "0x060000")
	dev(none, "0000:00:02.0", "0x1af4", "0x010000")
	dev(gpuBox, "0000:00:00.0", "0x8086", "0x060000")
	dev(gpuBox, "0000:3b:00.0", "0x10de", "0x030200") // an A100: a 3D controller
	dev(audio, "0000:01:00.1", "0x10de", "0x040300")  // an NVIDIA card's HDMI audio only
	for _, c := range []struct {
		root           string
		present, known bool
	}{
		{none, false, true}, {gpuBox, true, true}, {audio, false, true}, {filepath.Join(none, "absent"), false, false},
	} {
		if p, k := nvidiaOn(c.root); p != c.present || k != c.known {
			t.Errorf("%s: present %v known %v, want %v %v", c.root, p, k, c.present, c.known)
		}
	}
}

func TestCheckGPU(t *testing.T) {
	q := &gpu.Quarantine{Path: filepath.Join(t.TempDir(), "q.json")}
	if err := q.Add(gpu.Quarantined{DeviceKey: "cuda:GPU-1", ConfigKey: "conv2d:x", Batch: 512, Phase: measure.Forward, Precision: measure.AMP, Reason: "crashed the worker", At: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	var core []selftest.Row
	for _, kind := range []cnn.Op{cnn.OpConv2d, cnn.OpLinear, cnn.OpBatchNorm} {
		core = append(core, selftest.Row{Layer: string(kind), Kind: kind, Precision: measure.FP32, Phase: measure.Forward, Verdict: selftest.Pass})
	}
	good := selftest.Report{Device: measure.Device{Name: "NVIDIA H100"}, Rows: append(core, selftest.Row{Layer: "relu", Verdict: selftest.Pass}),
		Sweep: selftest.Sweep{Items: 3, Measured: 3}}
	stopped := good
	stopped.Sweep = selftest.Sweep{Items: 3, Measured: 1, Why: "CUDA_ERROR_ILLEGAL_ADDRESS"}
	bad := selftest.Report{Rows: []selftest.Row{{Layer: "conv2d", Verdict: selftest.Mismatch}, {Layer: "relu", Verdict: selftest.Pass}}}
	crashed := errors.New("stand-in")
	for _, c := range []struct {
		name           string
		find           error
		rep            selftest.Report
		err            error
		trusted, nogpu bool
		reason, text   string
	}{
		{"no worker", gpu.ErrNoWorker, selftest.Report{}, nil, false, true, "CUDA worker not found", "GPU check: CUDA worker not found"},
		{"no worker and no NVIDIA GPU", gpu.ErrNoWorker, selftest.Report{}, nil, false, true, "no NVIDIA GPU (its PCI bus lists none)", "GPU check: this computer has no NVIDIA GPU"},
		{"no GPU", nil, selftest.Report{}, fmtNoGPU(), false, true, "no usable NVIDIA GPU on this machine", "GPU check: no usable NVIDIA GPU on this machine"},
		{"worker crashed", nil, selftest.Report{}, crashed, false, false, "stand-in", "GPU check: stand-in"},
		{"trusted", nil, good, nil, true, false, "", "can be trusted"},
		{"mismatch", nil, bad, nil, false, false, "1 checks mismatched", "do not trust"},
		{"sweep stopped", nil, stopped, nil, false, false, "the timed sweep stopped: CUDA_ERROR_ILLEGAL_ADDRESS", "do not trust"},
	} {
		ch := gpuChecker{
			nvidia: func() (bool, bool) { return c.name != "no worker and no NVIDIA GPU", true },
			findWorker: func() (string, error) {
				if c.find != nil {
					return "", c.find
				}
				return "/opt/cnntime-gpu", nil
			},
			selfTest:   func(context.Context, string, int) (selftest.Report, error) { return c.rep, c.err },
			quarantine: func() *gpu.Quarantine { return q },
		}
		got := ch.check(context.Background(), 0)
		if got.Trusted != c.trusted || got.NoGPU != c.nogpu || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("%s: trusted %v, no GPU %v, reason %q", c.name, got.Trusted, got.NoGPU, got.Reason)
		}
		var b strings.Builder
		if err := got.Write(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.text) || !strings.Contains(b.String(), "conv2d:x at batch 512 (fwd, amp) on cuda:GPU-1 (worker unknown, cuDNN unknown): crashed the worker") {
			t.Errorf("%s: text lacks %q or the quarantined item:\n%s", c.name, c.text, b.String())
		}
	}
}

// fmtNoGPU is what gpu.SelfTest returns when the worker found no GPU.
func fmtNoGPU() error {
	return &noGPUStandIn{}
}

type noGPUStandIn struct{}

func (*noGPUStandIn) Error() string {
	return "no usable NVIDIA GPU on this machine: the CUDA driver found no device"
}
func (*noGPUStandIn) Unwrap() error { return gpu.ErrNoGPU }
