package app

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"cnntime/db"
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
