package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// SessionState is a snapshot of a session for the GUI to show.
type SessionState struct {
	Settings SessionSettings
	View     ChartSettings
	Curves   []predictor.Curve // the last prediction's, in models × machines order
	Err      error             // the last prediction's error
	Busy     bool              // a prediction is under way
	// Took is how long the last prediction took, its own time (not a redraw's or the
	// wait before it started); 0 before the first.
	Took time.Duration
	// Styles gives each machine shown its colour and each CNN its dash and marker;
	// they stay while the machine or CNN stays selected (charts.Styles).
	Styles *charts.Styles
}

// Session is the GUI's state and use cases: the selection and settings, the chart
// settings, and the prediction, recomputed off the caller's goroutine a short delay
// after the last change so that typing or clicking never waits for it.
type Session struct {
	backend SessionBackend
	prefs   Preferences
	delay   time.Duration

	mu       sync.Mutex
	idle     *sync.Cond // signalled when no prediction is pending
	settings SessionSettings
	view     ChartSettings
	curves   []predictor.Curve
	err      error
	took     time.Duration
	styles   *charts.Styles // the series' looks, kept across predictions
	pending  bool           // a prediction is scheduled or running
	running  bool           // a prediction is running
	gen      uint64         // counts changes; a prediction for an older one is dropped
	timer    *time.Timer
	cancel   context.CancelFunc
	warmStop context.CancelFunc // stops the warm-up of the shown settings' neighbours
	listener func(SessionState)
	closed   bool
	// firstLaunch is set when no choice was remembered and the session started with
	// the example selection (FirstLaunchModels on FirstLaunchMachines).
	firstLaunch bool

	queueMu  sync.Mutex
	queue    []SessionState // notifications not yet delivered, oldest first
	draining bool           // a goroutine is delivering the queue
}

// NewSession starts a session with the choices remembered in prefs (nil for none),
// predicting delay after each change. It predicts the remembered selection at once.
func NewSession(backend SessionBackend, prefs Preferences, delay time.Duration) *Session {
	s := &Session{backend: backend, prefs: prefs, delay: delay, styles: charts.NewStyles()}
	s.idle = sync.NewCond(&s.mu)
	s.settings, s.view = loadPrefs(prefs)
	if firstLaunch(prefs) {
		// Nothing remembered: start with an example comparison rather than empty charts.
		s.firstLaunch = true
		s.settings.Models = append([]string(nil), FirstLaunchModels...)
		if ms, err := backend.MachineChoices(context.Background()); err == nil {
			s.settings.Machines = FirstLaunchMachines(ms)
		}
	}
	s.mu.Lock()
	s.scheduleLocked(0)
	s.mu.Unlock()
	return s
}

// OnChange sets the function called with a snapshot whenever the state changes: a
// prediction starts or ends, or the chart settings change. Calls come in order, one at
// a time, from a goroutine of the session's, never the caller's of a change and never
// with a lock held; a GUI must hand them to its UI goroutine.
func (s *Session) OnChange(fn func(SessionState)) {
	s.mu.Lock()
	s.listener = fn
	s.mu.Unlock()
}

// State is a snapshot of the session.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked()
}

func (s *Session) stateLocked() SessionState {
	return SessionState{Settings: s.settings.clone(), View: s.view.clone(), Curves: s.curves, Err: s.err, Busy: s.running,
		Took: s.took, Styles: s.styles.Clone()}
}

// Settings are the current settings.
func (s *Session) Settings() SessionSettings { return s.State().Settings }

// FirstLaunch reports whether the session started with the example selection because
// nothing was remembered: a GUI then says what to do next.
func (s *Session) FirstLaunch() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstLaunch
}

// Explain says why one point of the current settings' curves is what it is: model on
// machine at a global batch size. It runs on the caller's goroutine (a few ms).
func (s *Session) Explain(ctx context.Context, model, machine string, batch int) (predictor.Explanation, error) {
	x, ok := s.backend.(Explainer)
	if !ok {
		return predictor.Explanation{}, errors.New("this window's predictions cannot be explained (no prediction engine)")
	}
	return x.Explain(ctx, s.Settings(), model, machine, batch)
}

