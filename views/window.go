package views

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/app/prices"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// Preference keys.
const (
	prefWindowWidth  = "window.width"
	prefWindowHeight = "window.height"
	prefExportDir    = "export.dir" // the folder of the last export
)

// The window's size when none is remembered (fitScreen shrinks it to a smaller screen).
const (
	defaultWidth  = 1280
	defaultHeight = 800
)

// predictDelay is how long the session waits after a change before predicting, so a
// burst of clicks or keystrokes (faster than a person types) makes one prediction; a
// prediction a later change overtakes is cancelled. Short: a change should redraw both
// charts within 150 ms (BenchmarkRedraw).
const predictDelay = 30 * time.Millisecond

// Options configure the main window.
type Options struct {
	DBPath string // the measurement cache; "" for the default
	// Docs holds the manual's pages (docs/*.md, at those paths) for the Help menu's
	// sections; nil leaves them out (the web link stays).
	Docs fs.FS
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
	// Status is the status line's text (status keeps what it said); Messages the
	// button at the bar's end that lists every message.
	Status   *widget.Label
	status   *statusLine
	Messages *widget.Button
	// OnExplained is called on the UI goroutine after the Why tab shows an explanation
	// (tests wait on it).
	OnExplained func(predictor.Explanation)
	// Warnings is the status bar's button for what was left out at start (a saved
	// custom model that no longer reads); hidden when nothing was.
	Warnings *widget.Button
	// redraw is how long the last show took to build the charts and to lay out the
	// rest (BenchmarkRedraw reads it).
	redraw redrawTimes
	// OnCacheReloaded is called on the UI goroutine after the window took in a change
	// another program made to the cache (tests wait on it).
	OnCacheReloaded func()
	stopWatch       func() // stops the cache watch
	exportOpen      dialog.Dialog

	// Benchmark is the Benchmark tab's view; nil when the cache could not be opened.
	Benchmark  *Benchmark
	askingStop bool // the question whether to stop a running sweep and quit is shown

	// ScatterNote is the line under the scatter: how to read it, and the series
	// left out for want of a price.
	ScatterNote *widget.Label

	metric     *widget.Select
	logX, logY *widget.Check
	bands      *widget.Check // error bands on the curves and whiskers on the scatter
	legend     *widget.Check // the curves' legend shown
	scatterLog *widget.Check
	state      app.SessionState
	warnings   []string // what was left out at start, behind the Warnings button
	changed    bool     // the user changed the selection since the window opened
	// explainedRun is the settings the Why tab's explanation was made for (of them,
	// sameRun compares the run's).
	explainedRun app.SessionSettings
	// explainSeq counts explanations asked for; a result for an older one is dropped.
	explainSeq int
	// picked is the batch the user chose by clicking a curve's point (zero after a
	// results row or a scatter point, which explain the best batch): Export launch
	// file writes it, else the recommended batch.
	picked pickedBatch

	// The layout's parts that a maximised chart rearranges.
	scatterPanel, curvesPanel fyne.CanvasObject
	chartsSplit, mainSplit    *container.Split
	right                     *fyne.Container
	maximised                 string // "", "scatter" or "curves"
	maxButtons                map[string]*widget.Button
	zoomButtons               map[string]*widget.Button
	docs                      fs.FS

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
	mw := &MainWindow{App: a, Window: w, docs: opts.Docs}

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
	mw := &MainWindow{App: a, Window: w}
	return mw.buildWith(backend, nil)
}

func (mw *MainWindow) build(startErr error) *MainWindow {
	return mw.buildWith(mw.Backend, startErr)
}

