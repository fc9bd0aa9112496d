package predictor

import (
	"math"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// A dense table holds the per-GPU batches up to its size's last, but none beyond what
// fits in memory, nor fewer than were asked for.
func TestDenseEntries(t *testing.T) {
	tests := []struct{ need, fits, want int }{
		{1024, -1, 1024}, // memory unknown: the whole table
		{1000, 5000, 1024},
		{300, 300, 300}, // a network that fits 300: not 512
		{100, 300, 128},
		{200, 300, 256},
		{300, 0, 512}, // nothing fits: the curve reads batch 1 at most, as before
		{2000, 1500, 2000},
		{1, 1, 1},
	}
	for _, tc := range tests {
		if got := denseEntries(tc.need, tc.fits); got != tc.want {
			t.Errorf("denseEntries(%d, %d) = %d, want %d", tc.need, tc.fits, got, tc.want)
		}
	}
}

// A dense table cut at the batches that fit in memory holds at every batch the figures
// of the whole table of its size, to the bit: its plans still probe the size's last
// batch. Networks that fit a few hundred images on a 16 GB V100, in amp and FP32, on
// the stacks that decide differently which phases run a kernel.
func TestDenseTableCutAtMemoryIsTheWholeTable(t *testing.T) {
	cut := 0
	for _, name := range []string{"vgg16", "resnet152", "densenet121", "efficientnet_b0", "convnext_tiny"} {
		net := buildNet(t, name)
		for _, p := range []measure.Precision{measure.AMP, measure.FP32} {
			for _, f := range []Framework{PyTorch1, PyTorch2, Compiled} {
				e := priorEngine()
				req := Request{Network: net, Machine: hw.Machine{ID: "m", GPUCount: 1}, GPU: v100, Precision: p,
					Policy: measure.Heuristic, Framework: f, MemoryFormat: NCHW}
				fits := e.memory(net, p).MaxBatch(e.mem.Capacity(v100))
				if fits < 2 {
					t.Fatalf("%s in %s fits %d images on a V100: pick a smaller network", name, p, fits)
				}
				got := e.table(req, fits)
				size := tableSize(fits)
				want := e.fill(req, size+1, size)
				if len(got.stepMS) < size+1 {
					cut++
				}
				if len(got.stepMS) != denseEntries(fits, fits)+1 || got.probe != size {
					t.Fatalf("%s %s %s: a table of %d entries probing %d, want %d probing %d", name, p, f,
						len(got.stepMS), got.probe, denseEntries(fits, fits)+1, size)
				}
				for b := 1; b < len(got.stepMS); b++ {
					for _, pair := range [][2]float64{{got.stepMS[b], want.stepMS[b]}, {got.gpuMS[b], want.gpuMS[b]},
						{got.backwardMS[b], want.backwardMS[b]}, {got.relErr[b], want.relErr[b]}} {
						if math.Float64bits(pair[0]) != math.Float64bits(pair[1]) {
							t.Fatalf("%s %s %s at batch %d: %v, the whole table has %v", name, p, f, b, pair[0], pair[1])
						}
					}
					if got.source[b] != want.source[b] {
						t.Fatalf("%s %s %s at batch %d: source %d, the whole table has %d", name, p, f, b, got.source[b], want.source[b])
					}
				}
			}
		}
	}
	if cut == 0 {
		t.Error("no table was cut at the batches that fit: the test tries nothing")
	}
}
