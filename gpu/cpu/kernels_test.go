package cpu

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
)

// convCase builds a conv2d configuration with its output size derived from the input.
func convCase(cin, h, w, cout, k, s, p, d, g int, bias bool) cnn.Config {
	oh := (h+2*p-d*(k-1)-1)/s + 1
	ow := (w+2*p-d*(k-1)-1)/s + 1
	return cnn.Config{
		Op: cnn.OpConv2d, In: cnn.Shape{C: cin, H: h, W: w}, Out: cnn.Shape{C: cout, H: oh, W: ow}, NumInputs: 1,
		Kernel: cnn.Pair{k, k}, Stride: cnn.Pair{s, s}, Padding: cnn.Pair{p, p}, Dilation: cnn.Pair{d, d}, Groups: g, Bias: bias,
	}
}

// naiveConv computes a convolution's output and, for an output gradient dy, its input
// and weight gradients, in float64 by the definition.
func naiveConv(c cnn.Config, batch int, x, wt, bias, dy []float32) (y, dx, dw []float64) {
	g := max(c.Groups, 1)
	cinG, coutG := c.In.C/g, c.Out.C/g
	y = make([]float64, batch*int(c.Out.Elems()))
	dx = make([]float64, len(x))
	dw = make([]float64, len(wt))
	for n := 0; n < batch; n++ {
		for co := 0; co < c.Out.C; co++ {
			gi := co / coutG
			for oy := 0; oy < c.Out.H; oy++ {
				for ox := 0; ox < c.Out.W; ox++ {
					o := ((n*c.Out.C+co)*c.Out.H+oy)*c.Out.W + ox
					s := 0.0
					if c.Bias {
						s = float64(bias[co])
					}
					for ci := 0; ci < cinG; ci++ {
						for ki := 0; ki < c.Kernel[0]; ki++ {
							for kj := 0; kj < c.Kernel[1]; kj++ {
								iy := oy*c.Stride[0] - c.Padding[0] + ki*c.Dilation[0]
								ix := ox*c.Stride[1] - c.Padding[1] + kj*c.Dilation[1]
								if iy < 0 || iy >= c.In.H || ix < 0 || ix >= c.In.W {
									continue
								}
								xi := ((n*c.In.C+gi*cinG+ci)*c.In.H+iy)*c.In.W + ix
								wi := ((co*cinG+ci)*c.Kernel[0]+ki)*c.Kernel[1] + kj
								s += float64(wt[wi]) * float64(x[xi])
								dx[xi] += float64(wt[wi]) * float64(dy[o])
								dw[wi] += float64(x[xi]) * float64(dy[o])
							}
						}
					}
					y[o] = s
				}
			}
		}
	}
	return y, dx, dw
}

func maxDiff(a []float32, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-b[i]))
	}
	return d
}

