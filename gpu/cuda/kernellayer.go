//go:build cuda

package cuda

import (
	"errors"
	"fmt"

	"cnntime/gpu/convalgo"
	"cnntime/gpu/cpu"
	"cnntime/gpu/cudakern"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// kernelLayer runs a memory-bound op through cnntime's own kernels: package cudakern's
// program for it (buffers, launches per phase, the self-test's transfers) on this GPU.
type kernelLayer struct {
	mem
	prog *cudakern.Instance
}

func (b *Backend) newKernelLayer(c cnn.Config, batch int, dt convalgo.Data) (layer, error) {
	if b.kernelsErr != nil {
		return nil, fmt.Errorf("%w: %s needs cnntime's own kernels, and %v", errUnsupported, c.Op, b.kernelsErr)
	}
	p, err := cudakern.Build(c, batch, b.device.SMs)
	if errors.Is(err, cudakern.ErrNoKernel) || errors.Is(err, cudakern.ErrTooLarge) { // a view (flatten, slice), a layer with no kernel here, or over 2^31 elements
		return nil, fmt.Errorf("%w: %v", errUnsupported, err)
	}
	if err != nil {
		return nil, err
	}
	k := b.k32
	switch dt {
	case convalgo.Half:
		k = b.k16
	case convalgo.BFloat16:
		k = b.kbf
	}
	l := &kernelLayer{mem: mem{dt: dt}}
	addrs := make([]uint64, len(p.Buffers))
	for i, buf := range p.Buffers {
		switch buf.Elem {
		case cudakern.Data:
			addrs[i], err = l.tensor(buf.Elems)
		case cudakern.Float:
			addrs[i], err = l.floats(buf.Elems)
		default: // written before it is read (max pooling's winners)
			addrs[i], err = l.alloc(buf.Elems * buf.Elem.Bytes(dt != convalgo.Float))
		}
		if err != nil {
			return l, err
		}
	}
	l.prog = &cudakern.Instance{Program: p, Addrs: addrs, Launch: k.launch}
	return l, nil
}

func (l *kernelLayer) prepare(p measure.Phase) (string, int64, error) {
	if !l.prog.Has(p) {
		return "", 0, errUnsupported // PyTorch runs no kernel for this phase
	}
	if err := l.prog.Prepare(p); err != nil {
		return "", 0, err
	}
	return "cnntime-kernel", 0, nil
}

func (l *kernelLayer) run(p measure.Phase) error { return l.prog.Run(p) }

func (l *kernelLayer) phaseBytes(p measure.Phase) int64 {
	return l.prog.Program.PhaseBytes(p, l.dt != convalgo.Float)
}

func (l *kernelLayer) phaseInput(p measure.Phase) (uint64, int64) {
	in := l.prog.Program.PhaseInput(p)
	if in < 0 {
		return 0, 0
	}
	buf := l.prog.Program.Buffers[in]
	return l.prog.Addrs[in], buf.Elems * buf.Elem.Bytes(l.dt != convalgo.Float)
}

// check uploads the reference's values into the program's buffers, runs the phase and
// reads back what the program names for it.
func (l *kernelLayer) check(phase measure.Phase, r *cpu.Reference) ([][]float32, [][]float32, error) {
	p := l.prog.Program
	transfers := func(ts []cudakern.Transfer) ([]transfer, error) {
		var out []transfer
		for _, t := range ts {
			v, err := t.Values(r)
			if err != nil {
				return nil, err
			}
			dt := convalgo.Float // parameters, statistics, partial sums
			if p.Buffers[t.Buf].Elem == cudakern.Data {
				dt = l.dt
			}
			out = append(out, transfer{l.prog.Addrs[t.Buf], v, dt})
		}
		return out, nil
	}
	ins, err := transfers(p.In)
	if err != nil {
		return nil, nil, err
	}
	outs, err := transfers(p.Out[phase])
	if err != nil {
		return nil, nil, err
	}
	if len(outs) == 0 {
		return nil, nil, errNotReadBack
	}
	return runChecked(l, phase, ins, outs)
}

// errNotReadBack marks a layer phase whose results the self-test does not compare.
var errNotReadBack = errors.New("not read back")
