package views

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// Maximise gives one chart the right of the window and puts everything back again;
// the splitter cannot take a chart below the size it stays readable at.
func TestMaximiseAndChartMinimum(t *testing.T) {
	mw := newTestWindow(t)
	settle(t, mw)
	onUI(mw, func() {
		mw.ToggleMaximise("curves")
		if mw.Maximised() != "curves" || len(mw.right.Objects) != 1 || mw.right.Objects[0] != mw.curvesPanel {
			t.Errorf("maximised curves: %q, right holds %v", mw.Maximised(), mw.right.Objects)
		}
		mw.ToggleMaximise("scatter")
		if mw.Maximised() != "scatter" || mw.right.Objects[0] != mw.scatterPanel {
			t.Errorf("maximised scatter: %q", mw.Maximised())
		}
		mw.ToggleMaximise("scatter") // again: back
		if mw.Maximised() != "" || mw.right.Objects[0] != mw.mainSplit || mw.chartsSplit.Leading != mw.scatterPanel || mw.chartsSplit.Trailing != mw.curvesPanel {
			t.Errorf("restored: %q, right holds %v", mw.Maximised(), mw.right.Objects)
		}
		// Dragging the splitter to the top leaves the charts their minimum.
		mw.mainSplit.SetOffset(0)
	})
	time.Sleep(50 * time.Millisecond)
	onUI(mw, func() {
		if s := mw.Curves.Size(); s.Height < chartMinSize.Height || s.Width < chartMinSize.Width {
			t.Errorf("with the splitter at the top the curves chart is %v, below its minimum %v", s, chartMinSize)
		}
	})
}

// A drag over a chart zooms into the box drawn, a right click shows all again, and
// the toolbar's reset button follows.
func TestChartDragZoomsAndRightClickResets(t *testing.T) {
	mw := newTestWindow(t)
	onUI(mw, func() {
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
		mw.Selection.ToggleMachine("gcp/a2-highgpu-1g", true)
	})
	settle(t, mw)
	var zoomed fyne.Position
	onUI(mw, func() {
		f := mw.Curves.Frame()
		a := mw.Curves.fromFrame(f, f.X0+(f.X1-f.X0)*0.2, f.Y0+(f.Y1-f.Y0)*0.2)
		b := mw.Curves.fromFrame(f, f.X0+(f.X1-f.X0)*0.6, f.Y0+(f.Y1-f.Y0)*0.7)
		zoomed = b
		mw.Curves.MouseDown(&desktop.MouseEvent{Button: desktop.MouseButtonPrimary})
		mw.Curves.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: a.Add(fyne.NewPos(1, 1))}, Dragged: fyne.NewDelta(1, 1)})
		mw.Curves.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: b}, Dragged: fyne.NewDelta(b.X-a.X-1, b.Y-a.Y-1)})
		mw.Curves.DragEnd()
		if !mw.Curves.Zoomed() || mw.zoomButtons["curves"].Disabled() {
			t.Errorf("after a drag from %v to %v the curves are not zoomed (reset enabled: %v)", a, b, !mw.zoomButtons["curves"].Disabled())
		}
	})
	settle(t, mw)
	onUI(mw, func() {
		v := mw.Curves.Frame().View()
		if v.XMax >= 1024 || v.XMin <= 1 {
			t.Errorf("the zoomed view %+v still spans the whole batch range", v)
		}
		mw.Curves.TappedSecondary(&fyne.PointEvent{Position: zoomed})
		if mw.Curves.Zoomed() || !mw.zoomButtons["curves"].Disabled() {
			t.Error("a right click did not reset the zoom")
		}
	})
}

// "abc" in Workers is marked at once, not when the field loses focus, and changes
// nothing; more workers than a selected machine's vCPUs per GPU draw a warning.
func TestWorkersInvalidAtOnceAndWarnedBeyondVCPUs(t *testing.T) {
	newTestApp(t)
	s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	ms := append([]hw.Machine(nil), fakeMachines...)
	ms[0].VCPUs, ms[0].GPUCount = 4, 1  // aws/p3.2xlarge as a 4-vCPU machine
	ms[1].VCPUs, ms[1].GPUCount = 96, 8 // 12 per GPU
	p := NewSelectionPanel(s, ms, nil, func(error) {}, nil)
	w := test.NewWindow(p.Content())
	defer w.Close()
	p.ToggleMachine("aws/p3.2xlarge", true)
	p.ToggleMachine("gcp/a2-highgpu-1g", true)
	r := p.RunData
	p.Tabs.SelectIndex(2) // the Run tab
	w.Canvas().Focus(r.Workers)
	test.Type(r.Workers, "abc")
	if !r.Workers.AlwaysShowValidationError || r.Workers.Validate() == nil {
		t.Errorf("\"abc\" in Workers: shown at once %v, error %v", r.Workers.AlwaysShowValidationError, r.Workers.Validate())
	}
	if w.Canvas().Focused() != r.Workers {
		t.Fatal("the field lost the keyboard: the check would not be \"at once\"")
	}
	if got := s.Settings().Data.Workers; got != 0 {
		t.Errorf("\"abc\" changed the workers to %d", got)
	}
	if p.WorkersNote.Visible() {
		t.Errorf("a warning for \"abc\": %q", p.WorkersNote.Text)
	}
	r.Workers.SetText("16")
	if !p.WorkersNote.Visible() || !strings.Contains(p.WorkersNote.Text, "16 workers per GPU") ||
		!strings.Contains(p.WorkersNote.Text, "aws/p3.2xlarge (4 vCPUs, 4 per GPU)") || !strings.Contains(p.WorkersNote.Text, "gcp/a2-highgpu-1g (96 vCPUs, 12 per GPU)") {
		t.Errorf("16 workers on a 4-vCPU machine: warning shown %v, %q", p.WorkersNote.Visible(), p.WorkersNote.Text)
	}
	r.Workers.SetText("3")
	if p.WorkersNote.Visible() {
		t.Errorf("3 workers: a warning %q", p.WorkersNote.Text)
	}
	// Deselecting the small machine clears a warning about it.
	r.Workers.SetText("8")
	p.ToggleMachine("aws/p3.2xlarge", false)
	if p.WorkersNote.Visible() {
		t.Errorf("8 workers with only the 12-per-GPU machine left: %q", p.WorkersNote.Text)
	}
}

