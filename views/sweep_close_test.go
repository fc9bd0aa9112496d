package views

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"cnntime/app"
	"cnntime/db"
)

// runnerOn is a sweep runner on the cache at path, closed when the test ends.
func runnerOn(t *testing.T, path string) *app.SweepRunner {
	t.Helper()
	cache, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	return app.NewSweepRunner(cache)
}

// A restarted Benchmark tab offers the cache's last sweep again, not its defaults:
// "Start with the same models resumes it" is then true as it reads.
func TestBenchmarkRestoresTheLastSweepsSettings(t *testing.T) {
	newTestApp(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	path := filepath.Join(t.TempDir(), "cache.db")
	b := NewBenchmark(runnerOn(t, path))
	b.Models.SetText("mobilenet_v2")
	b.Batches.SetText("1-3,8")
	b.Repeats.SetText("2")
	b.Input.SetText("32")
	b.OnMeasured = func(p app.SweepProgress) {
		if p.Done == 3 {
			b.Runner.Pause()
		}
	}
	test.Tap(b.StartButton)
	b.Wait()

	again := NewBenchmark(runnerOn(t, path)) // the next session, on the same cache
	got := []string{again.Models.Text, again.Batches.Text, again.Repeats.Text, again.Input.Text, again.Device.Selected}
	want := []string{"mobilenet_v2", "1-3,8", "2", "32", "cpu"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("restarted form %q, want the last sweep's %q", got, want)
	}
	if !strings.Contains(again.ETA.Text, "paused; Start with the same models resumes it") {
		t.Errorf("progress line %q", again.ETA.Text)
	}
	fresh := NewBenchmark(runnerOn(t, filepath.Join(t.TempDir(), "empty.db")))
	if fresh.Models.Text != "resnet18" || fresh.Batches.Text != "1-16,24,32" {
		t.Errorf("a cache with no sweep: form %q %q, want the defaults", fresh.Models.Text, fresh.Batches.Text)
	}
}

// The cache panel says a sweep runs from the moment Start is pressed, not seconds
// later once the sweep is planned.
func TestBenchmarkCachePanelFollowsStartAtOnce(t *testing.T) {
	newTestApp(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	b := NewBenchmark(testRunner(t))
	b.Models.SetText("resnet18")
	b.Input.SetText("32")
	b.Batches.SetText("1")
	b.Repeats.SetText("1")
	b.OnMeasured = func(p app.SweepProgress) {
		if p.Done == 2 {
			b.Runner.Pause()
		}
	}
	test.Tap(b.StartButton)
	b.Wait()
	if !strings.Contains(b.Holdings.Text, "last sweep paused") {
		t.Fatalf("after the pause the panel says %q", b.Holdings.Text)
	}
	b.OnMeasured = nil
	test.Tap(b.StartButton)
	if !strings.Contains(b.Holdings.Text, "a sweep running now") || strings.Contains(b.Holdings.Text, "paused") {
		t.Errorf("right after Start the panel says %q, want a sweep running now", b.Holdings.Text)
	}
	b.Wait()
}

// Closing the window (its close button, Ctrl+W, Ctrl+Q, File → Quit) while a sweep runs
// asks first: Keep running leaves both running; Stop and quit pauses the sweep (Start
// resumes it) and then closes the window.
func TestClosingDuringASweepAsks(t *testing.T) {
	mw := newTestWindow(t)
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	var b *Benchmark
	onUI(mw, func() { b = NewBenchmark(testRunner(t)); mw.Benchmark = b })
	b.Models.SetText("resnet18")
	b.Input.SetText("32")
	b.Batches.SetText("1-4")
	b.Repeats.SetText("1")
	hold, reached := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.OnMeasured = func(p app.SweepProgress) {
		if p.Done == 2 {
			once.Do(func() { close(reached); <-hold }) // the sweep stays running while the test asks
		}
	}
	var closed bool
	onUI(mw, func() {
		mw.Window.SetOnClosed(func() { closed = true })
		test.Tap(b.StartButton)
	})
	<-reached
	ctrlW := func() {
		onUI(mw, func() {
			for _, s := range windowShortcuts() {
				if s.key == fyne.KeyW {
					s.run(mw)
				}
			}
		})
	}
	ctrlW()
	ctrlW() // asked once, however often
	n := 0
	onUI(mw, func() { n = len(mw.Window.Canvas().Overlays().List()) })
	if n != 1 || !strings.Contains(dialogText(t, mw), "A sweep of resnet18 on cpu is running") || closed {
		t.Fatalf("Ctrl+W twice during a sweep: %d dialogs, closed %v:\n%s", n, closed, dialogText(t, mw))
	}
	tapDialogButton(t, mw, "Keep running")
	if !b.Runner.Running() || closed {
		t.Fatalf("Keep running: sweep running %v, window closed %v", b.Runner.Running(), closed)
	}
	onUI(mw, func() { mw.Close() }) // the window's close button
	tapDialogButton(t, mw, "Stop and quit")
	close(hold)
	b.Runner.Wait()
	done := false // the window closes once the sweep has stopped: wait for it, under load too
	for deadline := time.Now().Add(10 * time.Second); !done && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		onUI(mw, func() { done = closed })
	}
	if st := b.Runner.Status(); st.Result == nil || st.Result.State != db.SweepPaused || !done {
		t.Errorf("Stop and quit: sweep %+v, window closed %v; want it paused and the window closed", st.Result, done)
	}
}
