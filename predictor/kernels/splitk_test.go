package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/measure"
)

// unsplitSeconds is the implicit GEMM's best tiled time for m rows and reduction k
// when no block may split the reduction: every tile runs the whole of k, the waves
// rounded up. The reference the split-K search must beat where tiles leave SMs idle.
func (e *estimator) unsplitSeconds(m, k, slow float64) float64 {
	best := math.Inf(1)
	for _, p := range e.plans[:e.nPlans] {
		waves := ceil(m*p.invM) * p.colTiles * e.invSMs
		if e.rates.quantize {
			waves = ceil(waves)
		}
		best = min(best, waves*k*p.secPerKRow*slow)
	}
	return best
}

// TestSmallGridsSplitTheirReduction: a forward or data-gradient implicit GEMM whose
// output tiles leave a V100's SMs idle (ImageNet's 7×7 and 14×14 stages at one image)
// splits its reduction over the input channels and taps, as weight gradients do, and
// comes out at least 1.5× as fast as its unsplit tiles (3.2× on a 7×7 stage's data
// gradient at one image); at 256 images, whose tiles fill the GPU many times, the split
// changes nothing. The first layer (3 input channels, a reduction of 147) is too short
// to split at any batch.
func TestSmallGridsSplitTheirReduction(t *testing.T) {
	cal := PriorCalibration()
	tests := []struct {
		name      string
		cin, cout int
		size, k   int
		phase     measure.Phase
		batch     int
		atLeast   float64 // unsplit time over the estimate, at least (1: no split)
		exactly   bool    // the estimate is the unsplit time
	}{
		{"7×7 1×1 forward, one image", 512, 2048, 7, 1, measure.Forward, 1, 1.5, false},
		{"7×7 1×1 data gradient, one image", 512, 2048, 7, 1, measure.BackwardData, 1, 1.5, false},
		{"14×14 1×1 forward, one image", 1024, 256, 14, 1, measure.Forward, 1, 1.5, false},
		{"7×7 3×3 stride-2 forward, one image", 256, 512, 14, 3, measure.Forward, 1, 1.5, false},
		{"7×7 3×3 stride-2 data gradient, 8 images", 256, 512, 14, 3, measure.BackwardData, 8, 1.5, false},
		{"7×7 1×1 forward, 256 images", 512, 2048, 7, 1, measure.Forward, 256, 1, true},
		{"stem 7×7 forward, one image", 3, 64, 224, 7, measure.Forward, 1, 1, true},
	}
	for _, tc := range tests {
		c := conv(tc.cin, tc.cout, tc.size, tc.k, 1)
		if tc.k > 1 {
			c = conv(tc.cin, tc.cout, tc.size, tc.k, 2)
		}
		e := newEstimator(cal, c, tc.phase, v100, measure.FP32, 0)
		g := e.cost.gemm
		m := float64(g.m0) + float64(g.mPerSample)*float64(tc.batch)
		k := float64(g.k0) + float64(g.kPerSample)*float64(tc.batch)
		got := e.tiledSeconds(m, k, 0)
		unsplit := e.unsplitSeconds(m, k, 1)
		if tc.exactly && got != unsplit {
			t.Errorf("%s: %.3g s, want the unsplit tiles' %.3g s", tc.name, got, unsplit)
		}
		if !tc.exactly && !(unsplit >= tc.atLeast*got) {
			t.Errorf("%s: %.3g s against %.3g s unsplit; want at least %.1f× faster", tc.name, got, unsplit, tc.atLeast)
		}
	}
}