func (mw *MainWindow) buildWith(backend app.SessionBackend, startErr error) *MainWindow {
	a, w := mw.App, mw.Window
	a.Settings().SetTheme(CompactTheme())
	mw.status = newStatusLine("Starting…")
	mw.Status = mw.status.label
	mw.Session = app.NewSession(backend, a.Preferences(), predictDelay)
	machines, err := mw.Session.Machines(context.Background())
	if err != nil && startErr == nil {
		startErr = err
	}

	mw.Selection = NewSelectionPanel(mw.Session, machines, catalogGPUs(), mw.showError, mw.notify)
	mw.Scatter = NewChartView(false, "Select CNNs and machines on the left:\none point per CNN × machine at its fastest batch size.")
	mw.Curves = NewChartView(true, "Select CNNs and machines on the left:\none curve per CNN × machine.")
	mw.Scatter.Tooltip = mw.scatterTooltip
	mw.Curves.Tooltip = mw.curveTooltip
	mw.Curves.ColumnTooltip = mw.columnTooltip
	mw.Scatter.OnZoom = func(bool) { mw.showZoom() }
	mw.Curves.OnZoom = func(bool) { mw.showZoom() }
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
	mw.Selection.OnOlderChanged = mw.Specs.SetShowOlder
	mw.Specs.OnSelectionChanged = func(ids []string) {
		mw.report(mw.Session.Update(func(s *app.SessionSettings) { s.Machines = ids }))
		mw.Selection.SetCheckedMachines(ids)
	}
	mw.Warnings = mw.newWarningsButton()
	mw.Messages = mw.newMessagesButton()

	w.SetContent(withTooltips(w.Canvas(), mw.layout()))
	w.SetMainMenu(mw.mainMenu())
	mw.addShortcuts()

	mw.Session.OnChange(func(st app.SessionState) { fyne.Do(func() { mw.show(st) }) })
	a.Settings().AddListener(func(fyne.Settings) { fyne.Do(func() { mw.show(mw.state) }) })

	prefs := a.Preferences()
	width := float32(prefs.FloatWithFallback(prefWindowWidth, defaultWidth))
	height := float32(prefs.FloatWithFallback(prefWindowHeight, defaultHeight))
	w.Resize(fyne.NewSize(width, height))
	w.SetCloseIntercept(mw.Close)
	a.Lifecycle().SetOnStarted(func() {
		// Once the window is on its screen, at its scale: not larger than that screen.
		time.AfterFunc(300*time.Millisecond, func() { fyne.Do(mw.fitScreen) })
	})
	mw.watchCache()
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
			if (m.Title() == title || m.TargetTitle() == title) && m != mw.Session.State().View.Metric {
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
	mw.legend = widget.NewCheck("legend", func(on bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.HideLegend = !on }))
	})
	mw.legend.SetChecked(!view.HideLegend)
	mw.scatterLog = widget.NewCheck("log axes", func(on bool) {
		mw.report(mw.Session.UpdateView(func(v *app.ChartSettings) { v.ScatterLog = on }))
	})
	mw.scatterLog.SetChecked(view.ScatterLog)

	mw.ScatterNote = widget.NewLabel(scatterHint)
	mw.ScatterNote.Truncation = fyne.TextTruncateEllipsis
	mw.maxButtons, mw.zoomButtons = map[string]*widget.Button{}, map[string]*widget.Button{}
	scatterBar := mw.chartBar("scatter", "Min time vs cost", mw.scatterLog)
	curvesBar := mw.chartBar("curves", "Time vs batch size", mw.metric, mw.logX, mw.logY, mw.bands, mw.legend)
	mw.scatterPanel = container.NewBorder(scatterBar, mw.ScatterNote, nil, nil, mw.Scatter)
	// The legend goes beside the curves on a wide window, under them on a narrow one.
	// Below, it takes at most a quarter of the panel and scrolls: the curves keep the
	// rest, however many series there are.
	// Beside from a chart of about 300 px up (1280×800 has room): its entries, a heading
	// per CNN and the machines under it, scroll in the chart's whole height, and the
	// curves keep theirs; below only on a narrow panel, in a quarter of its height.
	legend := container.New(&sideOrBelow{wideFrom: 480, sideWidth: 190, maxBelow: 0.25}, mw.Curves, mw.Legend.Content())
	mw.curvesPanel = container.NewBorder(curvesBar, nil, nil, nil, legend)
	mw.chartsSplit = container.NewHSplit(mw.scatterPanel, mw.curvesPanel)
	mw.chartsSplit.Offset = 0.4

	mw.whyTab = container.NewTabItem("Why this number?", mw.Why)
	tabs := container.NewAppTabs(
		container.NewTabItem("Machines", mw.Specs),
		container.NewTabItem("Results", mw.Results),
		mw.whyTab,
		container.NewTabItem("Benchmark", benchmarkTab(mw)),
	)
	tabs.SelectIndex(1)
	mw.tabs = tabs
	mw.mainSplit = container.NewVSplit(mw.chartsSplit, tabs)
	mw.mainSplit.Offset = 0.58
	mw.right = container.NewStack(mw.mainSplit)
	body := container.NewHSplit(mw.Selection.Content(), mw.right)
	body.Offset = 0.21
	statusBar := container.NewBorder(nil, nil, nil, container.NewHBox(mw.Warnings, mw.Messages), mw.Status)
	return container.NewBorder(nil, statusBar, nil, nil, body)
}

// scatterHint is the line under the scatter when every point has a price.
const scatterHint = "Hover a point to read it; click it to highlight its curve. Drag to zoom, Shift-drag to pan, right-click to reset."

