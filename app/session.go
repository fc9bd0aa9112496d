package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cnntime/app/charts"
	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// ModelChoice is a CNN the user can pick: a zoo model or one of their own.
type ModelChoice struct {
	Name   string
	Family string // "ResNet", "VGG", ...; "Custom" for the user's own
	Custom bool
}

// SessionBackend is where a Session gets its choices and predictions: the app's
// engine in the GUI, a fake in tests. Its methods may be called from any goroutine.
type SessionBackend interface {
	ModelChoices() []ModelChoice
	MachineChoices(ctx context.Context) ([]hw.Machine, error)
	// PredictCurves returns one curve per model × machine of the settings.
	PredictCurves(ctx context.Context, s SessionSettings) ([]predictor.Curve, error)
	// AddCustomModel reads a custom model file's contents and returns its name.
	AddCustomModel(data []byte) (string, error)
}

// SessionSettings are what the user chose to predict.
type SessionSettings struct {
	Models    []string          // CNN names
	Machines  []string          // machine IDs, e.g. "aws/p3.2xlarge"
	Epochs    int               // passes over the data set
	Images    int               // training images per epoch
	Precision measure.Precision // fp32, fp32-strict or amp
	Policy    measure.Policy    // cuDNN algorithm choice: heuristic or fastest
	BatchMin  int               // the smallest global batch size
	BatchMax  int               // the largest global batch size
	// Data is the dataset (its input size and classes), the input pipeline and the
	// memory format; Images is kept equal to the dataset's unless the user changes it.
	Data RunData
}

// DefaultSessionSettings are a fresh session's: ImageNet-1k for 90 epochs in FP32,
// batch sizes 1 to 1024, nothing selected.
func DefaultSessionSettings() SessionSettings {
	return SessionSettings{
		Epochs:    DefaultEpochs,
		Images:    predictor.ImageNetImages,
		Precision: measure.FP32,
		Policy:    measure.Heuristic,
		BatchMin:  1,
		BatchMax:  1024,
		Data:      DefaultRunData(), // the CLI's default too: the two predict alike
	}
}

// Limits on the settings, wide enough for any real training run.
const (
	MaxEpochs    = 100000
	MaxImages    = 10_000_000_000
	MaxBatchSize = 1 << 16
)

// Validate says what is wrong with the settings and how to fix it.
func (s SessionSettings) Validate() error {
	var errs []error
	if s.Epochs < 1 || s.Epochs > MaxEpochs {
		errs = append(errs, fmt.Errorf("epochs must be a whole number from 1 to %d, not %d", MaxEpochs, s.Epochs))
	}
	if s.Images < 1 || s.Images > MaxImages {
		errs = append(errs, fmt.Errorf("training images must be from 1 to %d, not %d", int64(MaxImages), s.Images))
	}
	if _, err := predictor.ParseTrainingPrecision(string(s.Precision)); err != nil {
		errs = append(errs, err)
	}
	if s.Policy != measure.NoPolicy {
		if _, err := measure.ParsePolicy(string(s.Policy)); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case s.BatchMin < 1:
		errs = append(errs, fmt.Errorf("the smallest batch size must be at least 1, not %d", s.BatchMin))
	case s.BatchMax < s.BatchMin:
		errs = append(errs, fmt.Errorf("the largest batch size (%d) is below the smallest (%d)", s.BatchMax, s.BatchMin))
	case s.BatchMax > MaxBatchSize:
		errs = append(errs, fmt.Errorf("the largest batch size must be at most %d, not %d", MaxBatchSize, s.BatchMax))
	}
	if err := s.Data.Check(); err != nil {
		errs = append(errs, err)
	}
	for _, list := range [][]string{s.Models, s.Machines} {
		for _, name := range list {
			if strings.TrimSpace(name) == "" {
				errs = append(errs, errors.New("an empty CNN or machine name was selected"))
			}
		}
	}
	return errors.Join(errs...)
}

// ChartSettings are how the charts show the curves.
type ChartSettings struct {
	Metric    charts.Metric
	LogX      bool
	LogY      bool
	Hidden    map[string]bool // series keys (charts.SeriesKey) toggled off in the legend
	Highlight string          // the series clicked in the scatter; "" for none
	// ScatterLog draws the scatter with logarithmic axes (for machines of very
	// different speeds); LogX and LogY are the curves chart's.
	ScatterLog bool
}

