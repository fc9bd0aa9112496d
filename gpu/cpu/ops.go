package cpu

import (
	"errors"
	"fmt"
	"math"

	"cnntime/predictor/cnn"
)

// op is one layer's kernels on a fixed batch size. Tensors are float32, NCHW, one slice
// per tensor. Backward kernels add their gradients into dxs (a nil entry is a gradient
// nobody needs, e.g. the input image's) and into the parameters' gradients.
type op interface {
	forward(xs [][]float32, y []float32)
	backwardData(xs [][]float32, y, dy []float32, dxs [][]float32)
	backwardWeights(xs [][]float32, y, dy []float32)
	params() []*param
}

// param is a learnable tensor, its gradient and its SGD momentum.
type param struct {
	w, g, m []float32
}

// newParam makes n weights initialised deterministically with scale 1/sqrt(fanIn)
// (ones when fanIn is 0, as for a normalisation's scale, or zeros for a bias).
func newParam(n, fanIn int) param {
	p := param{w: make([]float32, n), g: make([]float32, n), m: make([]float32, n)}
	if fanIn > 0 {
		fillRandom(p.w, 1/math.Sqrt(float64(fanIn)), uint64(n)*2654435761+uint64(fanIn))
	}
	return p
}

func onesParam(n int) param {
	p := newParam(n, 0)
	for i := range p.w {
		p.w[i] = 1
	}
	return p
}

// fillRandom fills t with uniform values in [-scale, scale) from a fixed seed:
// reproducible data without the cost of math/rand's locking.
func fillRandom(t []float32, scale float64, seed uint64) {
	s := seed | 1
	for i := range t {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		t[i] = float32((float64(s>>11)/(1<<53)*2 - 1) * scale)
	}
}

// errUnsupported marks a configuration the CPU backend cannot run.
var errUnsupported = errors.New("unsupported")

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUnsupported}, args...)...)
}

// newOp builds the kernels of a layer configuration for a batch size. inShapes are the
// shapes of the op's inputs (one per input).
func newOp(c cnn.Config, inShapes []cnn.Shape, batch int) (op, error) {
	switch c.Op {
	case cnn.OpConv2d:
		return newConv(c, batch)
	case cnn.OpLinear:
		return newLinear(c, batch), nil
	case cnn.OpBatchNorm:
		return &batchNorm{n: batch, c: c.In.C, p: c.In.H * c.In.W, gamma: onesParam(c.In.C), beta: newParam(c.In.C, 0)}, nil
	case cnn.OpLayerNorm:
		return &layerNorm{rows: batch * c.In.H * c.In.W, c: c.In.C, gamma: onesParam(c.In.C), beta: newParam(c.In.C, 0)}, nil
	case cnn.OpReLU, cnn.OpReLU6, cnn.OpSiLU, cnn.OpHardswish, cnn.OpHardsigmoid, cnn.OpSigmoid, cnn.OpGELU:
		return newActivation(c.Op), nil
	case cnn.OpMaxPool, cnn.OpAvgPool:
		return newPool(c, batch, c.Op == cnn.OpMaxPool)
	case cnn.OpAdaptiveAvg:
		return &adaptiveAvg{n: batch, c: c.In.C, h: c.In.H, w: c.In.W, oh: c.Out.H, ow: c.Out.W}, nil
	case cnn.OpAdd:
		return addOp{}, nil
	case cnn.OpMul:
		if len(inShapes) != 2 {
			return nil, unsupportedf("mul needs 2 inputs, has %d", len(inShapes))
		}
		return &mulOp{n: batch, a: inShapes[0], b: inShapes[1]}, nil
	case cnn.OpScale:
		return &scaleOp{n: batch, c: c.In.C, p: c.In.H * c.In.W, gamma: onesParam(c.In.C)}, nil
	case cnn.OpConcat:
		return &concatOp{n: batch, shapes: inShapes, out: c.Out}, nil
	case cnn.OpChannelShuffle:
		return &shuffleOp{n: batch, c: c.In.C, p: c.In.H * c.In.W, groups: max(c.Groups, 2)}, nil
	case cnn.OpDropout:
		return &dropoutOp{p: 0.5}, nil
	case cnn.OpStochasticDepth:
		return &stochasticDepth{n: batch, per: int(c.In.Elems()), p: 0.1}, nil
	case cnn.OpFlatten:
		return copyOp{}, nil
	case cnn.OpSlice:
		// The configuration does not say where the run of channels starts; the first
		// Out.C channels cost the same.
		return &sliceOp{n: batch, in: int(c.In.Elems()), out: int(c.Out.Elems())}, nil
	case cnn.OpPermute:
		return &permuteOp{n: batch, c: c.In.C, p: c.In.H * c.In.W}, nil
	case cnn.OpLoss:
		return newLoss(batch, int(c.In.Elems())), nil
	}
	return nil, unsupportedf("the CPU backend has no kernel for %q", c.Op)
}

