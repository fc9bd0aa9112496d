package views

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// Preference keys.
const (
	prefWindowWidth  = "window.width"
	prefWindowHeight = "window.height"
)

// predictDelay is how long the session waits after a change before predicting, so a
// burst of clicks or keystrokes makes one prediction.
const predictDelay = 150 * time.Millisecond

// Options configure the main window.
type Options struct {
	DBPath string // the measurement cache; "" for the default
}

// Icon is the application icon as a Fyne resource.
var Icon = fyne.NewStaticResource("icon.png", assets.Icon)

// MainWindow is cnntime's window and what it shows.
type MainWindow struct {
	App     fyne.App
	Window  fyne.Window
	Session *app.Session
	Backend *app.EngineBackend

	Selection *SelectionPanel
	Scatter   *ChartView
	Curves    *ChartView
	Legend    *Legend
	Results   *ResultsTable
	Why       *WhyPanel
	tabs      *container.AppTabs
	whyTab    *container.TabItem
	Specs     *SpecTable
	Status    *widget.Label
	// OnExplained is called on the UI goroutine after the Why tab shows an explanation
	// (tests wait on it).
	OnExplained func(predictor.Explanation)
	// Warnings is the status bar's button for what was left out at start (a saved
	// custom model that no longer reads); hidden when nothing was.
	Warnings *widget.Button

	metric     *widget.Select
	logX, logY *widget.Check
	bands      *widget.Check // error bands on the curves and whiskers on the scatter
	scatterLog *widget.Check
	state      app.SessionState
	started    time.Time
	warnings   []string // what was left out at start, behind the Warnings button
	changed    bool     // the user changed the selection since the window opened
	// explainedRun is the settings the Why tab's explanation was made for (of them,
	// sameRun compares the run's).
	explainedRun app.SessionSettings

	// uiMu serialises show with other UI work. Fyne's driver runs both on its one UI
	// goroutine already; Fyne's test driver runs fyne.Do on the caller's goroutine.
	uiMu sync.Mutex
}

// NewMainWindow builds cnntime's main window: the selection panel on the left, the
// min-time vs cost scatter and the time vs batch size curves side by side, and the
// machine, results and benchmark tabs below.
func NewMainWindow(a fyne.App, opts Options) fyne.Window {
	return OpenMainWindow(a, opts).Window
}

// OpenMainWindow builds the main window and returns it with its parts.
func OpenMainWindow(a fyne.App, opts Options) *MainWindow {
	w := a.NewWindow("cnntime")
	w.SetIcon(Icon)
	w.SetMaster()
	mw := &MainWindow{App: a, Window: w, Status: widget.NewLabel("Starting…")}

	var startErr error
	path := opts.DBPath
	if path == "" {
		path, startErr = app.DefaultDBPath()
	}
	if startErr == nil {
		if dir := dirOf(path); dir != "" {
			startErr = os.MkdirAll(dir, 0o755)
		}
	}
	if startErr == nil {
		mw.Backend, startErr = app.OpenEngineBackend(context.Background(), path)
	}
	if startErr != nil { // predictions still work from the embedded catalog and calibration
		startErr = fmt.Errorf("the measurement cache %s could not be opened, so nothing measured is used and imports are off: %w", path, startErr)
		mw.Backend, _ = app.OpenEngineBackend(context.Background(), "")
	}
	return mw.build(startErr)
}

// OpenMainWindowWith builds the main window over a given backend (tests use a fake).
func OpenMainWindowWith(a fyne.App, backend app.SessionBackend) *MainWindow {
	w := a.NewWindow("cnntime")
	mw := &MainWindow{App: a, Window: w, Status: widget.NewLabel("Starting…")}
	return mw.buildWith(backend, nil)
}

func (mw *MainWindow) build(startErr error) *MainWindow {
	return mw.buildWith(mw.Backend, startErr)
}