// Options are the chart options for these settings in a style.
func (v ChartSettings) Options(style charts.Style) charts.Options {
	return charts.Options{Metric: v.Metric, LogX: v.LogX, LogY: v.LogY, Hidden: v.Hidden, Highlight: v.Highlight, Style: style}
}

// SessionState is a snapshot of a session for the GUI to show.
type SessionState struct {
	Settings SessionSettings
	View     ChartSettings
	Curves   []predictor.Curve // the last prediction's, in models × machines order
	Err      error             // the last prediction's error
	Busy     bool              // a prediction is under way
}

// Preferences store a session's choices between launches (Fyne's preferences satisfy it).
type Preferences interface {
	String(key string) string
	SetString(key, value string)
}

// Preference keys the session reads and writes.
const (
	PrefModels     = "session.models"
	PrefMachines   = "session.machines"
	PrefEpochs     = "session.epochs"
	PrefImages     = "session.images"
	PrefPrecision  = "session.precision"
	PrefPolicy     = "session.policy"
	PrefBatchMin   = "session.batch_min"
	PrefBatchMax   = "session.batch_max"
	PrefDataset    = "session.dataset"
	PrefInput      = "session.input"
	PrefLoader     = "session.loader"
	PrefWorkers    = "session.workers"
	PrefFormat     = "session.memory_format"
	PrefMetric     = "chart.metric"
	PrefLogX       = "chart.log_x"
	PrefLogY       = "chart.log_y"
	PrefScatterLog = "chart.scatter_log"
)

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
	pending  bool   // a prediction is scheduled or running
	running  bool   // a prediction is running
	gen      uint64 // counts changes; a prediction for an older one is dropped
	timer    *time.Timer
	cancel   context.CancelFunc
	listener func(SessionState)
	closed   bool

	queueMu  sync.Mutex
	queue    []SessionState // notifications not yet delivered, oldest first
	draining bool           // a goroutine is delivering the queue
}

// NewSession starts a session with the choices remembered in prefs (nil for none),
// predicting delay after each change. It predicts the remembered selection at once.
func NewSession(backend SessionBackend, prefs Preferences, delay time.Duration) *Session {
	s := &Session{backend: backend, prefs: prefs, delay: delay}
	s.idle = sync.NewCond(&s.mu)
	s.settings, s.view = loadPrefs(prefs)
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
	return SessionState{Settings: s.settings.clone(), View: s.view.clone(), Curves: s.curves, Err: s.err, Busy: s.running}
}

// Settings are the current settings.
func (s *Session) Settings() SessionSettings { return s.State().Settings }

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
	if len(settings.Models) > 0 && len(settings.Machines) > 0 {
		curves, err = s.backend.PredictCurves(ctx, settings)
	}
	cancel()

	s.mu.Lock()
	if gen != s.gen { // superseded: the newer prediction reports
		s.mu.Unlock()
		return
	}
	s.curves, s.err = curves, err
	if err != nil {
		s.curves = nil
	}
	s.running, s.pending, s.cancel = false, false, nil
	s.idle.Broadcast()
	state = s.stateLocked()
	s.mu.Unlock()
	s.emit(state)
}

// Charts builds the scatter and the curves chart of the last prediction in a style.
func (st SessionState) Charts(style charts.Style) (scatter, curves *charts.Chart) {
	opt := st.View.Options(style)
	sopt := opt
	sopt.LogX, sopt.LogY = st.View.ScatterLog, st.View.ScatterLog
	return charts.Scatter(st.Curves, sopt), charts.Curves(st.Curves, opt)
}

func (s SessionSettings) clone() SessionSettings {
	s.Models = append([]string(nil), s.Models...)
	s.Machines = append([]string(nil), s.Machines...)
	return s
}

