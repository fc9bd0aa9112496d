package views

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
)

// openRealWindow opens the app's window over a fresh cache and fresh preferences: a
// first launch.
func openRealWindow(t *testing.T) *MainWindow {
	t.Helper()
	a := newTestApp(t)
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindow(a, Options{DBPath: filepath.Join(t.TempDir(), "cache.db")})
		mw.Window.Resize(fyne.NewSize(1280, 800))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(func() { mw.Session.Close(); mw.Backend.Close() })
	return mw
}

// A first launch draws both charts and the results with no clicks, says what to do
// next, and runs the 8-GPU machine's curve past 1024.
func TestFirstLaunchShowsAnExample(t *testing.T) {
	mw := openRealWindow(t)
	settle(t, mw)
	want := len(app.FirstLaunchModels) * len(mw.Session.Settings().Machines)
	if want < 4 {
		t.Fatalf("the example has %d curves", want)
	}
	if n := len(mw.Results.Rows()); n != want {
		t.Errorf("results rows = %d, want %d", n, want)
	}
	if n := len(mw.Scatter.Chart().Marks()); n != want {
		t.Errorf("scatter points = %d, want %d", n, want)
	}
	if mw.Curves.Chart().Empty() {
		t.Error("no curves drawn")
	}
	if got := mw.Status.Text; !strings.Contains(got, "An example to start from") || !strings.Contains(got, "Ctrl+F") {
		t.Errorf("status on a first launch: %q", got)
	}
	var multi *predictor.Curve
	for i, c := range mw.state.Curves {
		if c.GPUCount == 8 {
			multi = &mw.state.Curves[i]
		}
	}
	if multi == nil {
		t.Fatal("the example has no 8-GPU machine")
	}
	best := multi.Points[multi.Best]
	if last := multi.Points[len(multi.Points)-1]; last.Batch <= 1024 || best.Batch <= 1024 || multi.MaxBatch <= 1024 {
		t.Errorf("%s: curve ends at %d, best %d, max %d: want all past 1024", multi.Machine, last.Batch, best.Batch, multi.MaxBatch)
	}
	// Changing the selection replaces the hint with the prediction's summary.
	onUI(mw, func() { mw.Selection.ToggleModel("vgg16", true) })
	settle(t, mw)
	if got := mw.Status.Text; strings.Contains(got, "An example") || !strings.Contains(got, charts.Count(2*want/len(app.FirstLaunchModels), "curve", "curves")) {
		t.Errorf("status after a change: %q", got)
	}
}

