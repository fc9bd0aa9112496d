package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/measure"
)

// TestWinogradAppliesTo: the forward pass and data gradient of a 3×3 stride-1
// convolution on the CUDA cores run as Winograd; its weight gradient, tensor-core
// kernels and other convolutions do not.
func TestWinogradAppliesTo(t *testing.T) {
	tests := []struct {
		class Class
		arith Arithmetic
		phase measure.Phase
		want  bool
	}{
		{ClassConv3x3, ArithFP32, measure.Forward, true},
		{ClassConv3x3, ArithFP32, measure.BackwardData, true},
		{ClassConv3x3, ArithFP16SIMT, measure.Forward, true},
		{ClassConv3x3, ArithFP32, measure.BackwardWeights, false},
		{ClassConv3x3, ArithFP16, measure.Forward, false},
		{ClassConv3x3, ArithTF32, measure.Forward, false},
		{ClassConv1x1, ArithFP32, measure.Forward, false},
		{ClassConv, ArithFP32, measure.Forward, false},
	}
	for _, tc := range tests {
		if got := winograd(tc.class, tc.arith, tc.phase); got != tc.want {
			t.Errorf("winograd(%v, %v, %s) = %v, want %v", tc.class, tc.arith, tc.phase, got, tc.want)
		}
	}
}

// TestWinogradFallsBackToTheGEMMAtSmallBatches: a 3×3 FP32 convolution's time is the
// faster of Winograd (a quarter of the blocks, at the 3×3 efficiency) and the implicit
// GEMM (every block, at a plain GEMM's efficiency): the GEMM at batch 1, where
// Winograd's blocks leave most SMs idle, and Winograd at batch 256, where both fill
// the GPU and Winograd does fewer multiplications.
func TestWinogradFallsBackToTheGEMMAtSmallBatches(t *testing.T) {
	cal := PriorCalibration()
	layer := conv(256, 512, 28, 3, 1)
	for _, phase := range []measure.Phase{measure.Forward, measure.BackwardData} {
		e := newEstimator(cal, layer, phase, p100, measure.FP32, 0)
		if e.rowsPerTileRow != winogradTilePixels || !(e.directSlowdown > 1) {
			t.Fatalf("%s: %v GEMM rows per tile row, GEMM %v times slower; want %d and above 1", phase, e.rowsPerTileRow, e.directSlowdown, winogradTilePixels)
		}
		for _, tc := range []struct {
			batch      int
			wantDirect bool
		}{{1, true}, {256, false}} {
			m := float64(e.cost.gemm.m0) + float64(e.cost.gemm.mPerSample)*float64(tc.batch)
			k := float64(e.cost.gemm.k0) + float64(e.cost.gemm.kPerSample)*float64(tc.batch)
			wino := e.tiledSearch(m, k, 0, winogradTilePixels, 1, math.Inf(1))
			direct := e.tiledSearch(m, k, 0, 1, e.directSlowdown, math.Inf(1))
			got := e.tiledSeconds(m, k, 0)
			if tc.wantDirect && !(got == direct && direct < wino) {
				t.Errorf("%s batch %d: %v s; want the GEMM's %v s, below Winograd's %v s", phase, tc.batch, got, direct, wino)
			}
			if !tc.wantDirect && !(got == wino && wino < direct) {
				t.Errorf("%s batch %d: %v s; want Winograd's %v s, below the GEMM's %v s", phase, tc.batch, got, wino, direct)
			}
		}
	}
}

// TestWinogradSteepensTheBatchCurveOnSmallImages: on a V100, the per-image time of a
// 3×3 FP32 convolution falls from batch 16 to 256 by more with Winograd's fewer blocks
// than with a direct tiling at one efficiency, and by more the smaller the image (a
// CIFAR ResNet's late stages), and hardly more on ImageNet's 28×28 and larger.
func TestWinogradSteepensTheBatchCurveOnSmallImages(t *testing.T) {
	cal := PriorCalibration()
	tests := []struct {
		channels, size int
		atLeast        float64 // Winograd's per-image gain over the direct tiling's, at least
	}{
		{512, 4, 1.4},
		{256, 8, 1.3},
		{128, 16, 1.3},
		{512, 14, 1.3},
	}
	gain := func(e estimator) float64 { return (e.at(16) / 16) / (e.at(256) / 256) }
	for _, tc := range tests {
		e := newEstimator(cal, conv(tc.channels, tc.channels, tc.size, 3, 1), measure.Forward, v100, measure.FP32, 0)
		plain := e
		plain.rowsPerTileRow, plain.directSlowdown = 1, 0
		w, d := gain(e), gain(plain)
		if !(w >= d*tc.atLeast) {
			t.Errorf("%d channels at %d×%d: per-image time falls %.3f× from batch 16 to 256 with Winograd, %.3f× with a direct tiling; want at least %.1f× that", tc.channels, tc.size, tc.size, w, d, tc.atLeast)
		}
	}
}