// Esc closes the window's dialogs, and from a text field of a dialog too.
func TestEscapeClosesDialogs(t *testing.T) {
	mw := newTestWindow(t)
	c := mw.Window.Canvas()
	for _, open := range []struct {
		name string
		show func()
	}{
		{"export", mw.ShowExportDialog},
		{"keyboard help", mw.showShortcuts},
		{"README section", func() { mw.showReadme("The desktop app") }},
		{"error", func() { mw.showError(context.DeadlineExceeded) }},
	} {
		onUI(mw, open.show)
		if c.Overlays().Top() == nil {
			t.Fatalf("%s: no dialog", open.name)
		}
		onUI(mw, func() { c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}) })
		if top := c.Overlays().Top(); top != nil {
			t.Errorf("%s: Esc left the dialog open", open.name)
			onUI(mw, func() { c.Overlays().Remove(top) })
		}
	}
	// A dialog's field has the keyboard: Esc there closes the dialog too.
	field := newEscapeEntry()
	onUI(mw, func() {
		d := dialog.NewCustom("with a field", "Close", field, mw.Window)
		closeOnEscape(d, mw.Window)
		d.Show()
		c.Focus(field)
		test.Type(field, "ab")
		field.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	})
	if c.Overlays().Top() != nil || field.Text != "ab" {
		t.Errorf("Esc in a dialog's field: dialog open %v, field %q", c.Overlays().Top() != nil, field.Text)
	}
}

// The menus show their shortcuts, and Help lists every one of them.
func TestMenusShowShortcutsAndHelpListsThem(t *testing.T) {
	mw := newTestWindow(t)
	menu := mw.mainMenu()
	shortcuts := 0
	var names []string
	for _, m := range menu.Items {
		names = append(names, m.Label)
		for _, it := range m.Items {
			if it.Shortcut != nil {
				shortcuts++
			}
		}
	}
	if strings.Join(names, ",") != "File,Edit,View,Help" || shortcuts < 9 {
		t.Errorf("menus %v with %d shortcuts shown", names, shortcuts)
	}
	help := ShortcutsText()
	for _, s := range windowShortcuts() {
		if !strings.Contains(help, "Ctrl+"+string(s.key)) || !strings.Contains(help, s.what) {
			t.Errorf("the Help text lacks Ctrl+%s (%s)", s.key, s.what)
		}
	}
	if sec := readmeSection("# A\ntext\n## The desktop app\nbody\n### sub\nmore\n## Next\nno", "The desktop app"); sec != "body\n### sub\nmore" {
		t.Errorf("readmeSection = %q", sec)
	}
	if a := readmeAnchor("Why this number? (`cnntime explain`)"); a != "why-this-number-cnntime-explain" {
		t.Errorf("readmeAnchor = %q", a)
	}
}

// My workstation picks this computer once a sweep measured it, priced or not: an
// unpriced measured device is the user's too.
func TestMyWorkstationPicksAnUnpricedMeasuredComputer(t *testing.T) {
	newTestApp(t)
	s := app.NewSession(fakeBackend{}, nil, time.Millisecond)
	defer s.Close()
	local := hw.Machine{ID: hw.LocalCPUID, Provider: hw.LocalProvider, Instance: "This computer's CPU: AMD EPYC", GPUID: hw.CPUGPUID, GPUCount: 1, Listing: hw.ListingUnpriced}
	var info string
	p := NewSelectionPanel(s, append([]hw.Machine{local}, fakeMachines...), nil, func(error) {}, func(m string) { info = m })
	p.QuickPick(app.PickWorkstation)
	if got := s.Settings().Machines; len(got) != 1 || got[0] != hw.LocalCPUID {
		t.Errorf("My workstation picked %v (%q), want %s", got, info, hw.LocalCPUID)
	}
}

