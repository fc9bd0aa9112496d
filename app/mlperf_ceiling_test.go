package app

import (
	"bytes"
	"context"
	"encoding/csv"
	"strconv"
	"testing"

	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// TestNoPredictionBeatsMLPerf predicts each MLPerf ceiling row's GPU and model on
// synthetic data, in NHWC under amp (the fastest setting the predictor knows), over
// every batch that fits, and checks that no batch is faster than NVIDIA's published
// per-GPU throughput.
func TestNoPredictionBeatsMLPerf(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader(assets.MLPerfCeiling)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("mlperf_ceiling.csv: %v (%d rows)", err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		ceiling, err := strconv.ParseFloat(r[col["images_per_s_per_gpu_lower_bound"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := eng.GPUTarget(r[col["gpu"]])
		if err != nil {
			t.Fatal(err)
		}
		curves, err := eng.Curves(context.Background(), Query{Models: []string{r[col["model"]]}, Targets: []Target{tg},
			Batches: BatchGrid(1, 1024), Precision: measure.AMP, Policy: measure.Fastest,
			Run: predictor.Run{Epochs: 1, Images: 1281167}, Data: RunData{MemoryFormat: "nhwc"}})
		if err != nil {
			t.Fatal(err)
		}
		best := 0.0
		for _, p := range curves[0].Points {
			if p.Fits && p.ImagesPerS > best {
				best = p.ImagesPerS
			}
		}
		t.Logf("%s %s: fastest predicted %.0f images/s per GPU, MLPerf ceiling %.0f", r[col["gpu"]], r[col["model"]], best, ceiling)
		if !(best > 0) || best > ceiling {
			t.Errorf("%s %s: predicted %.0f images/s per GPU, above NVIDIA's MLPerf %.0f", r[col["gpu"]], r[col["model"]], best, ceiling)
		}
	}
}