// chartBar is a chart's title with its controls, a zoom reset and the maximise
// toggle; the controls wrap onto a second row in a narrow window.
func (mw *MainWindow) chartBar(which, title string, controls ...fyne.CanvasObject) fyne.CanvasObject {
	label := widget.NewLabelWithStyle(title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	reset := widget.NewButtonWithIcon("", theme.ZoomFitIcon(), func() { mw.chartView(which).ResetZoom() })
	reset.Importance = widget.LowImportance
	reset.Disable()
	max := widget.NewButtonWithIcon("", theme.ViewFullScreenIcon(), func() { mw.ToggleMaximise(which) })
	max.Importance = widget.LowImportance
	mw.zoomButtons[which], mw.maxButtons[which] = reset, max
	flow := container.New(newFlowLayout(theme.Padding(), 0), controls...)
	return container.NewBorder(nil, nil, label, container.NewHBox(reset, max), flow)
}

func (mw *MainWindow) chartView(which string) *ChartView {
	if which == "scatter" {
		return mw.Scatter
	}
	return mw.Curves
}

// showZoom enables each chart's zoom reset while it is zoomed.
func (mw *MainWindow) showZoom() {
	for which, b := range mw.zoomButtons {
		if mw.chartView(which).Zoomed() {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

// ToggleMaximise gives one chart the whole right of the window ("scatter" or
// "curves"), or puts both charts and the tabs back when that chart already has it.
func (mw *MainWindow) ToggleMaximise(which string) {
	if mw.maximised == which {
		which = ""
	}
	mw.Maximise(which)
}

// Maximise gives one chart ("scatter" or "curves") the right of the window; ""
// shows both charts and the tabs again.
func (mw *MainWindow) Maximise(which string) {
	if mw.right == nil {
		return
	}
	mw.maximised = which
	switch which {
	case "scatter":
		mw.right.Objects = []fyne.CanvasObject{mw.scatterPanel}
	case "curves":
		mw.right.Objects = []fyne.CanvasObject{mw.curvesPanel}
	default:
		mw.maximised = ""
		mw.chartsSplit.Leading, mw.chartsSplit.Trailing = mw.scatterPanel, mw.curvesPanel
		mw.right.Objects = []fyne.CanvasObject{mw.mainSplit}
		mw.chartsSplit.Refresh()
	}
	for w, b := range mw.maxButtons {
		if w == mw.maximised {
			b.SetIcon(theme.ViewRestoreIcon())
		} else {
			b.SetIcon(theme.ViewFullScreenIcon())
		}
	}
	mw.right.Refresh()
}

// Maximised is the chart that has the right of the window, "" when none.
func (mw *MainWindow) Maximised() string { return mw.maximised }

// show puts a session state on screen; it runs on the UI goroutine. While a
// prediction runs the charts dim under a spinner: what they show is the last
// prediction's, not yet the new settings'.
func (mw *MainWindow) show(st app.SessionState) {
	mw.uiMu.Lock()
	defer mw.uiMu.Unlock()
	if mw.state.Settings.Models != nil && !sameSelection(mw.state.Settings, st.Settings) {
		mw.changed = true // the example's hint goes once the user changes the selection
	}
	mw.state = st
	n := len(st.Settings.Models) * len(st.Settings.Machines)
	if st.Busy {
		mw.Scatter.SetBusy(true)
		mw.Curves.SetBusy(true)
		if n > 0 { // an emptied selection has nothing to predict: its "Ready." follows
			mw.setStatus(fmt.Sprintf("Predicting %s…", charts.Count(n, "CNN × machine curve", "CNN × machine curves")))
		}
		return
	}
	mw.Scatter.SetBusy(false)
	mw.Curves.SetBusy(false)
	var missing *app.MissingError
	failed := ""
	ranking, answer, _ := st.LimitAnswer()
	switch {
	case errors.As(st.Err, &missing):
		mw.setStatus(capitalise(st.Err.Error()) + ".")
	case st.Err != nil:
		failed = "Prediction failed: " + st.Err.Error()
		mw.setStatus(failed)
	case n == 0:
		mw.setStatus("Ready. Pick at least one CNN and one machine.")
	default:
		mw.setStatus(strings.TrimSpace(answer + " " + mw.predictedText(st))) // the limit's answer first, where there is one
	}
	mw.Scatter.SetEmptyText(failed) // a failed prediction says why, not "select CNNs and machines"
	mw.Curves.SetEmptyText(failed)
	began := time.Now()
	scatter, curves := st.Charts(mw.chartStyle())
	mw.Scatter.SetChart(scatter)
	mw.Curves.SetChart(curves)
	built := time.Now()
	defer func() {
		mw.redraw = redrawTimes{build: built.Sub(began), layout: time.Since(built), shows: mw.redraw.shows + 1}
	}()
	gaps := prices.Gaps(st.Curves, st.Settings.Price)
	switch {
	case len(gaps) > 0 && scatter.Empty() && failed == "" && n > 0:
		why := "Nothing to place on a cost axis: no machine selected has a price for this setting (" + st.Settings.Price.String() + ").\n" + strings.Join(gaps, "\n")
		mw.Scatter.SetEmptyText(uiText(why))
		if curves.Empty() {
			mw.Curves.SetEmptyText(uiText(why))
		}
		mw.ScatterNote.SetText(uiText(strings.Join(gaps, " ")))
	case len(gaps) > 0:
		mw.ScatterNote.SetText(uiText("Not shown: " + strings.Join(gaps, " ")))
	default:
		mw.ScatterNote.SetText(scatterHint)
	}
	metric := st.View.Metric
	mw.showMetricTitles(st.Curves, metric)
	mw.Legend.Set(st.Curves, st.View.Hidden, st.Styles, metric, mw.chartStyle().Background)
	if legend := mw.Legend.Content(); legend.Visible() == st.View.HideLegend {
		if st.View.HideLegend {
			legend.Hide()
		} else {
			legend.Show()
		}
		mw.curvesPanel.Refresh()
	}
	mw.Results.SetRanked(st.Curves, st.View.Limit, ranking, answer)
	if st.Err == nil || missing != nil {
		mw.refreshWhy(st)
	}
	mw.Specs.SetSelected(st.Settings.Machines)
	mw.Selection.showNodes(st.Settings.Machines)
}

// showMetricTitles names the curves' metrics as the curves count them: trained to a
// target, the total time and cost are "Time to target" and "Cost to target", as the
// axis and the results table say.
func (mw *MainWindow) showMetricTitles(curves []predictor.Curve, selected charts.Metric) {
	var names []string
	for _, m := range charts.Metrics() {
		names = append(names, m.TitleFor(curves))
	}
	if slices.Equal(names, mw.metric.Options) && mw.metric.Selected == selected.TitleFor(curves) {
		return
	}
	mw.metric.SetOptions(names)
	mw.metric.SetSelected(selected.TitleFor(curves)) // the same metric: OnChanged sees no change
}

// redrawTimes are the parts of a redraw show does on the UI goroutine: building both
// charts (their series, marks and legends), and laying out the rest of the window
// (legend, results table, Why tab, machine table).
type redrawTimes struct {
	build, layout time.Duration
	shows         int // counts the shows of a prediction
}

// predictedText is the status line after a prediction: how many curves, in the
// prediction's own time (not a redraw's), over which batch sizes and run.
func (mw *MainWindow) predictedText(st app.SessionState) string {
	if mw.Session.FirstLaunch() && !mw.changed {
		return fmt.Sprintf("An example to start from: %s on %s. Tick CNNs and machines on the left to compare yours (Ctrl+F searches the CNNs); hover a point to read it, click a results row for why.",
			strings.Join(st.Settings.Models, ", "), charts.Count(len(st.Settings.Machines), "current machine", "current machines"))
	}
	if st.Settings.Train.Mode == app.TrainToTarget {
		return fmt.Sprintf("Predicted %s in %s: %s, %s, to %s (%s) on %s images.%s",
			charts.Count(predictedCurves(st), "curve", "curves"), formatTook(st.Took), batchRange(st), st.Settings.Precision,
			st.Settings.Train.TargetWords(), st.Settings.Train.RecipeLabel(), charts.FormatCount(int64(st.Settings.Images)), warningsNote(st))
	}
	return fmt.Sprintf("Predicted %s in %s: %s, %s, %s of %s images.%s",
		charts.Count(predictedCurves(st), "curve", "curves"), formatTook(st.Took), batchRange(st), st.Settings.Precision,
		charts.Count(st.Settings.Epochs, "epoch", "epochs"), charts.FormatCount(int64(st.Settings.Images)), warningsNote(st))
}

// warningsNote says, after the status line, how many curves carry a warning (few steps
// an epoch, epochs fitted on other networks) and where to read them.
func warningsNote(st app.SessionState) string {
	n, unavailable := 0, 0
	for i := range st.Curves {
		switch {
		case st.Curves[i].Unavailable != "":
			unavailable++
		case len(app.AdviceWarnings(&st.Curves[i])) > 0:
			n++
		}
	}
	var parts []string
	if unavailable > 0 {
		parts = append(parts, charts.Count(unavailable, "CNN × machine cannot run this setting", "CNN × machines cannot run this setting"))
	}
	if n > 0 {
		parts = append(parts, charts.Count(n, "curve has a warning", "curves have warnings"))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, "; ") + ": see the Results tab's Warnings column."
}

// predictedCurves counts the curves of a prediction that have points (not those the
// setting cannot run).
func predictedCurves(st app.SessionState) int {
	n := 0
	for i := range st.Curves {
		if st.Curves[i].Unavailable == "" {
			n++
		}
	}
	return n
}

// formatTook writes a prediction's duration: milliseconds under a second.
func formatTook(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", max(d.Milliseconds(), 1))
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
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

// columnTooltip reads every series at the hovered batch size, under the nearest
// point's full reading.
func (mw *MainWindow) columnTooltip(nearest charts.Mark, column []charts.Mark) string {
	return charts.ColumnTooltip(mw.state.Curves, mw.state.View.Metric, nearest, column)
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
		mw.picked = pickedBatch{c.Model, c.Machine, p.Batch} // a batch of the curve's, chosen
	}
}

// ExplainPoint fills the Why tab for model on machine at a global batch size and
// shows it; the explanation is computed off the UI goroutine.
func (mw *MainWindow) ExplainPoint(model, machine string, batch int) {
	mw.picked = pickedBatch{} // a results row or a scatter point: the best batch, not one picked
	mw.explain(model, machine, batch, true)
}

// explain fills the Why tab, showing it when show is set (a click) and not when the
// explanation follows a change of the run's settings.
func (mw *MainWindow) explain(model, machine string, batch int, show bool) {
	if !mw.Session.CanExplain() {
		return
	}
	mw.explainSeq++
	seq := mw.explainSeq
	if show {
		mw.setStatus(fmt.Sprintf("Explaining %s on %s at batch %d…", model, machine, batch))
	}
	settings := mw.Session.Settings()
	go func() {
		x, err := mw.Session.Explain(context.Background(), model, machine, batch)
		fyne.Do(func() {
			// A newer explanation was asked for, or the run changed meanwhile: this one
			// would describe settings no longer shown.
			if seq != mw.explainSeq || !sameRun(settings, mw.Session.Settings()) {
				return
			}
			if err != nil {
				if show {
					mw.showError(fmt.Errorf("why %s on %s at batch %d: %w", model, machine, batch, err))
				} else {
					mw.Why.Clear()
				}
				return
			}
			mw.Why.Set(x, mw.curveOf(model, machine), mw.chartStyle())
			mw.explainedRun = settings
			if show && mw.tabs != nil {
				mw.tabs.Select(mw.whyTab)
			}
			if show { // a refresh after a settings change leaves the status to the prediction
				mw.setStatus(fmt.Sprintf("Why %s on %s at %s: %s.", model, machine, app.BatchWords(&x), app.BoundSentence(&x)))
			}
			if mw.OnExplained != nil {
				mw.OnExplained(x)
			}
		})
	}()
}

// curveOf is the shown curve of model on machine; nil when it is not shown.
func (mw *MainWindow) curveOf(model, machine string) *predictor.Curve {
	for i := range mw.state.Curves {
		if c := &mw.state.Curves[i]; c.Model == model && c.Machine == machine {
			return c
		}
	}
	return nil
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

// showError shows err in a dialog and on the status line, in the theme's glyphs
// (an error's "File → Export launch file…" reads "File › Export launch file…").
func (mw *MainWindow) showError(err error) {
	d := dialog.NewError(uiError{err}, mw.Window)
	closeOnEscape(d, mw.Window)
	d.Show()
	mw.notify("Error: " + err.Error()) // after the dialog: who waits for the status finds the dialog open
}

// shortcut is one keyboard shortcut of the window: its keys, what it does, and the
// menu item that shows it (the menus, the Help dialog and the key bindings all read
// this one list).
type shortcut struct {
	key   fyne.KeyName
	what  string
	run   func(mw *MainWindow)
	extra bool // not in a menu: listed in Help only
}

// windowShortcuts is the list (a function: the Help entry lists the list itself).
func windowShortcuts() []shortcut {
	return []shortcut{
		{key: fyne.KeyF, what: "Search the CNNs", run: func(mw *MainWindow) { mw.Selection.FocusModelSearch(mw.Window.Canvas()) }},
		{key: fyne.KeyI, what: "Import…", run: func(mw *MainWindow) { mw.importDialog() }},
		{key: fyne.KeyE, what: "Export…", run: func(mw *MainWindow) { mw.ShowExportDialog() }},
		{key: fyne.KeyQ, what: "Quit", run: func(mw *MainWindow) { mw.Close() }},
		{key: fyne.KeyW, what: "Close the window (quits)", run: func(mw *MainWindow) { mw.Close() }},
		{key: fyne.Key1, what: "Maximise the scatter (again: back)", run: func(mw *MainWindow) { mw.ToggleMaximise("scatter") }},
		{key: fyne.Key2, what: "Maximise the curves (again: back)", run: func(mw *MainWindow) { mw.ToggleMaximise("curves") }},
		{key: fyne.Key0, what: "Reset both charts' zoom", run: func(mw *MainWindow) { mw.Scatter.ResetZoom(); mw.Curves.ResetZoom() }},
		{key: fyne.KeyR, what: "Results tab", run: func(mw *MainWindow) { mw.tabs.SelectIndex(1) }},
		{key: fyne.KeyY, what: "Why this number? tab", run: func(mw *MainWindow) { mw.tabs.Select(mw.whyTab) }},
		{key: fyne.KeyB, what: "Benchmark tab", run: func(mw *MainWindow) { mw.tabs.SelectIndex(3) }},
		{key: fyne.KeyH, what: "Keyboard and mouse help", run: func(mw *MainWindow) { mw.showShortcuts() }},
	}
}

func (s shortcut) keys() *desktop.CustomShortcut {
	return &desktop.CustomShortcut{KeyName: s.key, Modifier: fyne.KeyModifierShortcutDefault}
}

// menuItem is a menu entry for the shortcut with this text, showing its keys.
func (mw *MainWindow) menuItem(what, label string) *fyne.MenuItem {
	for _, s := range windowShortcuts() {
		if s.what == what {
			it := fyne.NewMenuItem(label, func() { s.run(mw) })
			it.Shortcut = s.keys()
			return it
		}
	}
	return fyne.NewMenuItem(label, nil)
}

// manualSection is a section of the manual the Help menu opens: a heading of a page.
type manualSection struct{ page, heading string }

// manualSections are the manual's sections the Help menu opens.
var manualSections = []manualSection{
	{"docs/window.md", "The window"},
	{"docs/measuring.md", "Measuring your own CPU or GPU: sweeps"},
	{"docs/predicting.md", "Why this number? (`cnntime explain`)"},
	{"docs/machines.md", "Machines: GPUs, cloud instances and your own"},
	{"docs/accuracy.md", "Accuracy"},
}

func (mw *MainWindow) mainMenu() *fyne.MainMenu {
	quit := mw.menuItem("Quit", "Quit")
	quit.IsQuit = true // saves the window's size and closes the cache as closing the window does
	file := fyne.NewMenu("File",
		fyne.NewMenuItem("Add model…", mw.addModelDialog),
		fyne.NewMenuItem("Remove model…", mw.removeModelDialog),
		mw.menuItem("Import…", "Import…"),
		mw.menuItem("Export…", "Export…"),
		fyne.NewMenuItem("Export launch file…", mw.showLaunchDialog),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Update prices from SkyPilot…", mw.updatePricesDialog),
		fyne.NewMenuItem("Import prices (SkyPilot vms.csv or catalog folder)…", mw.importPricesDialog),
		fyne.NewMenuItemSeparator(),
		mw.menuItem("Close the window (quits)", "Close window"),
		quit,
	)
	copyItem := fyne.NewMenuItem("Copy (the tab shown)", mw.copyShown)
	copyItem.Shortcut = &fyne.ShortcutCopy{}
	edit := fyne.NewMenu("Edit", copyItem)
	view := fyne.NewMenu("View",
		mw.menuItem("Search the CNNs", "Search the CNNs"),
		fyne.NewMenuItemSeparator(),
		mw.menuItem("Maximise the scatter (again: back)", "Maximise the scatter / restore"),
		mw.menuItem("Maximise the curves (again: back)", "Maximise the curves / restore"),
		mw.menuItem("Reset both charts' zoom", "Reset zoom"),
		fyne.NewMenuItemSeparator(),
		mw.menuItem("Results tab", "Results"),
		mw.menuItem("Why this number? tab", "Why this number?"),
		mw.menuItem("Benchmark tab", "Benchmark"),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Messages…", mw.showMessages),
	)
	helpItems := []*fyne.MenuItem{mw.menuItem("Keyboard and mouse help", "Keyboard and mouse…"), fyne.NewMenuItemSeparator()}
	for _, sec := range manualSections {
		helpItems = append(helpItems, fyne.NewMenuItem("Manual: "+strings.ReplaceAll(sec.heading, "`", "")+"…", func() { mw.showReadme(sec.heading) }))
	}
	helpItems = append(helpItems, fyne.NewMenuItemSeparator(), fyne.NewMenuItem("About", func() {
		d := dialog.NewInformation("About cnntime", fmt.Sprintf("cnntime %s\n\nPredicts how long and how much it costs to train a CNN\non a GPU machine at every mini-batch size.\n\n%s", app.Version, readmeURL), mw.Window)
		closeOnEscape(d, mw.Window)
		d.Show()
	}))
	return fyne.NewMainMenu(file, edit, view, fyne.NewMenu("Help", helpItems...))
}

// readmeURL is the project's site (FyneApp.toml's Website), where the README is.
const readmeURL = "https://github.com/cnntime/cnntime"

// ShortcutsText lists the keyboard shortcuts and what the mouse does, as Help shows it.
func ShortcutsText() string {
	var b strings.Builder
	b.WriteString("Keyboard (Ctrl on Linux and Windows, Cmd on macOS):\n")
	for _, s := range windowShortcuts() {
		fmt.Fprintf(&b, "  Ctrl+%s\t%s\n", s.key, s.what)
	}
	b.WriteString("  Ctrl+C\tcopy the tab shown: Machines, Results or Why this number? (Edit › Copy)\n")
	b.WriteString("  Esc\tclose a dialog; clear a search field\n  Enter\tin a search field: tick the first match\n\n")
	b.WriteString("Mouse on a chart:\n  hover\tread a point (the curves: every series at that batch size)\n  click\texplain the point (Why this number?); on the scatter also highlight its curve\n  drag\tzoom into the box drawn\n  Shift+drag\tpan\n  right-click\tshow all again\n")
	return b.String()
}

func (mw *MainWindow) showShortcuts() {
	l := widget.NewLabelWithStyle(ShortcutsText(), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	d := dialog.NewCustom("Keyboard and mouse", "Close", container.NewVScroll(l), mw.Window)
	d.Resize(fyne.NewSize(640, 520))
	closeOnEscape(d, mw.Window)
	d.Show()
}

// showReadme shows one of manualSections, by heading (as built into the program),
// with a link to its page on the web.
func (mw *MainWindow) showReadme(heading string) {
	page := "README.md"
	for _, sec := range manualSections {
		if sec.heading == heading {
			page = sec.page
		}
	}
	link, _ := url.Parse(readmeURL + "/blob/main/" + page + "#" + readmeAnchor(heading))
	var body string
	if mw.docs != nil {
		if md, err := fs.ReadFile(mw.docs, page); err == nil {
			body = readableMarkdown(readmeSection(string(md), heading))
		}
	}
	if body == "" {
		body = "This build carries no copy of the manual; the link opens it on the web."
	}
	text := widget.NewRichTextFromMarkdown(body)
	text.Wrapping = fyne.TextWrapWord
	// Fyne wraps a list item's lines to the whole width and then indents them by its
	// bullet: they ran off the right edge by a few letters. The text is laid out that
	// much narrower.
	inset := container.New(&insetRight{margin: 3 * theme.TextSize()}, text)
	content := container.NewBorder(widget.NewHyperlink("Open this section on the web", link), nil, nil, nil, container.NewVScroll(inset))
	d := dialog.NewCustom(strings.ReplaceAll(heading, "`", ""), "Close", content, mw.Window)
	d.Resize(fyne.NewSize(820, 600))
	closeOnEscape(d, mw.Window)
	d.Show()
}

// insetRight lays its one object out margin narrower than itself, from the left.
type insetRight struct{ margin float32 }

func (l *insetRight) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(fyne.NewSize(fyne.Max(size.Width-l.margin, 0), size.Height))
}

func (l *insetRight) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return objs[0].MinSize().AddWidthHeight(l.margin, 0)
}

// readmeSection is the Markdown under a heading of readme, to the next heading of the
// same or a higher level; "" when there is none.
func readmeSection(readme, heading string) string {
	lines := strings.Split(readme, "\n")
	level := 0
	var out []string
	for _, line := range lines {
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		isHead := hashes > 0 && strings.HasPrefix(line[hashes:], " ")
		if level == 0 {
			if isHead && strings.TrimSpace(line[hashes:]) == heading {
				level = hashes
			}
			continue
		}
		if isHead && hashes <= level {
			break
		}
		if strings.HasPrefix(strings.TrimSpace(line), "![") { // images are on the web page
			continue
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// readableMarkdown is Markdown as Fyne's rich text shows it whole: nested list items
// become top-level ones (Fyne does not take a nested list's indent off its width, so
// its lines run off the right edge), and "→", which the theme's font lacks (its
// fallback then draws the space after it as a missing glyph), becomes "›". Fenced code
// is left as it is.
func readableMarkdown(md string) string {
	lines := strings.Split(md, "\n")
	fenced := false
	out := make([]string, 0, len(lines))
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			out = append(out, strings.TrimSpace(line))
			continue
		}
		if fenced { // a code block scrolls sideways in its own box: its lines stay as they are, to copy
			out = append(out, line)
			continue
		}
		out = append(out, uiText(strings.TrimLeft(line, " \t")))
	}
	return strings.Join(out, "\n")
}

// uiText is text with the characters the window's font cannot draw well replaced:
// "→" by "›" (the fallback font draws the arrow but not the space after it) and "≡"
// by "=".
func uiText(s string) string { return uiGlyphs.Replace(s) }

// uiError is an error as the window shows it: its text in uiText's glyphs, the error
// itself kept for errors.Is and As.
type uiError struct{ err error }

func (e uiError) Error() string { return uiText(e.err.Error()) }
func (e uiError) Unwrap() error { return e.err }

var uiGlyphs = strings.NewReplacer("\u2192", "›", "≡", "=")

// readmeAnchor is GitHub's anchor for a heading: lower case, spaces to dashes, and
// everything but letters, digits, dashes and underscores dropped.
func readmeAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// capitalise puts a sentence's first letter in upper case.
func capitalise(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// sameSelection reports whether two settings select the same CNNs and machines.
func sameSelection(a, b app.SessionSettings) bool {
	return strings.Join(a.Models, ",") == strings.Join(b.Models, ",") && strings.Join(a.Machines, ",") == strings.Join(b.Machines, ",")
}

// addShortcuts binds the shortcuts on the canvas too: the menus trigger them in a
// desktop window, the canvas wherever there is no main menu (tests, some platforms).
func (mw *MainWindow) addShortcuts() {
	c := mw.Window.Canvas()
	for _, s := range windowShortcuts() {
		c.AddShortcut(s.keys(), func(fyne.Shortcut) { s.run(mw) })
	}
	// Ctrl+C copies the tab shown (a focused text field copies its own selection).
	c.AddShortcut(&fyne.ShortcutCopy{}, func(fyne.Shortcut) { mw.copyShown() })
	escapeStackOf(c) // Esc closes the dialogs opened with closeOnEscape
}

// addModelDialog is File → Add model…: a custom model file (.json) is added at once; an
// ONNX file (.onnx) asks its name and input size first (importONNXDialog).
func (mw *MainWindow) addModelDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			mw.showError(err)
			return
		}
		if r == nil {
			return
		}
		if app.IsONNXFile(r.URI().Name()) {
			if !mw.Session.CanImportONNX() {
				r.Close()
				mw.showError(fmt.Errorf("%s: this window cannot import ONNX models", r.URI().Name()))
				return
			}
			mw.importONNXDialog(r.URI().Name(), r)
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
		mw.notify("Added custom model " + name + ".")
	}, mw.Window)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".json", ".onnx"}))
	mw.showFileDialog(d)
}

