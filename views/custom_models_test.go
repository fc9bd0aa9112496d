package views

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"cnntime/db"
)

// tinyModel is a custom model file small enough to predict at once.
const tinyModel = `{"name": "tiny_a", "input": [3, 8, 8], "classes": 4, "layers": [
	{"name": "conv", "op": "conv2d", "out": 4, "kernel": 3, "padding": 1},
	{"name": "relu", "op": "relu"},
	{"name": "pool", "op": "adaptiveavgpool2d", "size": 1},
	{"name": "flatten", "op": "flatten"},
	{"name": "fc", "op": "linear", "out": 4}]}`

// brokenModel is a saved model that no longer reads: a 9×9 kernel on an 8×8 input.
const brokenModel = `{"name": "broken", "input": [3, 8, 8], "classes": 2, "layers": [{"name": "c", "op": "conv2d", "out": 4, "kernel": 9}]}`

// walk calls visit on o and everything drawn inside it.
func walk(o fyne.CanvasObject, visit func(fyne.CanvasObject)) {
	visit(o)
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			walk(c, visit)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			walk(c, visit)
		}
	}
}

// topDialog is the dialog on top of the window, failing the test when there is none.
func topDialog(t *testing.T, mw *MainWindow) fyne.CanvasObject {
	t.Helper()
	top := mw.Window.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog is open")
	}
	return top
}

// dialogText is every text the top dialog shows.
func dialogText(t *testing.T, mw *MainWindow) string {
	t.Helper()
	var b strings.Builder
	walk(topDialog(t, mw), func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + "\n")
		case *canvas.Text:
			b.WriteString(x.Text + "\n")
		}
	})
	return b.String()
}

