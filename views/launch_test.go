package views

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"gopkg.in/yaml.v3"

	"cnntime/app"
)

// File → Export launch file… writes the launch file of the point last clicked (the one
// the Why tab explains), under the run shown; before a click it says what to do.
func TestExportLaunchFileOfTheChosenPoint(t *testing.T) {
	a := newTestApp(t)
	a.Preferences().SetString(app.PrefSaved, "1")
	b, err := app.OpenEngineBackend(context.Background(), filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindowWith(a, b)
		mw.Window.Resize(fyne.NewSize(1400, 900))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(mw.Session.Close)

	onUI(mw, mw.showLaunchDialog)
	if text := dialogText(t, mw); !strings.Contains(text, "No run chosen yet") {
		t.Fatalf("before a click the dialog says %q", text)
	}
	onUI(mw, func() { mw.Window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}) })

	// A point is explained once the first prediction is in (before it, the session cannot
	// explain, and an explanation of a run that changed meanwhile is dropped).
	if err := mw.Session.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	onUI(mw, func() { mw.ExplainPoint("resnet50", "aws/p3.2xlarge", 128) })
	explained := func() (done bool) {
		onUI(mw, func() { done = mw.Why.Explanation() != nil })
		return done
	}
	for end := time.Now().Add(10 * time.Second); !explained(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the point was not explained")
		}
	}
	onUI(mw, mw.showLaunchDialog)
	if text := dialogText(t, mw); !strings.Contains(text, "resnet50 on aws/p3.2xlarge at batch 128") {
		t.Errorf("the dialog does not name the run: %q", text)
	}
	// Save… opens in the folder of the last export, not in the folder a file picker
	// last showed (a price import's catalogs), and Esc closes it.
	exports, catalogs := filepath.Join(t.TempDir(), "launch-files-here"), filepath.Join(t.TempDir(), "price-catalogs")
	for _, d := range []string{exports, catalogs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a.Preferences().SetString(prefExportDir, exports)
	a.Preferences().SetString("fyne:fileDialogLastFolder", "file://"+catalogs)
	tapDialogButton(t, mw, "Save…")
	if text := dialogText(t, mw); !strings.Contains(text, "launch-files-here") || strings.Contains(text, "price-catalogs") {
		t.Errorf("the save dialog opens elsewhere than the last export's folder:\n%s", text)
	}
	onUI(mw, func() { mw.Window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}) })
	n := -1
	onUI(mw, func() { n = len(mw.Window.Canvas().Overlays().List()) })
	if n != 0 {
		t.Errorf("Esc left %d dialogs open over the save dialog", n)
	}

	path := filepath.Join(t.TempDir(), "train.yaml")
	req := app.LaunchRequest{Kind: app.LaunchSkyPilot, Data: "s3://my-bucket/imagenet"}
	if err := mw.exportLaunch(context.Background(), "resnet50", "aws/p3.2xlarge", 128, req, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var task struct {
		Resources  struct{ Infra, Accelerators string }
		FileMounts map[string]map[string]string `yaml:"file_mounts"`
		Envs       map[string]string
	}
	if err := yaml.Unmarshal(data, &task); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(task.Resources.Infra, "aws/") || task.Resources.Accelerators != "V100:1" || task.Envs["MODEL"] != "resnet50" || task.Envs["GLOBAL_BATCH"] != "128" ||
		task.Envs["EPOCHS"] != "90" || task.FileMounts["/data"]["source"] != "s3://my-bucket/imagenet" {
		t.Errorf("the task is %+v", task)
	}
	// A Slurm script for the same point.
	if err := mw.exportLaunch(context.Background(), "resnet50", "aws/p3.2xlarge", 128, app.LaunchRequest{Kind: app.LaunchSlurm}, filepath.Join(t.TempDir(), "t.sbatch")); err != nil {
		t.Error(err)
	}
}
