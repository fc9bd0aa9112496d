package app

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/db"
	"cnntime/gpu"
	"cnntime/predictor"
)

// The runner owns a sweep's state: it pauses on request, refuses a second start while
// one runs, resumes from the cache on the same handle, and reports the holdings.
func TestSweepRunnerPausesResumesAndReports(t *testing.T) {
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	r := NewSweepRunner(cache)
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18"}, 32, []int{1}, 1
	plan, err := r.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	total := len(plan.Kernels.Items)
	if total <= 5 {
		t.Fatalf("plan of %d kernels, want more than 5", total)
	}

	var finished []SweepResult
	var second error
	ev := SweepEvents{
		Progress: func(p SweepProgress) {
			if p.Done == 5 {
				second = r.Start(req, SweepEvents{})
				r.Pause()
			}
		},
		Finished: func(res SweepResult, err error) {
			if err != nil {
				t.Error(err)
			}
			finished = append(finished, res)
		},
	}
	if err := r.Start(req, ev); err != nil {
		t.Fatal(err)
	}
	r.Wait()
	if !errors.Is(second, ErrSweepRunning) {
		t.Errorf("a second start while running: %v, want ErrSweepRunning", second)
	}
	st := r.Status()
	if st.Running || st.Result == nil || st.Result.State != db.SweepPaused || st.Result.Done != 5 || st.Plan == nil || st.Progress.Done != 5 {
		t.Fatalf("after pausing: %+v (result %+v), want paused after 5", st, st.Result)
	}
	hs, err := r.Holdings(context.Background())
	if err != nil || len(hs) != 1 || hs[0].Kernels != 5 || hs[0].LastSweep != db.SweepPaused {
		t.Fatalf("holdings after the pause: %+v, %v; want 5 kernels of one device, last sweep paused", hs, err)
	}

	ev.Progress = nil
	if err := r.Start(req, ev); err != nil {
		t.Fatal(err)
	}
	r.Wait()
	st = r.Status()
	if st.Result == nil || st.Result.State != db.SweepDone || st.Result.Done != total-5 || st.Plan.Kernels.Cached != 5 {
		t.Fatalf("after resuming: %+v (result %+v), want done with the other %d", st, st.Result, total-5)
	}
	if len(finished) != 2 {
		t.Errorf("Finished called %d times, want 2", len(finished))
	}
	if hs, _ := r.Holdings(context.Background()); len(hs) != 1 || hs[0].Kernels != total || hs[0].LastSweep != db.SweepDone {
		t.Errorf("holdings after the sweep: %+v, want all %d kernels", hs, total)
	}
}

