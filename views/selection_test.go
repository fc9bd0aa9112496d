package views

import (
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// drawnText returns the text a widget's renderer shows.
func drawnText(o fyne.Widget) string {
	var out string
	var walk func(objs []fyne.CanvasObject)
	walk = func(objs []fyne.CanvasObject) {
		for _, obj := range objs {
			switch v := obj.(type) {
			case *canvas.Text:
				out += v.Text
			case *widget.RichText:
				out += v.String()
			case fyne.Widget:
				walk(test.WidgetRenderer(v).Objects())
			case *fyne.Container:
				walk(v.Objects)
			}
		}
	}
	walk(test.WidgetRenderer(o).Objects())
	return out
}

// A tree reuses row widgets for other items; a reused row must show its new item's
// label even when the checked state does not change.
func TestCheckTreeReusedRowShowsItsOwnLabel(t *testing.T) {
	newTestApp(t)
	ct := newCheckTree("search", nil)
	ct.labels = map[string]string{"aws/p3.16xlarge": "p3.16xlarge — 8× v100", "gcp/g2-standard-4": "g2-standard-4 — 1× l4", "gcp/a2": "a2 — 1× a100"}
	ct.checked = map[string]bool{"gcp/a2": true}
	row := newHoverCheck(ct)
	test.WidgetRenderer(row) // the row has been drawn once, as in a tree

	steps := []struct{ id, want string }{
		{"aws/p3.16xlarge", "p3.16xlarge — 8× v100"},
		{"gcp/g2-standard-4", "g2-standard-4 — 1× l4"}, // same (unchecked) state: the bug case
		{"gcp/a2", "a2 — 1× a100"},
	}
	for _, s := range steps {
		ct.update(s.id, false, row)
		if got := drawnText(row); got != s.want {
			t.Errorf("row reused for %s draws %q, want %q", s.id, got, s.want)
		}
		if row.Checked != ct.checked[s.id] {
			t.Errorf("row reused for %s checked=%v, want %v", s.id, row.Checked, ct.checked[s.id])
		}
	}
}

// The window must fit a 1366×768 laptop screen: its content (below the menu bar and
// the window's title bar) may need at most 700 pixels of height, with the real
// Benchmark tab, whose sweep form is the tallest part.
func TestWindowFitsASmallScreen(t *testing.T) {
	a := newTestApp(t)
	mw := onUIThread(func() *MainWindow { return OpenMainWindow(a, Options{DBPath: filepath.Join(t.TempDir(), "cache.db")}) })
	defer onUI(mw, mw.Window.Close)
	// 1024×700 less the menu bar (Fyne's canvas holds the content under it).
	var min fyne.Size
	onUI(mw, func() { min = mw.Window.Content().MinSize() })
	if min.Height > 670 || min.Width > 1024 {
		t.Errorf("the window needs at least %.0f×%.0f; want it to fit 1024×700", min.Width, min.Height)
	}
	// Maximised, a chart alone needs no more.
	for _, which := range []string{"scatter", "curves"} {
		onUI(mw, func() { mw.Maximise(which); min = mw.Window.Content().MinSize() })
		if min.Height > 670 || min.Width > 1024 {
			t.Errorf("with the %s maximised the window needs %.0f×%.0f", which, min.Width, min.Height)
		}
	}
}
