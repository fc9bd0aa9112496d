package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/db"
	"cnntime/gpu"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// sweepOverhead: the time from each measurement of a sweep to the next over the first
// one's runs ((repeats + warm-up) × median); pauses, failures, other sweeps' neighbours
// and measurements of no time are left out.
func TestSweepOverhead(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ok := func(sweep int64, s, medianMS float64, repeats int) measure.Measurement {
		return measure.Measurement{SweepID: sweep, At: at(s), MedianMS: medianMS, Repeats: repeats, Status: measure.OK}
	}
	oom := ok(1, 9, 0, 5)
	oom.Status = measure.OutOfMemory
	tests := []struct {
		name   string
		ms     []measure.Measurement
		factor float64
		pairs  int
	}{
		{"none", nil, 1, 0},
		{"one measurement", []measure.Measurement{ok(1, 0, 100, 5)}, 1, 0},
		// 3 s for 7 runs of 100 ms, 2 s for 7 of 200 ms: 5 s for 2.1 s of runs.
		{"one sweep", []measure.Measurement{ok(1, 0, 100, 5), ok(1, 3, 200, 5), ok(1, 5, 50, 5)}, 5 / 2.1, 2},
		{"in any order", []measure.Measurement{ok(1, 5, 50, 5), ok(1, 0, 100, 5), ok(1, 3, 200, 5)}, 5 / 2.1, 2},
		{"a pause left out", []measure.Measurement{ok(1, 0, 100, 5), ok(1, 3, 200, 5), ok(1, 300, 50, 5)}, 3 / 0.7, 1},
		{"sweeps apart", []measure.Measurement{ok(1, 0, 100, 5), ok(2, 1, 200, 5), ok(1, 3, 50, 5), ok(2, 4, 10, 1)}, 6 / 2.1, 2},
		// The out of memory's time from the one before it counts for that one; its own to the next does not.
		{"an out of memory left out", []measure.Measurement{ok(1, 0, 100, 5), ok(1, 7, 200, 5), oom, ok(1, 10, 10, 5)}, 9 / 2.1, 2},
		{"no sweep", []measure.Measurement{ok(0, 0, 100, 5), ok(0, 3, 200, 5)}, 1, 0},
	}
	for _, tc := range tests {
		factor, pairs := sweepOverhead(tc.ms)
		if pairs != tc.pairs || math.Abs(factor-tc.factor) > 1e-12*tc.factor {
			t.Errorf("%s: factor %v from %d pairs, want %v from %d", tc.name, factor, pairs, tc.factor, tc.pairs)
		}
	}
}

// paceSweeper pretends to measure a job's kernels on a device that takes gemm times
// the planner's guess for a dense convolution or a matrix product, grouped times it for
// a grouped or depthwise convolution and memory times it for the other kernels: each
// measurement begins when the one before it ended. It measures at most limit kernels
// (0: all) and then fails.
type paceSweeper struct {
	gemm, grouped, memory float64
	limit                 int
	jobs                  []gpu.Job
}

func (s *paceSweeper) Device() measure.Device {
	return measure.Device{Key: "cpu:test:Pace", Backend: "cpu", Name: "Pace", SMs: 2}
}

func (s *paceSweeper) Sweep(ctx context.Context, job gpu.Job, sink gpu.Sink) error {
	s.jobs = append(s.jobs, job)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, it := range job.Items {
		if s.limit > 0 && i == s.limit {
			return errors.New("the device went away")
		}
		m := measure.Measurement{DeviceKey: s.Device().Key, ConfigKey: it.Config.Key(), Batch: it.Batch, Phase: it.Phase,
			Precision: job.Precision, Policy: job.Policy, MedianMS: 1, Repeats: job.Repeats, Status: measure.OK, At: at}
		if err := sink.Measured(m); err != nil {
			return err
		}
		slowdown := s.memory
		switch {
		case it.Config.Op == cnn.OpConv2d && it.Config.Groups > 1:
			slowdown = s.grouped
		case it.Config.Op == cnn.OpConv2d || it.Config.Op == cnn.OpLinear:
			slowdown = s.gemm
		}
		at = at.Add(time.Duration(slowdown * it.EstimateS * float64(time.Second)))
	}
	return nil
}

