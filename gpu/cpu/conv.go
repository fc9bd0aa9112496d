package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"cnntime/predictor/cnn"
)

// sgemm is gonum's pure-Go single-precision BLAS; its GEMM splits work over the cores.
var sgemm gonum.Implementation

const (
	blasNo = blas.NoTrans
	blasT  = blas.Trans
)

// colBudget caps the im2col buffer (in floats) so large batches are processed in chunks
// of samples instead of one huge matrix.
var colBudget = 8 << 20

// conv is a 2-D convolution with groups, stride, padding and dilation. General
// convolutions lower to GEMM through im2col (a chunk of samples at a time, so the
// matrix products are large enough to be efficient); depthwise convolutions (one input
// and one output channel per group) run a direct loop, which avoids a 1-row GEMM.
type conv struct {
	n, cin, h, w, cout, oh, ow     int
	kh, kw, sh, sw, ph, pw, dh, dw int
	groups, cinG, coutG            int
	k, p                           int // GEMM inner size (cinG·kh·kw) and output positions (oh·ow)
	chunk                          int // samples per im2col chunk
	weight, bias                   param
	hasBias                        bool
	col, buf                       []float32
}

func newConv(c cnn.Config, batch int) (*conv, error) {
	g := max(c.Groups, 1)
	if c.In.C%g != 0 || c.Out.C%g != 0 {
		return nil, unsupportedf("conv2d with %d input and %d output channels cannot be split into %d groups", c.In.C, c.Out.C, g)
	}
	l := &conv{
		n: batch, cin: c.In.C, h: c.In.H, w: c.In.W, cout: c.Out.C, oh: c.Out.H, ow: c.Out.W,
		kh: c.Kernel[0], kw: c.Kernel[1], sh: max(c.Stride[0], 1), sw: max(c.Stride[1], 1),
		ph: c.Padding[0], pw: c.Padding[1], dh: max(c.Dilation[0], 1), dw: max(c.Dilation[1], 1),
		groups: g, cinG: c.In.C / g, coutG: c.Out.C / g, hasBias: c.Bias,
	}
	if l.kh < 1 || l.kw < 1 {
		return nil, unsupportedf("conv2d kernel %v must be at least 1×1", c.Kernel)
	}
	if wantH := (l.h+2*l.ph-l.dh*(l.kh-1)-1)/l.sh + 1; wantH != l.oh {
		return nil, unsupportedf("conv2d output height %d does not follow from its input (%d)", l.oh, wantH)
	}
	if wantW := (l.w+2*l.pw-l.dw*(l.kw-1)-1)/l.sw + 1; wantW != l.ow {
		return nil, unsupportedf("conv2d output width %d does not follow from its input (%d)", l.ow, wantW)
	}
	l.k, l.p = l.cinG*l.kh*l.kw, l.oh*l.ow
	l.weight = newParam(l.cout*l.k, l.k)
	if l.hasBias {
		l.bias = newParam(l.cout, 0)
	}
	if !l.depthwise() {
		l.chunk = convChunk(l.k, l.p, batch)
		l.col = make([]float32, l.k*l.chunk*l.p)
		l.buf = make([]float32, l.coutG*l.chunk*l.p)
	}
	return l, nil
}

// convChunk is how many samples an im2col chunk holds: as many as colBudget allows, at
// least one (a large image's one sample may exceed the budget: scratchBytes counts it).
func convChunk(k, p, batch int) int { return max(1, min(batch, colBudget/max(k*p, 1))) }

func (l *conv) depthwise() bool { return l.cinG == 1 && l.coutG == 1 }

func (l *conv) params() []*param {
	if l.hasBias {
		return []*param{&l.weight, &l.bias}
	}
	return []*param{&l.weight}
}

// im2col writes the patches of samples [n0, n0+nc) and group gi into l.col, laid out
// as k rows of nc·p columns.
func (l *conv) im2col(x []float32, n0, nc, gi int) {
	cols := nc * l.p
	parallelFor(l.k, 4, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			ci, kk := r/(l.kh*l.kw), r%(l.kh*l.kw)
			ki, kj := kk/l.kw, kk%l.kw
			row := l.col[r*cols : (r+1)*cols]
			for j := 0; j < nc; j++ {
				plane := x[((n0+j)*l.cin+gi*l.cinG+ci)*l.h*l.w:][:l.h*l.w]
				out := row[j*l.p : (j+1)*l.p]
				for oy := 0; oy < l.oh; oy++ {
					iy := oy*l.sh - l.ph + ki*l.dh
					dst := out[oy*l.ow : (oy+1)*l.ow]
					if iy < 0 || iy >= l.h {
						clear(dst)
						continue
					}
					src := plane[iy*l.w : (iy+1)*l.w]
					for ox := range dst {
						ix := ox*l.sw - l.pw + kj*l.dw
						if ix >= 0 && ix < l.w {
							dst[ox] = src[ix]
						} else {
							dst[ox] = 0
						}
					}
				}
			}
		}
	})
}