// Clicking a results row explains it: the Why tab shows what bounds it, the phases add
// up to the row's iteration time, every layer is listed, and it exports as CSV.
func TestWhyThisNumber(t *testing.T) {
	mw := openRealWindow(t)
	settle(t, mw)
	done := make(chan predictor.Explanation, 1)
	mw.OnExplained = func(x predictor.Explanation) { done <- x }
	row := mw.Results.Rows()[0]
	onUI(mw, func() { mw.Results.table.OnSelected(widget.TableCellID{Row: 0, Col: 3}) })
	var x predictor.Explanation
	select {
	case x = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no explanation within 20 s")
	}
	if x.Model != row.Model || x.Machine != row.Machine || x.Batch != row.BestBatch {
		t.Fatalf("explained %s on %s at %d, clicked %s on %s at %d", x.Model, x.Machine, x.Batch, row.Model, row.Machine, row.BestBatch)
	}
	if rel := (x.Phases.Total() - row.IterMS) / row.IterMS; rel > 1e-6 || rel < -1e-6 {
		t.Errorf("phases add to %.4f ms, the row says %.4f ms", x.Phases.Total(), row.IterMS)
	}
	var head string
	onUI(mw, func() {
		head = mw.Why.Header.Text
		if mw.tabs.Selected().Text != "Why this number?" {
			t.Errorf("tab shown after the click: %q", mw.tabs.Selected().Text)
		}
	})
	if !strings.Contains(head, "the step") || !strings.Contains(head, row.Machine) || !strings.Contains(head, "±") {
		t.Errorf("headline %q", head)
	}
	onUI(mw, func() {
		if r, _ := mw.Why.tableSize(); r != 10 {
			t.Errorf("slowest layers table has %d rows", r)
		}
		mw.Why.Which.SetSelected(whyEvery)
		rows, _ := mw.Why.tableSize()
		if rows == 0 || rows > len(x.Layers) || mw.Why.Cell(0, 0) != x.Layers[0].Name {
			t.Errorf("every layer: %d rows (of %d layers), first %q", rows, len(x.Layers), mw.Why.Cell(0, 0))
		}
		mw.Why.Which.SetSelected(whyPhases)
		if got := mw.Why.Cell(0, 0); got != "forward" {
			t.Errorf("first phase %q", got)
		}
	})
	// A change of the run explains the same point again, for the new run, in place.
	onUI(mw, func() {
		mw.tabs.SelectIndex(1)
		mw.Selection.Precision.SetSelected("amp")
	})
	select {
	case again := <-done:
		if again.Precision != "amp" || again.Model != x.Model || again.Machine != x.Machine || again.Batch != x.Batch {
			t.Errorf("after switching to amp the Why tab explains %s on %s at %d in %s", again.Model, again.Machine, again.Batch, again.Precision)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the Why tab was not explained again after the precision changed")
	}
	onUI(mw, func() {
		if mw.tabs.SelectedIndex() != 1 {
			t.Errorf("a settings change switched the tab to %q", mw.tabs.Selected().Text)
		}
	})
	dir := t.TempDir()
	for _, what := range []string{exportWhyCSV, exportWhyChart} {
		path := filepath.Join(dir, map[string]string{exportWhyCSV: "why.csv", exportWhyChart: "why.svg"}[what])
		var err error
		onUI(mw, func() { err = mw.Export(ExportRequest{What: what, Path: path, Width: 600, Height: 400}) })
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// Its curve deselected, the Why tab empties rather than showing a stale number.
	onUI(mw, func() { mw.Selection.ToggleMachine(x.Machine, false) })
	settle(t, mw)
	onUI(mw, func() {
		if mw.Why.Explanation() != nil {
			t.Error("the Why tab still explains a machine no longer selected")
		}
	})
}

// The selection panel at work: a tap on a heading opens it, Enter ticks the first
// match and Esc clears the search, older listings are hidden until asked for, a
// row's tooltip names the machine in full, the cheapest quick pick adds its machines, and a
// chip removes what it names.
func TestSelectionPanelFeatures(t *testing.T) {
	mw := openRealWindow(t)
	settle(t, mw)
	p := mw.Selection
	onUI(mw, func() {
		heading := groupPrefix + "ResNet"
		p.models.tree.OnSelected(heading)
		if !p.models.tree.IsBranchOpen(heading) {
			t.Error("a tap on a heading did not open it")
		}
		p.models.search.SetText("mobilenet_v3_s")
		p.models.search.OnSubmitted(p.models.search.Text)
		p.models.search.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
		if p.models.search.Text != "" {
			t.Errorf("Esc left %q in the search", p.models.search.Text)
		}
	})
	if got := mw.Session.Settings().Models; !slices.Contains(got, "mobilenet_v3_small") {
		t.Errorf("Enter did not tick the first match: %v", got)
	}
	shown := func(id string) bool {
		for _, ids := range p.machines.shown {
			if slices.Contains(ids, id) {
				return true
			}
		}
		return false
	}
	onUI(mw, func() {
		if shown("aws/p2.xlarge") || !shown("aws/p3.2xlarge") {
			t.Errorf("by default: K80 shown %v, V100 shown %v", shown("aws/p2.xlarge"), shown("aws/p3.2xlarge"))
		}
		p.older.SetChecked(true)
		if !shown("aws/p2.xlarge") {
			t.Error("older GPUs asked for, K80 still hidden")
		}
		tip := p.machineTooltip("aws/p4d.24xlarge")
		for _, want := range []string{"aws/p4d.24xlarge", "8× A100 SXM4 40GB", "96 vCPUs", "per hour"} {
			if !strings.Contains(tip, want) {
				t.Errorf("tooltip %q lacks %q", tip, want)
			}
		}
		p.QuickPick(app.PickCheapest)
	})
	settle(t, mw)
	if got := mw.Session.Settings().Machines; len(got) < 4 || !slices.Contains(got, "aws/g4dn.xlarge") {
		t.Errorf("cheapest quick pick selected %v", got)
	}
	onUI(mw, func() {
		before := len(mw.Session.Settings().Models)
		chip := p.chips.Objects[0].(*widget.Button)
		chip.OnTapped()
		if after := len(mw.Session.Settings().Models); after != before-1 {
			t.Errorf("removing chip %q: %d models, was %d", chip.Text, after, before)
		}
		p.QuickPick(app.PickWorkstation) // none measured: says so, changes nothing
		if !strings.Contains(mw.Status.Text, "No workstation yet") {
			t.Errorf("status after picking a missing workstation: %q", mw.Status.Text)
		}
	})
}

// Instances in the Run tab train together: the 8-GPU machine's curve then counts the
// GPUs of all of them, and a bad count changes nothing.
func TestInstancesMultiplyGPUs(t *testing.T) {
	mw := openRealWindow(t)
	settle(t, mw)
	gpus := func() int {
		for _, c := range mw.state.Curves {
			if c.Machine == "aws/p4d.24xlarge" {
				return c.GPUCount
			}
		}
		return 0
	}
	if n := gpus(); n != 8 {
		t.Fatalf("p4d.24xlarge has %d GPUs before", n)
	}
	onUI(mw, func() { mw.Selection.Nodes.SetText("4") })
	settle(t, mw)
	if n := gpus(); n != 32 {
		t.Errorf("4 instances of p4d.24xlarge: %d GPUs, want 32", n)
	}
	onUI(mw, func() { mw.Selection.Nodes.SetText("-2") })
	if err := mw.Selection.Nodes.Validate(); err == nil || mw.Session.Settings().Nodes != 4 {
		t.Errorf("-2 instances: validation %v, nodes now %d", err, mw.Session.Settings().Nodes)
	}
	onUI(mw, func() { mw.Selection.Nodes.SetText("") })
	settle(t, mw)
	if n := gpus(); n != 8 {
		t.Errorf("instances cleared: %d GPUs, want 8", n)
	}
}
