package app

import (
	"context"
	"errors"
	"sync"

	"cnntime/db"
)

// ErrSweepRunning is Start's answer while a sweep is already running.
var ErrSweepRunning = errors.New("a sweep is already running: pause or cancel it first")

// SweepRunner owns the GUI's sweeps on the app's one cache handle: it plans, runs one
// sweep at a time in the background, pauses or cancels it, and keeps its state (plan,
// latest progress, how it ended). Views only display what it reports.
type SweepRunner struct {
	cache *db.DB

	mu       sync.Mutex
	stop     context.CancelCauseFunc // the running sweep's; nil when none runs
	done     chan struct{}           // closed when the running sweep has ended and reported
	plan     *SweepPlan              // the running (or last) sweep's plan
	progress SweepProgress           // its latest progress
	result   *SweepResult            // how the last sweep ended; nil while one runs
	err      error                   // why the last sweep failed
}

// SweepEvents are the runner's reports of one sweep, each called on the sweep's own
// goroutine (a view hands them to its UI goroutine). Any may be nil.
type SweepEvents struct {
	Planned  func(SweepPlan)
	Progress func(SweepProgress)
	Finished func(SweepResult, error)
}

// NewSweepRunner runs sweeps into cache, the handle the engine reads too.
func NewSweepRunner(cache *db.DB) *SweepRunner { return &SweepRunner{cache: cache} }

// Plan says what a sweep of req would measure, without running it.
func (r *SweepRunner) Plan(ctx context.Context, req SweepRequest) (SweepPlan, error) {
	sw, err := OpenSweeper(ctx, req.Device)
	if err != nil {
		return SweepPlan{}, err
	}
	return PlanSweep(ctx, r.cache, sw.Device(), req)
}

// Holdings is what the cache holds per device.
func (r *SweepRunner) Holdings(ctx context.Context) ([]DeviceHoldings, error) {
	return CacheHoldings(ctx, r.cache)
}

// Start plans and runs (or resumes: the plan leaves out what the cache holds) a sweep
// of req in the background and reports to ev; ErrSweepRunning while one runs.
func (r *SweepRunner) Start(req SweepRequest, ev SweepEvents) error {
	r.mu.Lock()
	if r.stop != nil {
		r.mu.Unlock()
		return ErrSweepRunning
	}
	ctx, stop := context.WithCancelCause(context.Background())
	r.stop, r.done = stop, make(chan struct{})
	r.plan, r.progress, r.result, r.err = nil, SweepProgress{}, nil, nil
	done := r.done
	r.mu.Unlock()
	go func() {
		defer close(done)
		res, err := r.run(ctx, req, ev)
		stop(nil)
		r.mu.Lock()
		r.stop, r.result, r.err = nil, &res, err
		r.mu.Unlock()
		if ev.Finished != nil {
			ev.Finished(res, err)
		}
	}()
	return nil
}

func (r *SweepRunner) run(ctx context.Context, req SweepRequest, ev SweepEvents) (SweepResult, error) {
	sw, err := OpenSweeper(ctx, req.Device)
	if err != nil {
		return SweepResult{}, err
	}
	plan, err := PlanSweep(ctx, r.cache, sw.Device(), req)
	if err != nil {
		return SweepResult{}, err
	}
	r.mu.Lock()
	r.plan = &plan
	r.mu.Unlock()
	if ev.Planned != nil {
		ev.Planned(plan)
	}
	return RunSweep(ctx, r.cache, sw, plan, func(p SweepProgress) {
		r.mu.Lock()
		if p.Message == "" {
			r.progress = p
		}
		r.mu.Unlock()
		if ev.Progress != nil {
			ev.Progress(p)
		}
	})
}

// Pause stops the running sweep, keeping what it measured; Start resumes it.
func (r *SweepRunner) Pause() { r.halt(ErrSweepPaused) }

// Cancel stops the running sweep for good; what it measured stays in the cache.
func (r *SweepRunner) Cancel() { r.halt(context.Canceled) }

func (r *SweepRunner) halt(cause error) {
	r.mu.Lock()
	stop := r.stop
	r.mu.Unlock()
	if stop != nil {
		stop(cause)
	}
}

// Running reports whether a sweep runs.
func (r *SweepRunner) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop != nil
}

// Wait blocks until the running sweep, if any, has ended and reported Finished.
func (r *SweepRunner) Wait() {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}

// SweepStatus is a runner's state: the current or last sweep's plan, latest progress
// and, once it ended, its result or error.
type SweepStatus struct {
	Running  bool
	Plan     *SweepPlan
	Progress SweepProgress
	Result   *SweepResult
	Err      error
}

// Status is the runner's state now.
func (r *SweepRunner) Status() SweepStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return SweepStatus{Running: r.stop != nil, Plan: r.plan, Progress: r.progress, Result: r.result, Err: r.err}
}
