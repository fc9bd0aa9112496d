package app

import (
	"context"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// tenByTen is 10 CNNs × 10 machines over every batch size 1–1024.
func tenByTen(b *testing.B, eng *Engine) Query {
	models := cnn.Names()
	if len(models) > 10 {
		models = models[:10]
	}
	ids := eng.MachineIDs()
	var targets []Target
	for _, id := range ids {
		if len(targets) == 10 {
			break
		}
		t, err := eng.MachineTarget(id)
		if err != nil {
			b.Fatal(err)
		}
		targets = append(targets, t)
	}
	batches, _ := ParseBatches("1-1024", 1024)
	return Query{Models: models, Targets: targets, Batches: batches, Precision: measure.FP32,
		Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: predictor.ImageNetImages}}
}

// BenchmarkCurves10x10Warm: goal ≤ 100 ms per op once the step-time arrays are cached.
func BenchmarkCurves10x10Warm(b *testing.B) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	q := tenByTen(b, eng)
	if _, err := eng.Curves(context.Background(), q); err != nil { // warm the cache
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := eng.Curves(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkZooByCatalogCold: every zoo CNN on every catalog machine, batches 1–1024,
// from a fresh engine; goal ≤ 10 s per op.
func BenchmarkZooByCatalogCold(b *testing.B) {
	for b.Loop() {
		eng, err := NewEngine(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		var targets []Target
		for _, id := range eng.MachineIDs() {
			t, err := eng.MachineTarget(id)
			if err != nil {
				b.Fatal(err)
			}
			targets = append(targets, t)
		}
		batches, _ := ParseBatches("1-1024", 1024)
		q := Query{Models: cnn.Names(), Targets: targets, Batches: batches, Precision: measure.FP32,
			Policy: measure.Heuristic, Run: predictor.Run{Epochs: 1, Images: predictor.ImageNetImages}}
		if _, err := eng.Curves(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// explainResnet50 explains resnet50 on a p3.2xlarge at batch 128 with the default run data.
func explainResnet50(b *testing.B, eng *Engine) {
	t, err := eng.MachineTarget("aws/p3.2xlarge")
	if err != nil {
		b.Fatal(err)
	}
	q := Query{Precision: measure.FP32, Policy: measure.Heuristic, Data: DefaultRunData(),
		Run: predictor.Run{Epochs: 90, Images: predictor.ImageNetImages}}
	if _, err := eng.Explain(context.Background(), q, "resnet50", t, 128); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkExplainResnet50Cold: a "Why this number?" on a fresh engine (its step table
// not yet filled); BenchmarkExplainResnet50Warm after the curve was predicted.
func BenchmarkExplainResnet50Cold(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		eng, err := NewEngine(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		explainResnet50(b, eng)
	}
}

func BenchmarkExplainResnet50Warm(b *testing.B) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	explainResnet50(b, eng)
	b.ResetTimer()
	for b.Loop() {
		explainResnet50(b, eng)
	}
}

// BenchmarkCurves10x10ToFitCold: the window's range, each curve from 1 up to the largest
// batch that fits its machine (BatchSpan), from a fresh engine: what a first prediction
// of ten CNNs on ten machines costs.
func BenchmarkCurves10x10ToFitCold(b *testing.B) {
	for b.Loop() {
		eng, err := NewEngine(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		q := tenByTen(b, eng)
		q.Batches, q.Span = nil, BatchSpan{Min: 1}
		if _, err := eng.Curves(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCurves10x10ToFitWarm: the same once the step-time arrays are cached (a
// settings change other than the selection); goal ≤ 100 ms per op.
func BenchmarkCurves10x10ToFitWarm(b *testing.B) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	q := tenByTen(b, eng)
	q.Batches, q.Span = nil, BatchSpan{Min: 1}
	if _, err := eng.Curves(context.Background(), q); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := eng.Curves(context.Background(), q); err != nil {
			b.Fatal(err)
		}
	}
}
