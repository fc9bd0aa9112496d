package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// fakeBackend predicts a curve per model × machine whose total time is the batch
// size's reciprocal times the number of epochs, so results are easy to check.
type fakeBackend struct {
	calls   atomic.Int32
	block   chan struct{} // when set, the first prediction waits on it
	blocked atomic.Bool
	fail    error
}

func (f *fakeBackend) ModelChoices() []ModelChoice {
	return []ModelChoice{{Name: "resnet50", Family: "ResNet"}, {Name: "vgg16", Family: "VGG"}}
}

func (f *fakeBackend) MachineChoices(context.Context) ([]hw.Machine, error) {
	return []hw.Machine{{ID: "aws/p3.2xlarge", Provider: "AWS", GPUID: "v100", GPUCount: 1}}, nil
}

func (f *fakeBackend) AddCustomModel(data []byte) (string, error) {
	name := strings.TrimSpace(string(data))
	if name == "" {
		return "", errors.New("custom model file is empty")
	}
	return name, nil
}

func (f *fakeBackend) PredictCurves(ctx context.Context, s SessionSettings) ([]predictor.Curve, error) {
	if f.calls.Add(1) == 1 && f.block != nil {
		f.blocked.Store(true)
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.fail != nil {
		return nil, f.fail
	}
	var out []predictor.Curve
	for _, m := range s.Models {
		for _, k := range s.Machines {
			c := predictor.Curve{Model: m, Machine: k, GPUCount: 1, Best: -1}
			for b := s.BatchMin; b <= s.BatchMax; b *= 2 {
				total := float64(s.Epochs) * 1000 / float64(b)
				c.Points = append(c.Points, predictor.Point{Batch: b, Fits: b <= 256, TotalS: total, IterMS: 10, EpochS: total / float64(s.Epochs), CostUSD: total / 3600, Source: predictor.Estimated})
				if b <= 256 {
					c.Best, c.MaxBatch = len(c.Points)-1, b
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

type mapPrefs struct {
	mu sync.Mutex
	m  map[string]string
}

func (p *mapPrefs) String(k string) string { p.mu.Lock(); defer p.mu.Unlock(); return p.m[k] }
func (p *mapPrefs) SetString(k, v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]string{}
	}
	p.m[k] = v
}

func waitIdle(t *testing.T, s *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx); err != nil {
		t.Fatalf("session did not settle: %v", err)
	}
}

func TestSessionSettingsValidate(t *testing.T) {
	ok := DefaultSessionSettings()
	tests := []struct {
		name    string
		change  func(*SessionSettings)
		wantErr string
	}{
		{"defaults", func(*SessionSettings) {}, ""},
		{"zero epochs", func(s *SessionSettings) { s.Epochs = 0 }, "epochs must be"},
		{"no images", func(s *SessionSettings) { s.Images = 0 }, "training images"},
		{"bad precision", func(s *SessionSettings) { s.Precision = "fp64" }, "fp64"},
		{"bad policy", func(s *SessionSettings) { s.Policy = "guess" }, "guess"},
		{"batch below 1", func(s *SessionSettings) { s.BatchMin = 0 }, "at least 1"},
		{"batch range reversed", func(s *SessionSettings) { s.BatchMin, s.BatchMax = 64, 32 }, "below the smallest"},
		{"batch too large", func(s *SessionSettings) { s.BatchMax = 1 << 20 }, "at most 65536"},
		{"blank model", func(s *SessionSettings) { s.Models = []string{" "} }, "empty CNN"},
	}
	for _, tt := range tests {
		s := ok.clone()
		tt.change(&s)
		err := s.Validate()
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: Validate() = %v, want error containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestSessionPredictsAfterChanges(t *testing.T) {
	fb := &fakeBackend{}
	s := NewSession(fb, nil, 100*time.Millisecond)
	defer s.Close()
	waitIdle(t, s)
	if n := fb.calls.Load(); n != 0 {
		t.Fatalf("an empty selection called the predictor %d times", n)
	}
	var states []SessionState
	var mu sync.Mutex
	s.OnChange(func(st SessionState) { mu.Lock(); states = append(states, st); mu.Unlock() })

	// A burst of changes inside the delay makes one prediction, of the final settings.
	for _, m := range []string{"resnet50", "vgg16", "alexnet"} {
		if err := s.SetModel(m, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetModel("alexnet", false); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMachine("aws/p3.2xlarge", true); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	if n := fb.calls.Load(); n != 1 {
		t.Errorf("a burst of changes made %d predictions, want 1", n)
	}
	st := s.State()
	if len(st.Curves) != 2 || st.Curves[0].Model != "resnet50" || st.Curves[1].Model != "vgg16" || st.Err != nil || st.Busy {
		t.Fatalf("state after prediction: %d curves, err %v, busy %v", len(st.Curves), st.Err, st.Busy)
	}
	// Notifications arrive in order on the session's own goroutine, possibly after Wait.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(states)
		last := SessionState{}
		if n > 0 {
			last = states[n-1]
		}
		mu.Unlock()
		if len(last.Curves) == 2 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	n := len(states)
	if n < 2 || !states[n-2].Busy || states[n-1].Busy || len(states[n-1].Curves) != 2 {
		t.Errorf("listener saw %d states; want busy then done with 2 curves at the end", n)
	}
}

func TestSessionRejectsBadInputUnchanged(t *testing.T) {
	fb := &fakeBackend{}
	s := NewSession(fb, nil, time.Millisecond)
	defer s.Close()
	before := s.Settings()
	err := s.Update(func(st *SessionSettings) { st.Epochs = -3; st.Models = []string{"resnet50"} })
	if err == nil || !strings.Contains(err.Error(), "epochs") {
		t.Fatalf("Update with -3 epochs: %v", err)
	}
	after := s.Settings()
	if after.Epochs != before.Epochs || len(after.Models) != 0 {
		t.Errorf("a rejected update changed the settings: %+v", after)
	}
}

func TestSessionDropsSupersededPrediction(t *testing.T) {
	fb := &fakeBackend{block: make(chan struct{})}
	s := NewSession(fb, nil, time.Millisecond)
	defer s.Close()
	if err := s.Update(func(st *SessionSettings) { st.Models, st.Machines = []string{"resnet50"}, []string{"a"} }); err != nil {
		t.Fatal(err)
	}
	for !fb.blocked.Load() {
		time.Sleep(time.Millisecond)
	}
	// The first prediction is stuck; a new selection cancels it and wins.
	if err := s.SetModel("vgg16", true); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	st := s.State()
	if len(st.Curves) != 2 || st.Err != nil {
		t.Fatalf("after superseding: %d curves, err %v; want the 2 of the newer settings", len(st.Curves), st.Err)
	}
}

func TestSessionReportsErrors(t *testing.T) {
	fb := &fakeBackend{fail: errors.New("cache is locked")}
	s := NewSession(fb, nil, time.Millisecond)
	defer s.Close()
	if err := s.Update(func(st *SessionSettings) { st.Models, st.Machines = []string{"resnet50"}, []string{"a"} }); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	if st := s.State(); st.Err == nil || len(st.Curves) != 0 {
		t.Errorf("state = %d curves, err %v; want the backend's error", len(st.Curves), st.Err)
	}
}

func TestSessionRemembersChoices(t *testing.T) {
	prefs := &mapPrefs{}
	s := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	err := s.Update(func(st *SessionSettings) {
		st.Models, st.Machines = []string{"vgg16", "resnet50"}, []string{"gcp/a2-highgpu-1g"}
		st.Epochs, st.Images, st.Precision, st.BatchMin, st.BatchMax = 30, 50000, measure.AMP, 8, 512
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateView(func(v *ChartSettings) { v.Metric, v.LogY = charts.MetricCost, false }); err != nil {
		t.Fatal(err)
	}
	s.Close()

	again := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	defer again.Close()
	st := again.State()
	got := st.Settings
	if strings.Join(got.Models, ",") != "vgg16,resnet50" || strings.Join(got.Machines, ",") != "gcp/a2-highgpu-1g" ||
		got.Epochs != 30 || got.Images != 50000 || got.Precision != measure.AMP || got.BatchMin != 8 || got.BatchMax != 512 {
		t.Errorf("remembered settings = %+v", got)
	}
	if st.View.Metric != charts.MetricCost || st.View.LogY || !st.View.LogX {
		t.Errorf("remembered view = %+v", st.View)
	}

	// Broken preferences fall back to the defaults but keep the selection.
	prefs.SetString(PrefEpochs, "-1")
	prefs.SetString(PrefMetric, "speed")
	third := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	defer third.Close()
	st = third.State()
	if st.Settings.Epochs != 90 || st.View.Metric != charts.MetricTotal || len(st.Settings.Models) != 2 {
		t.Errorf("broken preferences gave %+v, %+v", st.Settings, st.View)
	}
}

func TestSessionSetViewRejectsUnknownMetric(t *testing.T) {
	s := NewSession(&fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	if err := s.SetView(ChartSettings{Metric: "speed"}); err == nil {
		t.Error("unknown metric accepted")
	}
	if m := s.State().View.Metric; m != charts.MetricTotal {
		t.Errorf("metric after a rejected change = %q", m)
	}
}

func TestAddCustomModelSelectsIt(t *testing.T) {
	s := NewSession(&fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	name, err := s.AddCustomModel([]byte("mynet"))
	if err != nil || name != "mynet" {
		t.Fatalf("AddCustomModel = %q, %v", name, err)
	}
	if got := s.Settings().Models; len(got) != 1 || got[0] != "mynet" {
		t.Errorf("models after adding = %v", got)
	}
	if _, err := s.AddCustomModel([]byte(" ")); err == nil {
		t.Error("an empty model file was accepted")
	}
}

func TestSummarizeAndSort(t *testing.T) {
	pt := func(b int, total, cost float64) predictor.Point {
		return predictor.Point{Batch: b, Fits: true, TotalS: total, CostUSD: cost, Source: predictor.Measured}
	}
	curves := []predictor.Curve{
		{Model: "vgg16", Machine: "b", Points: []predictor.Point{pt(32, 900, 9), pt(64, 800, 8)}, Best: 1, MaxBatch: 64, CostKnown: true},
		{Model: "resnet50", Machine: "a", Points: []predictor.Point{pt(32, 500, 12)}, Best: 0, MaxBatch: 32, CostKnown: true},
		{Model: "alexnet", Machine: "c", Points: []predictor.Point{{Batch: 32}}, Best: -1},
		{Model: "densenet121", Machine: "gpu/t4", Points: []predictor.Point{pt(32, 700, 0)}, Best: 0, MaxBatch: -1},
	}
	rows := Summarize(curves)
	if rows[0].BestBatch != 64 || rows[0].TotalS != 800 || rows[2].BestBatch != 0 || rows[1].Source != predictor.Measured {
		t.Fatalf("Summarize = %+v", rows)
	}
	tests := []struct {
		col  SummaryColumn
		desc bool
		want string
	}{
		{ColumnCNN, false, "alexnet,densenet121,resnet50,vgg16"},
		{ColumnCNN, true, "vgg16,resnet50,densenet121,alexnet"},
		{ColumnTotal, false, "resnet50,densenet121,vgg16,alexnet"}, // nothing-fits last
		{ColumnTotal, true, "vgg16,densenet121,resnet50,alexnet"},
		{ColumnCost, false, "vgg16,resnet50,alexnet,densenet121"}, // no price last too
		{ColumnCost, true, "resnet50,vgg16,alexnet,densenet121"},
		{ColumnBestBatch, true, "vgg16,resnet50,densenet121,alexnet"},
	}
	for _, tt := range tests {
		r := append([]Summary(nil), rows...)
		SortSummaries(r, tt.col, tt.desc)
		var names []string
		for _, x := range r {
			names = append(names, x.Model)
		}
		if got := strings.Join(names, ","); got != tt.want {
			t.Errorf("sort by %s desc=%v: %s, want %s", SummaryColumns[tt.col], tt.desc, got, tt.want)
		}
	}
	if got := rows[2].Cell(ColumnBestBatch); got != "does not fit" {
		t.Errorf("best batch cell of a curve where nothing fits = %q", got)
	}
	for _, c := range []struct {
		row  int
		col  SummaryColumn
		want string
	}{
		{0, ColumnCost, "$8.00"},
		{3, ColumnCost, "no price"},
		{3, ColumnEnergy, "unknown"},
		{3, ColumnMaxBatch, "unknown"},
		{2, ColumnCost, "–"},
	} {
		if got := rows[c.row].Cell(c.col); got != c.want {
			t.Errorf("row %d %s cell = %q, want %q", c.row, SummaryColumns[c.col], got, c.want)
		}
	}
}

// timedBackend records how long each of its predictions took by its own clock.
type timedBackend struct {
	fakeBackend
	mu   sync.Mutex
	took []time.Duration
	hold time.Duration // how long a prediction works
}

func (b *timedBackend) PredictCurves(ctx context.Context, s SessionSettings) ([]predictor.Curve, error) {
	start := time.Now()
	time.Sleep(b.hold)
	curves, err := b.fakeBackend.PredictCurves(ctx, s)
	b.mu.Lock()
	b.took = append(b.took, time.Since(start))
	b.mu.Unlock()
	return curves, err
}

// The state's Took is the prediction's own duration: at least what the backend spent
// and no more than the wait for the result, and a redraw (a view change) long after
// leaves it as it was. (The status bar once said "Predicted 12 curves in 45.9 s" for
// a 0.1 s redraw: it timed from the last busy state to the redraw.)
func TestSessionTookIsThePredictionsOwnDuration(t *testing.T) {
	b := &timedBackend{hold: 30 * time.Millisecond}
	s := NewSession(b, nil, 0)
	defer s.Close()
	waitIdle(t, s)
	asked := time.Now()
	if err := s.Update(func(st *SessionSettings) {
		st.Models, st.Machines, st.BatchMin, st.BatchMax = []string{"resnet50"}, []string{"aws/p3.2xlarge"}, 1, 64
	}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	waited := time.Since(asked)
	st := s.State()
	b.mu.Lock()
	own := b.took[len(b.took)-1]
	b.mu.Unlock()
	if st.Took < own || st.Took > waited {
		t.Errorf("Took %v: want between the backend's own %v and the whole wait %v", st.Took, own, waited)
	}
	time.Sleep(3 * b.hold)
	if err := s.UpdateView(func(v *ChartSettings) { v.LogX = !v.LogX }); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	if got := s.State().Took; got != st.Took {
		t.Errorf("after a redraw Took is %v, want the prediction's %v", got, st.Took)
	}
}

// The session keeps each machine's colour and each CNN's marker across predictions:
// deselecting one machine leaves the others' looks as they were.
func TestSessionKeepsSeriesLooks(t *testing.T) {
	s := NewSession(&fakeBackend{}, nil, 0)
	defer s.Close()
	machines := []string{"aws/p3.2xlarge", "gcp/a2-highgpu-1g", "lambda/gpu_1x_a10"}
	if err := s.Update(func(st *SessionSettings) {
		st.Models, st.Machines, st.BatchMin, st.BatchMax = []string{"resnet50", "vgg16"}, machines, 1, 64
	}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	st := s.State()
	before := map[string]charts.SeriesStyle{}
	for _, c := range st.Curves {
		before[charts.SeriesKey(c)] = st.Styles.Of(c)
	}
	if err := s.SetMachine("aws/p3.2xlarge", false); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	st = s.State()
	if len(st.Curves) != 4 {
		t.Fatalf("%d curves after deselecting a machine, want 4", len(st.Curves))
	}
	for _, c := range st.Curves {
		if got, want := st.Styles.Of(c), before[charts.SeriesKey(c)]; got.Color != want.Color || got.ShapeSlot != want.ShapeSlot {
			t.Errorf("%s changed look: %+v, was %+v", charts.SeriesKey(c), got, want)
		}
	}
}