// Series drawn on top of each other say so in the legend.
func TestLegendNamesOverlappingSeries(t *testing.T) {
	newTestApp(t)
	curves, _ := fakeBackend{}.PredictCurves(context.Background(), app.SessionSettings{Models: []string{"resnet50"},
		Machines: []string{"aws/p3.2xlarge"}, Epochs: 1, Images: 1000, BatchMin: 1})
	twin := curves[0]
	twin.Machine = "gcp/n1-v100"
	other := curves[0]
	other.Machine, other.Points = "lambda/x", append([]predictor.Point(nil), other.Points...)
	other.Points[3].TotalS *= 2
	all := []predictor.Curve{curves[0], twin, other}
	l := NewLegend()
	l.Set(all, nil, charts.StylesFor(all), charts.MetricTotal, charts.DarkStyle.Background)
	got := l.Texts()
	if len(got) != 3 || !strings.Contains(got[0], "(= gcp/n1-v100: the same curve)") || !strings.Contains(got[1], "(= aws/p3.2xlarge: the same curve)") || strings.Contains(got[2], "the same curve") {
		t.Errorf("legend texts %q", got)
	}
	// On screen: a heading for the CNN, then the machines, the twin right after the
	// curve it repeats and marked "=" (its whole text on hover), whatever the order.
	l.Set([]predictor.Curve{twin, other, curves[0]}, nil, charts.StylesFor(all), charts.MetricTotal, charts.DarkStyle.Background)
	var shown, tips []string
	for _, o := range l.box.Objects {
		switch x := o.(type) {
		case *widget.Label:
			shown = append(shown, "# "+x.Text)
		case *quietRow:
			walk(x.content, func(o fyne.CanvasObject) {
				if tl, ok := o.(*tapLabel); ok {
					shown, tips = append(shown, tl.Text), append(tips, tl.tip)
				}
			})
		}
	}
	want := []string{"# resnet50", "gcp/n1-v100", "= aws/p3.2xlarge", "lambda/x"}
	if strings.Join(shown, "|") != strings.Join(want, "|") || tips[1] != "resnet50 · aws/p3.2xlarge (= gcp/n1-v100: the same curve)" || l.Entries() != 3 {
		t.Errorf("legend shows %q (tips %q, %d entries); want %q", shown, tips, l.Entries(), want)
	}
}

// The curves' legend goes beside them from a chart of about 300 px (the curves panel
// at 1280×800 is about 560 px wide), so they keep the panel's height whatever the
// number of series; only a narrower panel puts it below, in a quarter of the height.
func TestLegendBesideTheCurvesAt1280(t *testing.T) {
	newTestApp(t)
	chart, legend := widget.NewLabel("chart"), NewLegend()
	var curves []predictor.Curve
	base, _ := fakeBackend{}.PredictCurves(context.Background(), app.SessionSettings{Models: []string{"resnet50", "vgg16", "mobilenet_v2"},
		Machines: []string{"aws/p3.2xlarge", "m2", "m3", "m4", "m5"}, Epochs: 1, Images: 1000, BatchMin: 1})
	curves = append(curves, base...)
	legend.Set(curves, nil, charts.StylesFor(curves), charts.MetricTotal, charts.DarkStyle.Background)
	l := &sideOrBelow{wideFrom: 480, sideWidth: 190, maxBelow: 0.25}
	for _, tc := range []struct {
		width, height float32
		beside        bool
	}{{560, 360, true}, {1000, 600, true}, {420, 360, false}} {
		l.Layout([]fyne.CanvasObject{chart, legend.Content()}, fyne.NewSize(tc.width, tc.height))
		beside := legend.Content().Position().X > 0
		if beside != tc.beside || (beside && chart.Size().Height != tc.height) || (!beside && chart.Size().Height < tc.height*0.75) || chart.Size().Height < tc.height/2 {
			t.Errorf("%v×%v with %d series: legend beside %v, chart %v; want beside %v and the chart at least half the height",
				tc.width, tc.height, legend.Entries(), beside, chart.Size(), tc.beside)
		}
	}
}

// The time left reads as people say it.
func TestRoundETA(t *testing.T) {
	for d, want := range map[time.Duration]string{
		40 * time.Second: "40 s", 24*time.Minute + 10*time.Second: "24 min", 2*time.Hour + 5*time.Minute: "2 h 05 min", 59*time.Minute + 50*time.Second: "1 h 00 min",
	} {
		if got := roundETA(d); got != want {
			t.Errorf("roundETA(%v) = %q, want %q", d, got, want)
		}
	}
}

// The README's sections show whole in the Help dialog: nested list items become
// top-level ones (Fyne runs nested lists off the right edge) and "→", whose fallback
// glyph breaks the space after it, becomes "›"; fenced code stays as it is.
func TestReadableMarkdown(t *testing.T) {
	in := "Intro → more\n- top\n  - nested, File → Add model…\n    continued\n  ```\n  $ cnntime best → x\n    indented\n  ```\n"
	want := "Intro › more\n- top\n- nested, File › Add model…\ncontinued\n```\n  $ cnntime best → x\n    indented\n```\n"
	if got := readableMarkdown(in); got != want {
		t.Errorf("readableMarkdown =\n%q\nwant\n%q", got, want)
	}
}
