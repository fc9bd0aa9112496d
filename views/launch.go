package views

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
)

// launchKinds are the launch files File → Export launch file… writes, as it offers them.
var launchKinds = []struct{ label, kind, name string }{
	{"SkyPilot task (YAML): sky launch FILE", app.LaunchSkyPilot, "cnntime-train.yaml"},
	{"Slurm batch script: sbatch FILE", app.LaunchSlurm, "cnntime-train.sbatch"},
}

// errNothingChosen is what Export launch file… says before a point is chosen.
var errNothingChosen = errors.New("no run chosen yet: click a results row, a scatter point or a curve point (its CNN, machine and batch are the run), then File → Export launch file…")

// showLaunchDialog writes the launch file of the point the Why tab explains (the one
// last clicked): it asks which file and, optionally, where the data and the
// checkpoints are, the user's own training command and a Slurm partition, then where
// to save it.
func (mw *MainWindow) showLaunchDialog() {
	x := mw.Why.Explanation()
	if x == nil {
		mw.showError(errNothingChosen)
		return
	}
	model, machine := x.Model, x.Machine
	recommended, best := 0, 0
	if c := mw.curveOf(model, machine); c != nil {
		if p, ok := app.RecommendedPoint(c); ok {
			recommended = p.Batch
		}
		if c.Best >= 0 {
			best = c.Points[c.Best].Batch
		}
	}
	batchEntry := newEscapeEntry()
	batchEntry.SetText(strconv.Itoa(launchDefaultBatch(x.Batch, recommended, mw.picked == pickedBatch{model, machine, x.Batch})))
	batchEntry.Validator = func(text string) error { _, _, err := launchBatch(text, recommended, best); return err }
	batchWhy := widget.NewLabel("")
	batchWhy.Wrapping = fyne.TextWrapWord
	showWhy := func(text string) {
		if _, why, err := launchBatch(text, recommended, best); err == nil {
			batchWhy.SetText("Batch " + why + ".")
		}
	}
	batchEntry.OnChanged = showWhy
	showWhy(batchEntry.Text)
	var labels []string
	for _, k := range launchKinds {
		labels = append(labels, k.label)
	}
	kind := widget.NewRadioGroup(labels, nil)
	kind.SetSelected(labels[0])
	command := newEscapeEntry()
	command.SetPlaceHolder("cnntime's training script, written into the file")
	data := newEscapeEntry()
	data.SetPlaceHolder("s3://BUCKET/imagenet, gs://…, or a path the nodes see (train/, val/)")
	checkpoints := newEscapeEntry()
	checkpoints.SetPlaceHolder("a bucket (needed for spot) or a shared path; default: the node's")
	partition := newEscapeEntry()
	partition.SetPlaceHolder("the cluster's default")
	items := []*widget.FormItem{
		widget.NewFormItem("Run", widget.NewLabel(fmt.Sprintf("%s on %s", model, machine))),
		widget.NewFormItem("Global batch", batchEntry),
		widget.NewFormItem("", batchWhy),
		widget.NewFormItem("File", kind),
		widget.NewFormItem("Data", data),
		widget.NewFormItem("Checkpoints", checkpoints),
		widget.NewFormItem("Your own command", command),
		widget.NewFormItem("Slurm partition", partition),
	}
	d := dialog.NewForm("Export launch file", "Save…", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		batch, why, err := launchBatch(batchEntry.Text, recommended, best)
		if err != nil { // the form's Save… waits for a valid batch: not reached
			mw.showError(err)
			return
		}
		req := app.LaunchRequest{Command: command.Text, Data: strings.TrimSpace(data.Text), Checkpoints: strings.TrimSpace(checkpoints.Text), BatchNote: why}
		name := ""
		for _, k := range launchKinds {
			if k.label == kind.Selected {
				req.Kind, name = k.kind, k.name
			}
		}
		req.Slurm.Partition = strings.TrimSpace(partition.Text)
		save := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
			if err != nil || wc == nil {
				return
			}
			path := wc.URI().Path()
			wc.Close()
			os.Remove(path)                                                   // written whole below, or not at all
			mw.App.Preferences().SetString(prefExportDir, filepath.Dir(path)) // the next export or launch file starts there
			mw.setStatus("Writing " + path + "…")
			go func() {
				err := mw.exportLaunch(context.Background(), model, machine, batch, req, path)
				fyne.Do(func() {
					if err != nil {
						mw.showError(err)
						return
					}
					mw.notify(fmt.Sprintf("Wrote %s for %s on %s at batch %s.", path, model, machine, why))
				})
			}()
		}, mw.Window)
		save.SetFileName(name)
		// The folder of the last export or launch file (else the home folder), not
		// wherever the last file picker was (a price import's catalog folder).
		if dir, err := storage.ListerForURI(storage.NewFileURI(mw.exportDir())); err == nil {
			save.SetLocation(dir)
		}
		mw.showFileDialog(save)
	}, mw.Window)
	d.Resize(fyne.NewSize(680, 400))
	closeOnEscape(d, mw.Window)
	d.Show()
}

// exportLaunch writes the launch file of model on machine at batch, under the run
// settings shown, to path.
func (mw *MainWindow) exportLaunch(ctx context.Context, model, machine string, batch int, req app.LaunchRequest, path string) error {
	content, err := mw.Session.LaunchFile(ctx, model, machine, batch, req)
	if err != nil {
		return err
	}
	return app.ExportLaunchFile(path, content)
}

// pickedBatch is a CNN on a machine at a batch the user chose on its curve.
type pickedBatch struct {
	model, machine string
	batch          int
}

// launchDefaultBatch is the batch Export launch file offers: the one the user picked
// on a curve, else the recommended batch (as cnntime launch without --batch), else
// the batch the Why tab explains (no recommendation: nothing within reach fits).
func launchDefaultBatch(explained, recommended int, picked bool) int {
	if picked || recommended <= 0 {
		return explained
	}
	return recommended
}

// launchBatch reads the launch dialog's global batch and says how it was chosen, for
// the file's header and the status line, in the words cnntime launch writes
// (app.LaunchBatch): the recommended batch, or one the user chose instead.
func launchBatch(text string, recommended, best int) (int, string, error) {
	s := strings.ReplaceAll(strings.TrimSpace(text), ",", "")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > app.MaxBatchSize {
		return 0, "", fmt.Errorf("global batch %q is not a whole number from 1 to %d; give the batch to train at, e.g. %d", text, app.MaxBatchSize, max(recommended, 256))
	}
	return n, app.LaunchBatch{Batch: n, Recommended: recommended, Best: best, ChosenBy: "chosen in the window"}.Note(), nil
}
