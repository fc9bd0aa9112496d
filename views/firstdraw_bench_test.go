package views

import (
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// BenchmarkFirstDraw measures a first launch from opening the main window (a fresh
// cache, the embedded catalog) to both charts drawn with the example's prediction, in
// Fyne's software test driver at 1280×800. Reports ms-to-charts.
func BenchmarkFirstDraw(b *testing.B) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		a := test.NewTempApp(b)
		start := time.Now()
		mw := OpenMainWindow(a, Options{DBPath: filepath.Join(b.TempDir(), "cache.db")})
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