// col2im adds the patch gradients in l.col back into dx for samples [n0, n0+nc) of group gi.
func (l *conv) col2im(dx []float32, n0, nc, gi int) {
	cols := nc * l.p
	parallelFor(nc*l.cinG, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			j, ci := t/l.cinG, t%l.cinG
			plane := dx[((n0+j)*l.cin+gi*l.cinG+ci)*l.h*l.w:][:l.h*l.w]
			for kk := 0; kk < l.kh*l.kw; kk++ {
				ki, kj := kk/l.kw, kk%l.kw
				src := l.col[(ci*l.kh*l.kw+kk)*cols+j*l.p:][:l.p]
				for oy := 0; oy < l.oh; oy++ {
					iy := oy*l.sh - l.ph + ki*l.dh
					if iy < 0 || iy >= l.h {
						continue
					}
					row := plane[iy*l.w : (iy+1)*l.w]
					for ox := 0; ox < l.ow; ox++ {
						if ix := ox*l.sw - l.pw + kj*l.dw; ix >= 0 && ix < l.w {
							row[ix] += src[oy*l.ow+ox]
						}
					}
				}
			}
		}
	})
}

// gather copies the output-shaped tensor t (N×C×P) for samples [n0, n0+nc) and group gi
// into l.buf as coutG rows of nc·p columns; scatter is its inverse.
func (l *conv) gather(t []float32, n0, nc, gi int) {
	cols := nc * l.p
	for co := 0; co < l.coutG; co++ {
		for j := 0; j < nc; j++ {
			copy(l.buf[co*cols+j*l.p:][:l.p], t[((n0+j)*l.cout+gi*l.coutG+co)*l.p:][:l.p])
		}
	}
}

func (l *conv) scatter(t []float32, n0, nc, gi int) {
	cols := nc * l.p
	for co := 0; co < l.coutG; co++ {
		var b float32
		if l.hasBias {
			b = l.bias.w[gi*l.coutG+co]
		}
		for j := 0; j < nc; j++ {
			dst := t[((n0+j)*l.cout+gi*l.coutG+co)*l.p:][:l.p]
			src := l.buf[co*cols+j*l.p:][:l.p]
			for i := range dst {
				dst[i] = src[i] + b
			}
		}
	}
}

func (l *conv) forward(xs [][]float32, y []float32) {
	x := xs[0]
	if l.depthwise() {
		l.forwardDepthwise(x, y)
		return
	}
	for n0 := 0; n0 < l.n; n0 += l.chunk {
		nc := min(l.chunk, l.n-n0)
		for gi := 0; gi < l.groups; gi++ {
			l.im2col(x, n0, nc, gi)
			wg := l.weight.w[gi*l.coutG*l.k:][:l.coutG*l.k]
			sgemm.Sgemm(blas.NoTrans, blas.NoTrans, l.coutG, nc*l.p, l.k, 1, wg, l.k, l.col, nc*l.p, 0, l.buf, nc*l.p)
			l.scatter(y, n0, nc, gi)
		}
	}
}

func (l *conv) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	dx := dxs[0]
	if dx == nil {
		return
	}
	if l.depthwise() {
		l.backwardDataDepthwise(dy, dx)
		return
	}
	for n0 := 0; n0 < l.n; n0 += l.chunk {
		nc := min(l.chunk, l.n-n0)
		for gi := 0; gi < l.groups; gi++ {
			l.gather(dy, n0, nc, gi)
			wg := l.weight.w[gi*l.coutG*l.k:][:l.coutG*l.k]
			sgemm.Sgemm(blas.Trans, blas.NoTrans, l.k, nc*l.p, l.coutG, 1, wg, l.k, l.buf, nc*l.p, 0, l.col, nc*l.p)
			l.col2im(dx, n0, nc, gi)
		}
	}
}

