package cpu

import (
	"math"

	"cnntime/predictor/cnn"
)

// pool is max or average pooling over kernel windows (average counts padding, as
// PyTorch's default count_include_pad=True does).
type pool struct {
	noWeights
	isMax                  bool
	n, c, h, w, oh, ow     int
	kh, kw, sh, sw, ph, pw int
	argmax                 []int32
}

func newPool(c cnn.Config, batch int, isMax bool) (*pool, error) {
	p := &pool{
		isMax: isMax, n: batch, c: c.In.C, h: c.In.H, w: c.In.W, oh: c.Out.H, ow: c.Out.W,
		kh: c.Kernel[0], kw: c.Kernel[1], sh: c.Stride[0], sw: c.Stride[1], ph: c.Padding[0], pw: c.Padding[1],
	}
	if p.kh < 1 || p.kw < 1 {
		return nil, unsupportedf("%s kernel %v must be at least 1×1", c.Op, c.Kernel)
	}
	if p.sh < 1 {
		p.sh = p.kh
	}
	if p.sw < 1 {
		p.sw = p.kw
	}
	return p, nil
}

func (p *pool) forward(xs [][]float32, y []float32) {
	x := xs[0]
	if p.isMax && p.argmax == nil {
		p.argmax = make([]int32, len(y))
	}
	area := float32(p.kh * p.kw)
	parallelFor(p.n*p.c, 8, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			in := x[t*p.h*p.w:][:p.h*p.w]
			for oy := 0; oy < p.oh; oy++ {
				for ox := 0; ox < p.ow; ox++ {
					best, arg := float32(math.Inf(-1)), int32(-1)
					var sum float32
					for ki := 0; ki < p.kh; ki++ {
						iy := oy*p.sh - p.ph + ki
						if iy < 0 || iy >= p.h {
							continue
						}
						for kj := 0; kj < p.kw; kj++ {
							ix := ox*p.sw - p.pw + kj
							if ix < 0 || ix >= p.w {
								continue
							}
							v := in[iy*p.w+ix]
							sum += v
							if v > best {
								best, arg = v, int32(iy*p.w+ix)
							}
						}
					}
					o := t*p.oh*p.ow + oy*p.ow + ox
					if p.isMax {
						y[o], p.argmax[o] = best, arg
					} else {
						y[o] = sum / area
					}
				}
			}
		}
	})
}

func (p *pool) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	dx := dxs[0]
	if dx == nil {
		return
	}
	area := float32(p.kh * p.kw)
	parallelFor(p.n*p.c, 8, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			plane := dx[t*p.h*p.w:][:p.h*p.w]
			for o := t * p.oh * p.ow; o < (t+1)*p.oh*p.ow; o++ {
				if p.isMax {
					if a := p.argmax[o]; a >= 0 {
						plane[a] += dy[o]
					}
					continue
				}
				r := o - t*p.oh*p.ow
				oy, ox := r/p.ow, r%p.ow
				g := dy[o] / area
				for ki := 0; ki < p.kh; ki++ {
					iy := oy*p.sh - p.ph + ki
					if iy < 0 || iy >= p.h {
						continue
					}
					for kj := 0; kj < p.kw; kj++ {
						if ix := ox*p.sw - p.pw + kj; ix >= 0 && ix < p.w {
							plane[iy*p.w+ix] += g
						}
					}
				}
			}
		}
	})
}

// adaptiveAvg averages PyTorch's adaptive bins: output cell i covers input rows
// floor(i·H/OH) to ceil((i+1)·H/OH).
type adaptiveAvg struct {
	noWeights
	n, c, h, w, oh, ow int
}

func (a *adaptiveAvg) bins(i, in, out int) (int, int) {
	return i * in / out, ((i+1)*in + out - 1) / out
}

func (a *adaptiveAvg) forward(xs [][]float32, y []float32) {
	for t := 0; t < a.n*a.c; t++ {
		in := xs[0][t*a.h*a.w:][:a.h*a.w]
		for oy := 0; oy < a.oh; oy++ {
			y0, y1 := a.bins(oy, a.h, a.oh)
			for ox := 0; ox < a.ow; ox++ {
				x0, x1 := a.bins(ox, a.w, a.ow)
				var s float32
				for iy := y0; iy < y1; iy++ {
					for _, v := range in[iy*a.w+x0 : iy*a.w+x1] {
						s += v
					}
				}
				y[(t*a.oh+oy)*a.ow+ox] = s / float32((y1-y0)*(x1-x0))
			}
		}
	}
}

func (a *adaptiveAvg) backwardData(xs [][]float32, y, dy []float32, dxs [][]float32) {
	if dxs[0] == nil {
		return
	}
	for t := 0; t < a.n*a.c; t++ {
		plane := dxs[0][t*a.h*a.w:][:a.h*a.w]
		for oy := 0; oy < a.oh; oy++ {
			y0, y1 := a.bins(oy, a.h, a.oh)
			for ox := 0; ox < a.ow; ox++ {
				x0, x1 := a.bins(ox, a.w, a.ow)
				g := dy[(t*a.oh+oy)*a.ow+ox] / float32((y1-y0)*(x1-x0))
				for iy := y0; iy < y1; iy++ {
					for ix := x0; ix < x1; ix++ {
						plane[iy*a.w+ix] += g
					}
				}
			}
		}
	}
}
