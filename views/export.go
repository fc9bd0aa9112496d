package views

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
)

// What the export dialog can write.
const (
	exportCurves     = "Curves chart (PNG, SVG or PDF)"
	exportScatter    = "Scatter chart (PNG, SVG or PDF)"
	exportResultsCSV = "Results table (CSV)"
	exportCurvesCSV  = "Curves, every batch size (CSV)"
	exportWhyChart   = "Why this number?: chart (PNG, SVG or PDF)"
	exportWhyCSV     = "Why this number?: every layer (CSV)"
)

// exportKinds are the export dialog's choices, in order.
var exportKinds = []string{exportCurves, exportScatter, exportResultsCSV, exportCurvesCSV, exportWhyChart, exportWhyCSV}

// ExportRequest is one export: what, where, and a chart's size in pixels.
type ExportRequest struct {
	What          string
	Path          string
	Width, Height int
}

// Export writes what the request asks for from the shown state (call it on the UI
// goroutine). Charts are drawn with a legend, in the light style; the extension picks
// the format.
func (mw *MainWindow) Export(req ExportRequest) error {
	return exportState(mw.state, append([]app.Summary(nil), mw.Results.Rows()...), mw.Why.Explanation(), req)
}

func exportState(st app.SessionState, rows []app.Summary, why *predictor.Explanation, req ExportRequest) error {
	switch req.What {
	case exportWhyChart, exportWhyCSV:
		if why == nil {
			return fmt.Errorf("nothing explained yet: click a results row, a scatter point or a curve point first")
		}
		if strings.TrimSpace(req.Path) == "" {
			return fmt.Errorf("choose a file to export to")
		}
		if req.What == exportWhyCSV {
			return app.ExportCSV(req.Path, func(w io.Writer) error { return app.WriteExplanationCSV(w, why) })
		}
		run := st.Settings
		run.Models, run.Machines = nil, nil
		var curves []predictor.Curve
		for _, c := range st.Curves {
			if c.Model == why.Model && c.Machine == why.Machine {
				curves = append(curves, c)
			}
		}
		title := app.ChartTitle(fmt.Sprintf("%s on %s at %s, %s: milliseconds per iteration", why.Model, why.Machine, app.BatchWords(why), app.BoundSentence(why)), run, curves)
		return app.ExportChart(req.Path, charts.Breakdown(breakdownBars(why), charts.BreakdownOptions{Title: title, Style: charts.LightStyle}), req.Width, req.Height)
	}
	if len(st.Curves) == 0 {
		return fmt.Errorf("nothing to export yet: pick at least one CNN and one machine")
	}
	if strings.TrimSpace(req.Path) == "" {
		return fmt.Errorf("choose a file to export to")
	}
	opt := st.View.Options(charts.LightStyle)
	opt.Legend = true
	opt.Styles = st.Styles // the window's colours and markers
	switch req.What {
	case exportCurves:
		metric := st.View.Metric
		if metric == "" {
			metric = charts.MetricTotal
		}
		opt.Title = app.ChartTitle(metric.TitleFor(st.Curves)+" vs batch size", st.Settings, st.Curves)
		return app.ExportChart(req.Path, charts.Curves(st.Curves, opt), req.Width, req.Height)
	case exportScatter:
		opt.LogX, opt.LogY = st.View.ScatterLog, st.View.ScatterLog
		opt.Title = app.ChartTitle(charts.ScatterTitle(st.Curves), st.Settings, st.Curves)
		return app.ExportChart(req.Path, charts.Scatter(st.Curves, opt), req.Width, req.Height)
	case exportResultsCSV:
		return app.ExportCSV(req.Path, func(w io.Writer) error { return app.WriteSummariesCSV(w, rows) })
	case exportCurvesCSV:
		return app.ExportCSV(req.Path, func(w io.Writer) error { return app.WriteCurvesCSV(w, st.Curves) })
	}
	return fmt.Errorf("unknown export %q", req.What)
}

// ShowExportDialog asks what to export, the size and the file, then writes it off
// the UI goroutine.
func (mw *MainWindow) ShowExportDialog() { mw.showExportDialogFor(exportCurves) }