func (mw *MainWindow) buildWith(backend app.SessionBackend, startErr error) *MainWindow {
	a, w := mw.App, mw.Window
	mw.Session = app.NewSession(backend, a.Preferences(), predictDelay)
	machines, err := mw.Session.Machines(context.Background())
	if err != nil && startErr == nil {
		startErr = err
	}

	mw.Selection = NewSelectionPanel(mw.Session, machines, catalogGPUs(), mw.showError, func(msg string) { mw.Status.SetText(msg) })
	mw.Scatter = NewChartView(false, "Select CNNs and machines on the left:\none point per CNN × machine at its fastest batch size.")
	mw.Curves = NewChartView(true, "Select CNNs and machines on the left:\none curve per CNN × machine.")
	mw.Scatter.Tooltip = mw.scatterTooltip
	mw.Curves.Tooltip = mw.curveTooltip
	mw.Scatter.OnTapped = mw.scatterTapped
	mw.Legend = NewLegend()
	mw.Legend.OnToggle = func(key string, shown bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) {
			if v.Hidden == nil {
				v.Hidden = map[string]bool{}
			}
			v.Hidden[key] = !shown
		}))
	}
	mw.Results = NewResultsTable()
	mw.Results.OnSelected = func(r app.Summary) {
		if r.BestBatch > 0 {
			mw.ExplainPoint(r.Model, r.Machine, r.BestBatch)
		}
	}
	mw.Why = NewWhyPanel(func() { mw.showExportDialogFor(exportWhyCSV) })
	mw.Curves.OnTapped = mw.curveTapped
	mw.Specs = NewSpecTable()
	mw.Specs.SetMachines(machines, catalogGPUs())
	mw.Specs.SetSelected(mw.Session.Settings().Machines)
	mw.Specs.OnSelectionChanged = func(ids []string) {
		mw.report(mw.Session.Update(func(s *app.SessionSettings) { s.Machines = ids }))
		mw.Selection.SetCheckedMachines(ids)
	}
	mw.Warnings = mw.newWarningsButton()

	w.SetContent(withTooltips(w.Canvas(), mw.layout()))
	w.SetMainMenu(mw.mainMenu())
	mw.addShortcuts()

	mw.Session.OnChange(func(st app.SessionState) { fyne.Do(func() { mw.show(st) }) })
	a.Settings().AddListener(func(fyne.Settings) { fyne.Do(func() { mw.show(mw.state) }) })

	prefs := a.Preferences()
	width := float32(prefs.FloatWithFallback(prefWindowWidth, 1280))
	height := float32(prefs.FloatWithFallback(prefWindowHeight, 800))
	w.Resize(fyne.NewSize(width, height))
	w.SetCloseIntercept(func() {
		size := w.Canvas().Size()
		prefs.SetFloat(prefWindowWidth, float64(size.Width))
		prefs.SetFloat(prefWindowHeight, float64(size.Height))
		mw.Session.Close()
		if mw.Backend != nil {
			mw.Backend.Close()
		}
		w.Close()
	})
	mw.show(mw.Session.State())
	mw.showStartWarnings(mw.Session.Warnings())
	if startErr != nil {
		mw.showError(startErr)
	}
	return mw
}

