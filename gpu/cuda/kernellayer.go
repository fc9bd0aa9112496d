//go:build cuda

package cuda

import (
	"errors"
	"fmt"

	"cnntime/gpu/cpu"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// kernelLayer runs a memory-bound op through cnntime's own kernels. A nil phase
// function is a phase the op does not have (PyTorch runs no kernel for it).
type kernelLayer struct {
	mem
	fwd, bwdData, bwdWeights func() error
	// io, for the kinds the self-test reads back, names the buffers a phase reads from
	// and writes to, beside the CPU reference's values of them.
	io func(phase measure.Phase, r *cpu.Reference) (ins, outs []transfer)
}

func (l *kernelLayer) phase(p measure.Phase) func() error {
	switch p {
	case measure.Forward:
		return l.fwd
	case measure.BackwardData:
		return l.bwdData
	case measure.BackwardWeights:
		return l.bwdWeights
	}
	return nil
}

func (l *kernelLayer) prepare(p measure.Phase) (string, int64, error) {
	if l.phase(p) == nil {
		return "", 0, errUnsupported
	}
	if p != measure.Forward && l.fwd != nil {
		if err := l.fwd(); err != nil { // saves what the backward pass reads (argmax, statistics)
			return "", 0, err
		}
	}
	return "cnntime-kernel", 0, nil
}

func (l *kernelLayer) run(p measure.Phase) error { return l.phase(p)() }

// errNotReadBack marks a layer kind whose results the self-test does not compare.
var errNotReadBack = errors.New("not read back")

func (l *kernelLayer) check(phase measure.Phase, r *cpu.Reference) ([][]float32, [][]float32, error) {
	if l.io == nil {
		return nil, nil, errNotReadBack
	}
	ins, outs := l.io(phase, r)
	return runChecked(l, phase, ins, outs)
}

// activation codes of the act_fwd and act_bwd kernels.
var activationCode = map[cnn.Op]int64{
	cnn.OpReLU: 0, cnn.OpReLU6: 1, cnn.OpSiLU: 2, cnn.OpHardswish: 3, cnn.OpHardsigmoid: 4, cnn.OpSigmoid: 5, cnn.OpGELU: 6,
}

func (b *Backend) newKernelLayer(c cnn.Config, batch int, half bool) (layer, error) {
	if b.kernelsErr != nil {
		return nil, fmt.Errorf("%w: %s needs cnntime's own kernels, and %v", errUnsupported, c.Op, b.kernelsErr)
	}
	l := &kernelLayer{mem: mem{half: half}}
	k := b.k32
	if half {
		k = b.k16
	}
	n := int64(batch)
	in, out := n*c.In.Elems(), n*c.Out.Elems()
	plane := int64(c.In.H * c.In.W)
	var err error
	t := func(elems int64) uint64 {
		if err != nil {
			return 0
		}
		var p uint64
		p, err = l.tensor(elems)
		return p
	}
	f := func(elems int64) uint64 {
		if err != nil {
			return 0
		}
		var p uint64
		p, err = l.floats(elems)
		return p
	}
	switch c.Op {
	case cnn.OpReLU, cnn.OpReLU6, cnn.OpSiLU, cnn.OpHardswish, cnn.OpHardsigmoid, cnn.OpSigmoid, cnn.OpGELU:
		code := activationCode[c.Op]
		x, y, dy, dx := t(in), t(out), t(out), t(in)
		l.fwd = func() error { return k.launch("act_fwd", out, code, x, y, out) }
		l.bwdData = func() error { return k.launch("act_bwd", out, code, x, dy, dx, out) }
		l.io = func(p measure.Phase, r *cpu.Reference) ([]transfer, []transfer) {
			ins := []transfer{{x, r.Inputs[0], half}, {dy, r.DY, half}}
			if p == measure.Forward {
				return ins, []transfer{{y, r.Y, half}}
			}
			return ins, []transfer{{dx, r.DX[0], half}}
		}
	case cnn.OpAdd:
		a, bb, y := t(in), t(in), t(out)
		inputs := max(c.NumInputs, 2)
		if inputs == 2 {
			l.io = func(p measure.Phase, r *cpu.Reference) ([]transfer, []transfer) {
				return []transfer{{a, r.Inputs[0], half}, {bb, r.Inputs[1], half}}, []transfer{{y, r.Y, half}}
			}
		}
		l.fwd = func() error {
			for i := 1; i < inputs; i++ {
				src := a
				if i > 1 {
					src = y
				}
				if err := k.launch("binary", out, int64(0), src, bb, y, out, int64(1), int64(1)); err != nil {
					return err
				}
			}
			return nil
		}
	case cnn.OpMul: // x · s, s per (sample, channel) as in squeeze-and-excitation
		x, s, y, dy, dx := t(in), t(n*int64(c.In.C)), t(out), t(out), t(in)
		ds := f(n * int64(c.In.C))
		l.io = func(p measure.Phase, r *cpu.Reference) ([]transfer, []transfer) {
			ins := []transfer{{x, r.Inputs[0], half}, {s, r.Inputs[1], half}, {dy, r.DY, half}}
			if p == measure.Forward {
				return ins, []transfer{{y, r.Y, half}}
			}
			return ins, []transfer{{dx, r.DX[0], half}, {ds, r.DX[1], false}}
		}
		l.fwd = func() error { return k.launch("binary", out, int64(1), x, s, y, out, plane, int64(1)) }
		l.bwdData = func() error {
			if err := k.launch("binary", out, int64(1), dy, s, dx, out, plane, int64(1)); err != nil {
				return err
			}
			return k.launch("plane_dot", n*int64(c.In.C), dy, x, ds, n*int64(c.In.C), plane)
		}
	case cnn.OpScale:
		x, g, y, dy, dx := t(in), t(int64(c.In.C)), t(out), t(out), t(in)
		dg := f(n * int64(c.In.C))
		l.fwd = func() error { return k.launch("binary", out, int64(2), x, g, y, out, plane, int64(c.In.C)) }
		l.bwdData = func() error { return k.launch("binary", out, int64(2), dy, g, dx, out, plane, int64(c.In.C)) }
		l.bwdWeights = func() error { return k.launch("plane_dot", n*int64(c.In.C), dy, x, dg, n*int64(c.In.C), plane) }
	case cnn.OpConcat:
		inputs := int64(max(c.NumInputs, 1))
		per := c.In.Elems() / inputs
		x, y := t(n*per), t(out)
		l.fwd = func() error {
			for i := int64(0); i < inputs; i++ {
				if err := k.launch("copy_runs", n*per, x, y, n, per, int64(0), c.Out.Elems(), i*per, per); err != nil {
					return err
				}
			}
			return nil
		}
	case cnn.OpChannelShuffle:
		g := int64(max(c.Groups, 2))
		x, y, dy, dx := t(in), t(out), t(out), t(in)
		cpg := int64(c.In.C) / g
		l.fwd = func() error { return k.launch("transpose", in, x, y, n, g, cpg, plane) }
		l.bwdData = func() error { return k.launch("transpose", in, dy, dx, n, cpg, g, plane) }
		l.io = func(p measure.Phase, r *cpu.Reference) ([]transfer, []transfer) {
			ins := []transfer{{x, r.Inputs[0], half}, {dy, r.DY, half}}
			if p == measure.Forward {
				return ins, []transfer{{y, r.Y, half}}
			}
			return ins, []transfer{{dx, r.DX[0], half}}
		}
	case cnn.OpPermute:
		x, y, dy, dx := t(in), t(out), t(out), t(in)
		l.fwd = func() error { return k.launch("transpose", in, x, y, n, int64(c.In.C), plane, int64(1)) }
		l.bwdData = func() error { return k.launch("transpose", in, dy, dx, n, plane, int64(c.In.C), int64(1)) }
	case cnn.OpDropout, cnn.OpStochasticDepth:
		row, p := int64(1), 0.5
		if c.Op == cnn.OpStochasticDepth {
			row, p = c.In.Elems(), 0.1
		}
		x, y, dy, dx := t(in), t(out), t(out), t(in)
		seed := int64(0)
		l.fwd = func() error { seed++; return k.launch("drop", in, x, y, in, row, p, seed) }
		l.bwdData = func() error { return k.launch("drop", in, dy, dx, in, row, p, seed) }
	case cnn.OpMaxPool, cnn.OpAvgPool, cnn.OpAdaptiveAvg:
		mode := map[cnn.Op]int64{cnn.OpMaxPool: 0, cnn.OpAvgPool: 1, cnn.OpAdaptiveAvg: 2}[c.Op]
		x, y, dy, dx := t(in), t(out), t(out), t(in)
		var arg uint64
		if err == nil {
			arg, err = l.alloc(out * 8)
		}
		planes := n * int64(c.In.C)
		geo := []any{planes, int64(c.In.H), int64(c.In.W), int64(c.Out.H), int64(c.Out.W),
			int64(c.Kernel[0]), int64(c.Kernel[1]), int64(max(c.Stride[0], 1)), int64(max(c.Stride[1], 1)), int64(c.Padding[0]), int64(c.Padding[1])}
		l.fwd = func() error { return k.launch("pool_fwd", out, append([]any{mode, x, y, arg}, geo...)...) }
		l.bwdData = func() error { return k.launch("pool_bwd", in, append([]any{mode, dy, arg, dx}, geo...)...) }
	case cnn.OpLayerNorm:
		rows, ch := n*plane, int64(c.In.C)
		x, y, dy, dx := t(in), t(out), t(out), t(in)
		g, bias, mean, rstd, dg, db := f(ch), f(ch), f(rows), f(rows), f(ch), f(ch)
		l.fwd = func() error { return k.launch("rownorm_fwd", rows, x, g, bias, y, mean, rstd, rows, ch) }
		l.bwdData = func() error { return k.launch("rownorm_bwd", rows, x, g, dy, mean, rstd, dx, rows, ch) }
		l.bwdWeights = func() error { return k.launch("rownorm_wgrad", ch, x, dy, mean, rstd, dg, db, rows, ch) }
		l.io = func(p measure.Phase, r *cpu.Reference) ([]transfer, []transfer) {
			ins := []transfer{{x, r.Inputs[0], half}, {g, r.Params[0], false}, {bias, r.Params[1], false}, {dy, r.DY, half}}
			switch p {
			case measure.Forward:
				return ins, []transfer{{y, r.Y, half}}
			case measure.BackwardData:
				return ins, []transfer{{dx, r.DX[0], half}}
			}
			return ins, []transfer{{dg, r.DParams[0], false}, {db, r.DParams[1], false}}
		}
	case cnn.OpLoss:
		classes := c.In.Elems()
		x, dx := t(in), t(in)
		prob, loss := f(in), f(n)
		l.fwd = func() error { return k.launch("xent_fwd", n, x, prob, loss, n, classes) }
		l.bwdData = func() error { return k.launch("xent_bwd", in, prob, dx, n, classes) }
	default: // flatten and slice are views; anything else has no kernel here
		return l, errUnsupported
	}
	return l, err
}
