package main

import (
	"database/sql"
	"fmt"
	"image"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	_ "modernc.org/sqlite" // reads the app's cache as it sweeps
)

// The sweep end-to-end test drives a CPU sweep in the real window as a person does
// for an afternoon: twenty times it lets the sweep run a moment, presses Pause and at
// once Start again (while the sweep is still pausing), and checks that the sweep
// resumes and that the window still answers a click, through the screen (the tab
// area changes), not through the widget tree. Then it cancels and checks in the
// cache that the cancel added at most the measurement in flight.

const sweepWidth, sweepHeight = 1280, 800

// Where things are in the 1280×800 window at scale 1 (read off its screenshots).
var (
	benchTab     = image.Pt(583, 471) // the Benchmark tab
	resultsTab13 = image.Pt(378, 471) // the Results tab
	startButton  = image.Pt(336, 502) // Start, "Resume" while pausing
	pauseButton  = image.Pt(385, 502)
	cancelButton = image.Pt(438, 502)
	sweepButtons = image.Rect(274, 488, 550, 516) // Plan … Check GPU
	sweepModels  = image.Pt(530, 690)             // the form's Models entry
	sweepBatches = image.Pt(530, 721)             // its Batch sizes entry
	sweepLine    = image.Rect(274, 520, 1000, 546)
	tabArea      = image.Rect(274, 485, 1276, 765)
)

// cacheCount counts the kernel measurements in the app's cache.
func cacheCount(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatalf("open the cache %s: %v", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM measurements").Scan(&n); err != nil {
		return -1 // not created yet
	}
	return n
}

// sweepStates counts the cache's sweeps by how they ended.
func sweepStates(t *testing.T, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT state, count(*) FROM sweeps GROUP BY state")
	if err != nil {
		t.Fatalf("read the sweeps of %s: %v", path, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			t.Fatal(err)
		}
		out[state] = n
	}
	return out
}

// waitSweeps waits until the cache records at least n sweeps.
func waitSweeps(t *testing.T, path string, n int, limit time.Duration, what string) {
	t.Helper()
	got := 0
	if !waitFor(limit, func() bool {
		got = 0
		for _, c := range sweepStates(t, path) {
			got += c
		}
		return got >= n
	}) {
		t.Fatalf("%s: the cache records %d sweeps after %s, want %d (%v)", what, got, limit, n, sweepStates(t, path))
	}
}

// waitCount waits until the cache holds more than n measurements.
func waitCount(t *testing.T, path string, n int, limit time.Duration, what string) int {
	t.Helper()
	var got int
	if !waitFor(limit, func() bool { got = cacheCount(t, path); return got > n }) {
		t.Fatalf("%s: the cache still holds %d measurements after %s", what, got, limit)
	}
	return got
}

