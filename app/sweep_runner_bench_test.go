package app

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"cnntime/db"
)

// BenchmarkSweepCancelLatency measures how long a running CPU sweep takes to stop
// after Cancel (Cancel to Wait returning: the sweep has ended and reported), and how
// many measurements the cache gained after Cancel was pressed (goal: at most the one
// in flight). A sweep of resnet18 at 224 px, cancelled after its 10th measurement.
// Reports ms-to-stop and measured-after-cancel.
func BenchmarkSweepCancelLatency(b *testing.B) {
	var stopMS, after float64
	for i := 0; i < b.N; i++ {
		cache, err := db.Open(filepath.Join(b.TempDir(), "cache.db"))
		if err != nil {
			b.Fatal(err)
		}
		r := NewSweepRunner(cache)
		req := DefaultSweepRequest()
		req.Models, req.Batches, req.Repeats = []string{"resnet18"}, []int{8, 16, 32}, 5
		var asked time.Time
		var atCancel, total atomic.Int64
		ev := SweepEvents{Progress: func(p SweepProgress) {
			total.Store(int64(p.Done))
			if p.Done == 10 {
				atCancel.Store(int64(p.Done))
				asked = time.Now()
				go r.Cancel() // as a click does: from elsewhere, while the next kernel runs
			}
		}}
		if err := r.Start(req, ev); err != nil {
			b.Fatal(err)
		}
		r.Wait()
		stopMS += float64(time.Since(asked).Microseconds()) / 1000
		hs, err := r.Holdings(context.Background())
		if err != nil || len(hs) != 1 {
			b.Fatalf("holdings %v, %v", hs, err)
		}
		after += float64(int64(hs[0].Kernels) - atCancel.Load())
		cache.Close()
	}
	b.ReportMetric(stopMS/float64(b.N), "ms-to-stop")
	b.ReportMetric(after/float64(b.N), "measured-after-cancel")
}
