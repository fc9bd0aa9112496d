package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"cnntime/db"
	"cnntime/predictor/measure"
)

// ErrSweepRunning is Start's answer while a sweep is already running.
var ErrSweepRunning = errors.New("a sweep is already running: pause or cancel it first")

// ErrSweepCancelling is Start's answer while a cancelled sweep is still stopping.
var ErrSweepCancelling = errors.New("the sweep is being cancelled: start again once it has stopped (a moment, at most one measurement)")

// SweepPhase is what a runner is doing.
type SweepPhase string

// The phases. A pause or a cancel takes effect between two measurements (the one in
// flight stops at its next repeat); until then the runner is pausing or cancelling.
const (
	SweepIdle       SweepPhase = "idle"
	SweepRunning    SweepPhase = "running"
	SweepPausing    SweepPhase = "pausing"
	SweepCancelling SweepPhase = "cancelling"
)

// sweepLogLines is how many lines of a sweep's log the runner keeps.
const sweepLogLines = 200

// SweepRunner owns the GUI's sweeps on the app's one cache handle: it plans, runs one
// sweep at a time in the background, pauses or cancels it, and keeps its state (plan,
// latest progress, log, how it ended). Views only display what it reports, as often as
// they like: its state is a snapshot (Status), and OnChange says when it changed, so a
// sweep that measures fifty kernels a second never floods a window with updates.
type SweepRunner struct {
	cache *db.DB

	mu         sync.Mutex
	stop       context.CancelCauseFunc // the running sweep's; nil when none runs
	done       chan struct{}           // closed when the running sweep has ended and reported
	halting    error                   // ErrSweepPaused or context.Canceled once asked; nil while running
	queued     *queuedSweep            // a Start made while pausing: it runs once the pause is done
	started    time.Time               // when the running (or last) sweep started, wall clock
	ended      time.Time               // when the last sweep ended; zero while one runs
	req        *SweepRequest           // the running (or last) sweep's request
	plan       *SweepPlan              // the running (or last) sweep's plan
	progress   SweepProgress           // its latest progress
	progressAt time.Time               // when that progress came
	result     *SweepResult            // how the last sweep ended; nil while one runs
	err        error                   // why the last sweep failed
	log        []string                // the last sweepLogLines lines, oldest first
	logSeq     int                     // counts the lines ever logged
	onChange   func()
	// paces are the paces Plan timed (ProbeSweepPace), by device, precision and
	// policy: a sweep started after them plans at that pace where the cache has none.
	paces map[paceKey]probedPace
}

type paceKey struct {
	device    string
	precision measure.Precision
	policy    measure.Policy
}

type probedPace struct {
	scale  [numClasses]float64
	probed int
}

