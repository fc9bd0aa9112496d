package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// TestL2Residency: a memory-bound kernel's reads of the tensor the kernel before it
// has just written hit the L2 for the part of that tensor that fits in L2ResidentShare of
// it. On an RTX 4090 (72 MB of L2) a 256×14×14 FP16 activation is 100 KB per image: at
// batch 64 (6.4 MB) all of it stays in the L2, at batch 1024 (103 MB) 36 MB of it. What
// is left at batch 64 is the kernel's other traffic: forward, a ReLU's write of its
// output (1 of 2 elements), a batch norm's write (1 of 3: both its passes read the fresh
// input); backward, a ReLU's saved-tensor read and input gradient write (2 of 3) and a
// batch norm's (2 of 4).
func TestL2Residency(t *testing.T) {
	for _, tc := range []struct {
		bytes, l2 float64
		want      float64
	}{
		{6.4e6, 72 << 20, 1},
		{36 << 20, 72 << 20, 1}, // exactly half
		{72 << 20, 72 << 20, 0.5},
		{144 << 20, 72 << 20, 0.25},
		{1, 0, 0}, // unknown L2
		{0, 72 << 20, 0},
	} {
		if got := l2HitShare(tc.bytes, tc.l2); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("l2HitShare(%v, %v) = %v, want %v", tc.bytes, tc.l2, got, tc.want)
		}
	}

	withL2 := rtx4090
	noL2 := withL2
	noL2.L2MB = 0
	shape := cnn.Shape{C: 256, H: 14, W: 14}
	cal := PriorCalibration()
	launch := cal.LaunchUS / 1000
	for _, tc := range []struct {
		op    cnn.Op
		phase measure.Phase
		batch int
		want  float64 // time with the L2 ÷ time without, launch cost apart
	}{
		{cnn.OpReLU, measure.Forward, 64, 1.0 / 2},
		{cnn.OpBatchNorm, measure.Forward, 64, 1.0 / 3},
		{cnn.OpReLU, measure.BackwardData, 64, 2.0 / 3},
		{cnn.OpBatchNorm, measure.BackwardData, 64, 2.0 / 4},
		// batch 1024: 36 MB of the 102.8 MB tensor hits, so a ReLU's forward moves
		// 1 − 36/102.76/2 of its elements.
		{cnn.OpReLU, measure.Forward, 1024, 1 - (36<<20)/(1024*256*14*14*2.0)/2},
	} {
		c := cnn.Config{Op: tc.op, In: shape, Out: shape, NumInputs: 1}
		a, _ := EstimateMS(cal, c, tc.phase, withL2, measure.AMP, tc.batch)
		b, _ := EstimateMS(cal, c, tc.phase, noL2, measure.AMP, tc.batch)
		if r := (a - launch) / (b - launch); math.Abs(r-tc.want) > 1e-9 {
			t.Errorf("%s %s at batch %d: %.5f ms with the L2, %.5f ms without (ratio %.4f), want %.4f", tc.op, tc.phase, tc.batch, a, b, r, tc.want)
		}
	}
	// A convolution's time is its GEMM's or its traffic's: the L2 leaves it alone.
	conv := cnn.Config{Op: cnn.OpConv2d, In: shape, Out: shape, NumInputs: 1, Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1},
		Padding: cnn.Pair{1, 1}, Dilation: cnn.Pair{1, 1}, Groups: 1}
	a, _ := EstimateMS(cal, conv, measure.Forward, withL2, measure.AMP, 64)
	b, _ := EstimateMS(cal, conv, measure.Forward, noL2, measure.AMP, 64)
	if a != b {
		t.Errorf("convolution: %.5f ms with the L2, %.5f ms without; want the same", a, b)
	}
}