// showFileDialog shows a file picker that Esc closes, as it closes the window's other
// dialogs. A save dialog's name field would take the Esc: it starts unfocused (its
// name is filled in already; a click edits it).
func (mw *MainWindow) showFileDialog(d *dialog.FileDialog) {
	closeOnEscape(d, mw.Window)
	d.Show()
	mw.Window.Canvas().Unfocus()
}

func (mw *MainWindow) importDialog() {
	if mw.Backend == nil {
		mw.showError(fmt.Errorf("import is not available in this window"))
		return
	}
	mw.pickFile(func(path string) {
		mw.setStatus("Importing " + path + "…")
		go func() {
			msg, err := mw.Backend.Import(context.Background(), path)
			fyne.Do(func() {
				if err != nil {
					mw.showError(err)
					return
				}
				mw.notify(msg)
				mw.reloadChoices()
			})
		}()
	})
}

// pickFile asks for a file to read, listing only those whose name ends in one of exts
// (".csv"; none: every file), and hands its path to use; cancelling does nothing.
func (mw *MainWindow) pickFile(use func(path string), exts ...string) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			mw.showError(err)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		use(path)
	}, mw.Window)
	if len(exts) > 0 {
		d.SetFilter(storage.NewExtensionFileFilter(exts))
	}
	mw.showFileDialog(d)
}