// inShapesOf guesses the inputs' shapes from a configuration alone (a layer benchmark
// has no graph): concat splits its channels evenly, mul's second input is a per-channel
// scale as in squeeze-and-excitation, other ops' inputs all have the input shape.
func inShapesOf(c cnn.Config) []cnn.Shape {
	k := max(c.NumInputs, 1)
	switch c.Op {
	case cnn.OpConcat:
		out := make([]cnn.Shape, k)
		for i := range out {
			out[i] = cnn.Shape{C: c.In.C / k, H: c.In.H, W: c.In.W}
		}
		out[k-1].C += c.In.C % k
		return out
	case cnn.OpMul:
		return []cnn.Shape{c.In, {C: c.In.C, H: 1, W: 1}}
	}
	out := make([]cnn.Shape, k)
	for i := range out {
		out[i] = c.In
	}
	return out
}

// linear is y = x·Wᵀ + b over the last (contiguous) dimension of In.C features, at every
// one of the In.H×In.W positions of every sample.
type linear struct {
	rows, in, out int
	weight, bias  param
	hasBias       bool
	dense         []float32 // dy with its zeros replaced, the backward GEMMs' left operand
}

func newLinear(c cnn.Config, batch int) *linear {
	l := &linear{rows: batch * c.In.H * c.In.W, in: c.In.C, out: c.Out.C, hasBias: c.Bias}
	l.weight = newParam(l.out*l.in, l.in)
	if l.hasBias {
		l.bias = newParam(l.out, 0)
	}
	return l
}

func (l *linear) params() []*param {
	if l.hasBias {
		return []*param{&l.weight, &l.bias}
	}
	return []*param{&l.weight}
}

func (l *linear) forward(xs [][]float32, y []float32) {
	if l.hasBias {
		for r := 0; r < l.rows; r++ {
			copy(y[r*l.out:(r+1)*l.out], l.bias.w)
		}
	}
	beta := float32(0)
	if l.hasBias {
		beta = 1
	}
	sgemm.Sgemm(blasNo, blasT, l.rows, l.out, l.in, 1, xs[0], l.in, l.weight.w, l.in, beta, y, l.out)
}

func (l *linear) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] != nil {
		sgemm.Sgemm(blasNo, blasNo, l.rows, l.in, l.out, 1, l.denseCopy(dy), l.out, l.weight.w, l.in, 1, dxs[0], l.in)
	}
}

// gemmZero stands in for an exact zero in a GEMM's left operand: far too small to
// change a gradient (its products are ~1e-22 against gradients of ~1e-6 and more),
// large enough that they are not subnormal.
const gemmZero = 1e-20

// denseCopy returns dy with its exact zeros replaced by gemmZero. gonum's GEMM skips
// the zero entries of its left operand, so a linear layer's backward time would
// depend on how sparse its output gradient is: in a training step ReLU and dropout
// zero half to three quarters of it (VGG's classifier ran 5× faster than on the dense
// random gradient a layer is timed with), and per-layer timings would not add up to
// the step. With no zeros the time depends on the shapes alone, as on a GPU.
func (l *linear) denseCopy(dy []float32) []float32 {
	if len(l.dense) != len(dy) {
		l.dense = make([]float32, len(dy))
	}
	for i, v := range dy {
		if v == 0 {
			v = gemmZero
		}
		l.dense[i] = v
	}
	return l.dense
}

func (l *linear) backwardWeights(xs [][]float32, y, dy []float32) {
	sgemm.Sgemm(blasT, blasNo, l.out, l.in, l.rows, 1, l.denseCopy(dy), l.out, xs[0], l.in, 1, l.weight.g, l.in)
	if l.hasBias {
		for r := 0; r < l.rows; r++ {
			for j, v := range dy[r*l.out : (r+1)*l.out] {
				l.bias.g[j] += v
			}
		}
	}
}

// batchNorm normalises each channel over the batch and positions (training mode).
type batchNorm struct {
	n, c, p       int
	gamma, beta   param
	mean, invStd  []float32
	sumDy, sumDyX []float32
}

