package app

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// streamQuery is 6 CNNs × 4 machines at batches 1–256.
func streamQuery(t *testing.T, eng *Engine) Query {
	t.Helper()
	var targets []Target
	for _, id := range []string{"aws/p3.2xlarge", "aws/p3.16xlarge", "gcp/a2-highgpu-1g", "aws/g4dn.xlarge"} {
		tg, err := eng.MachineTarget(id)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	batches, _ := ParseBatches("1-256", 256)
	return Query{Models: []string{"resnet18", "alexnet", "mobilenet_v2", "squeezenet1_0", "vgg11", "shufflenet_v2_x0_5"}, Targets: targets, Batches: batches,
		Precision: measure.FP32, Policy: measure.Heuristic, Run: predictor.Run{Epochs: 2, Images: 50000}}
}

// StreamCurves hands over Curves' curves in Curves' order, holding only a few at a time,
// and stops at the first error of its callbacks or of the context.
func TestStreamCurves(t *testing.T) {
	ctx := context.Background()
	eng, err := NewEngine(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := streamQuery(t, eng)
	want, err := eng.Curves(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 24 {
		t.Fatalf("Curves gave %d curves, want 24", len(want))
	}

	var mu sync.Mutex
	held, most := 0, 0 // curves between work and the end of their use
	var got []predictor.Curve
	err = StreamCurves(ctx, eng, q, func(c *predictor.Curve) (predictor.Curve, error) {
		mu.Lock()
		held++
		most = max(most, held)
		mu.Unlock()
		return *c, nil
	}, func(c predictor.Curve) error {
		got = append(got, c)
		mu.Lock()
		held--
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StreamCurves handed over other curves than Curves, or in another order")
	}
	if limit := curvesAhead*runtime.GOMAXPROCS(0) + 2; most > limit {
		t.Errorf("%d curves were held at once, want at most %d", most, limit)
	}

	stop := errors.New("disk full")
	used := 0
	err = StreamCurves(ctx, eng, q, func(c *predictor.Curve) (string, error) { return c.Model, nil },
		func(string) error {
			if used++; used == 3 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || used != 3 {
		t.Errorf("use failing at the 3rd curve: error %v after %d uses, want %v after 3", err, used, stop)
	}

	cancelled, cancel := context.WithCancel(ctx)
	used = 0
	err = StreamCurves(cancelled, eng, q, func(c *predictor.Curve) (string, error) { return c.Model, nil },
		func(string) error {
			if used++; used == 2 {
				cancel()
			}
			return nil
		})
	if err == nil || !strings.Contains(err.Error(), "prediction cancelled") || used >= 24 {
		t.Errorf("cancelled after 2 curves: error %v after %d uses, want a cancellation before the end", err, used)
	}

	q.Models = append(q.Models, "resnet9000")
	err = StreamCurves(ctx, eng, q, func(c *predictor.Curve) (int, error) {
		t.Error("a curve of a wrong query was predicted")
		return 0, nil
	},
		func(int) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "resnet9000") {
		t.Errorf("a query naming an unknown model: error %v, want one naming it", err)
	}
}