func TestConvMatchesNaiveReference(t *testing.T) {
	cases := []struct {
		name      string
		cfg       cnn.Config
		batch     int
		colBudget int
	}{
		{"3x3 pad 1", convCase(3, 6, 5, 4, 3, 1, 1, 1, 1, false), 2, 8 << 20},
		{"stride 2 with bias", convCase(4, 7, 7, 6, 3, 2, 1, 1, 1, true), 3, 8 << 20},
		{"dilation 2", convCase(2, 8, 8, 3, 3, 1, 2, 2, 1, false), 2, 8 << 20},
		{"groups 2", convCase(4, 5, 5, 6, 3, 1, 1, 1, 2, true), 2, 8 << 20},
		{"depthwise stride 2", convCase(5, 7, 6, 5, 3, 2, 1, 1, 5, false), 2, 8 << 20},
		{"depthwise dilated with bias", convCase(4, 9, 7, 4, 3, 1, 2, 2, 4, true), 2, 8 << 20},
		{"depthwise 5x5 stride 2 odd width", convCase(3, 8, 9, 3, 5, 2, 2, 1, 3, false), 2, 8 << 20},
		{"depthwise multiplier 2", convCase(3, 5, 5, 6, 3, 1, 1, 1, 3, false), 2, 8 << 20},
		{"1x1", convCase(8, 4, 4, 5, 1, 1, 0, 1, 1, true), 3, 8 << 20},
		{"chunked im2col", convCase(3, 6, 6, 4, 3, 1, 1, 1, 1, true), 5, 27 * 36 * 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := colBudget
			colBudget = tc.colBudget
			defer func() { colBudget = saved }()
			l, err := newConv(tc.cfg, tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			if tc.colBudget < 8<<20 && l.chunk >= tc.batch {
				t.Fatalf("chunk = %d: the case must split the batch", l.chunk)
			}
			x := make([]float32, tc.batch*int(tc.cfg.In.Elems()))
			fillRandom(x, 1, 3)
			if l.hasBias {
				fillRandom(l.bias.w, 1, 5)
			}
			y := make([]float32, tc.batch*int(tc.cfg.Out.Elems()))
			dy := make([]float32, len(y))
			fillRandom(dy, 1, 11)
			dx := make([]float32, len(x))
			l.forward([][]float32{x}, y)
			l.backwardData([][]float32{x}, y, dy, [][]float32{dx})
			l.backwardWeights([][]float32{x}, y, dy)
			wantY, wantDx, wantDw := naiveConv(tc.cfg, tc.batch, x, l.weight.w, l.bias.w, dy)
			if d := maxDiff(y, wantY); d > 1e-4 {
				t.Errorf("forward differs from the reference by %g", d)
			}
			if d := maxDiff(dx, wantDx); d > 1e-4 {
				t.Errorf("backward data differs from the reference by %g", d)
			}
			if d := maxDiff(l.weight.g, wantDw); d > 1e-4 {
				t.Errorf("backward weights differs from the reference by %g", d)
			}
		})
	}
}

// lossOf is Σ y·r: its gradient with respect to y is r.
func lossOf(o op, xs [][]float32, y, r []float32) float64 {
	o.forward(xs, y)
	s := 0.0
	for i := range y {
		s += float64(y[i]) * float64(r[i])
	}
	return s
}