func (b *batchNorm) params() []*param { return []*param{&b.gamma, &b.beta} }

func (b *batchNorm) forward(xs [][]float32, y []float32) {
	x := xs[0]
	if b.mean == nil {
		b.mean, b.invStd = make([]float32, b.c), make([]float32, b.c)
		b.sumDy, b.sumDyX = make([]float32, b.c), make([]float32, b.c)
	}
	m := float64(b.n * b.p)
	parallelFor(b.c, 4, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			var s, ss float64
			for n := 0; n < b.n; n++ {
				for _, v := range x[(n*b.c+c)*b.p:][:b.p] {
					s += float64(v)
					ss += float64(v) * float64(v)
				}
			}
			mean := s / m
			inv := 1 / math.Sqrt(max(ss/m-mean*mean, 0)+1e-5)
			b.mean[c], b.invStd[c] = float32(mean), float32(inv)
			g, sh := b.gamma.w[c]*float32(inv), b.beta.w[c]-b.gamma.w[c]*float32(inv*mean)
			for n := 0; n < b.n; n++ {
				off := (n*b.c + c) * b.p
				for i, v := range x[off : off+b.p] {
					y[off+i] = v*g + sh
				}
			}
		}
	})
}

// sums computes, per channel, Σdy and Σdy·x̂.
func (b *batchNorm) sums(x, dy []float32) {
	parallelFor(b.c, 4, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			var s, sx float32
			mean, inv := b.mean[c], b.invStd[c]
			for n := 0; n < b.n; n++ {
				off := (n*b.c + c) * b.p
				g := dy[off : off+b.p]
				for i, v := range x[off : off+b.p] {
					s += g[i]
					sx += g[i] * (v - mean) * inv
				}
			}
			b.sumDy[c], b.sumDyX[c] = s, sx
		}
	})
}

func (b *batchNorm) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	x, dx := xs[0], dxs[0]
	if dx == nil {
		return
	}
	b.sums(x, dy)
	m := float32(b.n * b.p)
	parallelFor(b.c, 4, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			mean, inv := b.mean[c], b.invStd[c]
			k := b.gamma.w[c] * inv / m
			for n := 0; n < b.n; n++ {
				off := (n*b.c + c) * b.p
				for i, v := range x[off : off+b.p] {
					dx[off+i] += k * (m*dy[off+i] - b.sumDy[c] - (v-mean)*inv*b.sumDyX[c])
				}
			}
		}
	})
}

func (b *batchNorm) backwardWeights(xs [][]float32, y, dy []float32) {
	b.sums(xs[0], dy)
	for c := 0; c < b.c; c++ {
		b.gamma.g[c] += b.sumDyX[c]
		b.beta.g[c] += b.sumDy[c]
	}
}

// layerNorm normalises each row of c contiguous features (a position of an NHWC tensor).
type layerNorm struct {
	rows, c      int
	gamma, beta  param
	mean, invStd []float32
}

func (l *layerNorm) params() []*param { return []*param{&l.gamma, &l.beta} }

func (l *layerNorm) forward(xs [][]float32, y []float32) {
	x := xs[0]
	if l.mean == nil {
		l.mean, l.invStd = make([]float32, l.rows), make([]float32, l.rows)
	}
	parallelFor(l.rows, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*l.c : (r+1)*l.c]
			var s, ss float64
			for _, v := range row {
				s += float64(v)
				ss += float64(v) * float64(v)
			}
			mean := s / float64(l.c)
			inv := float32(1 / math.Sqrt(max(ss/float64(l.c)-mean*mean, 0)+1e-6))
			l.mean[r], l.invStd[r] = float32(mean), inv
			out := y[r*l.c : (r+1)*l.c]
			for i, v := range row {
				out[i] = (v-float32(mean))*inv*l.gamma.w[i] + l.beta.w[i]
			}
		}
	})
}

func (l *layerNorm) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	x, dx := xs[0], dxs[0]
	if dx == nil {
		return
	}
	parallelFor(l.rows, 64, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row, g, out := x[r*l.c:(r+1)*l.c], dy[r*l.c:(r+1)*l.c], dx[r*l.c:(r+1)*l.c]
			mean, inv := l.mean[r], l.invStd[r]
			var s, sx float32
			for i, v := range row {
				gg := g[i] * l.gamma.w[i]
				s += gg
				sx += gg * (v - mean) * inv
			}
			c := float32(l.c)
			for i, v := range row {
				xh := (v - mean) * inv
				out[i] += inv / c * (c*g[i]*l.gamma.w[i] - s - xh*sx)
			}
		}
	})
}

