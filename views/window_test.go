package views

import (
	"context"
	"encoding/csv"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/recipe"
)

// fakeBackend predicts curves whose iteration time is scale·(8 + 0.5·B + 0.0004·B²) ms,
// least total time at batch 128 on the grid; the scale grows with the model's and
// machine's position in the lists.
type fakeBackend struct{}

var fakeMachines = []hw.Machine{
	{ID: "aws/p3.2xlarge", Provider: "AWS", Instance: "p3.2xlarge", GPUID: "v100-sxm2-16gb", GPUCount: 1, PriceUSDPerHour: 3.06},
	{ID: "gcp/a2-highgpu-1g", Provider: "GCP", Instance: "a2-highgpu-1g", GPUID: "a100-sxm4-40gb", GPUCount: 1, PriceUSDPerHour: 3.67},
	{ID: "lambda/gpu_1x_a10", Provider: "Lambda", Instance: "gpu_1x_a10", GPUID: "a10-24gb", GPUCount: 1, PriceUSDPerHour: 0.75},
}

func (fakeBackend) ModelChoices() []app.ModelChoice {
	return []app.ModelChoice{{Name: "resnet50", Family: "ResNet"}, {Name: "vgg16", Family: "VGG"}, {Name: "mobilenet_v2", Family: "MobileNet"}}
}

func (fakeBackend) MachineChoices(context.Context) ([]hw.Machine, error) { return fakeMachines, nil }

func (fakeBackend) AddCustomModel([]byte) (string, error) { return "", os.ErrInvalid }