func (l *conv) backwardWeights(xs [][]float32, y, dy []float32) {
	x := xs[0]
	if l.depthwise() {
		l.backwardWeightsDepthwise(x, dy)
	} else {
		for n0 := 0; n0 < l.n; n0 += l.chunk {
			nc := min(l.chunk, l.n-n0)
			for gi := 0; gi < l.groups; gi++ {
				l.im2col(x, n0, nc, gi)
				l.gather(dy, n0, nc, gi)
				dwg := l.weight.g[gi*l.coutG*l.k:][:l.coutG*l.k]
				sgemm.Sgemm(blas.NoTrans, blas.Trans, l.coutG, l.k, nc*l.p, 1, l.buf, nc*l.p, l.col, nc*l.p, 1, dwg, l.k)
			}
		}
	}
	if l.hasBias {
		for n := 0; n < l.n; n++ {
			for c := 0; c < l.cout; c++ {
				var s float32
				for _, v := range dy[(n*l.cout+c)*l.p:][:l.p] {
					s += v
				}
				l.bias.g[c] += s
			}
		}
	}
}

// oxRange is the range of output columns whose input column ox·sw − pw + kj·dw lies
// inside the image, so the depthwise loops below run without bounds checks.
func (l *conv) oxRange(kj int) (lo, hi int) {
	off := kj*l.dw - l.pw // ix = ox·sw + off
	lo = 0
	if off < 0 {
		lo = (-off + l.sw - 1) / l.sw
	}
	hi = 0
	if l.w-1-off >= 0 {
		hi = min((l.w-1-off)/l.sw+1, l.ow)
	}
	return lo, max(hi, lo)
}

func (l *conv) forwardDepthwise(x, y []float32) {
	parallelFor(l.n*l.cout, 8, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			c := t % l.cout
			in := x[t*l.h*l.w:][:l.h*l.w]
			out := y[t*l.p:][:l.p]
			wt := l.weight.w[c*l.kh*l.kw:][:l.kh*l.kw]
			var b float32
			if l.hasBias {
				b = l.bias.w[c]
			}
			for i := range out {
				out[i] = b
			}
			for oy := 0; oy < l.oh; oy++ {
				row := out[oy*l.ow : (oy+1)*l.ow]
				for ki := 0; ki < l.kh; ki++ {
					iy := oy*l.sh - l.ph + ki*l.dh
					if iy < 0 || iy >= l.h {
						continue
					}
					src := in[iy*l.w : (iy+1)*l.w]
					for kj := 0; kj < l.kw; kj++ {
						wv, off := wt[ki*l.kw+kj], kj*l.dw-l.pw
						a, z := l.oxRange(kj)
						for ox := a; ox < z; ox++ {
							row[ox] += wv * src[ox*l.sw+off]
						}
					}
				}
			}
		}
	})
}

func (l *conv) backwardDataDepthwise(dy, dx []float32) {
	parallelFor(l.n*l.cout, 8, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			c := t % l.cout
			g := dy[t*l.p:][:l.p]
			out := dx[t*l.h*l.w:][:l.h*l.w]
			wt := l.weight.w[c*l.kh*l.kw:][:l.kh*l.kw]
			for oy := 0; oy < l.oh; oy++ {
				grow := g[oy*l.ow : (oy+1)*l.ow]
				for ki := 0; ki < l.kh; ki++ {
					iy := oy*l.sh - l.ph + ki*l.dh
					if iy < 0 || iy >= l.h {
						continue
					}
					dst := out[iy*l.w : (iy+1)*l.w]
					for kj := 0; kj < l.kw; kj++ {
						wv, off := wt[ki*l.kw+kj], kj*l.dw-l.pw
						a, z := l.oxRange(kj)
						for ox := a; ox < z; ox++ {
							dst[ox*l.sw+off] += wv * grow[ox]
						}
					}
				}
			}
		}
	})
}

func (l *conv) backwardWeightsDepthwise(x, dy []float32) {
	parallelFor(l.cout, 2, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			dw := l.weight.g[c*l.kh*l.kw:][:l.kh*l.kw]
			for n := 0; n < l.n; n++ {
				t := n*l.cout + c
				in := x[t*l.h*l.w:][:l.h*l.w]
				g := dy[t*l.p:][:l.p]
				for oy := 0; oy < l.oh; oy++ {
					grow := g[oy*l.ow : (oy+1)*l.ow]
					for ki := 0; ki < l.kh; ki++ {
						iy := oy*l.sh - l.ph + ki*l.dh
						if iy < 0 || iy >= l.h {
							continue
						}
						src := in[iy*l.w : (iy+1)*l.w]
						for kj := 0; kj < l.kw; kj++ {
							off := kj*l.dw - l.pw
							a, z := l.oxRange(kj)
							var s float32
							for ox := a; ox < z; ox++ {
								s += grow[ox] * src[ox*l.sw+off]
							}
							dw[ki*l.kw+kj] += s
						}
					}
				}
			}
		}
	})
}