// pickFolder asks for a folder and hands its path to use; cancelling does nothing.
func (mw *MainWindow) pickFolder(use func(path string)) {
	mw.showFileDialog(dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			mw.showError(err)
			return
		}
		if u != nil {
			use(u.Path())
		}
	}, mw.Window))
}

// reloadChoices shows what the cache holds now, after an import or a price update: the
// models (an import may bring custom ones), the machines with their prices, and the
// predictions made from them.
// It runs on the UI goroutine.
func (mw *MainWindow) reloadChoices() {
	ms, err := mw.Session.Machines(context.Background())
	mw.showChoices(ms, err)
}

// showChoices shows the models the session lists and the machines read (unless err),
// and predicts again. It runs on the UI goroutine.
func (mw *MainWindow) showChoices(ms []hw.Machine, err error) {
	mw.uiMu.Lock()
	mw.Selection.RefreshModels()
	if err == nil {
		mw.Selection.SetMachines(ms)
		mw.Specs.SetMachines(ms, catalogGPUs())
	}
	mw.uiMu.Unlock()
	mw.Session.Refresh() // its state comes back through show, which takes uiMu itself
}

// Close saves the window's size, stops the predictions and the cache watch, closes
// the cache and the window: what closing the window, File → Quit, Ctrl+Q and Ctrl+W
// all do, so the size is remembered however the window goes.
// While a sweep runs it asks first: stop the sweep and quit, or keep it running.
func (mw *MainWindow) Close() {
	if mw.Benchmark != nil && mw.Benchmark.Runner.Running() {
		mw.askStopSweep()
		return
	}
	mw.closeNow()
}

