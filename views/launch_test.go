package views

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
	"gopkg.in/yaml.v3"

	"cnntime/app"
	"cnntime/app/charts"
)

// openLaunchWindow opens the window at 1400×900 over a fresh cache, past the first
// launch's example, with the app it runs in.
func openLaunchWindow(t *testing.T) (*MainWindow, fyne.App) {
	t.Helper()
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
	return mw, a
}

// File → Export launch file… writes the launch file of the point last clicked (the one
// the Why tab explains), under the run shown; before a click it says what to do.
func TestExportLaunchFileOfTheChosenPoint(t *testing.T) {
	mw, a := openLaunchWindow(t)

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
	// Nothing selected, so no curve recommends a batch: the batch explained is offered.
	onUI(mw, mw.showLaunchDialog)
	if text := dialogText(t, mw); !strings.Contains(text, "resnet50 on aws/p3.2xlarge") || !strings.Contains(text, "Batch 128, chosen in the window.") {
		t.Errorf("the dialog does not name the run and its batch: %q", text)
	}
	if e := dialogBatch(t, mw); e.Text != "128" {
		t.Errorf("the dialog offers batch %q, want the explained 128", e.Text)
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

// dialogBatch is the launch dialog's Global batch field (the first entry).
func dialogBatch(t *testing.T, mw *MainWindow) *widget.Entry {
	t.Helper()
	var found *widget.Entry
	walk(topDialog(t, mw), func(o fyne.CanvasObject) {
		if e, ok := o.(*escapeEntry); ok && found == nil {
			found = &e.Entry
		}
	})
	if found == nil {
		t.Fatalf("the dialog has no field:\n%s", dialogText(t, mw))
	}
	return found
}

// Export launch file writes the recommended batch of the point's curve, as cnntime
// launch without --batch does, unless a batch was picked on the curve or typed; the
// file's header and the status say which.
func TestExportLaunchFileUsesTheRecommendedBatch(t *testing.T) {
	mw, _ := openLaunchWindow(t)
	if err := mw.Session.Update(func(s *app.SessionSettings) {
		s.Models, s.Machines = []string{"resnet50"}, []string{"aws/p3.2xlarge"}
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, mw)
	var best, recommended int
	onUI(mw, func() {
		c := mw.curveOf("resnet50", "aws/p3.2xlarge")
		p, ok := app.RecommendedPoint(c)
		if !ok {
			t.Fatal("no recommended batch")
		}
		best, recommended = c.Points[c.Best].Batch, p.Batch
	})
	explain := func(click func()) {
		t.Helper()
		onUI(mw, func() { mw.Why.Clear() })
		onUI(mw, click)
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			done := false
			onUI(mw, func() { done = mw.Why.Explanation() != nil })
			if done {
				break
			}
			if time.Now().After(end) {
				t.Fatal("the point was not explained")
			}
		}
	}
	pickedOn := 0
	for _, tc := range []struct {
		name  string
		click func()
		want  int
		why   string
	}{
		{"a results row (the best batch)", func() { mw.ExplainPoint("resnet50", "aws/p3.2xlarge", best) }, recommended, "the recommended batch"},
		{"a curve's point", func() {
			c := mw.curveOf("resnet50", "aws/p3.2xlarge")
			for i, p := range c.Points {
				if p.Fits && p.Batch != recommended && p.Batch != best && pickedOn == 0 {
					pickedOn = i
				}
			}
			mw.curveTapped(charts.Mark{Curve: 0, Point: pickedOn}, true)
		}, -1, "chosen in the window (the recommended batch is"},
	} {
		explain(tc.click)
		onUI(mw, mw.showLaunchDialog)
		want := tc.want
		if want < 0 {
			onUI(mw, func() { want = mw.curveOf("resnet50", "aws/p3.2xlarge").Points[pickedOn].Batch })
		}
		if e := dialogBatch(t, mw); e.Text != strconv.Itoa(want) {
			t.Errorf("%s: the dialog offers batch %q, want %d", tc.name, e.Text, want)
		}
		if text := dialogText(t, mw); !strings.Contains(text, tc.why) {
			t.Errorf("%s: the dialog says %q, want %q", tc.name, text, tc.why)
		}
		onUI(mw, func() { mw.Window.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape}) })
	}
	if best == recommended {
		t.Logf("resnet50 on aws/p3.2xlarge: the best batch %d is the recommended one", best)
	}

	// The header says which batch it is.
	_, why, err := launchBatch(strconv.Itoa(recommended), recommended, best)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "train.yaml")
	if err := mw.exportLaunch(context.Background(), "resnet50", "aws/p3.2xlarge", recommended, app.LaunchRequest{Kind: app.LaunchSkyPilot, BatchNote: why}, path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if line := fmt.Sprintf("# Batch: %s, the recommended batch (", charts.FormatCount(int64(recommended))); !strings.Contains(string(data), line) ||
		!strings.Contains(string(data), fmt.Sprintf("GLOBAL_BATCH: \"%d\"", recommended)) {
		t.Errorf("the file's header does not say the recommended batch %d:\n%.600s", recommended, data)
	}
}

func TestLaunchBatch(t *testing.T) {
	for _, tc := range []struct {
		text              string
		recommended, best int
		want              int
		why, err          string
	}{
		{"176", 176, 176, 176, "176, the recommended batch (the best time and cost;", ""},
		{"176", 176, 1024, 176, "176, the recommended batch (within 1% of the best time and cost, which batch 1,024 gives;", ""},
		{" 1,024 ", 176, 1024, 1024, "1,024, chosen in the window (the recommended batch is 176)", ""},
		{"96", 0, 0, 96, "96, chosen in the window", ""},
		{"abc", 176, 176, 0, "", `global batch "abc" is not a whole number`},
		{"-8", 176, 176, 0, "", "is not a whole number from 1"},
		{"0", 176, 176, 0, "", "is not a whole number from 1"},
		{"100000", 176, 176, 0, "", "from 1 to 65536"},
	} {
		n, why, err := launchBatch(tc.text, tc.recommended, tc.best)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("launchBatch(%q): %d, %v; want the error %q", tc.text, n, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.want || !strings.HasPrefix(why, tc.why) {
			t.Errorf("launchBatch(%q, %d, %d) = %d, %q, %v; want %d, %q…", tc.text, tc.recommended, tc.best, n, why, err, tc.want, tc.why)
		}
	}
	for _, tc := range []struct {
		explained, recommended int
		picked                 bool
		want                   int
	}{{128, 176, false, 176}, {128, 176, true, 128}, {128, 0, false, 128}} {
		if got := launchDefaultBatch(tc.explained, tc.recommended, tc.picked); got != tc.want {
			t.Errorf("launchDefaultBatch(%d, %d, %v) = %d, want %d", tc.explained, tc.recommended, tc.picked, got, tc.want)
		}
	}
}