func (fakeBackend) PredictCurves(_ context.Context, s app.SessionSettings) ([]predictor.Curve, error) {
	var out []predictor.Curve
	for i, m := range s.Models {
		for k, id := range s.Machines {
			price := 1.0
			for _, fm := range fakeMachines {
				if fm.ID == id {
					price = fm.PriceUSDPerHour
				}
			}
			scale := (1 + 0.5*float64(i)) / (1 + 0.7*float64(k))
			c := predictor.Curve{Model: m, Machine: id, GPUCount: 1, Best: -1, Precision: s.Precision, PriceUSDPerHour: price, CostKnown: true}
			if s.Train.Mode == app.TrainToTarget {
				c.Recipe = &recipe.Plan{Network: m} // counted to a target: the views name the metrics so
			}
			for _, b := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024} {
				if b < s.BatchMin || (s.BatchMax > 0 && b > s.BatchMax) {
					continue
				}
				p := predictor.Point{Batch: b, Fits: b <= 512, Source: predictor.Estimated}
				if p.Fits {
					fb := float64(b)
					p.IterMS = scale * (8 + 0.5*fb + 0.0004*fb*fb)
					p.ImagesPerS = fb / p.IterMS * 1000
					p.EpochS = math.Ceil(float64(s.Images)/fb) * p.IterMS / 1000
					p.TotalS = float64(s.Epochs) * p.EpochS
					p.CostUSD = p.TotalS / 3600 * price
					c.MaxBatch = b
					if c.Best < 0 || p.TotalS < c.Points[c.Best].TotalS {
						c.Best = len(c.Points)
					}
				}
				c.Points = append(c.Points, p)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func newTestWindow(t *testing.T) *MainWindow {
	t.Helper()
	a := newTestApp(t)
	a.Preferences().SetString(app.PrefSaved, "1") // a returning user with nothing selected, not a first launch
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindowWith(a, fakeBackend{})
		mw.Window.Resize(fyne.NewSize(1400, 900))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(mw.Session.Close)
	return mw
}

// onUI runs f as UI code: on the test driver's goroutine, serialised with show.
func onUI(mw *MainWindow, f func()) {
	fyne.DoAndWait(func() {
		mw.uiMu.Lock()
		defer mw.uiMu.Unlock()
		f()
	})
}

// settle waits for the session's prediction and both charts' renders.
func settle(t *testing.T, mw *MainWindow) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mw.Session.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		done := true
		onUI(mw, func() {
			st := mw.Session.State()
			if len(mw.state.Curves) != len(st.Curves) || mw.state.Busy {
				done = false
				return
			}
			for _, v := range []*ChartView{mw.Scatter, mw.Curves} {
				if c := v.Chart(); c != nil && !c.Empty() && v.Frame() == nil {
					done = false
				}
			}
		})
		if done {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the charts were not drawn within 10 s")
}

// markPosition is where a chart mark lies in the widget.
func markPosition(v *ChartView, m charts.Mark) fyne.Position {
	f := v.Frame()
	px, py := f.ToPixel(m.X, m.Y)
	return v.fromFrame(f, px, py)
}

func TestSelectingChangesChartsAndResults(t *testing.T) {
	mw := newTestWindow(t)
	settle(t, mw)
	if mw.Scatter.Chart() == nil || !mw.Scatter.Chart().Empty() || len(mw.Results.Rows()) != 0 {
		t.Fatal("a fresh window with nothing selected shows data")
	}
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	rows := mw.Results.Rows()
	if len(rows) != 1 || rows[0].Model != "resnet50" || rows[0].Machine != "aws/p3.2xlarge" || rows[0].BestBatch != 128 {
		t.Fatalf("results after selecting one CNN and one machine: %+v", rows)
	}
	if n := len(mw.Scatter.Chart().Marks()); n != 1 {
		t.Errorf("scatter has %d points, want 1", n)
	}
	if n := len(mw.Curves.Chart().Marks()); n != 11 { // 10 fitting batch sizes and the out-of-memory cut
		t.Errorf("curves chart has %d marks, want 11", n)
	}

	onUI(mw, func() {
		mw.Selection.ToggleModel("vgg16", true)
		mw.Selection.ToggleMachine("gcp/a2-highgpu-1g", true)
		mw.Selection.ToggleMachine("lambda/gpu_1x_a10", true)
	})
	settle(t, mw)
	if n := len(mw.Results.Rows()); n != 6 {
		t.Errorf("2 CNNs × 3 machines gave %d results rows", n)
	}
	if n := len(mw.Scatter.Chart().Marks()); n != 6 {
		t.Errorf("scatter has %d points, want 6", n)
	}
	if n := mw.Legend.Entries(); n != 6 {
		t.Errorf("legend has %d entries, want 6", n)
	}
	if got := mw.Status.Text; !strings.Contains(got, "Predicted 6 curves") {
		t.Errorf("status bar says %q", got)
	}
}

// TestMetricNamesFollowTheMode: trained to a target, the curves' metric menu and the
// results table say "Time to target" and "Cost to target" (issue 43: "Total time"),
// and the metric chosen stays chosen.
func TestMetricNamesFollowTheMode(t *testing.T) {
	mw := newTestWindow(t)
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	onUI(mw, func() { mw.metric.SetSelected("Cost") })
	settle(t, mw)
	if err := mw.Session.Update(func(s *app.SessionSettings) { s.Train.Mode = app.TrainToTarget }); err != nil {
		t.Fatal(err)
	}
	settle(t, mw)
	var options []string
	var selected string
	onUI(mw, func() { options, selected = mw.metric.Options, mw.metric.Selected })
	if options[0] != "Time to target" || selected != "Cost to target" || mw.Session.State().View.Metric != charts.MetricCost {
		t.Errorf("to a target: menu %q, %q selected, metric %q", options, selected, mw.Session.State().View.Metric)
	}
	if titles := app.SummaryTitles(mw.Results.Rows()); titles[app.ColumnTotal] != "Time to target" {
		t.Errorf("results header %q", titles[app.ColumnTotal])
	}
	if err := mw.Session.Update(func(s *app.SessionSettings) { s.Train.Mode = app.TrainEpochs }); err != nil {
		t.Fatal(err)
	}
	settle(t, mw)
	onUI(mw, func() { options, selected = mw.metric.Options, mw.metric.Selected })
	if options[0] != "Total time" || selected != "Cost" {
		t.Errorf("fixed epochs again: menu %q, %q selected", options, selected)
	}
}

func TestHoverShowsBatchSize(t *testing.T) {
	mw := newTestWindow(t)
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleModel("vgg16", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	for _, m := range mw.Scatter.Chart().Marks() {
		var tip string
		onUI(mw, func() {
			got, ok := mw.Scatter.Hover(markPosition(mw.Scatter, m))
			if !ok || got.Curve != m.Curve {
				t.Errorf("hovering scatter point of curve %d found %+v, %v", m.Curve, got, ok)
			}
			tip = mw.Scatter.TooltipText()
		})
		c := mw.state.Curves[m.Curve]
		if !strings.Contains(tip, "best batch size 128") || !strings.Contains(tip, c.Model+" on "+c.Machine) || !strings.Contains(tip, "cost $") {
			t.Errorf("scatter tooltip %q", tip)
		}
	}
	// On the curves chart, hovering the point at batch 64 of the first curve reads it out.
	var target charts.Mark
	for _, m := range mw.Curves.Chart().Marks() {
		if m.Curve == 0 && m.X == 64 {
			target = m
		}
	}
	onUI(mw, func() {
		mw.Curves.Hover(markPosition(mw.Curves, target).Add(fyne.NewPos(2, 1)))
		if tip := mw.Curves.TooltipText(); !strings.Contains(tip, "batch size 64\n") || !strings.Contains(tip, "source: estimated") {
			t.Errorf("curves tooltip %q", tip)
		}
		if !mw.Curves.vLine.Visible() {
			t.Error("no crosshair on the curves chart")
		}
		mw.Curves.Hover(fyne.NewPos(1, 1)) // outside the data area
		if mw.Curves.TooltipText() != "" || mw.Curves.vLine.Visible() {
			t.Error("hover outside the data area still shows a tooltip or crosshair")
		}
	})
}

func TestScatterClickHighlightsAndLegendHides(t *testing.T) {
	mw := newTestWindow(t)
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
		mw.Selection.ToggleMachine("gcp/a2-highgpu-1g", true)
	})
	settle(t, mw)
	m := mw.Scatter.Chart().Marks()[1]
	onUI(mw, func() { mw.Scatter.Tapped(&fyne.PointEvent{Position: markPosition(mw.Scatter, m)}) })
	settle(t, mw)
	want := charts.SeriesKey(mw.state.Curves[m.Curve])
	if got := mw.Session.State().View.Highlight; got != want {
		t.Errorf("highlight after clicking %q is %q", want, got)
	}
	onUI(mw, func() { mw.Legend.OnToggle(want, false) })
	settle(t, mw)
	if n := len(mw.Scatter.Chart().Marks()); n != 1 {
		t.Errorf("after hiding a series the scatter has %d points, want 1", n)
	}
}

func TestBadEntryChangesNothing(t *testing.T) {
	mw := newTestWindow(t)
	before := mw.Session.Settings()
	onUI(mw, func() { mw.Selection.Epochs.SetText("-5") })
	if err := mw.Selection.Epochs.Validate(); err == nil {
		t.Error("-5 epochs passed validation")
	}
	if got := mw.Session.Settings().Epochs; got != before.Epochs {
		t.Errorf("epochs became %d after a bad entry", got)
	}
	onUI(mw, func() { mw.Selection.Epochs.SetText("30") })
	if got := mw.Session.Settings().Epochs; got != 30 {
		t.Errorf("epochs = %d after entering 30", got)
	}
}

func TestExportFromWindow(t *testing.T) {
	mw := newTestWindow(t)
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	dir := t.TempDir()
	tests := []struct {
		what, file string
		check      func([]byte) bool
	}{
		{exportCurves, "c.png", func(b []byte) bool { _, err := png.Decode(strings.NewReader(string(b))); return err == nil }},
		{exportScatter, "s.pdf", func(b []byte) bool { return strings.HasPrefix(string(b), "%PDF") }},
		{exportScatter, "s.svg", func(b []byte) bool { return strings.Contains(string(b), "<svg") }},
		{exportResultsCSV, "r.csv", func(b []byte) bool {
			recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
			return err == nil && len(recs) == 2 && recs[1][4] == "128"
		}},
		{exportCurvesCSV, "k.csv", func(b []byte) bool { return strings.Count(string(b), "\n") == 12 }},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.file)
		var err error
		onUI(mw, func() { err = mw.Export(ExportRequest{What: tt.what, Path: path, Width: 800, Height: 500}) })
		if err != nil {
			t.Fatalf("%s: %v", tt.what, err)
		}
		data, err := os.ReadFile(path)
		if err != nil || !tt.check(data) {
			t.Errorf("%s to %s: bad file (%v)", tt.what, tt.file, err)
		}
	}
	var err error
	onUI(mw, func() {
		err = mw.Export(ExportRequest{What: exportCurves, Path: filepath.Join(dir, "c.gif"), Width: 800, Height: 500})
	})
	if err == nil || !strings.Contains(err.Error(), ".png, .svg or .pdf") {
		t.Errorf("export to .gif: %v", err)
	}
}

// The status bar times a prediction by the prediction's own duration: a redraw (log
// x) long after it says the same, and while a prediction runs the charts dim under a
// spinner and come back when it is done.
func TestStatusTimeIsThePredictions(t *testing.T) {
	mw := newTestWindow(t)
	settle(t, mw)
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	var first string
	onUI(mw, func() { first = mw.Status.Text })
	took := mw.Session.State().Took
	if !strings.Contains(first, "Predicted 1 curve in "+formatTook(took)+":") {
		t.Fatalf("status %q does not give the prediction's own time %s", first, formatTook(took))
	}
	time.Sleep(1100 * time.Millisecond) // long enough that a clock from the last busy state shows seconds
	onUI(mw, func() { mw.logX.SetChecked(!mw.logX.Checked) })
	settle(t, mw)
	onUI(mw, func() {
		if mw.Status.Text != first {
			t.Errorf("after a redraw the status says %q, want the prediction's %q", mw.Status.Text, first)
		}
	})
	// Busy: dimmed with a spinner; done: plain again.
	onUI(mw, func() {
		st := mw.state
		st.Busy = true
		mw.uiMu.Unlock()
		mw.show(st)
		mw.uiMu.Lock()
		if !mw.Scatter.Busy() || !mw.Curves.Busy() || !mw.Curves.spinner.Visible() {
			t.Error("a prediction under way leaves the charts bright")
		}
		st.Busy = false
		mw.uiMu.Unlock()
		mw.show(st)
		mw.uiMu.Lock()
		if mw.Scatter.Busy() || mw.Curves.Busy() {
			t.Error("the charts stay dim after the prediction")
		}
	})
}

// The results table names each machine's host in its own column, and says so where it
// is assumed; every column has its width.
func TestResultsTableNamesTheHost(t *testing.T) {
	if len(resultWidths) != len(app.SummaryColumns) {
		t.Fatalf("%d column widths for %d results columns", len(resultWidths), len(app.SummaryColumns))
	}
	grace, pod := host.Resolve(&host.CPU{Model: "NVIDIA Grace"}, 64, 432), host.Resolve(nil, 5, 29)
	curve := func(machine string, h *host.Host, hostErr float64) predictor.Curve {
		return predictor.Curve{Model: "resnet50", Machine: machine, GPUCount: 1, Best: 0, Host: h,
			Points: []predictor.Point{{Batch: 64, Fits: true, IterMS: 20, TotalS: 100, HostErrorPct: hostErr, Bound: app.BoundInput}}}
	}
	tbl := onUIThread(func() *ResultsTable {
		tbl := NewResultsTable()
		tbl.SetCurves([]predictor.Curve{curve("lambda/gpu_1x_gh200", &grace, 0), curve("runpod/pod", &pod, 31)})
		return tbl
	})
	want := map[string]string{"lambda/gpu_1x_gh200": "NVIDIA Grace, 64 vCPUs", "runpod/pod": "CPU assumed: Intel Xeon Gold 5118, 5 vCPUs (±31% on the time)"}
	for _, r := range tbl.Rows() {
		if got := r.Cell(app.ColumnHost); got != want[r.Machine] {
			t.Errorf("%s's Host CPU cell %q, want %q", r.Machine, got, want[r.Machine])
		}
	}
	if app.SummaryColumns[app.ColumnHost] != "Host CPU" {
		t.Errorf("the column is titled %q", app.SummaryColumns[app.ColumnHost])
	}
}