// CanExplain reports whether the session's backend explains its predictions.
func (s *Session) CanExplain() bool {
	_, ok := s.backend.(Explainer)
	return ok
}

// Models lists the CNNs the user can choose.
func (s *Session) Models() []ModelChoice { return s.backend.ModelChoices() }

// Machines lists the machines the user can choose.
func (s *Session) Machines(ctx context.Context) ([]hw.Machine, error) {
	return s.backend.MachineChoices(ctx)
}

// AddCustomModel reads a custom model file, selects the model and returns its name.
func (s *Session) AddCustomModel(data []byte) (string, error) {
	name, err := s.backend.AddCustomModel(data)
	if err != nil {
		return "", err
	}
	return name, s.SetModel(name, true)
}

// Apply replaces the settings and schedules a prediction. Invalid settings change
// nothing and return what is wrong.
func (s *Session) Apply(next SessionSettings) error {
	if err := next.Validate(); err != nil {
		return err
	}
	next = next.clone()
	next.Models, next.Machines = unique(next.Models), unique(next.Machines)
	s.mu.Lock()
	s.settings = next
	s.savePrefsLocked()
	s.scheduleLocked(s.delay)
	s.mu.Unlock()
	return nil
}

// Update applies a change to a copy of the settings (see Apply).
func (s *Session) Update(change func(*SessionSettings)) error {
	next := s.Settings()
	change(&next)
	return s.Apply(next)
}

// SetModel selects or deselects a CNN.
func (s *Session) SetModel(name string, on bool) error {
	return s.Update(func(st *SessionSettings) { st.Models = toggle(st.Models, name, on) })
}

// SetMachine selects or deselects a machine.
func (s *Session) SetMachine(id string, on bool) error {
	return s.Update(func(st *SessionSettings) { st.Machines = toggle(st.Machines, id, on) })
}

// SetView replaces the chart settings; it needs no new prediction.
func (s *Session) SetView(v ChartSettings) error {
	if v.Metric != "" {
		if _, err := charts.ParseMetric(string(v.Metric)); err != nil {
			return err
		}
	}
	if err := v.Limit.Check(); err != nil {
		return err
	}
	s.mu.Lock()
	s.view = v.clone()
	s.savePrefsLocked()
	state := s.stateLocked()
	s.mu.Unlock()
	s.emit(state)
	return nil
}

func (s *Session) notifying() bool {
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	return s.draining
}

// emit queues a notification for the listener; one goroutine delivers the queue in order.
func (s *Session) emit(state SessionState) {
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	s.queue = append(s.queue, state)
	if !s.draining {
		s.draining = true
		go s.drain()
	}
}

func (s *Session) drain() {
	for {
		s.queueMu.Lock()
		if len(s.queue) == 0 {
			s.draining = false
			s.queueMu.Unlock()
			s.mu.Lock()
			s.idle.Broadcast()
			s.mu.Unlock()
			return
		}
		state := s.queue[0]
		s.queue = s.queue[1:]
		s.queueMu.Unlock()
		s.mu.Lock()
		fn := s.listener
		s.mu.Unlock()
		if fn != nil {
			fn(state)
		}
	}
}

// UpdateView applies a change to a copy of the chart settings.
func (s *Session) UpdateView(change func(*ChartSettings)) error {
	v := s.State().View
	change(&v)
	return s.SetView(v)
}

// Refresh predicts again now (after a sweep or an import changed the cache).
func (s *Session) Refresh() {
	s.mu.Lock()
	s.scheduleLocked(0)
	s.mu.Unlock()
}

// Wait blocks until no prediction is scheduled or running and the listener has been
// told of every change, or ctx ends.
func (s *Session) Wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.idle.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for (s.pending || s.notifying()) && ctx.Err() == nil {
		s.idle.Wait()
	}
	return ctx.Err()
}

