package views

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"cnntime/predictor"
	"cnntime/predictor/cnn/onnx/onnxtest"
)

// dialogEntries are the top dialog's text entries, in order.
func dialogEntries(t *testing.T, mw *MainWindow) []*widget.Entry {
	t.Helper()
	var out []*widget.Entry
	walk(topDialog(t, mw), func(o fyne.CanvasObject) {
		if e, ok := o.(*widget.Entry); ok {
			out = append(out, e)
		}
	})
	return out
}

// closer records that the dialog closed the file it was given.
type closer struct {
	io.Reader
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }

// File → Add model… with an ONNX file: the name form (the file's name by default), the
// import off the UI goroutine, the model saved, listed, selected and predicted; a broken
// file is an error dialog and changes nothing; File → Remove model… takes it back.
func TestImportONNXThroughTheWindow(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	a := newTestApp(t)
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindow(a, Options{DBPath: filepath.Join(t.TempDir(), "cache.db")})
		mw.Window.Resize(fyne.NewSize(1400, 900))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(func() { mw.Session.Close(); mw.Backend.Close() })

	file := &closer{Reader: bytes.NewReader(onnxtest.TinyCNN(16, 4).Bytes())}
	onUI(mw, func() { mw.importONNXDialog("my net.onnx", file) })
	entries := dialogEntries(t, mw)
	if len(entries) != 2 || entries[0].Text != "my_net" || entries[1].Text != "" {
		t.Fatalf("the form's entries: %d, name %q; want the name my_net and an empty input size", len(entries), entries[0].Text)
	}
	onUI(mw, func() { entries[0].SetText("tiny_onnx") })
	tapDialogButton(t, mw, "Import")
	waitStatus(t, mw, "Added model tiny_onnx from my net.onnx.")
	if !file.closed {
		t.Error("the file was not closed")
	}
	if got := savedNames(t, mw); !slices.Equal(got, []string{"tiny_onnx"}) {
		t.Errorf("the cache holds %v, want tiny_onnx", got)
	}
	if got := customInList(mw); !slices.Equal(got, []string{"tiny_onnx"}) {
		t.Errorf("the CNN list's custom models: %v", got)
	}
	if models := mw.Session.Settings().Models; !slices.Contains(models, "tiny_onnx") {
		t.Errorf("tiny_onnx is not selected: %v", models)
	}
	// Its curves come like any model's.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := mw.Session.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := mw.Session.State()
		if i := slices.IndexFunc(st.Curves, func(c predictor.Curve) bool { return c.Model == "tiny_onnx" }); i >= 0 {
			if len(st.Curves[i].Points) == 0 {
				t.Errorf("tiny_onnx's curve has no points")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no curve of tiny_onnx: %v", st.Err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A broken file: an error dialog naming the file and the problem; nothing saved.
	broken := &closer{Reader: bytes.NewReader(onnxtest.TinyCNN(16, 4).Bytes()[:300])}
	onUI(mw, func() { mw.importONNXDialog("broken.onnx", broken) })
	tapDialogButton(t, mw, "Import")
	waitStatus(t, mw, "Error: broken.onnx: not a readable ONNX model")
	if text := strings.ToLower(dialogText(t, mw)); !strings.Contains(text, "broken.onnx") || !strings.Contains(text, "truncated") { // Fyne capitalizes an error's first letter
		t.Errorf("the error dialog says:\n%s", text)
	}
	if got := savedNames(t, mw); !slices.Equal(got, []string{"tiny_onnx"}) {
		t.Errorf("after the broken file the cache holds %v", got)
	}
	tapDialogButton(t, mw, "OK")

	// Cancel closes the file and imports nothing; a bad input size is refused.
	cancelled := &closer{Reader: bytes.NewReader(nil)}
	onUI(mw, func() { mw.importONNXDialog("other.onnx", cancelled) })
	tapDialogButton(t, mw, "Cancel")
	if !cancelled.closed {
		t.Error("cancelling did not close the file")
	}
	bad := &closer{Reader: bytes.NewReader(onnxtest.TinyCNN(16, 4).Bytes())}
	onUI(mw, func() { mw.importONNXDialog("other.onnx", bad) })
	onUI(mw, func() { dialogEntries(t, mw)[1].SetText("abc") })
	tapDialogButton(t, mw, "Import")
	if text := strings.ToLower(dialogText(t, mw)); !strings.Contains(text, `input size "abc"`) {
		t.Errorf("a bad input size: the dialog says:\n%s", text)
	}
	if got := savedNames(t, mw); !slices.Equal(got, []string{"tiny_onnx"}) {
		t.Errorf("after a bad input size the cache holds %v", got)
	}
	tapDialogButton(t, mw, "OK")

	// File → Remove model… takes an imported model back like any custom model.
	clickMenu(t, mw, "Remove model…")
	tapDialogButton(t, mw, "Remove…") // tiny_onnx, the only one, is chosen
	tapDialogButton(t, mw, "Remove")
	waitStatus(t, mw, "Removed custom model tiny_onnx.")
	if got := savedNames(t, mw); len(got) != 0 {
		t.Errorf("after removing tiny_onnx the cache holds %v", got)
	}
	if got := customInList(mw); len(got) != 0 {
		t.Errorf("after removing tiny_onnx the CNN list has %v", got)
	}
}