func (v ChartSettings) clone() ChartSettings {
	hidden := make(map[string]bool, len(v.Hidden))
	for k, on := range v.Hidden {
		if on {
			hidden[k] = true
		}
	}
	v.Hidden = hidden
	return v
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

// loadPrefs reads the remembered choices; anything unreadable falls back to its default.
func loadPrefs(p Preferences) (SessionSettings, ChartSettings) {
	s := DefaultSessionSettings()
	v := ChartSettings{Metric: charts.MetricTotal, LogX: true, LogY: true}
	if p == nil {
		return s, v
	}
	split := func(key string) []string {
		var out []string
		for _, part := range strings.Split(p.String(key), ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out
	}
	s.Models, s.Machines = split(PrefModels), split(PrefMachines)
	readInt := func(key string, into *int) {
		if n, err := strconv.Atoi(p.String(key)); err == nil {
			*into = n
		}
	}
	readInt(PrefEpochs, &s.Epochs)
	readInt(PrefImages, &s.Images)
	readInt(PrefBatchMin, &s.BatchMin)
	readInt(PrefBatchMax, &s.BatchMax)
	readInt(PrefInput, &s.Data.Input)
	readInt(PrefWorkers, &s.Data.Workers)
	for key, into := range map[string]*string{PrefDataset: &s.Data.Dataset, PrefLoader: &s.Data.Loader, PrefFormat: &s.Data.MemoryFormat} {
		if v := strings.TrimSpace(p.String(key)); v != "" {
			*into = v
		}
	}
	if prec, err := predictor.ParseTrainingPrecision(p.String(PrefPrecision)); err == nil {
		s.Precision = prec
	}
	if pol, err := measure.ParsePolicy(p.String(PrefPolicy)); err == nil {
		s.Policy = pol
	}
	if s.Validate() != nil {
		models, machines := s.Models, s.Machines
		s = DefaultSessionSettings()
		s.Models, s.Machines = unique(models), unique(machines)
	}
	if m, err := charts.ParseMetric(p.String(PrefMetric)); err == nil {
		v.Metric = m
	}
	if b, err := strconv.ParseBool(p.String(PrefLogX)); err == nil {
		v.LogX = b
	}
	if b, err := strconv.ParseBool(p.String(PrefLogY)); err == nil {
		v.LogY = b
	}
	if b, err := strconv.ParseBool(p.String(PrefScatterLog)); err == nil {
		v.ScatterLog = b
	}
	return s, v
}

func (s *Session) savePrefsLocked() {
	p := s.prefs
	if p == nil {
		return
	}
	st, v := s.settings, s.view
	p.SetString(PrefModels, strings.Join(st.Models, ","))
	p.SetString(PrefMachines, strings.Join(st.Machines, ","))
	p.SetString(PrefEpochs, strconv.Itoa(st.Epochs))
	p.SetString(PrefImages, strconv.Itoa(st.Images))
	p.SetString(PrefPrecision, string(st.Precision))
	p.SetString(PrefPolicy, string(st.Policy))
	p.SetString(PrefBatchMin, strconv.Itoa(st.BatchMin))
	p.SetString(PrefBatchMax, strconv.Itoa(st.BatchMax))
	p.SetString(PrefDataset, st.Data.Dataset)
	p.SetString(PrefInput, strconv.Itoa(st.Data.Input))
	p.SetString(PrefLoader, st.Data.Loader)
	p.SetString(PrefWorkers, strconv.Itoa(st.Data.Workers))
	p.SetString(PrefFormat, st.Data.MemoryFormat)
	if v.Metric != "" {
		p.SetString(PrefMetric, string(v.Metric))
	}
	p.SetString(PrefLogX, strconv.FormatBool(v.LogX))
	p.SetString(PrefLogY, strconv.FormatBool(v.LogY))
	p.SetString(PrefScatterLog, strconv.FormatBool(v.ScatterLog))
}

// Summary is one row of the results table: a CNN×machine at its best batch size.
type Summary struct {
	Model     string           `json:"model"`
	Machine   string           `json:"machine"`
	GPU       string           `json:"gpu"`
	GPUCount  int              `json:"gpu_count"`
	BestBatch int              `json:"best_batch"` // 0 when no batch size fits
	IterMS    float64          `json:"iter_ms"`
	EpochS    float64          `json:"epoch_s"`
	TotalS    float64          `json:"total_s"`
	CostUSD   float64          `json:"cost_usd"`
	EnergyKWh float64          `json:"energy_kwh"`
	MaxBatch  int              `json:"max_batch"` // the largest batch that fits in memory
	Source    predictor.Source `json:"source"`
	// Input is the input size; Bound what sets the best batch's pace ("gpu" or
	// "input"); LoaderImagesPerS the loader's own rate (0 for synthetic data).
	Input            int     `json:"input"`
	Bound            string  `json:"bound,omitempty"`
	LoaderImagesPerS float64 `json:"loader_images_per_s,omitempty"`
}

// Summarize makes one results row per curve, in the curves' order.
func Summarize(curves []predictor.Curve) []Summary {
	out := make([]Summary, len(curves))
	for i, c := range curves {
		row := Summary{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, MaxBatch: c.MaxBatch,
			Input: c.Input, LoaderImagesPerS: c.LoaderImagesPerS}
		if c.Best >= 0 && c.Best < len(c.Points) {
			p := c.Points[c.Best]
			row.BestBatch, row.IterMS, row.EpochS, row.TotalS = p.Batch, p.IterMS, p.EpochS, p.TotalS
			row.CostUSD, row.EnergyKWh, row.Source, row.Bound = p.CostUSD, p.EnergyKWh, p.Source, p.Bound
		}
		out[i] = row
	}
	return out
}

// SummaryColumns are the results table's columns, in order.
var SummaryColumns = []string{"CNN", "Machine", "Best batch", "Iteration", "Epoch", "Total time", "Cost", "Energy", "Max batch", "Source", "Bound"}

// Cell is a results row's text in column col (an index into SummaryColumns).
func (r Summary) Cell(col int) string {
	none := r.BestBatch == 0
	switch col {
	case 0:
		return r.Model
	case 1:
		return r.Machine
	case 2:
		if none {
			return "does not fit"
		}
		return strconv.Itoa(r.BestBatch)
	case 3:
		return orDash(none, charts.FormatMS(r.IterMS))
	case 4:
		return orDash(none, charts.FormatSeconds(r.EpochS))
	case 5:
		return orDash(none, charts.FormatSeconds(r.TotalS))
	case 6:
		return orDash(none, charts.FormatUSD(r.CostUSD))
	case 7:
		return orDash(none, strconv.FormatFloat(r.EnergyKWh, 'f', 1, 64)+" kWh")
	case 8:
		return strconv.Itoa(r.MaxBatch)
	case 9:
		return string(r.Source)
	case 10:
		return orDash(none, r.Bound)
	}
	return ""
}

func orDash(none bool, s string) string {
	if none {
		return "–"
	}
	return s
}

// SortSummaries sorts rows by a column (an index into SummaryColumns), numbers by
// value; rows where nothing fits go last either way. The sort is stable.
func SortSummaries(rows []Summary, col int, descending bool) {
	key := func(r Summary) (float64, string) {
		switch col {
		case 0:
			return 0, r.Model + "\x00" + r.Machine
		case 1:
			return 0, r.Machine + "\x00" + r.Model
		case 2:
			return float64(r.BestBatch), ""
		case 3:
			return r.IterMS, ""
		case 4:
			return r.EpochS, ""
		case 5:
			return r.TotalS, ""
		case 6:
			return r.CostUSD, ""
		case 7:
			return r.EnergyKWh, ""
		case 8:
			return float64(r.MaxBatch), ""
		case 10:
			return 0, r.Bound
		default:
			return 0, string(r.Source)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if (a.BestBatch == 0) != (b.BestBatch == 0) && col != 0 && col != 1 {
			return b.BestBatch == 0
		}
		an, as := key(a)
		bn, bs := key(b)
		if descending {
			an, as, bn, bs = bn, bs, an, as
		}
		if as != bs {
			return as < bs
		}
		return an < bn
	})
}

// BatchGrid is the batch sizes a session predicts between lo and hi: every size up to
// 64, every multiple of 8 up to 512 and of 32 beyond, plus the powers of two and the
// ends. Dense enough to show the jumps that tile and wave quantization make.
func BatchGrid(lo, hi int) []int {
	var out []int
	for b := lo; b <= hi; b++ {
		if b == lo || b == hi || b <= 64 || (b <= 512 && b%8 == 0) || b%32 == 0 || b&(b-1) == 0 {
			out = append(out, b)
		}
	}
	return out
}

// EngineBackend is the SessionBackend of the desktop app: the prediction engine over
// the measurement cache. The custom models the user adds are registered with the
// engine, so they are predicted from the cache's measurements like zoo models, and
// saved in the cache, so they come back at the next start.
type EngineBackend struct {
	cache  *db.DB
	mu     sync.Mutex
	engine *Engine
	added  []*cnn.Network // custom models added since start, registered again when the engine is rebuilt
}

// OpenEngineBackend opens the cache at dbPath (created when missing) and loads the
// engine. With dbPath "" it works without a cache: the embedded catalog and
// calibration only, nothing measured, nothing to import into.
func OpenEngineBackend(ctx context.Context, dbPath string) (*EngineBackend, error) {
	var d *db.DB
	if dbPath != "" {
		var err error
		if d, err = db.Open(dbPath); err != nil {
			return nil, err
		}
	}
	e, err := NewEngine(ctx, d)
	if err != nil {
		if d != nil {
			d.Close()
		}
		return nil, err
	}
	return &EngineBackend{cache: d, engine: e}, nil
}

// DB is the open measurement cache, nil when working without one.
func (b *EngineBackend) DB() *db.DB { return b.cache }

// Import merges another machine's cache file or a CSV of measured step times into the
// cache, reloads the engine, and says what it added.
func (b *EngineBackend) Import(ctx context.Context, path string) (string, error) {
	if b.cache == nil {
		return "", errors.New("import: the app runs without a measurement cache (it could not be opened at start); restart it with a writable --db file")
	}
	rep, err := b.cache.Import(ctx, path)
	if err != nil {
		return "", err
	}
	if err := b.Reload(ctx); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Imported %s (%s): %d devices; measurements: %s; step times: %s; %d custom models.",
		rep.File, rep.Kind, rep.Devices, MergedText(rep.Measurements), MergedText(rep.Steps), rep.CustomModels)
	if len(rep.CustomModelClashes) > 0 {
		msg += fmt.Sprintf(" Not imported, as yours of the same name differ: %s.", strings.Join(rep.CustomModelClashes, ", "))
	}
	return msg, nil
}

// Reload rebuilds the engine after the cache changed (a sweep or an import).
func (b *EngineBackend) Reload(ctx context.Context) error {
	e, err := NewEngine(ctx, b.cache)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, net := range b.added { // the cache has them too, unless there is no cache
		if err := e.AddNetwork(net); err != nil {
			return err
		}
	}
	b.engine = e
	return nil
}

// Warnings says what the engine left out of the cache at its last load, and why.
func (b *EngineBackend) Warnings() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.engine.Warnings()
}