func (mw *MainWindow) layout() fyne.CanvasObject {
	view := mw.Session.State().View
	var names []string
	for _, m := range charts.Metrics() {
		names = append(names, m.Title())
	}
	mw.metric = widget.NewSelect(names, func(title string) {
		for _, m := range charts.Metrics() {
			if m.Title() == title {
				mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.Metric = m }))
			}
		}
	})
	mw.metric.SetSelected(view.Metric.Title())
	mw.logX = widget.NewCheck("log x", func(on bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.LogX = on }))
	})
	mw.logX.SetChecked(view.LogX)
	mw.logY = widget.NewCheck("log y", func(on bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.LogY = on }))
	})
	mw.logY.SetChecked(view.LogY)
	mw.bands = widget.NewCheck("error bands", func(on bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.HideErrorBands = !on }))
	})
	mw.bands.SetChecked(!view.HideErrorBands)
	mw.scatterLog = widget.NewCheck("log axes", func(on bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.ScatterLog = on }))
	})
	mw.scatterLog.SetChecked(view.ScatterLog)

	bold := fyne.TextStyle{Bold: true}
	scatterBar := container.NewHBox(widget.NewLabelWithStyle("Min time vs cost", fyne.TextAlignLeading, bold), mw.scatterLog)
	curvesBar := container.NewHBox(widget.NewLabelWithStyle("Training time vs batch size", fyne.TextAlignLeading, bold), mw.metric, mw.logX, mw.logY, mw.bands)
	scatter := container.NewBorder(scatterBar, widget.NewLabel("Hover a point to read it; click it to highlight its curve."), nil, nil, mw.Scatter)
	curves := container.NewBorder(curvesBar, mw.Legend.Content(), nil, nil, mw.Curves)
	chartsSplit := container.NewHSplit(scatter, curves)
	chartsSplit.Offset = 0.4

	mw.whyTab = container.NewTabItem("Why this number?", mw.Why)
	tabs := container.NewAppTabs(
		container.NewTabItem("Machines", mw.Specs),
		container.NewTabItem("Results", mw.Results),
		mw.whyTab,
		container.NewTabItem("Benchmark", benchmarkTab(mw)),
	)
	tabs.SelectIndex(1)
	mw.tabs = tabs
	right := container.NewVSplit(chartsSplit, tabs)
	right.Offset = 0.6
	body := container.NewHSplit(mw.Selection.Content(), right)
	body.Offset = 0.22
	statusBar := container.NewBorder(nil, nil, nil, mw.Warnings, mw.Status)
	return container.NewBorder(nil, statusBar, nil, nil, body)
}

// show puts a session state on screen; it runs on the UI goroutine.
func (mw *MainWindow) show(st app.SessionState) {
	mw.uiMu.Lock()
	defer mw.uiMu.Unlock()
	prevBusy := mw.state.Busy
	if mw.state.Settings.Models != nil && !sameSelection(mw.state.Settings, st.Settings) {
		mw.changed = true // the example's hint goes once the user changes the selection
	}
	mw.state = st
	n := len(st.Settings.Models) * len(st.Settings.Machines)
	switch {
	case st.Busy:
		if !prevBusy {
			mw.started = time.Now()
		}
		mw.Status.SetText(fmt.Sprintf("Predicting %s…", charts.Count(n, "CNN × machine curve", "CNN × machine curves")))
		return
	case st.Err != nil:
		mw.Status.SetText("Prediction failed: " + st.Err.Error())
	case n == 0:
		mw.Status.SetText("Ready. Pick at least one CNN and one machine.")
	default:
		took := ""
		if !mw.started.IsZero() {
			if d := time.Since(mw.started); d < time.Second {
				took = fmt.Sprintf(" in %d ms", max(d.Milliseconds(), 1))
			} else {
				took = fmt.Sprintf(" in %.1f s", d.Seconds())
			}
		}
		text := fmt.Sprintf("Predicted %s%s: %s, %s, %s of %s images.",
			charts.Count(len(st.Curves), "curve", "curves"), took, batchRange(st), st.Settings.Precision, charts.Count(st.Settings.Epochs, "epoch", "epochs"), charts.FormatCount(int64(st.Settings.Images)))
		if m, _ := st.Settings.Train.EpochsModel(st.Settings.Data); m != nil {
			target, _, _ := strings.Cut(m.Target, " (")
			text = fmt.Sprintf("Predicted %s%s: %s, %s, to %s on %s images.",
				charts.Count(len(st.Curves), "curve", "curves"), took, batchRange(st), st.Settings.Precision, target, charts.FormatCount(int64(st.Settings.Images)))
		}
		if mw.Session.FirstLaunch() && !mw.changed {
			text = fmt.Sprintf("An example to start from: %s on %s. Tick CNNs and machines on the left to compare yours (Ctrl+F searches the CNNs); hover a point to read it, click a results row for why.",
				strings.Join(st.Settings.Models, ", "), charts.Count(len(st.Settings.Machines), "current machine", "current machines"))
		}
		mw.Status.SetText(text)
	}
	scatter, curves := st.Charts(mw.chartStyle())
	mw.Scatter.SetChart(scatter)
	mw.Curves.SetChart(curves)
	mw.Legend.Set(st.Curves, st.View.Hidden)
	mw.Results.SetCurves(st.Curves)
	if st.Err == nil {
		mw.refreshWhy(st)
	}
	mw.Specs.SetSelected(st.Settings.Machines)
}