// A plan's time estimate is calibrated on the kernels this device already measured:
// re-planned with the same repeats, the kernels it measured are estimated at what they
// took (their medians times the timed and warm-up runs, summed) times how much longer
// than its runs the sweep took (sweepOverhead), and the plan says on how many it
// calibrated. With nothing measured, the runner's Plan times a few kernels first and
// writes nothing. The runner's status keeps wall-clock time: Elapsed grows with the
// clock, not with the measurements.
func TestPlanEstimateCalibratedOnThisDevice(t *testing.T) {
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	r := NewSweepRunner(cache)
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18"}, 32, []int{1, 2}, 2
	first, err := r.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first.CalibratedFrom != 0 || first.Probed == 0 || !strings.Contains(DescribePlan(first), "at this device's pace") {
		t.Fatalf("a device with nothing measured: calibrated on %d, %d kernels timed; %q", first.CalibratedFrom, first.Probed, DescribePlan(first))
	}
	if hs, err := r.Holdings(context.Background()); err != nil || len(hs) != 0 {
		t.Fatalf("after a plan the cache holds %+v, %v; want nothing", hs, err)
	}
	if err := r.Start(req, SweepEvents{Progress: func(p SweepProgress) {
		if p.Done == 12 {
			r.Pause()
		}
	}}); err != nil {
		t.Fatal(err)
	}
	r.Wait()
	st := r.Status()
	if st.Result == nil || st.Result.State != db.SweepPaused || st.Elapsed <= 0 || st.Phase != SweepIdle {
		t.Fatalf("after the pause: %+v", st)
	}
	elapsed := st.Elapsed
	time.Sleep(20 * time.Millisecond)
	if r.Status().Elapsed != elapsed {
		t.Error("the elapsed time of a sweep that ended still grows")
	}

	again, err := r.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if again.CalibratedFrom != 12 || !strings.Contains(DescribePlan(again), "calibrated on 12 kernels this device measured") {
		t.Fatalf("calibrated on %d: %q", again.CalibratedFrom, DescribePlan(again))
	}
	// Every kernel planned again, cached or not, with the calibration applied.
	sw, err := OpenSweeper(context.Background(), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	all := again
	opts := gpu.PlanOptions{Networks: all.Networks, Batches: req.Batches, Repeats: req.Repeats, Rate: gpu.RateOf(sw.Device()), Phases: predictor.EveryPhaseKernels.Phases}
	if all.Kernels, err = gpu.MakePlan(opts); err != nil {
		t.Fatal(err)
	}
	all.CalibratedFrom = 0
	if err := calibrateEstimate(context.Background(), cache, sw.Device(), &all, opts); err != nil {
		t.Fatal(err)
	}
	ms, err := cache.Measurements(context.Background(), sw.Device().Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	took := map[gpu.Key]float64{}
	for _, m := range ms {
		took[gpu.Key{Config: m.ConfigKey, Batch: m.Batch, Phase: m.Phase}] = m.MedianMS / 1000 * float64(req.Repeats+gpu.WarmupRuns)
	}
	var estimated, measured float64
	for _, it := range all.Kernels.Items {
		if s, ok := took[it.Key()]; ok {
			estimated += it.EstimateS
			measured += s
		}
	}
	overhead, pairs := sweepOverhead(ms)
	if pairs != 11 || !(overhead > 0) {
		t.Fatalf("the sweep's overhead %v from %d pairs of its 12 measurements", overhead, pairs)
	}
	measured *= overhead
	if measured <= 0 || math.Abs(estimated-measured) > 1e-9*measured {
		t.Errorf("the measured kernels re-planned: estimated %.6f s, they took %.6f s", estimated, measured)
	}
}

// Start pressed while the sweep is pausing is not lost: it waits for the pause and
// resumes (Status says pausing and queued meanwhile); Cancel while pausing drops it.
// Start while running is refused, and while cancelling says so.
func TestSweepRunnerStartWhilePausing(t *testing.T) {
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	r := NewSweepRunner(cache)
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18"}, 32, []int{1}, 1

	var queuedStatus SweepStatus
	var queueErr, runningErr, cancellingErr error
	runs := 0
	var ev SweepEvents
	ev = SweepEvents{
		Planned: func(SweepPlan) { runs++ },
		Progress: func(p SweepProgress) {
			switch {
			case runs == 1 && p.Done == 3:
				runningErr = r.Start(req, ev) // running: refused
				r.Pause()
				queueErr = r.Start(req, ev) // pausing: queued
				queuedStatus = r.Status()
			case runs == 2 && p.Done == 2:
				r.Pause()
				_ = r.Start(req, ev) // queued …
				r.Cancel()           // … and dropped by the cancel
				cancellingErr = r.Start(req, ev)
			}
		},
	}
	if err := r.Start(req, ev); err != nil {
		t.Fatal(err)
	}
	r.Wait()
	if !errors.Is(runningErr, ErrSweepRunning) || queueErr != nil || !errors.Is(cancellingErr, ErrSweepCancelling) {
		t.Errorf("starts: while running %v, while pausing %v, while cancelling %v", runningErr, queueErr, cancellingErr)
	}
	if queuedStatus.Phase != SweepPausing || !queuedStatus.Queued {
		t.Errorf("status while pausing with a start queued: phase %s, queued %v", queuedStatus.Phase, queuedStatus.Queued)
	}
	if runs != 2 {
		t.Errorf("%d sweeps ran, want the first and the one started while it paused", runs)
	}
	sweeps, err := cache.Sweeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, s := range sweeps {
		states = append(states, s.State)
	}
	// Newest first: the second, paused then cancelled, and the first, paused.
	if len(sweeps) != 2 || sweeps[1].State != db.SweepPaused || sweeps[1].Done != 3 || sweeps[0].Done != 2 || sweeps[0].State != db.SweepCancelled {
		t.Errorf("sweeps %v (%+v), want the first paused after 3 and the second stopped after 2", states, sweeps)
	}
	if st := r.Status(); st.Running || st.Queued || st.Phase != SweepIdle {
		t.Errorf("after all: %+v", st)
	}
}