func (l *layerNorm) backwardWeights(xs [][]float32, y, dy []float32) {
	x := xs[0]
	for r := 0; r < l.rows; r++ {
		mean, inv := l.mean[r], l.invStd[r]
		for i, v := range x[r*l.c : (r+1)*l.c] {
			g := dy[r*l.c+i]
			l.gamma.g[i] += g * (v - mean) * inv
			l.beta.g[i] += g
		}
	}
}

// activation is an elementwise function with its derivative (from the input x).
type activation struct {
	f, df func(x float32) float32
}

func newActivation(o cnn.Op) *activation {
	sig := func(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
	switch o {
	case cnn.OpReLU6:
		return &activation{
			f:  func(x float32) float32 { return min(max(x, 0), 6) },
			df: func(x float32) float32 { return step(x > 0 && x < 6) },
		}
	case cnn.OpSiLU:
		return &activation{
			f:  func(x float32) float32 { return x * sig(x) },
			df: func(x float32) float32 { s := sig(x); return s * (1 + x*(1-s)) },
		}
	case cnn.OpHardswish:
		return &activation{
			f: func(x float32) float32 { return x * min(max(x+3, 0), 6) / 6 },
			df: func(x float32) float32 {
				switch {
				case x < -3:
					return 0
				case x > 3:
					return 1
				}
				return (2*x + 3) / 6
			},
		}
	case cnn.OpHardsigmoid:
		return &activation{
			f:  func(x float32) float32 { return min(max(x+3, 0), 6) / 6 },
			df: func(x float32) float32 { return step(x > -3 && x < 3) / 6 },
		}
	case cnn.OpSigmoid:
		return &activation{f: sig, df: func(x float32) float32 { s := sig(x); return s * (1 - s) }}
	case cnn.OpGELU:
		return &activation{
			f: func(x float32) float32 { return float32(0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2))) },
			df: func(x float32) float32 {
				v := float64(x)
				return float32(0.5*(1+math.Erf(v/math.Sqrt2)) + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi))
			},
		}
	}
	return &activation{
		f:  func(x float32) float32 { return max(x, 0) },
		df: func(x float32) float32 { return step(x > 0) },
	}
}

func step(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func (a *activation) params() []*param { return nil }

func (a *activation) forward(xs [][]float32, y []float32) {
	x := xs[0]
	parallelFor(len(y), 1<<15, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i] = a.f(x[i])
		}
	})
}

func (a *activation) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	x, dx := xs[0], dxs[0]
	if dx == nil {
		return
	}
	parallelFor(len(dy), 1<<15, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dx[i] += dy[i] * a.df(x[i])
		}
	})
}

func (a *activation) backwardWeights(xs [][]float32, y, dy []float32) {}

// noWeights is embedded by ops without parameters.
type noWeights struct{}

func (noWeights) params() []*param                                { return nil }
func (noWeights) backwardWeights(xs [][]float32, y, dy []float32) {}

// addOp sums inputs of equal shape.
type addOp struct{ noWeights }

func (addOp) forward(xs [][]float32, y []float32) {
	copy(y, xs[0])
	for _, x := range xs[1:] {
		for i, v := range x {
			y[i] += v
		}
	}
}

func (addOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	for _, dx := range dxs {
		if dx != nil {
			for i, v := range dy {
				dx[i] += v
			}
		}
	}
}

// copyOp is flatten: the output is the input.
type copyOp struct{ noWeights }

func (copyOp) forward(xs [][]float32, y []float32) { copy(y, xs[0]) }

func (copyOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] != nil {
		for i, v := range dy {
			dxs[0][i] += v
		}
	}
}

// sliceOp copies the first out elements of each sample (a run of channels).
type sliceOp struct {
	noWeights
	n, in, out int
}

func (s *sliceOp) forward(xs [][]float32, y []float32) {
	for n := 0; n < s.n; n++ {
		copy(y[n*s.out:(n+1)*s.out], xs[0][n*s.in:])
	}
}

func (s *sliceOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	for n := 0; n < s.n; n++ {
		for i, v := range dy[n*s.out : (n+1)*s.out] {
			dxs[0][n*s.in+i] += v
		}
	}
}

// mulOp multiplies a by b, where b is a's shape or a per-channel C×1×1 scale.
type mulOp struct {
	noWeights
	n    int
	a, b cnn.Shape
}