type queuedSweep struct {
	req SweepRequest
	ev  SweepEvents
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

// OnChange sets a function called (on the sweep's goroutine or the caller's, never
// with the runner's lock held) whenever the runner's state changes: a sweep starts,
// measures, is asked to pause or cancel, or ends. It should only schedule a look at
// Status: it may be called thousands of times a minute.
func (r *SweepRunner) OnChange(fn func()) {
	r.mu.Lock()
	r.onChange = fn
	r.mu.Unlock()
}

func (r *SweepRunner) changed() {
	r.mu.Lock()
	fn := r.onChange
	r.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// Plan says what a sweep of req would measure, without running it. Where the cache
// holds none of the device's own measurements to estimate its time from, it times a
// few of the plan's kernels on the device first (ProbeSweepPace, up to a couple of
// seconds; nothing is written to the cache), and a sweep started later plans at that
// pace too.
func (r *SweepRunner) Plan(ctx context.Context, req SweepRequest) (SweepPlan, error) {
	sw, err := OpenSweeper(ctx, req.Device)
	if err != nil {
		return SweepPlan{}, err
	}
	p, err := PlanSweep(ctx, r.cache, sw.Device(), req)
	if err != nil || p.CalibratedFrom > 0 || len(p.Kernels.Items) == 0 {
		return p, err
	}
	if err := ProbeSweepPace(ctx, sw, &p); err != nil {
		return SweepPlan{}, err
	}
	if p.Probed > 0 {
		r.mu.Lock()
		if r.paces == nil {
			r.paces = map[paceKey]probedPace{}
		}
		r.paces[paceKey{p.Device.Key, p.Request.Precision, p.Policy}] = probedPace{p.classScale, p.Probed}
		r.mu.Unlock()
	}
	return p, nil
}

// LastRequest is the request of the cache's newest sweep (this window's, an earlier
// session's or another program's, recorded with the sweep), so that a form can offer
// it again and Start resume it; ok is false when the cache records none it can read.
func (r *SweepRunner) LastRequest(ctx context.Context) (req SweepRequest, ok bool, err error) {
	sweeps, err := r.cache.Sweeps(ctx)
	if err != nil {
		return req, false, err
	}
	for _, s := range sweeps { // newest first
		var q SweepRequest
		if json.Unmarshal([]byte(s.Plan), &q) == nil && len(q.Models) > 0 && len(q.Batches) > 0 {
			return q, true, nil
		}
	}
	return req, false, nil
}

// Holdings is what the cache holds per device.
func (r *SweepRunner) Holdings(ctx context.Context) ([]DeviceHoldings, error) {
	return CacheHoldings(ctx, r.cache)
}

// Start plans and runs (or resumes: the plan leaves out what the cache holds) a sweep
// of req in the background and reports to ev. While a sweep is pausing, the start
// waits for the pause to finish and then runs (Status says Queued); while one runs it
// returns ErrSweepRunning, and while one is being cancelled ErrSweepCancelling.
func (r *SweepRunner) Start(req SweepRequest, ev SweepEvents) error {
	r.mu.Lock()
	if r.stop != nil {
		var err error
		switch {
		case errors.Is(r.halting, ErrSweepPaused):
			r.queued = &queuedSweep{req: req, ev: ev}
		case r.halting != nil:
			err = ErrSweepCancelling
		default:
			err = ErrSweepRunning
		}
		r.mu.Unlock()
		if err == nil {
			r.changed()
		}
		return err
	}
	r.startLocked(req, ev)
	r.mu.Unlock()
	r.changed()
	return nil
}

func (r *SweepRunner) startLocked(req SweepRequest, ev SweepEvents) {
	ctx, stop := context.WithCancelCause(context.Background())
	r.stop, r.done, r.halting, r.queued = stop, make(chan struct{}), nil, nil
	r.plan, r.progress, r.progressAt, r.result, r.err = nil, SweepProgress{}, time.Time{}, nil, nil
	r.started, r.ended, r.req = time.Now(), time.Time{}, &req
	done := r.done
	r.logLocked(fmt.Sprintf("sweep of %s on %s started", joinNames(req.Models), req.Device))
	go func() {
		res, err := r.run(ctx, req, ev)
		stop(nil)
		r.mu.Lock()
		cancelled := errors.Is(r.halting, context.Canceled)
		r.mu.Unlock()
		if err == nil && cancelled && res.State == db.SweepPaused {
			// Cancel pressed while it was pausing: the context kept the first cause.
			res.State = db.SweepCancelled
			if res.SweepID != 0 {
				if uerr := r.cache.UpdateSweep(context.Background(), res.SweepID, res.State, res.Done); uerr != nil {
					err = uerr
				}
			}
		}
		r.mu.Lock()
		r.stop, r.result, r.err, r.ended = nil, &res, err, time.Now()
		if err != nil {
			r.logLocked("sweep failed: " + err.Error())
		} else {
			r.logLocked(fmt.Sprintf("sweep %s: %d of %d measured in %s, %d out of memory", res.State, res.Done, res.Total, res.Elapsed.Round(time.Second), res.OOM))
		}
		if q := r.queued; q != nil && err == nil { // Start was pressed while pausing: resume now,
			// with no idle moment between (a view would take it for the end of the sweep)
			r.logLocked("resuming, as asked while pausing")
			r.startLocked(q.req, q.ev)
		}
		r.mu.Unlock()
		if ev.Finished != nil {
			ev.Finished(res, err)
		}
		close(done)
		r.changed()
	}()
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

func (r *SweepRunner) run(ctx context.Context, req SweepRequest, ev SweepEvents) (SweepResult, error) {
	// Paused or cancelled before it measured anything (while opening the device or
	// planning): that is a pause or a cancel, not a failure.
	stopped := func(err error) (SweepResult, error) {
		if ctx.Err() == nil {
			return SweepResult{}, err
		}
		if errors.Is(context.Cause(ctx), ErrSweepPaused) {
			return SweepResult{State: db.SweepPaused, Device: req.Device}, nil
		}
		return SweepResult{State: db.SweepCancelled, Device: req.Device}, nil
	}
	sw, err := OpenSweeper(ctx, req.Device)
	if err != nil {
		return stopped(err)
	}
	plan, err := PlanSweep(ctx, r.cache, sw.Device(), req)
	if err != nil {
		return stopped(err)
	}
	if ctx.Err() != nil {
		return stopped(ctx.Err())
	}
	r.mu.Lock()
	if pace, ok := r.paces[paceKey{plan.Device.Key, plan.Request.Precision, plan.Policy}]; ok && plan.CalibratedFrom == 0 {
		plan.scaleEstimates(pace.scale) // what Plan timed, not timed again
		plan.Probed = pace.probed
	}
	r.plan = &plan
	r.logLocked(DescribePlan(plan))
	r.mu.Unlock()
	r.changed()
	if ev.Planned != nil {
		ev.Planned(plan)
	}
	return RunSweep(ctx, r.cache, sw, plan, func(p SweepProgress) {
		r.mu.Lock()
		if p.Message == "" {
			r.progress, r.progressAt = p, time.Now()
		}
		if line := p.LogLine(); line != "" {
			r.logLocked(line)
		}
		r.mu.Unlock()
		r.changed()
		if ev.Progress != nil {
			ev.Progress(p)
		}
	})
}

func (r *SweepRunner) logLocked(line string) {
	r.log = append(r.log, line)
	if len(r.log) > sweepLogLines {
		r.log = r.log[len(r.log)-sweepLogLines:]
	}
	r.logSeq++
}

// Log adds a line to the runner's log (a view's own events: a GPU check).
func (r *SweepRunner) Log(line string) {
	r.mu.Lock()
	r.logLocked(line)
	r.mu.Unlock()
	r.changed()
}

// LogLine is a progress report as a line of a sweep's log; "" for none.
func (p SweepProgress) LogLine() string {
	switch {
	case p.Message != "":
		return "warning: " + p.Message
	case p.Measurement != nil && p.Measurement.Status == measure.OK:
		m := p.Measurement
		return fmt.Sprintf("%s batch %d %s: %.3f ms", m.ConfigKey, m.Batch, m.Phase, m.MedianMS)
	case p.Measurement != nil:
		return fmt.Sprintf("%s batch %d %s: %s", p.Measurement.ConfigKey, p.Measurement.Batch, p.Measurement.Phase, p.Measurement.Status)
	case p.Step != nil:
		return fmt.Sprintf("step %s batch %d: %.2f ms (%s)", p.Step.Model, p.Step.Batch, p.Step.MedianMS, p.Step.Status)
	}
	return ""
}

// Pause stops the running sweep between two measurements, keeping what it measured;
// Start resumes it (and may be pressed while it is still pausing).
func (r *SweepRunner) Pause() { r.halt(ErrSweepPaused) }

// Cancel stops the running sweep for good between two measurements, and drops a
// start asked for while it was pausing; what it measured stays in the cache.
func (r *SweepRunner) Cancel() { r.halt(context.Canceled) }

func (r *SweepRunner) halt(cause error) {
	r.mu.Lock()
	stop := r.stop
	if stop == nil {
		r.mu.Unlock()
		return
	}
	if r.halting == nil || errors.Is(cause, context.Canceled) {
		r.halting = cause
	}
	if errors.Is(cause, context.Canceled) {
		r.queued = nil
	}
	r.mu.Unlock()
	stop(cause)
	r.changed()
}

// Running reports whether a sweep runs (pausing and cancelling included).
func (r *SweepRunner) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop != nil
}

// Wait blocks until no sweep runs and the last has reported Finished (a start
// queued while pausing included).
func (r *SweepRunner) Wait() {
	for {
		r.mu.Lock()
		done := r.done
		r.mu.Unlock()
		if done == nil {
			return
		}
		<-done
		r.mu.Lock()
		same := r.done == done
		r.mu.Unlock()
		if same {
			return
		}
	}
}

// SweepStatus is a runner's state: the current or last sweep's plan, latest progress,
// log and, once it ended, its result or error.
type SweepStatus struct {
	Phase   SweepPhase
	Running bool // a sweep runs (Phase is not idle)
	Queued  bool // a start waits for the pause to finish
	// Started is when the running or last sweep started and Elapsed its wall-clock
	// time so far (to its end once it ended).
	Started time.Time
	Elapsed time.Duration
	// ETA is the time left, the latest estimate less the time since it was made; 0
	// when unknown.
	ETA time.Duration
	// Request is the running or last sweep's request, known from its start (Plan only
	// once it is planned).
	Request  *SweepRequest
	Plan     *SweepPlan
	Progress SweepProgress
	Result   *SweepResult
	Err      error
	Log      []string // the last lines, oldest first
	LogSeq   int      // counts every line ever logged: a view redraws the log when it moves
}

// Status is the runner's state now.
func (r *SweepRunner) Status() SweepStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := SweepStatus{Running: r.stop != nil, Queued: r.queued != nil, Started: r.started, Request: r.req, Plan: r.plan,
		Progress: r.progress, Result: r.result, Err: r.err, Log: append([]string(nil), r.log...), LogSeq: r.logSeq}
	switch {
	case r.stop == nil:
		st.Phase = SweepIdle
	case errors.Is(r.halting, context.Canceled):
		st.Phase = SweepCancelling
	case r.halting != nil:
		st.Phase = SweepPausing
	default:
		st.Phase = SweepRunning
	}
	if !r.started.IsZero() {
		end := time.Now()
		if !r.ended.IsZero() {
			end = r.ended
		}
		st.Elapsed = end.Sub(r.started)
	}
	if st.Running && r.progress.ETA > 0 {
		st.ETA = max(r.progress.ETA-time.Since(r.progressAt), 0)
	}
	return st
}

// DescribePlan says what a plan measures and how long it should take.
func DescribePlan(p SweepPlan) string {
	how := "a first guess from the device's specifications"
	switch {
	case p.CalibratedFrom > 0:
		how = fmt.Sprintf("calibrated on %d kernels this device measured", p.CalibratedFrom)
	case p.Probed > 0:
		how = fmt.Sprintf("at this device's pace: %d of its kernels timed just now", p.Probed)
	}
	return fmt.Sprintf("%d kernels of %d layer configurations to measure (%d already in the cache%s), %d steps; estimate %s (%s).",
		len(p.Kernels.Items), p.Kernels.Configs, p.Kernels.Cached, RetriedNote(p), len(p.Steps), p.Kernels.Estimate.Round(time.Second), how)
}

// RetriedNote says how many of the plan's kernels the cache held as out of memory or
// unsupported on this GPU, or measured through the other cuDNN API, and are measured
// again; "" when none.
func RetriedNote(p SweepPlan) string {
	if p.Kernels.Retried == 0 {
		return ""
	}
	return fmt.Sprintf("; %d out of memory, unsupported or of the other cuDNN API before, tried again", p.Kernels.Retried)
}