// Close closes the cache.
func (b *EngineBackend) Close() error {
	if b.cache == nil {
		return nil
	}
	return b.cache.Close()
}

// ModelChoices lists the zoo by family, then the custom models in the order added.
func (b *EngineBackend) ModelChoices() []ModelChoice {
	var out []ModelChoice
	for _, n := range cnn.Names() {
		out = append(out, ModelChoice{Name: n, Family: cnn.Family(n)})
	}
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	for _, n := range e.CustomNames() {
		out = append(out, ModelChoice{Name: n, Family: "Custom", Custom: true})
	}
	return out
}

// MachineChoices lists the catalog's machines and the user's.
func (b *EngineBackend) MachineChoices(ctx context.Context) ([]hw.Machine, error) {
	return Machines(ctx, b.cache)
}

// AddCustomModel reads a custom model (cnn.ParseCustom's JSON format), saves it in the
// cache and registers it with the engine; a model of the same name is replaced. A
// model that does not read or cannot be saved changes nothing.
func (b *EngineBackend) AddCustomModel(data []byte) (string, error) {
	net, err := cnn.ParseCustom(data)
	if err != nil {
		return "", fmt.Errorf("read the custom model: %w", err)
	}
	if err := CheckCustomNetwork(net); err != nil {
		return "", err
	}
	if b.cache != nil {
		if err := b.cache.PutCustomModel(context.Background(), net.Name, data); err != nil {
			return "", err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.engine.AddNetwork(net); err != nil {
		return "", err
	}
	b.added = slices.DeleteFunc(b.added, func(n *cnn.Network) bool { return n.Name == net.Name })
	b.added = append(b.added, net)
	return net.Name, nil
}

// PredictCurves predicts every model × machine of the settings, models outer.
func (b *EngineBackend) PredictCurves(ctx context.Context, s SessionSettings) ([]predictor.Curve, error) {
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	targets := make([]Target, 0, len(s.Machines))
	for _, id := range s.Machines {
		t, err := e.MachineTarget(id)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	q := Query{Models: s.Models, Targets: targets, Batches: BatchGrid(s.BatchMin, s.BatchMax), Precision: s.Precision,
		Policy: s.Policy, Run: predictor.Run{Epochs: s.Epochs, Images: s.Images}, Data: s.Data}
	return e.Curves(ctx, q)
}