// batchRange says which batch sizes the curves cover: each up to what fits its
// machine, or to the user's cap.
func batchRange(st app.SessionState) string {
	hi := 0
	for _, c := range st.Curves {
		if n := len(c.Points); n > 0 {
			hi = max(hi, c.Points[n-1].Batch)
		}
	}
	if st.Settings.BatchMax > 0 {
		return fmt.Sprintf("batch sizes %d to %d", st.Settings.BatchMin, st.Settings.BatchMax)
	}
	return fmt.Sprintf("batch sizes from %d up to what fits (%d at most)", st.Settings.BatchMin, hi)
}

func (mw *MainWindow) curveTooltip(m charts.Mark) string {
	if m.Curve >= len(mw.state.Curves) {
		return ""
	}
	c := mw.state.Curves[m.Curve]
	return charts.Tooltip(c, c.Points[m.Point])
}

func (mw *MainWindow) scatterTooltip(m charts.Mark) string {
	if m.Curve >= len(mw.state.Curves) {
		return ""
	}
	c := mw.state.Curves[m.Curve]
	return charts.ScatterTooltip(c, c.Points[m.Point]) + "\nclick: highlight its curve and see why"
}

// curveTapped explains the tapped point of a curve.
func (mw *MainWindow) curveTapped(m charts.Mark, ok bool) {
	if !ok || m.Curve >= len(mw.state.Curves) {
		return
	}
	c := mw.state.Curves[m.Curve]
	if p := c.Points[m.Point]; p.Fits {
		mw.ExplainPoint(c.Model, c.Machine, p.Batch)
	}
}

// ExplainPoint fills the Why tab for model on machine at a global batch size and
// shows it; the explanation is computed off the UI goroutine.
func (mw *MainWindow) ExplainPoint(model, machine string, batch int) {
	mw.explain(model, machine, batch, true)
}

// explain fills the Why tab, showing it when show is set (a click) and not when the
// explanation follows a change of the run's settings.
func (mw *MainWindow) explain(model, machine string, batch int, show bool) {
	if !mw.Session.CanExplain() {
		return
	}
	mw.Status.SetText(fmt.Sprintf("Explaining %s on %s at batch %d…", model, machine, batch))
	settings := mw.Session.Settings()
	go func() {
		x, err := mw.Session.Explain(context.Background(), model, machine, batch)
		fyne.Do(func() {
			if err != nil {
				mw.showError(fmt.Errorf("why %s on %s at batch %d: %w", model, machine, batch, err))
				return
			}
			mw.Why.Set(x, mw.chartStyle())
			mw.explainedRun = settings
			if show && mw.tabs != nil {
				mw.tabs.Select(mw.whyTab)
			}
			mw.Status.SetText(fmt.Sprintf("Why %s on %s at batch %d: %s.", model, machine, batch, boundWords(x.Bound)))
			if mw.OnExplained != nil {
				mw.OnExplained(x)
			}
		})
	}()
}

// sameRun reports whether two settings describe the same run: what an explanation
// depends on besides its CNN, machine and batch (not the selection or the batch range).
func sameRun(a, b app.SessionSettings) bool {
	return a.Epochs == b.Epochs && a.Images == b.Images && a.Precision == b.Precision && a.Policy == b.Policy &&
		a.Data == b.Data && a.Nodes == b.Nodes && a.Price == b.Price && a.Train == b.Train
}

// refreshWhy keeps the Why tab true to the shown prediction: after the run's settings
// changed it explains the same CNN, machine and batch again, or empties the tab when
// that curve is gone or the batch no longer fits.
func (mw *MainWindow) refreshWhy(st app.SessionState) {
	x := mw.Why.Explanation()
	if x == nil {
		return
	}
	for _, c := range st.Curves {
		if c.Model == x.Model && c.Machine == x.Machine && (c.MaxBatch < 0 || x.Batch <= c.MaxBatch) && x.Batch >= c.GPUCount {
			if !sameRun(mw.explainedRun, st.Settings) {
				mw.explainedRun = st.Settings // one refresh per change
				mw.explain(x.Model, x.Machine, x.Batch, false)
			}
			return
		}
	}
	mw.Why.Clear()
}