// Close stops any scheduled or running prediction.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.gen++
	if s.warmStop != nil {
		s.warmStop()
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.pending = false
	s.idle.Broadcast()
}

func (s *Session) scheduleLocked(delay time.Duration) {
	if s.closed {
		return
	}
	if s.warmStop != nil { // the warm-up was for settings no longer shown
		s.warmStop()
		s.warmStop = nil
	}
	s.gen++
	gen := s.gen
	s.pending = true
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.cancel != nil { // the running prediction is for older settings
		s.cancel()
	}
	s.timer = time.AfterFunc(delay, func() { s.predict(gen) })
}

func (s *Session) predict(gen uint64) {
	s.mu.Lock()
	if gen != s.gen || s.closed {
		s.mu.Unlock()
		return
	}
	settings := s.settings.clone()
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.running = true
	state := s.stateLocked()
	s.mu.Unlock()
	s.emit(state)

	var curves []predictor.Curve
	var err error
	began := time.Now()
	if len(settings.Models) > 0 && len(settings.Machines) > 0 {
		curves, err = s.backend.PredictCurves(ctx, settings)
		curves = EnoughSteps(curves, settings.Train)
	}
	took := time.Since(began)
	cancel()

	s.mu.Lock()
	if gen != s.gen { // superseded: the newer prediction reports
		s.mu.Unlock()
		return
	}
	s.curves, s.err, s.took = curves, err, took
	var missing *MissingError
	if err != nil && !errors.As(err, &missing) {
		s.curves = nil // a CNN or machine gone from the cache leaves the others' curves
	}
	s.styles.Assign(s.curves)
	s.running, s.pending, s.cancel = false, false, nil
	s.idle.Broadcast()
	state = s.stateLocked()
	if w, ok := s.backend.(Warmer); ok && err == nil && len(s.curves) > 0 && !s.closed {
		warmCtx, stop := context.WithCancel(context.Background())
		s.warmStop = stop
		time.AfterFunc(warmAfter, func() { s.warm(warmCtx, w, settings) })
	}
	s.mu.Unlock()
	s.emit(state)
}

// Warmer is a SessionBackend that can prepare predictions it may be asked for next, so
// that they come at once: the app's engine fills its step tables.
type Warmer interface {
	// Warm prepares the predictions of s; it stops when ctx ends.
	Warm(ctx context.Context, s SessionSettings) error
}

// warmAfter is how long the window has to stay unchanged after a prediction before the
// session prepares the ones a person may ask for next.
const warmAfter = 400 * time.Millisecond

// warm prepares, while nothing changes, the selection's predictions at the other
// training precisions: switching precision then redraws at once instead of computing
// a hundred new step models. A change stops it (scheduleLocked).
func (s *Session) warm(ctx context.Context, w Warmer, settings SessionSettings) {
	// The likeliest next first: amp, then the default fp32, bf16, tf32, then fp32-strict.
	for _, p := range []measure.Precision{measure.AMP, measure.FP32, measure.BF16, measure.TF32, measure.FP32Strict} {
		if p == settings.Precision || ctx.Err() != nil {
			continue
		}
		other := settings.clone()
		other.Precision = p
		if err := w.Warm(ctx, other); err != nil {
			return
		}
	}
}

// Charts builds the scatter and the curves chart of the last prediction in a style.
func (st SessionState) Charts(style charts.Style) (scatter, curves *charts.Chart) {
	opt := st.View.Options(style)
	opt.Styles = st.Styles
	sopt := opt
	sopt.LogX, sopt.LogY = st.View.ScatterLog, st.View.ScatterLog
	return charts.Scatter(st.Curves, sopt), charts.Curves(st.Curves, opt)
}

func toggle(list []string, name string, on bool) []string {
	out := make([]string, 0, len(list)+1)
	for _, n := range list {
		if n != name {
			out = append(out, n)
		}
	}
	if on {
		out = append(out, name)
	}
	return out
}

func unique(list []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(list))
	for _, n := range list {
		if n = strings.TrimSpace(n); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