func TestGUIPauseResumeAndCancelASweep(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end GUI test skipped in -short mode")
	}
	start := time.Now()
	phase := func(what string) { t.Logf("%5.1f s  %s", time.Since(start).Seconds(), what) }
	x := startX(t, sweepWidth, sweepHeight)
	bin := buildApp(t)
	g := startAppSized(t, x, bin, sweepWidth, sweepHeight)
	cache := filepath.Join(g.home, "cache.db")
	phase("started")

	// The window settles on its first prediction; then the Benchmark tab.
	var last *image.RGBA
	x.waitScreen(t, "the first prediction drawn", 40*time.Second, func(img *image.RGBA) bool {
		ok := last != nil && changedPixels(last, img, image.Rect(0, 0, sweepWidth, sweepHeight)) <= blinkPixels
		last = img
		return ok && colourfulPixels(img, image.Rect(680, 90, 1276, 360)) > 2000
	})
	before := x.screenshot(t)
	x.click(t, benchTab)
	bench := x.waitChange(t, "the Benchmark tab", before, tabArea)
	x.save(t, "benchmark", bench)

	// Start: a sweep of resnet18 and densenet121 on the CPU at batch sizes 1 and 2
	// (typed over the default resnet18 at 1–16, 24 and 32): every cycle below waits for
	// a kernel measured after the resume, and resnet18's kernels at batch 32 take seconds
	// each on a busy 2-core machine. Small kernels, but 1,400 of them: more than twenty
	// cycles measure (resnet18's 152 alone ran out at cycle 18).
	x.click(t, sweepModels)
	x.replaceText(t, "resnet18,densenet121")
	x.click(t, sweepBatches)
	x.replaceText(t, "1-2")
	x.click(t, startButton)
	n := waitCount(t, cache, 0, 60*time.Second, "the sweep started")
	phase(fmt.Sprintf("sweeping: %d measured", n))

	rng := rand.New(rand.NewPCG(23, 1))
	var latencies []time.Duration
	for cycle := 1; cycle <= 20; cycle++ {
		// The sweep measures (a pause then stops a sweep that has started, not one still
		// planning), a moment, then Pause and at once Start.
		if cycle > 1 {
			n = waitCount(t, cache, n, 2*clickLimit, fmt.Sprintf("cycle %d: the resumed sweep measures", cycle))
		}
		time.Sleep(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		running := x.screenshot(t)
		x.click(t, pauseButton)
		x.click(t, startButton) // at once: the sweep is still pausing, and Start says Resume
		// The runner pauses after the measurement in flight and resumes by itself: the
		// cache records a new sweep (the next runs as soon as it is planned).
		waitSweeps(t, cache, cycle+1, 60*time.Second, fmt.Sprintf("cycle %d: the sweep resumed after Start during pausing", cycle))
		n = cacheCount(t, cache)
		// The window answers: a click on the Results tab changes the tab area, and the
		// Benchmark tab brings the sweep back, both seen on the screen.
		// (A frozen window never changes; a busy one, sweeping on every core of a loaded
		// machine, may take seconds: the limit is generous and the latency logged.)
		results, latency := x.clickAndSee(t, fmt.Sprintf("cycle %d: the Results tab after a click", cycle), resultsTab13, running, tabArea)
		back, latency2 := x.clickAndSee(t, fmt.Sprintf("cycle %d: the Benchmark tab after a click", cycle), benchTab, results, tabArea)
		latencies = append(latencies, latency, latency2)
		if cycle == 1 || cycle == 20 {
			x.save(t, fmt.Sprintf("cycle-%02d", cycle), back)
		}
		if changedPixels(back, x.screenshot(t), sweepButtons) > 4*blinkPixels {
			back = x.screenshot(t) // the buttons just changed phase; take them as they are now
		}
		if cycle%5 == 0 {
			phase(fmt.Sprintf("cycle %d: %d measured", cycle, n))
		}
	}

	slices.Sort(latencies)
	t.Logf("a click to the screen showing it, %d clicks during the sweep: median %s, slowest %s", len(latencies), latencies[len(latencies)/2].Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))

	// Cancel: once the window shows it took the click (the buttons change), the cache
	// grows by at most the measurement in flight.
	live := x.screenshot(t)
	cancelled := time.Now()
	x.click(t, cancelButton)
	x.waitScreen(t, "the cancel taken (Cancel greyed)", clickLimit, func(img *image.RGBA) bool {
		return changedPixels(live, img, sweepButtons.Union(sweepLine)) > 4*blinkPixels
	})
	atCancel := cacheCount(t, cache)
	t.Logf("cancel: %s from the click to the window showing it", time.Since(cancelled).Round(time.Millisecond))
	time.Sleep(4 * time.Second) // a sweep that went on would measure dozens of kernels meanwhile
	after := cacheCount(t, cache)
	x.save(t, "cancelled", x.screenshot(t))
	if after > atCancel+1 {
		t.Errorf("the cache held %d measurements when the window showed the cancel and %d four seconds later: the sweep went on", atCancel, after)
	}
	phase(fmt.Sprintf("cancelled: %d measured, %d after", atCancel, after))
	// Every pause paused and every Start pressed while pausing resumed: the cache
	// records a sweep per run, twenty paused and the last cancelled.
	states := sweepStates(t, cache)
	if states["paused"] != 20 || states["cancelled"] != 1 {
		t.Errorf("the cache's sweeps by state: %v, want 20 paused and 1 cancelled", states)
	}
	// The window still answers after the cancel.
	still := x.screenshot(t)
	x.click(t, resultsTab13)
	x.waitStillWithin(t, "the Results tab after the cancel", still, tabArea, 1, clickLimit)
}

// clickAndSee clicks at p and waits until region r differs from before and holds
// still; it returns the screen and how long after the click the change was first
// seen (an upper bound: a screenshot takes a while on a busy machine).
func (x *xSession) clickAndSee(t *testing.T, what string, p image.Point, before *image.RGBA, r image.Rectangle) (*image.RGBA, time.Duration) {
	t.Helper()
	clicked := time.Now()
	x.click(t, p)
	var seen time.Duration
	var last *image.RGBA
	img := x.waitScreen(t, what, clickLimit, func(img *image.RGBA) bool {
		changed := changedPixels(before, img, r) > 4*blinkPixels
		if changed && seen == 0 {
			seen = time.Since(clicked)
		}
		still := last != nil && changedPixels(last, img, r) <= blinkPixels
		last = img
		return changed && still
	})
	return img, seen
}

// clickLimit is how long the sweep test waits for a click to show on the screen.
const clickLimit = 45 * time.Second

// startAppSized starts the GUI as startApp does, in a window of the given size.
func startAppSized(t *testing.T, x *xSession, bin string, w, h int) *guiApp {
	t.Helper()
	g := startAppPrefs(t, x, bin, fmt.Sprintf(`{"window.width":%d,"window.height":%d}`, w, h))
	return g
}