func boundWords(bound string) string {
	if bound == "input" {
		return "the input pipeline sets the pace"
	}
	return "the GPU sets the pace"
}

func (mw *MainWindow) chartStyle() charts.Style {
	if mw.App.Settings().ThemeVariant() == theme.VariantDark {
		return charts.DarkStyle
	}
	return charts.LightStyle
}

// scatterTapped highlights the tapped point's curve, or clears the highlight, and
// explains the point.
func (mw *MainWindow) scatterTapped(m charts.Mark, ok bool) {
	key := ""
	if ok && m.Curve < len(mw.state.Curves) {
		c := mw.state.Curves[m.Curve]
		key = charts.SeriesKey(c)
		if p := c.Points[m.Point]; p.Fits {
			mw.ExplainPoint(c.Model, c.Machine, p.Batch)
		}
	}
	mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) {
		if v.Highlight == key {
			key = ""
		}
		v.Highlight = key
	}))
}

func (mw *MainWindow) report(err error) {
	if err != nil {
		mw.showError(err)
	}
}

func (mw *MainWindow) showError(err error) {
	mw.Status.SetText("Error: " + err.Error())
	dialog.ShowError(err, mw.Window)
}

func (mw *MainWindow) mainMenu() *fyne.MainMenu {
	file := fyne.NewMenu("File",
		fyne.NewMenuItem("Add model…", mw.addModelDialog),
		fyne.NewMenuItem("Remove model…", mw.removeModelDialog),
		fyne.NewMenuItem("Import…", mw.importDialog),
		fyne.NewMenuItem("Export…", mw.ShowExportDialog),
	) // Fyne adds Quit to the first menu.
	help := fyne.NewMenu("Help",
		fyne.NewMenuItem("About", func() {
			dialog.ShowInformation("About cnntime", fmt.Sprintf("cnntime %s\n\nPredicts how long and how much it costs to train a CNN\non a GPU machine at every mini-batch size.", app.Version), mw.Window)
		}),
	)
	return fyne.NewMainMenu(file, help)
}

// sameSelection reports whether two settings select the same CNNs and machines.
func sameSelection(a, b app.SessionSettings) bool {
	return strings.Join(a.Models, ",") == strings.Join(b.Models, ",") && strings.Join(a.Machines, ",") == strings.Join(b.Machines, ",")
}

func (mw *MainWindow) addShortcuts() {
	c := mw.Window.Canvas()
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) { mw.Selection.FocusModelSearch(c) })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyE, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) { mw.ShowExportDialog() })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) { mw.App.Quit() })
}

func (mw *MainWindow) addModelDialog() {
	dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			mw.showError(err)
			return
		}
		if r == nil {
			return
		}
		defer r.Close()
		data, err := readAll(r)
		if err != nil {
			mw.showError(fmt.Errorf("read %s: %w", r.URI().Path(), err))
			return
		}
		name, err := mw.Session.AddCustomModel(data)
		if err != nil {
			mw.showError(fmt.Errorf("%s: %w", r.URI().Name(), err))
			return
		}
		mw.Selection.RefreshModels()
		mw.Status.SetText("Added custom model " + name + ".")
	}, mw.Window)
}

func (mw *MainWindow) importDialog() {
	if mw.Backend == nil {
		mw.showError(fmt.Errorf("import is not available in this window"))
		return
	}
	dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			mw.showError(err)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		mw.Status.SetText("Importing " + path + "…")
		go func() {
			msg, err := mw.Backend.Import(context.Background(), path)
			fyne.Do(func() {
				if err != nil {
					mw.showError(err)
					return
				}
				mw.Status.SetText(msg)
				mw.Selection.RefreshModels() // the import may have brought custom models
				if ms, err := mw.Session.Machines(context.Background()); err == nil {
					mw.Selection.SetMachines(ms)
					mw.Specs.SetMachines(ms, catalogGPUs())
				}
				mw.Session.Refresh()
			})
		}()
	}, mw.Window)
}

func catalogGPUs() []hw.GPU {
	c, err := app.LoadCatalog()
	if err != nil {
		return nil
	}
	return c.GPUs()
}