// askStopSweep asks whether to stop the running sweep and quit (it pauses after the
// measurement in flight, so Start resumes it) or keep it running; asked once however
// often the window is closed meanwhile.
func (mw *MainWindow) askStopSweep() {
	if mw.askingStop {
		return
	}
	mw.askingStop = true
	st := mw.Benchmark.Runner.Status()
	what := "A sweep is running"
	if st.Request != nil {
		what = fmt.Sprintf("A sweep of %s on %s is running", strings.Join(st.Request.Models, ", "), st.Request.Device)
	}
	if p := st.Progress; p.Total > 0 {
		what += fmt.Sprintf(" (%d%% done", int(100*float64(p.Done+p.Cached)/float64(p.Total+p.Cached)))
		if st.ETA > 0 {
			what += ", about " + roundETA(st.ETA) + " left"
		}
		what += ")"
	}
	msg := widget.NewLabel(what + ". Quitting stops it after the measurement in flight: what it measured stays in the cache, and Start with the same models resumes it.")
	msg.Wrapping = fyne.TextWrapWord
	body := container.NewGridWrap(fyne.NewSize(460, msg.MinSize().Height*3), msg)
	d := dialog.NewCustomConfirm("Quit while a sweep runs?", "Stop and quit", "Keep running", body, func(stop bool) {
		mw.askingStop = false
		if !stop {
			return
		}
		mw.setStatus("Stopping the sweep after the measurement in flight, then quitting…")
		mw.Benchmark.Runner.Pause()
		go func() {
			mw.Benchmark.Runner.Wait()
			fyne.Do(mw.closeNow)
		}()
	}, mw.Window)
	closeOnEscape(d, mw.Window, func() { mw.askingStop = false }) // Esc: keep running
	d.Show()
}

