package views

import (
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"cnntime/app"
	"cnntime/predictor/measure"
)

// BenchmarkFirstDraw measures a first launch from opening the main window (a fresh
// cache, the embedded catalog) to both charts drawn with the example's prediction, in
// Fyne's software test driver at 1280×800. Reports ms-to-charts.
func BenchmarkFirstDraw(b *testing.B) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		a := newTestApp(b)
		start := time.Now()
		mw := onUIThread(func() *MainWindow { return OpenMainWindow(a, Options{DBPath: filepath.Join(b.TempDir(), "cache.db")}) })
		mw.Window.Resize(fyne.NewSize(1280, 800))
		mw.Window.Show()
		for {
			drawn := false
			fyne.DoAndWait(func() {
				drawn = len(mw.state.Curves) > 0 && !mw.state.Busy && mw.Scatter.Frame() != nil && mw.Curves.Frame() != nil
			})
			if drawn {
				break
			}
			if time.Since(start) > time.Minute {
				b.Fatal("no charts within a minute")
			}
			time.Sleep(2 * time.Millisecond)
		}
		total += time.Since(start)
		mw.Session.Close()
		mw.Backend.Close()
		mw.Window.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-charts")
}

// redrawModels and redrawMachines are the 10 CNNs × 10 machines BenchmarkRedraw shows.
var (
	redrawModels   = []string{"resnet50", "resnet18", "vgg16", "mobilenet_v2", "efficientnet_b0", "densenet121", "convnext_tiny", "regnet_y_400mf", "resnext50_32x4d", "inception_v3"}
	redrawMachines = []string{"aws/g5.xlarge", "aws/g6.xlarge", "aws/g4dn.xlarge", "aws/p3.2xlarge", "aws/p4d.24xlarge", "gcp/a2-highgpu-1g",
		"lambda/gpu_1x_h100_pcie", "lambda/gpu_1x_a10", "azure/Standard_NC24ads_A100_v4", "runpod/rtx-4090-community-cloud"}
)

// redrawThinkTime is how long BenchmarkRedraw leaves the window unchanged before each
// change: the time a person takes to read the charts.
const redrawThinkTime = 2 * time.Second

// BenchmarkRedraw measures what a person waits for after a change of the selection or
// of a setting with 10 CNNs × 10 machines shown (the real engine, a fresh cache,
// Fyne's software test driver at 1280×800, these 2 cores): from the change to both
// charts drawn again. The changes cycle through the epochs, the precision (a new step
// model the first time), one machine off and on again, and the dataset's loader. It
// reports ms-to-charts (the mean; median-ms and worst-ms too) and its parts: wait-ms (the session's pause for more
// keystrokes), predict-ms (the prediction), worst-ms (the slowest change), build-ms (both charts built), layout-ms
// (the legend, tables and tabs) and render-ms (both charts rasterised, what of it the
// window's own work did not hide).
func BenchmarkRedraw(b *testing.B) {
	a := newTestApp(b)
	a.Preferences().SetString(app.PrefSaved, "1")
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindow(a, Options{DBPath: filepath.Join(b.TempDir(), "cache.db")})
		mw.Window.Resize(fyne.NewSize(1280, 800))
		mw.Window.Show()
		return mw
	})
	defer func() { mw.Session.Close(); mw.Backend.Close(); mw.Window.Close() }()
	var renders atomic.Int64
	for _, v := range []*ChartView{mw.Scatter, mw.Curves} {
		v.render.mu.Lock()
		v.render.done = func() { renders.Add(1) }
		v.render.mu.Unlock()
	}
	// redraw applies a change and waits for the prediction and both charts' renders.
	redraw := func(change func(*app.SessionSettings)) (total, predict time.Duration) {
		before := renders.Load()
		var shown int
		fyne.DoAndWait(func() { shown = mw.redraw.shows })
		start := time.Now()
		if err := mw.Session.Update(change); err != nil {
			b.Fatal(err)
		}
		for {
			done := false
			fyne.DoAndWait(func() {
				done = !mw.state.Busy && len(mw.state.Curves) > 0 && mw.redraw.shows > shown && renders.Load() >= before+2 && mw.Scatter.Frame() != nil && mw.Curves.Frame() != nil
			})
			if done {
				break
			}
			if time.Since(start) > time.Minute {
				b.Fatal("no charts within a minute")
			}
			time.Sleep(200 * time.Microsecond)
		}
		var took time.Duration
		fyne.DoAndWait(func() { took = mw.state.Took })
		return time.Since(start), took
	}
	redraw(func(s *app.SessionSettings) { s.Models, s.Machines = redrawModels, redrawMachines })
	changes := []func(*app.SessionSettings){
		func(s *app.SessionSettings) { s.Epochs = 60 },
		func(s *app.SessionSettings) { s.Precision = measure.AMP },
		func(s *app.SessionSettings) { s.Machines = redrawMachines[:9] },
		func(s *app.SessionSettings) { s.Machines = redrawMachines },
		func(s *app.SessionSettings) { s.Data.Loader = "dali" },
		func(s *app.SessionSettings) { s.Epochs = 90 },
		func(s *app.SessionSettings) { s.Precision = measure.FP32 },
		func(s *app.SessionSettings) { s.Data.Loader = "pytorch" },
	}
	var total, predict, build, layout time.Duration
	var worst time.Duration
	var each []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A person reads the charts before the next change; the session prepares the
		// other precisions meanwhile (app.Session's warm-up).
		b.StopTimer()
		time.Sleep(redrawThinkTime)
		b.StartTimer()
		t, p := redraw(changes[i%len(changes)])
		total, predict, worst = total+t, predict+p, max(worst, t)
		each = append(each, t)
		var r redrawTimes
		fyne.DoAndWait(func() { r = mw.redraw })
		build, layout = build+r.build, layout+r.layout
		if testing.Verbose() {
			b.Logf("change %d: %v to charts: predict %v, build %v, layout %v", i%len(changes), t.Round(time.Millisecond), p.Round(time.Millisecond), r.build.Round(time.Millisecond), r.layout.Round(time.Millisecond))
		}
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	wait := time.Duration(n) * predictDelay
	b.ReportMetric(ms(total), "ms-to-charts")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
	slices.Sort(each)
	b.ReportMetric(float64(each[len(each)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(ms(wait), "wait-ms")
	b.ReportMetric(ms(predict), "predict-ms")
	b.ReportMetric(ms(build), "build-ms")
	b.ReportMetric(ms(layout), "layout-ms")
	b.ReportMetric(ms(total-wait-predict-build-layout), "render-ms")
}
