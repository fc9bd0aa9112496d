package cpu

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
)

// TestReferenceLinear checks the reference against a hand computation: y = x·Wᵀ + b,
// dx = dy·W, dW = dyᵀ·x, db = Σ dy.
func TestReferenceLinear(t *testing.T) {
	c := cnn.Config{Op: cnn.OpLinear, In: cnn.Shape{C: 3, H: 1, W: 1}, Out: cnn.Shape{C: 2, H: 1, W: 1}, NumInputs: 1, Bias: true}
	r, err := NewReference(c, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	x, w, b, dy := r.Inputs[0], r.Params[0], r.Params[1], r.DY
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("%s = %g, want %g", what, got, want)
		}
	}
	for n := 0; n < 2; n++ {
		for o := 0; o < 2; o++ {
			want := float64(b[o])
			for i := 0; i < 3; i++ {
				want += float64(x[n*3+i]) * float64(w[o*3+i])
			}
			near("y", float64(r.Y[n*2+o]), want)
		}
		for i := 0; i < 3; i++ {
			want := 0.0
			for o := 0; o < 2; o++ {
				want += float64(dy[n*2+o]) * float64(w[o*3+i])
			}
			near("dx", float64(r.DX[0][n*3+i]), want)
		}
	}
	for o := 0; o < 2; o++ {
		db := 0.0
		for n := 0; n < 2; n++ {
			db += float64(dy[n*2+o])
		}
		near("db", float64(r.DParams[1][o]), db)
		for i := 0; i < 3; i++ {
			want := 0.0
			for n := 0; n < 2; n++ {
				want += float64(dy[n*2+o]) * float64(x[n*3+i])
			}
			near("dW", float64(r.DParams[0][o*3+i]), want)
		}
	}
	if len(r.Inputs[0]) != 6 || len(r.Y) != 4 {
		t.Errorf("shapes: %d inputs, %d outputs", len(r.Inputs[0]), len(r.Y))
	}
}

func TestReferenceEveryKindRuns(t *testing.T) {
	s := cnn.Shape{C: 4, H: 4, W: 4}
	for _, c := range []cnn.Config{
		{Op: cnn.OpConv2d, In: s, Out: s, NumInputs: 1, Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{1, 1}, Padding: cnn.Pair{1, 1}, Groups: 1},
		{Op: cnn.OpBatchNorm, In: s, Out: s, NumInputs: 1},
		{Op: cnn.OpReLU, In: s, Out: s, NumInputs: 1},
	} {
		r, err := NewReference(c, 2, 3)
		if err != nil {
			t.Fatalf("%s: %v", c.Key(), err)
		}
		nonzero := false
		for _, v := range r.DX[0] {
			nonzero = nonzero || v != 0
		}
		if !nonzero {
			t.Errorf("%s: input gradient is all zero", c.Key())
		}
	}
	if _, err := NewReference(cnn.Config{Op: cnn.OpReLU, In: s, Out: s}, 0, 1); err == nil {
		t.Error("batch 0 accepted")
	}
}

// TestReferenceParametersAreNeitherZerosNorOnes: a kernel that ignored a bias, a norm's
// shift or its scale must not match the reference, so none of them is all zeros or all
// ones there.
func TestReferenceParametersAreNeitherZerosNorOnes(t *testing.T) {
	s := cnn.Shape{C: 4, H: 2, W: 2}
	for _, c := range []cnn.Config{
		{Op: cnn.OpLinear, In: s, Out: cnn.Shape{C: 3, H: 2, W: 2}, NumInputs: 1, Bias: true},
		{Op: cnn.OpBatchNorm, In: s, Out: s, NumInputs: 1},
		{Op: cnn.OpLayerNorm, In: s, Out: s, NumInputs: 1},
		{Op: cnn.OpScale, In: s, Out: s, NumInputs: 1},
	} {
		r, err := NewReference(c, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Params) == 0 {
			t.Errorf("%s: no parameters", c.Key())
		}
		for i, p := range r.Params {
			zeros, ones := 0, 0
			for _, v := range p {
				if v == 0 {
					zeros++
				}
				if v == 1 {
					ones++
				}
			}
			if zeros > 0 || ones > 0 {
				t.Errorf("%s parameter %d has %d zeros and %d ones of %d: %v", c.Key(), i, zeros, ones, len(p), p)
			}
		}
	}
}
