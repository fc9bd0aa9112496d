package firstrun

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"cnntime/predictor/measure"
)

// TestLayerRatiosOfARealH200Run sums up the 908 layer phases that the worker and
// PyTorch 2.11 both timed in the first run on an NVIDIA H200 (testdata, 2026-11-27)
// by kind and precision. Over every phase the median ratio says the worker is about
// three times as fast, which is PyTorch's own time per call (Python, the dispatcher,
// the launch) on phases of a few microseconds; over the long phases (≥ 0.1 ms on the
// worker) the kernels are within about 10% of each other, and the worker's element-wise
// kernels are the slower ones.
func TestLayerRatiosOfARealH200Run(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "h200-first-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	worker := map[layerKey]measure.Measurement{}
	pytorch := map[layerKey]measure.Measurement{}
	for _, l := range rep.Layers {
		k := layerKey{l.Config, l.Phase, l.Batch, l.Precision}
		worker[k] = measure.Measurement{MedianMS: l.WorkerMS, Notes: l.Notes}
		pytorch[k] = measure.Measurement{MedianMS: l.PyTorchMS}
	}
	rows, kinds := LayerRatios(worker, pytorch)
	if len(rows) != 908 {
		t.Fatalf("%d layer phases compared, want 908", len(rows))
	}
	byKind := map[string]RatioSummary{}
	for _, k := range kinds {
		byKind[k.Op+" "+string(k.Precision)] = k
	}
	for _, c := range []struct {
		kind            string
		layers          int
		median          float64
		longLayers      int
		longMedianRatio float64
	}{
		{"conv2d amp", 242, 0.3048, 21, 0.9219},
		{"conv2d tf32", 242, 0.4578, 37, 0.8747},
		{"batchnorm2d amp", 96, 0.1787, 24, 0.8873},
		{"maxpool2d fp32", 4, 0.9955, 3, 1.1968},
		{"relu6 amp", 48, 0.2915, 2, 1.6774},
		{"linear amp", 12, 0.0762, 0, 0},
	} {
		k, ok := byKind[c.kind]
		if !ok {
			t.Errorf("%s: not summed", c.kind)
			continue
		}
		if k.Layers != c.layers || math.Abs(k.MedianRatio-c.median) > 5e-4 || k.LongLayers != c.longLayers || math.Abs(k.LongMedianRatio-c.longMedianRatio) > 5e-4 {
			t.Errorf("%s: %d phases, median %.4f, %d long, long median %.4f; want %d, %.4f, %d, %.4f", c.kind,
				k.Layers, k.MedianRatio, k.LongLayers, k.LongMedianRatio, c.layers, c.median, c.longLayers, c.longMedianRatio)
		}
	}
}