// tapDialogButton taps the top dialog's button labelled text.
func tapDialogButton(t *testing.T, mw *MainWindow, text string) {
	t.Helper()
	var found *widget.Button
	walk(topDialog(t, mw), func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text && found == nil {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("the dialog has no %q button:\n%s", text, dialogText(t, mw))
	}
	onUI(mw, func() { test.Tap(found) })
}

// dialogSelect is the top dialog's drop-down.
func dialogSelect(t *testing.T, mw *MainWindow) *widget.Select {
	t.Helper()
	var found *widget.Select
	walk(topDialog(t, mw), func(o fyne.CanvasObject) {
		if s, ok := o.(*widget.Select); ok {
			found = s
		}
	})
	if found == nil {
		t.Fatalf("the dialog has no drop-down:\n%s", dialogText(t, mw))
	}
	return found
}

// clickMenu runs the File menu's item labelled label.
func clickMenu(t *testing.T, mw *MainWindow, label string) {
	t.Helper()
	for _, item := range mw.Window.MainMenu().Items[0].Items {
		if item.Label == label {
			onUI(mw, item.Action)
			return
		}
	}
	t.Fatalf("the File menu has no %q", label)
}

// waitStatus waits until the status line has said want: it reads every message the
// window set (StatusHistory), so a message already followed by the next prediction's
// "Predicted N curves…" is not missed on a slow machine.
func waitStatus(t *testing.T, mw *MainWindow, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range mw.StatusHistory() {
			if strings.Contains(m.Text, want) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	var said []string
	for _, m := range mw.StatusHistory() {
		said = append(said, m.Text)
	}
	t.Fatalf("the status line never said %q; it said:\n%s", want, strings.Join(said, "\n"))
}

func savedNames(t *testing.T, mw *MainWindow) []string {
	t.Helper()
	ms, err := mw.Backend.DB().CustomModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return names
}

func customInList(mw *MainWindow) []string {
	var names []string
	onUI(mw, func() { names = append(names, mw.Selection.models.items["Custom"]...) })
	return names
}

func TestStartWarningsAndRemovingCustomModels(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range [][2]string{{"tiny_a", tinyModel}, {"broken", brokenModel}} {
		if err := d.PutCustomModel(context.Background(), m[0], []byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()

	a := newTestApp(t)
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindow(a, Options{DBPath: path})
		mw.Window.Resize(fyne.NewSize(1400, 900))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(func() { mw.Session.Close(); mw.Backend.Close() })

	// At start: the warning once as a dialog, and a button in the status bar.
	if text := dialogText(t, mw); !strings.Contains(text, "custom model broken saved in "+path+" was left out") || !strings.Contains(text, "File › Remove model…") {
		t.Fatalf("the start-up dialog says:\n%s", text)
	}
	if !mw.Warnings.Visible() || mw.Warnings.Text != "1 warning at start" {
		t.Errorf("status bar warnings button: visible %v, %q", mw.Warnings.Visible(), mw.Warnings.Text)
	}
	tapDialogButton(t, mw, "OK")
	if got := customInList(mw); !slices.Equal(got, []string{"tiny_a"}) {
		t.Fatalf("custom models in the CNN list: %v", got)
	}
	onUI(mw, func() { mw.Selection.ToggleModel("tiny_a", true) })

	// Remove the broken model: choose it, confirm.
	clickMenu(t, mw, "Remove model…")
	choice := dialogSelect(t, mw)
	if !slices.Equal(choice.Options, []string{"tiny_a", "broken"}) {
		t.Fatalf("removable models %v, want tiny_a and broken", choice.Options)
	}
	onUI(mw, func() { choice.SetSelected("broken") })
	tapDialogButton(t, mw, "Remove…")
	if text := dialogText(t, mw); !strings.Contains(text, "Remove the custom model broken from the CNN list and the measurement cache?") {
		t.Fatalf("the confirmation says:\n%s", text)
	}
	tapDialogButton(t, mw, "Remove")
	waitStatus(t, mw, "Removed custom model broken.")
	if got := savedNames(t, mw); !slices.Equal(got, []string{"tiny_a"}) {
		t.Errorf("after removing broken the cache holds %v", got)
	}
	if mw.Warnings.Visible() {
		t.Error("the warnings button still shows after the broken model went")
	}

	// Cancel at the confirmation: nothing changes.
	clickMenu(t, mw, "Remove model…")
	tapDialogButton(t, mw, "Remove…") // tiny_a, the only one, is chosen
	tapDialogButton(t, mw, "Cancel")
	if got := savedNames(t, mw); !slices.Equal(got, []string{"tiny_a"}) {
		t.Errorf("after cancelling the cache holds %v", got)
	}
	if got := customInList(mw); !slices.Equal(got, []string{"tiny_a"}) {
		t.Errorf("after cancelling the CNN list has %v", got)
	}

	// Confirm: it leaves the cache, the list and the selection.
	clickMenu(t, mw, "Remove model…")
	tapDialogButton(t, mw, "Remove…")
	tapDialogButton(t, mw, "Remove")
	waitStatus(t, mw, "Removed custom model tiny_a.")
	if got := savedNames(t, mw); len(got) != 0 {
		t.Errorf("after removing tiny_a the cache holds %v", got)
	}
	if got := customInList(mw); len(got) != 0 {
		t.Errorf("after removing tiny_a the CNN list has %v", got)
	}
	if models := mw.Session.Settings().Models; slices.Contains(models, "tiny_a") {
		t.Errorf("tiny_a is still selected: %v", models)
	}

	clickMenu(t, mw, "Remove model…")
	if text := dialogText(t, mw); !strings.Contains(text, "There are no custom models to remove.") {
		t.Errorf("with none left the dialog says:\n%s", text)
	}
}

func TestNoWarningsButtonWithoutWarnings(t *testing.T) {
	mw := newTestWindow(t)
	if mw.Warnings.Visible() {
		t.Errorf("the warnings button shows %q with nothing left out", mw.Warnings.Text)
	}
	if top := mw.Window.Canvas().Overlays().Top(); top != nil {
		t.Error("a dialog opened at start with nothing to say")
	}
	clickMenu(t, mw, "Remove model…") // the fake backend cannot remove models
	if text := dialogText(t, mw); !strings.Contains(text, "There are no custom models to remove.") {
		t.Errorf("the dialog says:\n%s", text)
	}
}
