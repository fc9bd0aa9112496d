package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"cnntime/predictor/cnn/onnx/onnxtest"
)

// Where the steps of File → Add model… with an ONNX file are in the 1440×960 window
// (read off screenshots as gui_e2e_test.go's points are).
var (
	fileMenu      = image.Pt(27, 14)               // the menu bar's File
	addModelItem  = image.Pt(57, 45)               // File → Add model…
	fileMenuArea  = image.Rect(0, 0, 140, 230)     // the open File menu
	openDialog    = image.Rect(467, 292, 972, 668) // Fyne's open dialog (as the save dialog)
	firstFile     = image.Pt(757, 425)             // the first file in it, after (Parent)
	openButton    = image.Pt(938, 646)             // its Open button
	importForm    = image.Rect(490, 370, 950, 590) // the import form: name and input size
	importName    = image.Pt(778, 438)             // its Name entry
	importConfirm = image.Pt(766, 555)             // its Import button
)

// TestGUIImportONNXShowsItsCurves imports an ONNX file through the window as a person
// does: File → Add model…, the file picked in Fyne's open dialog, a name typed into the
// import form, Import. The model is then saved in the cache, selected, and drawn: its
// curves appear on the chart and its rows in the curves CSV the window exports.
func TestGUIImportONNXShowsItsCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end GUI test skipped in -short mode")
	}
	x := startX(t, screenWidth, screenHeight)
	bin := buildApp(t)
	g := startApp(t, x, bin)
	// The dialog opens in the home directory; with the filter on .json and .onnx the
	// model is the only file it shows.
	if err := os.WriteFile(filepath.Join(g.home, "my model.onnx"), onnxtest.TinyCNN(64, 10).Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	var last *image.RGBA
	example := x.waitScreen(t, "the first launch's example", 40*time.Second, func(img *image.RGBA) bool {
		ok := last != nil && changedPixels(last, img, scatterArea.Union(curvesArea)) <= blinkPixels && colourfulPixels(img, curvesArea) > 2000
		last = img
		return ok
	})
	x.save(t, "onnx-example", example)

	x.click(t, fileMenu)
	menu := x.waitChange(t, "the File menu", example, fileMenuArea)
	x.click(t, addModelItem)
	dlg := x.waitChange(t, "the open dialog", menu, openDialog)
	x.save(t, "onnx-open-dialog", dlg)
	x.click(t, firstFile)
	x.click(t, openButton)
	form := x.waitChange(t, "the import form", dlg, importForm)
	x.save(t, "onnx-import-form", form)
	x.click(t, importName)
	x.replaceText(t, "my_cnn")
	x.click(t, importConfirm)

	if !waitFor(20*time.Second, func() bool { return g.hasItem("session.models", "my_cnn") }) {
		t.Fatalf("after Import, session.models is %q, without my_cnn (screenshot: %s); the app printed:\n%s",
			g.pref("session.models"), x.keep(t, "onnx-import", x.screenshot(t)), g.logs.String())
	}
	drawn := x.waitStill(t, "the chart with my_cnn's curves", example, curvesArea, 2)
	x.save(t, "onnx-imported", drawn)
	if before, after := colourfulPixels(example, curvesArea), colourfulPixels(drawn, curvesArea); after < before+500 {
		t.Errorf("the curves chart has %d colourful pixels after the import, %d before: no new curves", after, before)
	}

	// Saved in the cache as the CLI sees it.
	out, err := exec.Command(bin, "--db", filepath.Join(g.home, "cache.db"), "models", "--json").Output()
	if err != nil {
		t.Fatalf("cnntime models: %v", err)
	}
	var rows []struct {
		Name   string `json:"name"`
		Params int64  `json:"params"`
		Custom bool   `json:"custom"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r.Name == "my_cnn" {
			found = r.Custom && r.Params == onnxtest.TinyCNNParams(10)
		}
	}
	if !found {
		t.Errorf("cnntime models lists no custom my_cnn with %d parameters", onnxtest.TinyCNNParams(10))
	}

	// Its curves, exported: a row per batch size for each of the example's five machines.
	curvesCSV := filepath.Join(t.TempDir(), "curves.csv")
	before := x.screenshot(t)
	x.xdotool(t, "key", "ctrl+e")
	open := x.waitChange(t, "the export dialog (Ctrl+E)", before, exportDialog)
	x.click(t, exportWhat)
	choices := x.waitChange(t, "the export dialog's choices", open, exportDialog)
	x.click(t, exportOptionAt(choiceCurvesCSV))
	x.waitChange(t, "the export choice made", choices, exportDialog)
	x.click(t, exportFile)
	x.replaceText(t, curvesCSV)
	x.click(t, exportButton)
	machines := map[string]int{}
	var readErr error
	if !waitFor(15*time.Second, func() bool {
		data, err := os.ReadFile(curvesCSV)
		if err != nil {
			readErr = err
			return false
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(recs) < 2 {
			readErr = fmt.Errorf("%d records: %v", len(recs), err)
			return false
		}
		clear(machines)
		for _, r := range recs[1:] {
			if len(r) > 1 && r[0] == "my_cnn" {
				machines[r[1]]++
			}
		}
		return true
	}) {
		t.Fatalf("export of the curves CSV: %v (screenshot: %s)", readErr, x.keep(t, "onnx-export", x.screenshot(t)))
	}
	if len(machines) != 5 {
		t.Errorf("the curves CSV has my_cnn on %d machines, want the example's 5: %v", len(machines), machines)
	}
	for m, n := range machines {
		if n < 5 {
			t.Errorf("my_cnn on %s: %d batch sizes in the curves CSV", m, n)
		}
	}
}
