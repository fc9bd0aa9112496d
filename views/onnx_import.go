package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor/cnn/onnx"
)

// importONNXDialog is the second step of File → Add model… for an ONNX file: it asks the
// model's name (the file's, by default) and, for a file exported with an open height and
// width, the input size; then importONNX reads the file. The reader is closed in the end,
// whichever way the dialog goes.
func (mw *MainWindow) importONNXDialog(fileName string, r io.ReadCloser) {
	name := widget.NewEntry()
	name.SetText(app.DefaultModelName(fileName))
	size := widget.NewEntry()
	size.SetPlaceHolder("the file's own")
	form := dialog.NewForm("Import "+fileName, "Import", "Cancel", []*widget.FormItem{
		widget.NewFormItem("Name", name),
		widget.NewFormItem("Input size (px)", size),
	}, func(ok bool) {
		if !ok {
			r.Close()
			return
		}
		res := 0
		if s := strings.TrimSpace(size.Text); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				r.Close()
				mw.showError(fmt.Errorf("input size %q: give a whole number of pixels, or leave it empty to take the file's own", s))
				return
			}
			res = n
		}
		mw.importONNX(fileName, r, onnx.Options{Name: strings.TrimSpace(name.Text), Resolution: res})
	}, mw.Window)
	form.Resize(fyne.NewSize(460, 220))
	form.Show()
}

// importONNX imports an ONNX model off the UI goroutine (a large file takes a moment to
// stream past), then selects it, refreshes the CNN list and says what the import
// approximated, if anything. A file that does not import changes nothing.
func (mw *MainWindow) importONNX(fileName string, r io.ReadCloser, opt onnx.Options) {
	mw.setStatus("Importing " + fileName + "…")
	go func() {
		name, notes, err := mw.Session.ImportONNX(r, opt)
		r.Close()
		fyne.Do(func() {
			if err != nil {
				mw.showError(fmt.Errorf("%s: %w", fileName, err))
				return
			}
			mw.Selection.RefreshModels()
			mw.notify("Added model " + name + " from " + fileName + ".")
			if len(notes) > 0 {
				label := widget.NewLabel("cnntime imported " + name + " with these approximations:\n\n• " + strings.Join(notes, "\n\n• "))
				label.Wrapping = fyne.TextWrapWord
				d := dialog.NewCustom("Imported "+name, "OK", container.NewVScroll(label), mw.Window)
				d.Resize(fyne.NewSize(560, 300))
				d.Show()
			}
		})
	}()
}