// checkGradients compares an op's analytic input and weight gradients with central
// finite differences of Σ y·r at every coordinate.
func checkGradients(t *testing.T, o op, xs [][]float32, outLen int) {
	t.Helper()
	y, r := make([]float32, outLen), make([]float32, outLen)
	fillRandom(r, 1, 17)
	if _, isLoss := o.(*loss); isLoss {
		clear(r)
		r[0] = 1
	}
	dxs := make([][]float32, len(xs))
	for i := range xs {
		dxs[i] = make([]float32, len(xs[i]))
	}
	o.forward(xs, y)
	o.backwardData(xs, y, r, dxs)
	o.backwardWeights(xs, y, r)
	const eps = 1e-2
	check := func(what string, v []float32, analytic []float32) {
		for i := range v {
			keep := v[i]
			v[i] = keep + eps
			up := lossOf(o, xs, y, r)
			v[i] = keep - eps
			down := lossOf(o, xs, y, r)
			v[i] = keep
			fd := (up - down) / (2 * eps)
			if diff := math.Abs(fd - float64(analytic[i])); diff > 2e-3*math.Max(math.Abs(fd), 1) {
				t.Errorf("%s[%d]: analytic %g, finite difference %g", what, i, analytic[i], fd)
				return
			}
		}
	}
	for i := range xs {
		check("dx", xs[i], dxs[i])
	}
	for k, p := range o.params() {
		check("dw"+string(rune('0'+k)), p.w, p.g)
	}
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	const batch = 2
	shape := cnn.Shape{C: 3, H: 4, W: 4}
	cases := []struct {
		name   string
		cfg    cnn.Config
		shapes []cnn.Shape
	}{
		{"conv", convCase(3, 5, 5, 4, 3, 2, 1, 1, 1, true), nil},
		{"grouped dilated conv", convCase(4, 6, 6, 4, 3, 1, 2, 2, 2, false), nil},
		{"depthwise conv", convCase(3, 5, 5, 3, 3, 1, 1, 1, 3, true), nil},
		{"linear", cnn.Config{Op: cnn.OpLinear, In: cnn.Shape{C: 5, H: 1, W: 1}, Out: cnn.Shape{C: 3, H: 1, W: 1}, Bias: true}, nil},
		{"batchnorm", cnn.Config{Op: cnn.OpBatchNorm, In: shape, Out: shape}, nil},
		{"layernorm", cnn.Config{Op: cnn.OpLayerNorm, In: shape, Out: shape}, nil},
		{"silu", cnn.Config{Op: cnn.OpSiLU, In: shape, Out: shape}, nil},
		{"gelu", cnn.Config{Op: cnn.OpGELU, In: shape, Out: shape}, nil},
		{"sigmoid", cnn.Config{Op: cnn.OpSigmoid, In: shape, Out: shape}, nil},
		// maxpool's input values are spaced wider than the finite-difference step, so
		// no step changes which element is the maximum.
		{"maxpool", cnn.Config{Op: cnn.OpMaxPool, In: shape, Out: cnn.Shape{C: 3, H: 2, W: 2}, Kernel: cnn.Pair{3, 3}, Stride: cnn.Pair{2, 2}, Padding: cnn.Pair{1, 1}}, nil},
		{"avgpool", cnn.Config{Op: cnn.OpAvgPool, In: shape, Out: cnn.Shape{C: 3, H: 2, W: 2}, Kernel: cnn.Pair{2, 2}, Stride: cnn.Pair{2, 2}}, nil},
		{"adaptive avgpool", cnn.Config{Op: cnn.OpAdaptiveAvg, In: cnn.Shape{C: 2, H: 5, W: 5}, Out: cnn.Shape{C: 2, H: 3, W: 3}}, nil},
		{"add", cnn.Config{Op: cnn.OpAdd, In: shape, Out: shape, NumInputs: 2}, []cnn.Shape{shape, shape}},
		{"squeeze-excitation mul", cnn.Config{Op: cnn.OpMul, In: shape, Out: shape, NumInputs: 2}, []cnn.Shape{shape, {C: 3, H: 1, W: 1}}},
		{"layer scale", cnn.Config{Op: cnn.OpScale, In: shape, Out: shape}, nil},
		{"concat", cnn.Config{Op: cnn.OpConcat, In: cnn.Shape{C: 5, H: 2, W: 2}, Out: cnn.Shape{C: 5, H: 2, W: 2}, NumInputs: 2}, []cnn.Shape{{C: 2, H: 2, W: 2}, {C: 3, H: 2, W: 2}}},
		{"channel shuffle", cnn.Config{Op: cnn.OpChannelShuffle, In: cnn.Shape{C: 6, H: 2, W: 2}, Out: cnn.Shape{C: 6, H: 2, W: 2}, Groups: 2}, nil},
		{"permute", cnn.Config{Op: cnn.OpPermute, In: shape, Out: shape}, nil},
		{"cross-entropy", cnn.Config{Op: cnn.OpLoss, In: cnn.Shape{C: 7, H: 1, W: 1}, Out: cnn.Shape{C: 1, H: 1, W: 1}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shapes := tc.shapes
			if shapes == nil {
				shapes = inShapesOf(tc.cfg)
			}
			o, err := newOp(tc.cfg, shapes, batch)
			if err != nil {
				t.Fatal(err)
			}
			xs := make([][]float32, len(shapes))
			for i, s := range shapes {
				xs[i] = make([]float32, batch*int(s.Elems()))
				fillRandom(xs[i], 2, uint64(31+i))
				if tc.cfg.Op == cnn.OpMaxPool {
					for j := range xs[i] {
						xs[i][j] = float32((j*37)%len(xs[i])) * 0.05
					}
				}
			}
			for _, p := range o.params() {
				fillRandom(p.w, 1, 23) // away from the ones and zeros of a fresh norm
			}
			checkGradients(t, o, xs, batch*int(tc.cfg.Out.Elems()))
		})
	}
}

func TestShuffleIsAPermutation(t *testing.T) {
	s := &shuffleOp{n: 1, c: 6, p: 1, groups: 2}
	x := []float32{0, 1, 2, 3, 4, 5}
	y := make([]float32, 6)
	s.forward([][]float32{x}, y)
	want := []float32{0, 3, 1, 4, 2, 5} // torch: view(2,3).transpose → channels 0,3,1,4,2,5
	for i := range want {
		if y[i] != want[i] {
			t.Fatalf("shuffle = %v, want %v", y, want)
		}
	}
}