// closeNow saves the window's size, stops the predictions and the cache watch, closes
// the cache and the window.
func (mw *MainWindow) closeNow() {
	size := mw.Window.Canvas().Size()
	if size.Width > 0 && size.Height > 0 {
		prefs := mw.App.Preferences()
		prefs.SetFloat(prefWindowWidth, float64(size.Width))
		prefs.SetFloat(prefWindowHeight, float64(size.Height))
	}
	if mw.stopWatch != nil {
		mw.stopWatch()
	}
	mw.Session.Close()
	if mw.Backend != nil {
		mw.Backend.Close()
	}
	mw.Window.Close()
}

// watchCache follows the cache while the window is open: machines, models and prices
// another program adds (`cnntime machine add`, `cnntime prices update`, another
// window, a sweep on the command line) appear within a few seconds and can be picked.
// The window's own sweep reloads when it ends, so the watch waits for that. The watch
// ends with the window, or with the backend.
func (mw *MainWindow) watchCache() {
	if mw.Backend == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	mw.stopWatch = cancel
	mw.Window.SetOnClosed(cancel)
	sweeping := func() bool { return mw.Benchmark != nil && mw.Benchmark.Runner.Running() } // its end reloads
	mw.Backend.Watch(ctx, sweeping, func() {
		ms, err := mw.Session.Machines(ctx)
		if ctx.Err() != nil {
			return
		}
		fyne.DoAndWait(func() {
			if mw.Benchmark != nil {
				mw.Benchmark.RefreshHoldings()
			}
			mw.showChoices(ms, err)
			if mw.OnCacheReloaded != nil {
				mw.OnCacheReloaded()
			}
		})
	}, func(err error) {
		fyne.Do(func() { mw.notify("The cache changed but could not be read again: " + err.Error()) })
	}, func(msg string) {
		fyne.Do(func() { mw.notify(msg) })
	})
}

func catalogGPUs() []hw.GPU {
	c, err := app.LoadCatalog()
	if err != nil {
		return nil
	}
	return c.GPUs()
}
