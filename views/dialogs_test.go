package views

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
)

// Ctrl+E twice leaves one export dialog, which one Esc closes; Ctrl+W is not the Why
// tab (it closes the window, as elsewhere), Ctrl+Y is.
func TestExportDialogOnceAndShortcutKeys(t *testing.T) {
	mw := newTestWindow(t)
	c := mw.Window.Canvas()
	ctrl := func(k fyne.KeyName) {
		onUI(mw, func() {
			for _, s := range windowShortcuts() {
				if s.key == k {
					s.run(mw)
				}
			}
		})
	}
	ctrl(fyne.KeyE)
	ctrl(fyne.KeyE)
	n := 0
	onUI(mw, func() { n = len(c.Overlays().List()) })
	if n != 1 {
		t.Fatalf("Ctrl+E twice opened %d dialogs, want 1", n)
	}
	onUI(mw, func() { c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}) })
	onUI(mw, func() { n = len(c.Overlays().List()) })
	if n != 0 {
		t.Fatalf("Esc left %d dialogs open", n)
	}
	// Closed, it opens again.
	ctrl(fyne.KeyE)
	onUI(mw, func() { n = len(c.Overlays().List()); c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}) })
	if n != 1 {
		t.Errorf("Ctrl+E after Esc opened %d dialogs", n)
	}
	for _, s := range windowShortcuts() {
		switch s.key {
		case fyne.KeyW:
			if strings.Contains(s.what, "Why") {
				t.Errorf("Ctrl+W is %q: it closes a window everywhere else", s.what)
			}
		case fyne.KeyY:
			if !strings.Contains(s.what, "Why") {
				t.Errorf("Ctrl+Y is %q, want the Why tab", s.what)
			}
		}
	}
	ctrl(fyne.KeyY)
	if got := mw.tabs.Selected().Text; got != "Why this number?" {
		t.Errorf("Ctrl+Y shows the %s tab", got)
	}
}

// Edit → Copy (Ctrl+C) copies the tab shown as text: the results as tab-separated rows
// under their titles, the Why tab's sentences and table.
func TestCopyTheTabShown(t *testing.T) {
	mw := newTestWindow(t)
	onUI(mw, func() {
		for _, id := range []string{"resnet50", "aws/p3.2xlarge", "gcp/a2-highgpu-1g"} {
			mw.Selection.ToggleModel(id, id == "resnet50")
			mw.Selection.ToggleMachine(id, id != "resnet50")
		}
	})
	settle(t, mw)
	onUI(mw, func() { mw.tabs.SelectIndex(1); mw.copyShown() })
	got := mw.App.Clipboard().Content()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "CNN\tMachine\tBest batch") || !strings.HasPrefix(lines[1], "resnet50\taws/p3.2xlarge\t128\t") {
		t.Errorf("copied results:\n%s", got)
	}
	onUI(mw, func() { mw.tabs.SelectIndex(0); mw.copyShown() })
	if got := mw.App.Clipboard().Content(); !strings.HasPrefix(got, "Machine\tGPU\t") || strings.Count(got, "\n") < 4 {
		t.Errorf("copied machines:\n%.300s", got)
	}
}

// However the window goes — its close button, File → Quit, Ctrl+Q, Ctrl+W — it
// remembers its size.
func TestCloseRemembersTheSize(t *testing.T) {
	for _, how := range []fyne.KeyName{fyne.KeyQ, fyne.KeyW} {
		mw := newTestWindow(t)
		onUI(mw, func() { mw.Window.Resize(fyne.NewSize(1111, 777)) })
		onUI(mw, func() {
			for _, s := range windowShortcuts() {
				if s.key == how {
					s.run(mw)
				}
			}
		})
		p := mw.App.Preferences()
		if w, h := p.Float(prefWindowWidth), p.Float(prefWindowHeight); w != 1111 || h != 777 {
			t.Errorf("Ctrl+%s remembered %v×%v, want 1111×777", how, w, h)
		}
	}
}

// A window larger than the screen it opens on is shrunk to it; one that fits is left.
func TestFitTo(t *testing.T) {
	for _, tc := range []struct {
		size, screen, want fyne.Size
	}{
		{fyne.NewSize(1280, 800), fyne.NewSize(1920, 1200), fyne.NewSize(1280, 800)},
		// 1280×800 at 150% on a 1920×1080 screen: 1280×720 in the window's units.
		{fyne.NewSize(1280, 800), fyne.NewSize(1280, 720), fyne.NewSize(1216, 648)},
		{fyne.NewSize(1280, 800), fyne.NewSize(1024, 700), fyne.NewSize(972.8, 630)},
		{fyne.NewSize(1440, 960), fyne.NewSize(1440, 960), fyne.NewSize(1440, 960)},
	} {
		if got := fitTo(tc.size, tc.screen.Width, tc.screen.Height); got != tc.want {
			t.Errorf("%v on %v: %v, want %v", tc.size, tc.screen, got, tc.want)
		}
	}
}

// An error's "→" reaches the error dialog, the status line and the Messages as "›":
// the window's font draws no space after an arrow ("File →� Export launch file…").
func TestErrorsUseTheWindowsGlyphs(t *testing.T) {
	mw := newTestWindow(t)
	err := errors.New("no curve to launch: pick a CNN and a machine, then File → Export launch file…")
	onUI(mw, func() { mw.showError(err) })
	want := "File › Export launch file…"
	if got := dialogText(t, mw); !strings.Contains(got, want) || strings.Contains(got, "→") {
		t.Errorf("error dialog says %q; want %q", got, want)
	}
	var status string
	onUI(mw, func() { status = mw.status.label.Text })
	hist := mw.StatusHistory()
	if !strings.Contains(status, want) || len(hist) == 0 || !strings.Contains(hist[len(hist)-1].Text, want) {
		t.Errorf("status %q, last message %v; want %q", status, hist, want)
	}
	if !errors.Is(uiError{err}, err) {
		t.Error("the shown error no longer unwraps to the original")
	}
}

// Esc closes the file pickers (a file to import, a folder of price catalogs), as it
// closes the window's other dialogs.
func TestEscClosesTheFilePickers(t *testing.T) {
	mw := newTestWindow(t)
	c := mw.Window.Canvas()
	for name, open := range map[string]func(){
		"file":   func() { mw.pickFile(func(string) {}, ".csv") },
		"folder": func() { mw.pickFolder(func(string) {}) },
	} {
		n := 0
		onUI(mw, func() { open(); n = len(c.Overlays().List()) })
		if n != 1 {
			t.Fatalf("%s picker: %d dialogs open, want 1", name, n)
		}
		onUI(mw, func() { c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}); n = len(c.Overlays().List()) })
		if n != 0 {
			t.Errorf("Esc left the %s picker open", name)
		}
	}
}