// A plan with nothing of the device's own in the cache is estimated at the pace of a
// few of its kernels timed on the device, each class at its own: on a device three
// times slower than the planner guesses at dense convolutions, fifteen times at
// depthwise ones and ten times at passes over memory, the estimate is 3, 15 and 10
// times their guesses. The kernels are timed as the sweep times them, a few of each
// class from the middle of the plan's guesses after one untimed; a device that
// measured too few leaves the guess.
func TestProbeSweepPace(t *testing.T) {
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	sw := &paceSweeper{gemm: 3, grouped: 15, memory: 10}
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats = []string{"mobilenet_v2"}, 32, []int{1, 2, 4, 8}, 3
	guess, err := PlanSweep(context.Background(), cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	if guess.CalibratedFrom != 0 || guess.Probed != 0 || guess.Pace != 1 || len(guess.Kernels.Items) < 20 {
		t.Fatalf("plan: calibrated on %d, probed %d, pace %v, %d kernels", guess.CalibratedFrom, guess.Probed, guess.Pace, len(guess.Kernels.Items))
	}
	var gemm, grouped, memory float64 // the guesses' seconds
	for _, it := range guess.Kernels.Items {
		switch {
		case it.Config.Op == cnn.OpConv2d && it.Config.Groups > 1:
			grouped += it.EstimateS
		case it.Config.Op == cnn.OpConv2d || it.Config.Op == cnn.OpLinear:
			gemm += it.EstimateS
		default:
			memory += it.EstimateS
		}
	}
	if gemm == 0 || grouped == 0 || memory == 0 {
		t.Fatalf("mobilenet_v2's plan guesses %v s of dense convolutions, %v s of depthwise ones, %v s of the rest", gemm, grouped, memory)
	}
	p := guess
	p.Kernels.Items = append([]gpu.Item(nil), guess.Kernels.Items...)
	if err := ProbeSweepPace(context.Background(), sw, &p); err != nil {
		t.Fatal(err)
	}
	want := 3*gemm + 15*grouped + 10*memory
	if got := p.Kernels.Estimate.Seconds(); math.Abs(got-want) > 1e-6*want {
		t.Errorf("estimate %v s, want 3 × %v + 15 × %v + 10 × %v = %v s", got, gemm, grouped, memory, want)
	}
	timed := numClasses*probePerClass - 1 // the last kernel's end is not known
	if wantPace := want / (gemm + grouped + memory); p.Probed != timed || math.Abs(p.Pace-wantPace) > 1e-6*wantPace {
		t.Errorf("%d kernels timed, pace %v; want %d and %v", p.Probed, p.Pace, timed, wantPace)
	}
	if d := DescribePlan(p); !strings.Contains(d, fmt.Sprintf("at this device's pace: %d of its kernels timed just now", timed)) {
		t.Errorf("the plan says %q", d)
	}
	job := sw.jobs[0]
	if job.Repeats != req.Repeats || job.Precision != req.Precision || len(job.Items) != 1+numClasses*probePerClass {
		t.Errorf("the kernels timed: %d at %d repeats, %s; want %d at the plan's %d, %s", len(job.Items), job.Repeats, job.Precision, 1+numClasses*probePerClass, req.Repeats, req.Precision)
	}
	lo, hi := math.Inf(1), 0.0
	for _, it := range guess.Kernels.Items {
		lo, hi = math.Min(lo, it.EstimateS), math.Max(hi, it.EstimateS)
	}
	if job.Items[0].EstimateS != lo {
		t.Errorf("the untimed first kernel guessed %v s, want the plan's smallest, %v", job.Items[0].EstimateS, lo)
	}
	for i, it := range job.Items[1:] {
		if it.EstimateS <= lo || it.EstimateS >= hi {
			t.Errorf("timed kernel %d guessed %v s, the plan %v to %v: want none of the extremes", i, it.EstimateS, lo, hi)
		}
		if kernelClass(it) != i%numClasses {
			t.Errorf("timed kernel %d is of class %d: want the classes in turns", i, kernelClass(it))
		}
	}

	// Two kernels measured, then the device failed: nothing timed, the guess stays.
	short := guess
	short.Kernels.Items = append([]gpu.Item(nil), guess.Kernels.Items...)
	if err := ProbeSweepPace(context.Background(), &paceSweeper{gemm: 3, grouped: 15, memory: 10, limit: 2}, &short); err == nil {
		t.Error("a device that failed during the probe: no error")
	}
	if short.Probed != 0 || short.Kernels.Estimate != guess.Kernels.Estimate {
		t.Errorf("after a failed probe: probed %d, estimate %v; want 0 and the guess %v", short.Probed, short.Kernels.Estimate, guess.Kernels.Estimate)
	}
}

// A device that measured the plan's layers at other batch sizes in an earlier sweep
// is estimated from those: its medians twice the planner's guess and its sweep taking
// 1.5 times its runs make the new batch sizes' estimate three times the guess.
func TestPlanCalibratedOnOtherBatches(t *testing.T) {
	ctx := context.Background()
	cache, err := db.Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	dev := (&paceSweeper{}).Device()
	if err := cache.PutDevice(ctx, dev); err != nil {
		t.Fatal(err)
	}
	req := DefaultSweepRequest()
	req.Models, req.Input, req.Repeats = []string{"resnet18"}, 32, 5
	req.Batches = []int{1, 2}
	before, err := PlanSweep(ctx, cache, dev, req)
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := cache.CreateSweep(ctx, dev.Key, "{}", len(before.Kernels.Items))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ms []measure.Measurement
	for _, it := range before.Kernels.Items {
		median := 2 * it.EstimateS / float64(req.Repeats+gpu.WarmupRuns) // seconds a run
		ms = append(ms, measure.Measurement{DeviceKey: dev.Key, ConfigKey: it.Config.Key(), Batch: it.Batch, Phase: it.Phase,
			Precision: req.Precision, Policy: measure.NoPolicy, MedianMS: median * 1000, Repeats: req.Repeats, Status: measure.OK,
			SweepID: sweep, At: at})
		at = at.Add(time.Duration(1.5 * median * float64(req.Repeats+gpu.WarmupRuns) * float64(time.Second)))
	}
	if err := cache.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	req.Batches = []int{4, 8}
	empty, err := db.Open(filepath.Join(t.TempDir(), "empty.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	guess, err := PlanSweep(ctx, empty, dev, req) // the planner's guess: nothing measured
	if err != nil {
		t.Fatal(err)
	}
	got, err := PlanSweep(ctx, cache, dev, req)
	if err != nil {
		t.Fatal(err)
	}
	if got.CalibratedFrom != len(ms) || math.Abs(got.Pace-3) > 1e-6 {
		t.Errorf("calibrated on %d kernels at pace %v; want the %d measured and 3", got.CalibratedFrom, got.Pace, len(ms))
	}
	if want := 3 * guess.Kernels.Estimate.Seconds(); math.Abs(got.Kernels.Estimate.Seconds()-want) > 1e-6*want {
		t.Errorf("estimate %v, want 3 × the guess %v", got.Kernels.Estimate, guess.Kernels.Estimate)
	}
}

// A class of kernel the device timed none of is scaled as the timed ones are together.
func TestClassPaceScales(t *testing.T) {
	tests := []struct {
		name          string
		guessed, took [numClasses]float64
		want          [numClasses]float64
		ok            bool
	}{
		{"none", [numClasses]float64{}, [numClasses]float64{}, [numClasses]float64{}, false},
		{"every class", [numClasses]float64{1, 2, 4}, [numClasses]float64{3, 30, 40}, [numClasses]float64{3, 15, 10}, true},
		// 3 s for 1 s and 40 s for 4 s: 43 s for 5 s where none was grouped.
		{"no grouped", [numClasses]float64{1, 0, 4}, [numClasses]float64{3, 0, 40}, [numClasses]float64{3, 43.0 / 5, 10}, true},
	}
	for _, tc := range tests {
		got, ok := (&classPace{guessed: tc.guessed, took: tc.took}).scales()
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