func (m *mulOp) forward(xs [][]float32, y []float32) {
	a, b := xs[0], xs[1]
	if m.b == m.a {
		for i := range y {
			y[i] = a[i] * b[i]
		}
		return
	}
	p := m.a.H * m.a.W
	for t := 0; t < m.n*m.a.C; t++ {
		s := b[t]
		for i, v := range a[t*p : (t+1)*p] {
			y[t*p+i] = v * s
		}
	}
}

func (m *mulOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	a, b := xs[0], xs[1]
	if m.b == m.a {
		for i, g := range dy {
			if dxs[0] != nil {
				dxs[0][i] += g * b[i]
			}
			if dxs[1] != nil {
				dxs[1][i] += g * a[i]
			}
		}
		return
	}
	p := m.a.H * m.a.W
	for t := 0; t < m.n*m.a.C; t++ {
		var s float32
		for i, g := range dy[t*p : (t+1)*p] {
			if dxs[0] != nil {
				dxs[0][t*p+i] += g * b[t]
			}
			s += g * a[t*p+i]
		}
		if dxs[1] != nil {
			dxs[1][t] += s
		}
	}
}

// scaleOp multiplies each channel by a learned factor (ConvNeXt's layer scale).
type scaleOp struct {
	n, c, p int
	gamma   param
}

func (s *scaleOp) params() []*param { return []*param{&s.gamma} }

func (s *scaleOp) forward(xs [][]float32, y []float32) {
	for t := 0; t < s.n*s.c; t++ {
		k := s.gamma.w[t%s.c]
		for i, v := range xs[0][t*s.p : (t+1)*s.p] {
			y[t*s.p+i] = v * k
		}
	}
}

func (s *scaleOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	for t := 0; t < s.n*s.c; t++ {
		k := s.gamma.w[t%s.c]
		for i, g := range dy[t*s.p : (t+1)*s.p] {
			dxs[0][t*s.p+i] += g * k
		}
	}
}

func (s *scaleOp) backwardWeights(xs [][]float32, y, dy []float32) {
	for t := 0; t < s.n*s.c; t++ {
		var sum float32
		for i, g := range dy[t*s.p : (t+1)*s.p] {
			sum += g * xs[0][t*s.p+i]
		}
		s.gamma.g[t%s.c] += sum
	}
}

// concatOp joins its inputs along channels.
type concatOp struct {
	noWeights
	n      int
	shapes []cnn.Shape
	out    cnn.Shape
}

func (c *concatOp) forward(xs [][]float32, y []float32) {
	per := int(c.out.Elems())
	for n := 0; n < c.n; n++ {
		off := n * per
		for i, x := range xs {
			e := int(c.shapes[i].Elems())
			copy(y[off:off+e], x[n*e:(n+1)*e])
			off += e
		}
	}
}

func (c *concatOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	per := int(c.out.Elems())
	for n := 0; n < c.n; n++ {
		off := n * per
		for i, dx := range dxs {
			e := int(c.shapes[i].Elems())
			if dx != nil {
				for j, v := range dy[off : off+e] {
					dx[n*e+j] += v
				}
			}
			off += e
		}
	}
}

// shuffleOp is ShuffleNet's channel shuffle: channels (groups, c/groups) transposed.
type shuffleOp struct {
	noWeights
	n, c, p, groups int
}

// src returns the input channel that output channel o reads.
func (s *shuffleOp) src(o int) int {
	if s.c%s.groups != 0 {
		return o
	}
	per := s.c / s.groups
	return (o%s.groups)*per + o/s.groups
}

func (s *shuffleOp) forward(xs [][]float32, y []float32) {
	for n := 0; n < s.n; n++ {
		for o := 0; o < s.c; o++ {
			copy(y[(n*s.c+o)*s.p:][:s.p], xs[0][(n*s.c+s.src(o))*s.p:][:s.p])
		}
	}
}

func (s *shuffleOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	for n := 0; n < s.n; n++ {
		for o := 0; o < s.c; o++ {
			dst := dxs[0][(n*s.c+s.src(o))*s.p:][:s.p]
			for i, v := range dy[(n*s.c+o)*s.p:][:s.p] {
				dst[i] += v
			}
		}
	}
}

// dropoutOp zeroes elements with probability p and scales the rest by 1/(1-p).
type dropoutOp struct {
	noWeights
	p    float32
	mask []float32
	seed uint64
}

