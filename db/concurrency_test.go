package db

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"cnntime/predictor/measure"
)

// Two writers and a reader, each with its own DB on one file (as a sweep process and the
// GUI would have), work at the same time; the reader only ever sees whole transactions.
func TestConcurrentWritersAndReaderOnOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	const writers, batches, perBatch = 2, 40, 50
	open := func() *DB {
		d, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	reader := open()
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		d := open()
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				ms := make([]measure.Measurement, perBatch)
				for i := range ms {
					ms[i] = kernel("cuda:shared", fmt.Sprintf("conv/w%d", w), b*perBatch+i+1, measure.Forward, 1)
				}
				if err := d.PutMeasurements(ctx, ms); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: %w", w, b, err)
					return
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	reads := 0
	var readerDone sync.WaitGroup
	readerDone.Add(1)
	go func() {
		defer readerDone.Done()
		last := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			ms, err := reader.Measurements(ctx, "cuda:shared", nil)
			if err != nil {
				errs <- fmt.Errorf("reader: %w", err)
				return
			}
			if len(ms)%perBatch != 0 || len(ms) < last {
				errs <- fmt.Errorf("reader saw %d measurements after %d: not whole transactions", len(ms), last)
				return
			}
			last = len(ms)
			reads++
		}
	}()
	wg.Wait()
	close(stop)
	readerDone.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ms, err := reader.Measurements(ctx, "cuda:shared", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != writers*batches*perBatch {
		t.Errorf("%d measurements in the end, want %d", len(ms), writers*batches*perBatch)
	}
	if reads < 2 {
		t.Errorf("the reader read %d times while the writers wrote: it did not run alongside them", reads)
	}
	t.Logf("%d reads during the writes", reads)
}
