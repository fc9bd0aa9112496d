package views

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"cnntime/app"
	"cnntime/db"
)

func TestBenchmarkRunsACPUSweepWithALiveProgressBar(t *testing.T) {
	newTestApp(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	b := NewBenchmark(testRunner(t))
	w := test.NewWindow(b.Content())
	defer w.Close()
	if got := b.Device.Options; len(got) != 1 || got[0] != "cpu" {
		t.Fatalf("devices %v, want the CPU only", got)
	}
	if !strings.Contains(b.LogText(), "no CUDA devices") || !b.DeviceNote.Visible() || !strings.HasPrefix(b.DeviceNote.Text, "Only the CPU: ") {
		t.Errorf("neither the log nor the device list says why there are no CUDA devices: log %q, note %q", b.LogText(), b.DeviceNote.Text)
	}
	// The sweep's goroutines put its progress on screen (fyne.Do) while the test taps
	// and types: both as UI code, one at a time, as on the desktop driver's UI goroutine.
	ui(func() {
		b.Models.SetText("resnet18")
		b.Input.SetText("32")
		b.Batches.SetText("1-2")
		b.Repeats.SetText("1")
		test.Tap(b.PlanButton)
	})
	b.WaitPlan()
	if !strings.Contains(b.PlanLabel.Text, "kernels of") || !strings.Contains(b.PlanLabel.Text, "0 already in the cache") {
		t.Fatalf("plan label %q", b.PlanLabel.Text)
	}

	// Record the progress bar's value each time the view shows progress.
	var mu sync.Mutex
	seen := map[float64]bool{}
	b.OnProgress = func(app.SweepStatus) {
		mu.Lock()
		seen[b.Progress.Value] = true
		mu.Unlock()
	}
	ui(func() { test.Tap(b.StartButton) })
	if !b.StartButton.Disabled() || b.PauseButton.Disabled() {
		t.Error("while running, Start should be disabled and Pause enabled")
	}
	b.Wait()

	mu.Lock()
	between := 0
	for v := range seen {
		if v > 0 && v < 1 {
			between++
		}
	}
	mu.Unlock()
	if between < 3 {
		t.Errorf("the progress bar took %d values between 0 and 1 during the sweep, want it moving", between)
	}
	if b.Progress.Value != 1 || !strings.HasPrefix(b.ETA.Text, "Done:") {
		t.Errorf("after the sweep: progress %v, ETA label %q", b.Progress.Value, b.ETA.Text)
	}
	if !strings.Contains(b.Holdings.Text, "kernels") || strings.Contains(b.Holdings.Text, " 0 kernels") || !strings.Contains(b.Holdings.Text, "last sweep done") {
		t.Errorf("cache holdings %q", b.Holdings.Text)
	}
	if b.StartButton.Disabled() || !b.PauseButton.Disabled() {
		t.Error("after the sweep, Start should be enabled and Pause disabled")
	}
	// A second start finds everything cached.
	ui(func() { test.Tap(b.PlanButton) })
	b.WaitPlan()
	if !strings.HasPrefix(b.PlanLabel.Text, "0 kernels") {
		t.Errorf("plan after the sweep %q, want nothing left to measure", b.PlanLabel.Text)
	}
}

func TestBenchmarkRejectsBadInput(t *testing.T) {
	newTestApp(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	b := NewBenchmark(testRunner(t))
	cases := []struct {
		batches, repeats, input, want string
	}{
		{"8-2", "1", "", "runs backwards"},
		{"1-2", "zero", "", `Repeats "zero"`},
		{"1-2", "1", "-5", `Input pixels "-5"`},
	}
	for _, tc := range cases {
		ui(func() {
			b.Batches.SetText(tc.batches)
			b.Repeats.SetText(tc.repeats)
			b.Input.SetText(tc.input)
			test.Tap(b.StartButton)
		})
		if !strings.Contains(b.PlanLabel.Text, tc.want) || b.StartButton.Disabled() {
			t.Errorf("batches %q repeats %q input %q: label %q, want %q and no sweep", tc.batches, tc.repeats, tc.input, b.PlanLabel.Text, tc.want)
		}
	}
}

func TestBenchmarkPausesAndResumes(t *testing.T) {
	newTestApp(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	b := NewBenchmark(testRunner(t))
	ui(func() {
		b.Models.SetText("resnet18")
		b.Input.SetText("32")
		b.Batches.SetText("1")
		b.Repeats.SetText("1")
	})
	b.OnMeasured = func(p app.SweepProgress) {
		if p.Done == 5 {
			b.Runner.Pause()
		}
	}
	ui(func() { test.Tap(b.StartButton) })
	b.Wait()
	if !strings.HasPrefix(b.ETA.Text, "Sweep paused after 5 of") || !strings.Contains(b.Holdings.Text, "5 kernels") {
		t.Fatalf("after pausing: ETA %q, holdings %q", b.ETA.Text, b.Holdings.Text)
	}
	b.OnMeasured = nil
	ui(func() { test.Tap(b.StartButton) })
	b.Wait()
	if !strings.HasPrefix(b.ETA.Text, "Done:") || !strings.Contains(b.PlanLabel.Text, "(5 already in the cache)") {
		t.Errorf("after resuming: ETA %q, plan %q", b.ETA.Text, b.PlanLabel.Text)
	}
}

// testRunner is a sweep runner on a new cache, closed when the test ends.
func testRunner(t *testing.T) *app.SweepRunner {
	t.Helper()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	return app.NewSweepRunner(cache)
}

func TestCheckGPUWithoutAWorkerSaysWhy(t *testing.T) {
	newTestApp(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("CNNTIME_GPU_QUARANTINE", filepath.Join(t.TempDir(), "q.json"))
	b := NewBenchmark(testRunner(t))
	w := test.NewWindow(b.Content())
	defer w.Close()
	ui(func() { test.Tap(b.CheckButton) })
	b.WaitCheck()
	got := b.LastCheck()
	// Without an NVIDIA GPU on the PCI bus that is the reason given; with one, the
	// missing worker is.
	want := "CUDA worker not found"
	if present, known := app.NVIDIAPresence(); known && !present {
		want = "this computer has no NVIDIA GPU"
	}
	if !got.NoGPU || !strings.Contains(got.Reason, want) {
		t.Errorf("check without a worker: %+v, want the reason %q", got, want)
	}
	if !strings.Contains(b.LogText(), "GPU check: "+want) {
		t.Errorf("the log does not give the reason: %q", b.LogText())
	}
	if b.CheckButton.Disabled() {
		t.Error("Check GPU stays disabled after the check")
	}
	if ov := w.Canvas().Overlays().Top(); ov == nil {
		t.Error("no dialog shows the check")
	}
}

// TestElapsedReadsLikeTheTimeLeft: the sweep line's elapsed time is written in the units
// of the time left beside it, "4 min 05 s, about 10 min left", not Go's "4m5s".
func TestElapsedReadsLikeTheTimeLeft(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second:                "10 s",
		4*time.Minute + 5*time.Second:   "4 min 05 s",
		2*time.Hour + 5*time.Minute + 9: "2 h 05 min",
	} {
		if got := elapsedText(d); got != want {
			t.Errorf("%s: %q, want %q", d, got, want)
		}
	}
}