// DropKeeps says whether dropout with probability p keeps unit u (an element, or a whole
// sample under stochastic depth) in the forward run of a seed: a hash of the unit and
// the seed against p·2^24. The CUDA worker's drop kernel (gpu/cudakern/kernels.cu) draws
// the same mask, so the self-test can compare its results with this reference.
func DropKeeps(u int64, seed uint64, p float64) bool {
	h := uint32(u)*2654435761 ^ uint32(seed)
	h ^= h >> 15
	h *= 2246822519
	h ^= h >> 13
	return int64(h&0xffffff) >= int64(math.Round(p*(1<<24)))
}

func (d *dropoutOp) forward(xs [][]float32, y []float32) {
	if len(d.mask) != len(y) {
		d.mask = make([]float32, len(y))
	}
	d.seed++
	keep := 1 / (1 - d.p)
	for i, v := range xs[0] {
		d.mask[i] = 0
		if DropKeeps(int64(i), d.seed, float64(d.p)) {
			d.mask[i] = keep
		}
		y[i] = v * d.mask[i]
	}
}

func (d *dropoutOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	for i, g := range dy {
		dxs[0][i] += g * d.mask[i]
	}
}

// stochasticDepth drops whole samples of a residual branch with probability p.
type stochasticDepth struct {
	noWeights
	n, per int
	p      float32
	scale  []float32
	seed   uint64
}

func (s *stochasticDepth) forward(xs [][]float32, y []float32) {
	if s.scale == nil {
		s.scale = make([]float32, s.n)
	}
	s.seed++
	for n := range s.scale {
		s.scale[n] = 0
		if DropKeeps(int64(n), s.seed, float64(s.p)) {
			s.scale[n] = 1 / (1 - s.p)
		}
		for i, v := range xs[0][n*s.per : (n+1)*s.per] {
			y[n*s.per+i] = v * s.scale[n]
		}
	}
}

func (s *stochasticDepth) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	for n, k := range s.scale {
		for i, g := range dy[n*s.per : (n+1)*s.per] {
			dxs[0][n*s.per+i] += g * k
		}
	}
}

// permuteOp transposes each sample between channel-first (C×P) and channel-last (P×C).
type permuteOp struct {
	noWeights
	n, c, p int
}

func (t *permuteOp) forward(xs [][]float32, y []float32) {
	per := t.c * t.p
	for n := 0; n < t.n; n++ {
		x, out := xs[0][n*per:(n+1)*per], y[n*per:(n+1)*per]
		for c := 0; c < t.c; c++ {
			for i := 0; i < t.p; i++ {
				out[i*t.c+c] = x[c*t.p+i]
			}
		}
	}
}

func (t *permuteOp) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	per := t.c * t.p
	for n := 0; n < t.n; n++ {
		g, dx := dy[n*per:(n+1)*per], dxs[0][n*per:(n+1)*per]
		for c := 0; c < t.c; c++ {
			for i := 0; i < t.p; i++ {
				dx[c*t.p+i] += g[i*t.c+c]
			}
		}
	}
}

// loss is softmax cross-entropy, averaged over the batch, against fixed labels.
type loss struct {
	noWeights
	n, classes int
	labels     []int
	prob       []float32
}

func newLoss(batch, classes int) *loss {
	l := &loss{n: batch, classes: max(classes, 1), labels: make([]int, batch), prob: make([]float32, batch*max(classes, 1))}
	for i := range l.labels {
		l.labels[i] = (i * 7) % l.classes
	}
	return l
}

// forward writes the mean loss into y[0].
func (l *loss) forward(xs [][]float32, y []float32) {
	var total float64
	for n := 0; n < l.n; n++ {
		row, p := xs[0][n*l.classes:(n+1)*l.classes], l.prob[n*l.classes:(n+1)*l.classes]
		m := row[0]
		for _, v := range row {
			m = max(m, v)
		}
		var s float64
		for i, v := range row {
			e := math.Exp(float64(v - m))
			p[i] = float32(e)
			s += e
		}
		for i := range p {
			p[i] /= float32(s)
		}
		total -= math.Log(max(float64(p[l.labels[n]]), 1e-30))
	}
	if len(y) > 0 {
		y[0] = float32(total / float64(l.n))
	}
}

// backwardData adds (softmax − one-hot)/N, the gradient of the mean loss; dy is ignored
// (the loss is the end of the graph).
func (l *loss) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	inv := 1 / float32(l.n)
	for n := 0; n < l.n; n++ {
		for i := 0; i < l.classes; i++ {
			g := l.prob[n*l.classes+i]
			if i == l.labels[n] {
				g--
			}
			dxs[0][n*l.classes+i] += g * inv
		}
	}
}
