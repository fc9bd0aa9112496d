package app

import (
	"context"
	"path/filepath"
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

// datasetModels and datasetMachines are 10 CNNs × 10 machines of the window (views'
// BenchmarkRedraw shows the same, with inception_v3, which takes no 32-pixel input,
// where this has googlenet).
var (
	datasetModels   = []string{"resnet50", "resnet18", "vgg16", "mobilenet_v2", "efficientnet_b0", "densenet121", "convnext_tiny", "regnet_y_400mf", "resnext50_32x4d", "googlenet"}
	datasetMachines = []string{"aws/g5.xlarge", "aws/g6.xlarge", "aws/g4dn.xlarge", "aws/p3.2xlarge", "aws/p4d.24xlarge", "gcp/a2-highgpu-1g",
		"lambda/gpu_1x_h100_pcie", "lambda/gpu_1x_a10", "azure/Standard_NC24ads_A100_v4", "runpod/rtx-4090-community-cloud"}
)

// BenchmarkDatasetChange10x10 is the window's prediction after the dataset of 10 CNNs
// × 10 machines changes from ImageNet to CIFAR-100 (32-pixel networks: new step models,
// each curve over the window's grid to the 50,000 images of an epoch), from an engine
// that has predicted the ImageNet ones: the issue-40 goal is 1 s.
func BenchmarkDatasetChange10x10(b *testing.B) {
	s := DefaultSessionSettings()
	s.Models, s.Machines = datasetModels, datasetMachines
	for b.Loop() {
		b.StopTimer()
		backend, err := OpenEngineBackend(context.Background(), filepath.Join(b.TempDir(), "cache.db"))
		if err != nil {
			b.Fatal(err)
		}
		s.Data.Dataset, s.Images = "imagenet-1k", predictor.ImageNetImages
		if _, err := backend.PredictCurves(context.Background(), s); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s.Data.Dataset = "cifar-100"
		s.Images = s.Data.Images()
		curves, err := backend.PredictCurves(context.Background(), s)
		if err != nil || len(curves) != 100 {
			b.Fatalf("%d curves, %v", len(curves), err)
		}
		b.StopTimer()
		backend.Close()
		b.StartTimer()
	}
}