// showExportDialogFor opens the export dialog with one kind of export chosen.
func (mw *MainWindow) showExportDialogFor(kind string) {
	if mw.exportOpen != nil { // one at a time: Ctrl+E again leaves the open one, which Esc closes
		return
	}
	home := mw.exportDir()
	what := widget.NewSelect(exportKinds, nil)
	path := newEscapeEntry()
	width, height := newEscapeEntry(), newEscapeEntry()
	width.SetText("1200")
	height.SetText("750")
	sizeCheck := func(s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 100 || n > charts.MaxPixels {
			return fmt.Errorf("enter 100 to %d pixels", charts.MaxPixels)
		}
		return nil
	}
	width.Validator, height.Validator = sizeCheck, sizeCheck
	defaultName := map[string]string{exportCurves: "cnntime-curves.png", exportScatter: "cnntime-scatter.png", exportResultsCSV: "cnntime-results.csv", exportCurvesCSV: "cnntime-curves.csv",
		exportWhyChart: "cnntime-why.png", exportWhyCSV: "cnntime-why-layers.csv"}
	chart := func(w string) bool { return w == exportCurves || w == exportScatter || w == exportWhyChart }
	what.OnChanged = func(w string) {
		dir := home
		if path.Text != "" {
			dir = filepath.Dir(path.Text)
		}
		name := defaultName[w]
		if old := path.Text; old != "" && chart(w) {
			if ext := strings.ToLower(filepath.Ext(old)); ext == ".svg" || ext == ".pdf" {
				name = strings.TrimSuffix(name, ".png") + ext
			}
		}
		path.SetText(filepath.Join(dir, name))
		if chart(w) {
			width.Enable()
			height.Enable()
		} else {
			width.Disable()
			height.Disable()
		}
	}
	what.SetSelected(kind)
	browse := widget.NewButton("Browse…", func() {
		save := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
			if err != nil || wc == nil {
				return
			}
			p := wc.URI().Path()
			wc.Close()
			os.Remove(p) // the export writes the file whole; an empty one must not stay if it fails
			path.SetText(p)
		}, mw.Window)
		save.SetFileName(filepath.Base(path.Text))
		if dir, err := storage.ListerForURI(storage.NewFileURI(filepath.Dir(path.Text))); err == nil {
			save.SetLocation(dir) // the folder the file name is in: the last export's
		}
		mw.showFileDialog(save)
	})
	items := []*widget.FormItem{
		widget.NewFormItem("Export", what),
		widget.NewFormItem("File", container.NewBorder(nil, nil, nil, browse, path)),
		widget.NewFormItem("Width (px)", width),
		widget.NewFormItem("Height (px)", height),
	}
	d := dialog.NewForm("Export", "Export", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		w, _ := strconv.Atoi(strings.TrimSpace(width.Text))
		h, _ := strconv.Atoi(strings.TrimSpace(height.Text))
		req := ExportRequest{What: what.Selected, Path: strings.TrimSpace(path.Text), Width: w, Height: h}
		mw.setStatus("Exporting " + req.Path + "…")
		st, rows, why := mw.state, append([]app.Summary(nil), mw.Results.Rows()...), mw.Why.Explanation()
		go func() {
			err := exportState(st, rows, why, req)
			fyne.Do(func() {
				if err != nil {
					mw.showError(err)
					return
				}
				mw.App.Preferences().SetString(prefExportDir, filepath.Dir(req.Path)) // the next export starts there
				mw.notify("Exported " + req.Path + ".")
			})
		}()
	}, mw.Window)
	d.Resize(fyne.NewSize(620, 300))
	mw.exportOpen = d
	closeOnEscape(d, mw.Window, func() { mw.exportOpen = nil })
	d.Show()
}

// exportDir is the folder exports start in: the last export's while it is there,
// else the home folder.
func (mw *MainWindow) exportDir() string {
	if dir := mw.App.Preferences().String(prefExportDir); dir != "" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	home, _ := os.UserHomeDir()
	return home
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(io.LimitReader(r, 16<<20)) }

func dirOf(path string) string {
	if d := filepath.Dir(path); d != "." {
		return d
	}
	return ""
}

// benchmarkTab is the Benchmark tab's content.
// Sweep progress shows in the status bar, and a finished sweep reloads the engine so
// the charts use what was measured.
func benchmarkTab(mw *MainWindow) fyne.CanvasObject {
	if mw.Backend == nil || mw.Backend.DB() == nil {
		return widget.NewLabel("The measurement cache could not be opened, so sweeps are off: restart cnntime with a writable --db file.")
	}
	b := NewBenchmark(app.NewSweepRunner(mw.Backend.DB()))
	mw.Benchmark = b
	b.OnProgress = func(st app.SweepStatus) {
		mw.setStatus("Sweep: " + describeRun(st))
	}
	b.OnFinished = func(res app.SweepResult, err error) {
		if err != nil {
			mw.notify("Sweep failed: " + err.Error())
			return
		}
		mw.setStatus(fmt.Sprintf("Sweep %s: %d measured in %s; loading them into the predictions…", res.State, res.Done, res.Elapsed.Round(time.Second)))
		// Reading the cache again takes a while on a big one: never on the UI goroutine.
		go func() {
			rerr := mw.Backend.Reload(context.Background())
			ms, merr := mw.Session.Machines(context.Background()) // a measured device is a machine (local/cpu)
			fyne.Do(func() {
				if rerr != nil {
					mw.showError(fmt.Errorf("the sweep finished but its measurements could not be loaded: %w", rerr))
					return
				}
				if merr == nil {
					mw.Selection.SetMachines(ms)
					mw.Specs.SetMachines(ms, catalogGPUs())
				}
				mw.Session.Refresh()
				mw.notify(fmt.Sprintf("Sweep %s: %d measured in %s; predictions now use them.", res.State, res.Done, res.Elapsed.Round(time.Second)))
			})
		}()
	}
	// The sweep form is tall; scroll it rather than let it set the window's least height.
	return container.NewVScroll(b.Content())
}
