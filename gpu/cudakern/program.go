package cudakern

import (
	"errors"
	"fmt"
	"math"

	"cnntime/gpu/cpu"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// ErrNoKernel is returned by Build for a configuration these kernels do not run: a view
// (flatten, slice), or a layer for cuDNN or cuBLAS.
var ErrNoKernel = errors.New("no kernel of cnntime's own")

// Elem is a buffer's element type.
type Elem int

const (
	Data  Elem = iota // the layer's data: FP32, or FP16 under mixed precision
	Float             // FP32 whatever the precision: parameters, statistics, partial sums
	Index             // int64: max pooling's winners
)

// Bytes is the size of one element; half says whether Data is FP16.
func (e Elem) Bytes(half bool) int64 {
	switch {
	case e == Index:
		return 8
	case e == Data && half:
		return 2
	}
	return 4
}

// Buffer is one device allocation of a program.
type Buffer struct {
	Name  string
	Elem  Elem
	Elems int64
}

// Buf is a launch argument: the address of the program's buffer of that index.
type Buf int

// Seed is a launch argument: the dropout seed, which each forward run advances.
type Seed struct{}

// Div is a launch argument: a divisor the kernel divides indices by, passed with its
// magic number (PackDivisor) so that no 64-bit division runs per element.
type Div int64

// MaxIndex bounds every index a launch computes (and so every buffer's elements): the
// kernels index in 32 bits, as PyTorch's do where a tensor allows it.
const MaxIndex = 1<<31 - 1

// ErrTooLarge is returned by Build for a configuration whose tensors have more than
// MaxIndex elements at that batch: the worker records it unsupported, as cuDNN's
// legacy API does such convolutions.
var ErrTooLarge = errors.New("more than 2^31 elements in one tensor")

// PackDivisor packs a divisor d (1 ≤ d ≤ MaxIndex) with its magic number m, the
// smallest for which n / d = (⌊n·m / 2^32⌋ + n) >> s for every n < 2^31, s = ⌈log2 d⌉
// (Granlund and Montgomery's method, as PyTorch's IntDivider): m in the high 32 bits,
// d in the low ones.
func PackDivisor(d int64) (uint64, error) {
	if d < 1 || d > MaxIndex {
		return 0, fmt.Errorf("divisor %d is out of 1..2^31-1", d)
	}
	s := uint(0)
	for int64(1)<<s < d {
		s++
	}
	m := (uint64(1)<<32)*(uint64(1)<<s-uint64(d))/uint64(d) + 1
	return m<<32 | uint64(d), nil
}

// From names a value of the CPU reference (cpu.Reference).
type From int

const (
	Input      From = iota // Inputs[Index]
	Param                  // Params[Index]
	OutputGrad             // DY
	Output                 // Y
	InputGrad              // DX[Index]
	ParamGrad              // DParams[Index]
)

// Transfer pairs a buffer with the reference's value of it (its first Len elements, or
// all when Len is 0).
type Transfer struct {
	Buf   Buf
	From  From
	Index int
	Len   int64
}

// Values returns the reference's value of the transfer.
func (t Transfer) Values(r *cpu.Reference) ([]float32, error) {
	var list [][]float32
	switch t.From {
	case Input:
		list = r.Inputs
	case Param:
		list = r.Params
	case InputGrad:
		list = r.DX
	case ParamGrad:
		list = r.DParams
	case OutputGrad:
		list = [][]float32{r.DY}
	case Output:
		list = [][]float32{r.Y}
	}
	if t.Index < 0 || t.Index >= len(list) {
		return nil, fmt.Errorf("the CPU reference has no value %d of kind %d", t.Index, t.From)
	}
	v := list[t.Index]
	if t.Len > 0 {
		if t.Len > int64(len(v)) {
			return nil, fmt.Errorf("the CPU reference's value %d of kind %d has %d elements, not %d", t.Index, t.From, len(v), t.Len)
		}
		v = v[:t.Len]
	}
	return v, nil
}

// Program is one layer configuration at one batch size as these kernels run it.
type Program struct {
	Buffers []Buffer
	// Phases holds each phase's launches; a phase the layer does not have is absent.
	Phases map[measure.Phase][]Launch
	// In are the reference values the self-test uploads before any phase, Out the
	// results it reads back after each (absent: not compared).
	In  []Transfer
	Out map[measure.Phase][]Transfer
}

// activationCode are the op codes of act_fwd and act_bwd.
var activationCode = map[cnn.Op]int64{
	cnn.OpReLU: 0, cnn.OpReLU6: 1, cnn.OpSiLU: 2, cnn.OpHardswish: 3, cnn.OpHardsigmoid: 4, cnn.OpSigmoid: 5, cnn.OpGELU: 6,
}

// Dropout probabilities, as torchvision's models use them: the classifier's dropout, and
// stochastic depth's (ConvNeXt-T's largest).
const (
	DropoutP        = 0.5
	StochasticDepth = 0.1
)

// DropThreshold is the hash value below which the drop kernel drops a unit: p · 2^24.
func DropThreshold(p float64) int64 { return int64(math.Round(p * (1 << 24))) }

// Build returns the program of configuration c at a batch size on a GPU of sms SMs.
func Build(c cnn.Config, batch, sms int) (*Program, error) {
	if batch < 1 {
		return nil, fmt.Errorf("%s at batch %d: the batch must be positive", c.Key(), batch)
	}
	p := &Program{Phases: map[measure.Phase][]Launch{}, Out: map[measure.Phase][]Transfer{}}
	buf := func(name string, e Elem, elems int64) Buf {
		p.Buffers = append(p.Buffers, Buffer{Name: name, Elem: e, Elems: elems})
		return Buf(len(p.Buffers) - 1)
	}
	n := int64(batch)
	in, out := n*c.In.Elems(), n*c.Out.Elems()
	plane, ch := int64(c.In.H*c.In.W), int64(c.In.C)
	fwd, bwdData, bwdWeights := measure.Forward, measure.BackwardData, measure.BackwardWeights
	io := func(ins []Transfer, outs map[measure.Phase][]Transfer) {
		p.In = ins
		for ph, t := range outs {
			p.Out[ph] = t
		}
	}
	switch c.Op {
	case cnn.OpReLU, cnn.OpReLU6, cnn.OpSiLU, cnn.OpHardswish, cnn.OpHardsigmoid, cnn.OpSigmoid, cnn.OpGELU:
		code := activationCode[c.Op]
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		if Vectorised(out) {
			p.Phases[fwd] = []Launch{vectorwise(sms, "act_fwd_v", out, 1, code, x, y, out)}
			p.Phases[bwdData] = []Launch{vectorwise(sms, "act_bwd_v", out, 2, code, x, dy, dx, out)}
		} else {
			p.Phases[fwd] = []Launch{elementwise(sms, "act_fwd", out, 1, code, x, y, out)}
			p.Phases[bwdData] = []Launch{elementwise(sms, "act_bwd", out, 2, code, x, dy, dx, out)}
		}
		io([]Transfer{{Buf: x, From: Input}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}}})
	case cnn.OpAdd:
		k := max(c.NumInputs, 2)
		xs := make([]Buf, k)
		ins := make([]Transfer, k)
		for i := range xs {
			xs[i] = buf(fmt.Sprintf("x%d", i), Data, in)
			ins[i] = Transfer{Buf: xs[i], From: Input, Index: i}
		}
		y := buf("y", Data, out)
		for i := 1; i < k; i++ {
			src := xs[0]
			if i > 1 {
				src = y
			}
			if Vectorised(out) {
				p.Phases[fwd] = append(p.Phases[fwd], vectorwise(sms, "add_v", out, 2, src, xs[i], y, out))
			} else {
				p.Phases[fwd] = append(p.Phases[fwd], elementwise(sms, "binary", out, 2, int64(0), src, xs[i], y, out, Div(1), Div(1)))
			}
		}
		io(ins, map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}})
	case cnn.OpMul: // x · s, s per (sample, channel) as in squeeze-and-excitation
		x, s, y, dy, dx := buf("x", Data, in), buf("s", Data, n*ch), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		ds := buf("ds", Float, n*ch)
		p.Phases[fwd] = []Launch{elementwise(sms, "binary", out, 2, int64(1), x, s, y, out, Div(plane), Div(1))}
		p.Phases[bwdData] = []Launch{
			elementwise(sms, "binary", out, 2, int64(1), dy, s, dx, out, Div(plane), Div(1)),
			rowwise(sms, "plane_dot", n*ch, plane, 2, dy, x, ds, n*ch, plane),
		}
		io([]Transfer{{Buf: x, From: Input}, {Buf: s, From: Input, Index: 1}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}},
				bwdData: {{Buf: dx, From: InputGrad}, {Buf: ds, From: InputGrad, Index: 1}}})
	case cnn.OpScale: // ConvNeXt's layer scale: x · γ per channel
		x, g, y, dy, dx := buf("x", Data, in), buf("gamma", Data, ch), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		part, dg := buf("dgamma per sample", Float, n*ch), buf("dgamma", Float, ch)
		p.Phases[fwd] = []Launch{elementwise(sms, "binary", out, 2, int64(2), x, g, y, out, Div(plane), Div(ch))}
		p.Phases[bwdData] = []Launch{elementwise(sms, "binary", out, 2, int64(2), dy, g, dx, out, Div(plane), Div(ch))}
		p.Phases[bwdWeights] = []Launch{
			rowwise(sms, "plane_dot", n*ch, plane, 2, dy, x, part, n*ch, plane),
			columnSum(sms, part, dg, n, ch, 1),
		}
		io([]Transfer{{Buf: x, From: Input}, {Buf: g, From: Param}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}},
				bwdWeights: {{Buf: dg, From: ParamGrad}}})
	case cnn.OpConcat:
		y := buf("y", Data, out)
		var ins []Transfer
		off := int64(0)
		for i, s := range cpu.InputShapes(c) {
			per := s.Elems()
			x := buf(fmt.Sprintf("x%d", i), Data, n*per)
			ins = append(ins, Transfer{Buf: x, From: Input, Index: i})
			p.Phases[fwd] = append(p.Phases[fwd], elementwise(sms, "copy_runs", n*per, 1, x, y, n, per, int64(0), c.Out.Elems(), off, Div(per)))
			off += per
		}
		io(ins, map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}})
	case cnn.OpChannelShuffle:
		g := int64(max(c.Groups, 2))
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		p.Phases[fwd] = []Launch{elementwise(sms, "transpose", in, 1, x, y, n, Div(g), Div(ch/g), Div(plane))}
		p.Phases[bwdData] = []Launch{elementwise(sms, "transpose", in, 1, dy, dx, n, Div(ch/g), Div(g), Div(plane))}
		io([]Transfer{{Buf: x, From: Input}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}}})
	case cnn.OpPermute: // channel-first to channel-last per sample, and back for the gradient
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		p.Phases[fwd] = []Launch{elementwise(sms, "transpose", in, 1, x, y, n, Div(ch), Div(plane), Div(1))}
		p.Phases[bwdData] = []Launch{elementwise(sms, "transpose", in, 1, dy, dx, n, Div(plane), Div(ch), Div(1))}
		io([]Transfer{{Buf: x, From: Input}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}}})
	case cnn.OpDropout, cnn.OpStochasticDepth:
		row, prob := int64(1), DropoutP
		if c.Op == cnn.OpStochasticDepth {
			row, prob = c.In.Elems(), StochasticDepth
		}
		threshold := DropThreshold(prob)
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		p.Phases[fwd] = []Launch{elementwise(sms, "drop", in, 1, x, y, in, Div(row), threshold, Seed{})}
		p.Phases[bwdData] = []Launch{elementwise(sms, "drop", in, 1, dy, dx, in, Div(row), threshold, Seed{})}
		io([]Transfer{{Buf: x, From: Input}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}}})
	case cnn.OpMaxPool, cnn.OpAvgPool, cnn.OpAdaptiveAvg:
		mode := map[cnn.Op]int64{cnn.OpMaxPool: 0, cnn.OpAvgPool: 1, cnn.OpAdaptiveAvg: 2}[c.Op]
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		arg := buf("argmax", Index, out)
		planes := n * ch
		h, w, oh, ow := int64(c.In.H), int64(c.In.W), int64(c.Out.H), int64(c.Out.W)
		kh, kw := int64(c.Kernel[0]), int64(c.Kernel[1])
		sh, sw := int64(max(c.Stride[0], 1)), int64(max(c.Stride[1], 1))
		geo := []any{planes, Div(h), Div(w), Div(oh), Div(ow), Div(h * w), Div(oh * ow), Div(sh), Div(sw), kh, kw, int64(c.Padding[0]), int64(c.Padding[1])}
		// What one output reads (its window) and one input gathers: the gradient (and
		// for max pooling the winner) of each window over it.
		window, over := kh*kw, ceilDiv(kh, sh)*ceilDiv(kw, sw)
		if mode == 0 {
			over *= 2
		}
		if mode == 2 {
			window = (ceilDiv(h, oh) + 1) * (ceilDiv(w, ow) + 1)
			over = (ceilDiv(oh, h) + 1) * (ceilDiv(ow, w) + 1)
		}
		if mode == 2 && oh == 1 && ow == 1 { // a global average: a reduction per plane
			p.Phases[fwd] = []Launch{rowwise(sms, "plane_mean", planes, h*w, 1, x, y, planes, h*w)}
		} else {
			p.Phases[fwd] = []Launch{elementwise(sms, "pool_fwd", out, window, append([]any{mode, x, y, arg}, geo...)...)}
		}
		p.Phases[bwdData] = []Launch{elementwise(sms, "pool_bwd", in, over, append([]any{mode, dy, arg, dx}, geo...)...)}
		io([]Transfer{{Buf: x, From: Input}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}}})
	case cnn.OpLayerNorm: // over the channels of each position (ConvNeXt's channels-last norm)
		rows := n * plane
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		g, b := buf("gamma", Float, ch), buf("beta", Float, ch)
		mean, rstd := buf("mean", Float, rows), buf("rstd", Float, rows)
		chunks := wgradChunks(sms, rows, ch)
		pg, pb := buf("dgamma per chunk", Float, chunks*ch), buf("dbeta per chunk", Float, chunks*ch)
		dg, db := buf("dgamma", Float, ch), buf("dbeta", Float, ch)
		p.Phases[fwd] = []Launch{rowwise(sms, "rownorm_fwd", rows, ch, 2, x, g, b, y, mean, rstd, rows, ch)}
		p.Phases[bwdData] = []Launch{rowwise(sms, "rownorm_bwd", rows, ch, 4, x, g, dy, mean, rstd, dx, rows, ch)}
		p.Phases[bwdWeights] = []Launch{
			wgrad(sms, rows, ch, chunks, x, dy, mean, rstd, pg, pb, rows, ch),
			columnSum(sms, pg, dg, chunks, ch, 1),
			columnSum(sms, pb, db, chunks, ch, 1),
		}
		io([]Transfer{{Buf: x, From: Input}, {Buf: g, From: Param}, {Buf: b, From: Param, Index: 1}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}}, bwdData: {{Buf: dx, From: InputGrad}},
				bwdWeights: {{Buf: dg, From: ParamGrad}, {Buf: db, From: ParamGrad, Index: 1}}})
	case cnn.OpBatchNorm: // training mode, as PyTorch's own kernels where cuDNN is not used (bf16)
		planes, count := n*ch, float64(n*plane)
		x, y, dy, dx := buf("x", Data, in), buf("y", Data, out), buf("dy", Data, out), buf("dx", Data, in)
		g, b := buf("gamma", Float, ch), buf("beta", Float, ch)
		mean, inv := buf("mean", Float, ch), buf("invstd", Float, ch)
		ps, pq := buf("sums per plane", Float, planes), buf("second sums per plane", Float, planes)
		dg, db := buf("dgamma", Float, ch), buf("dbeta", Float, ch)
		p.Phases[fwd] = []Launch{
			rowwise(sms, "plane_stats", planes, plane, 1, int64(0), x, dy, mean, ps, pq, planes, plane, Div(ch)),
			bnFinalize(sms, 0, ps, pq, mean, inv, dg, db, n, ch, count),
			elementwise(sms, "bn_apply", in, 1, int64(0), x, dy, mean, inv, g, b, ps, pq, y, in, Div(plane), Div(ch), count),
		}
		// One backward, the scale and shift gradients included, as cuDNN's and PyTorch's.
		p.Phases[bwdData] = []Launch{
			rowwise(sms, "plane_stats", planes, plane, 2, int64(1), x, dy, mean, ps, pq, planes, plane, Div(ch)),
			bnFinalize(sms, 1, ps, pq, mean, inv, dg, db, n, ch, count),
			elementwise(sms, "bn_apply", in, 2, int64(1), x, dy, mean, inv, g, b, ps, pq, dx, in, Div(plane), Div(ch), count),
		}
		io([]Transfer{{Buf: x, From: Input}, {Buf: g, From: Param}, {Buf: b, From: Param, Index: 1}, {Buf: dy, From: OutputGrad}},
			map[measure.Phase][]Transfer{fwd: {{Buf: y, From: Output}},
				bwdData: {{Buf: dx, From: InputGrad}, {Buf: dg, From: ParamGrad}, {Buf: db, From: ParamGrad, Index: 1}}})
	case cnn.OpLoss: // softmax cross-entropy, averaged over the batch
		classes := c.In.Elems()
		x, dx := buf("logits", Data, in), buf("dlogits", Data, in)
		prob, loss, mean := buf("softmax", Float, in), buf("loss per sample", Float, n), buf("loss", Float, 1)
		p.Phases[fwd] = []Launch{
			rowwise(sms, "xent_fwd", n, classes, 3, x, prob, loss, n, Div(classes)),
			columnSum(sms, loss, mean, n, 1, 1/float64(n)),
		}
		p.Phases[bwdData] = []Launch{elementwise(sms, "xent_bwd", in, 1, prob, dx, n, Div(classes))}
		io([]Transfer{{Buf: x, From: Input}},
			map[measure.Phase][]Transfer{fwd: {{Buf: mean, From: Output, Len: 1}}, bwdData: {{Buf: dx, From: InputGrad}}})
	default:
		return nil, fmt.Errorf("%w: %s", ErrNoKernel, c.Op)
	}
	for _, b := range p.Buffers {
		if b.Elems > MaxIndex {
			return nil, fmt.Errorf("%w: %s at batch %d has %d in %s; cnntime's kernels index in 32 bits", ErrTooLarge, c.Key(), batch, b.Elems, b.Name)
		}
	}
	return p, nil
}

// PhaseBytes is the working set of a phase: the bytes of the distinct buffers its
// launches read or write (half: Data is 16 bits wide). This, not everything the layer
// holds, decides whether the phase fits in the L2 (timing.DecideL2).
func (p *Program) PhaseBytes(ph measure.Phase, half bool) int64 {
	seen := map[Buf]bool{}
	var total int64
	for _, l := range p.Phases[ph] {
		for _, a := range l.Args {
			if b, ok := a.(Buf); ok && !seen[b] && int(b) >= 0 && int(b) < len(p.Buffers) {
				seen[b] = true
				total += p.Buffers[b].Elems * p.Buffers[b].Elem.Bytes(half)
			}
		}
	}
	return total
}

// Footprint is the bytes of every buffer of the program: what the layer holds.
func (p *Program) Footprint(half bool) int64 {
	var total int64
	for _, b := range p.Buffers {
		total += b.Elems * b.Elem.Bytes(half)
	}
	return total
}

// PhaseInput is the buffer a phase reads that the layer before it in a step has just
// written: the forward's first input, a backward's output gradient; -1 when it has none.
func (p *Program) PhaseInput(ph measure.Phase) Buf {
	want := OutputGrad
	if ph == measure.Forward {
		want = Input
	}
	for _, t := range p.In {
		if t.From == want && t.Index == 0 {
			return t.Buf
		}
	}
	return -1
}

// IndexesNCHW reports whether the program of op reads its tensors as NCHW, whatever the
// sweep's layout: pooling, the squeeze-and-excitation scale, concat, channel shuffle and
// batch norm index channels and positions; element-wise kernels (activations, add,
// dropout), the layer norm and the loss read every layout alike. A channels_last sweep
// notes such rows (timing.NoteNCHWKernel): the traffic is the layer's, the access pattern
// NCHW's, where PyTorch runs NHWC kernels of its own.
func IndexesNCHW(op cnn.Op) bool {
	switch op {
	case cnn.OpMaxPool, cnn.OpAvgPool, cnn.OpAdaptiveAvg, cnn.OpMul, cnn.OpScale, cnn.OpConcat, cnn.OpChannelShuffle, cnn.OpBatchNorm, cnn.OpPermute:
		return true
	}
	return false
}

// Instance is a program on a device: its buffers' addresses, how to launch a kernel
// there, and the dropout seed.
type Instance struct {
	Program *Program
	Addrs   []uint64 // one per buffer
	// Launch launches a kernel; args is only read during the call (Instance reuses it).
	Launch func(kernel string, grid, block int, args []uint64) error
	seed   int64
	words  map[measure.Phase][][]uint64 // each launch's arguments, built on the first run
	seeds  map[measure.Phase][][2]int   // (launch, argument) of each seed argument
}

// Has says whether the layer has phase ph.
func (in *Instance) Has(ph measure.Phase) bool {
	_, ok := in.Program.Phases[ph]
	return ok
}

// Prepare runs the forward pass once before a backward phase, which reads what it saves
// (pooling's winners, the norm's statistics, the softmax, the dropout seed).
func (in *Instance) Prepare(ph measure.Phase) error {
	if ph != measure.Forward && in.Has(measure.Forward) {
		return in.Run(measure.Forward)
	}
	return nil
}

// Run launches the phase's kernels. Their arguments are built once: a run allocates
// nothing, so the host issues kernels at the rate the driver allows.
func (in *Instance) Run(ph measure.Phase) error {
	if ph == measure.Forward {
		in.seed++
	}
	words, err := in.phaseWords(ph)
	if err != nil {
		return err
	}
	for _, at := range in.seeds[ph] {
		words[at[0]][at[1]] = uint64(in.seed)
	}
	for i, l := range in.Program.Phases[ph] {
		if err := in.Launch(l.Kernel, l.Grid, l.Block, words[i]); err != nil {
			return fmt.Errorf("launch %s: %w", l.Kernel, err)
		}
	}
	return nil
}

// phaseWords returns the phase's launch arguments, building them on first use.
func (in *Instance) phaseWords(ph measure.Phase) ([][]uint64, error) {
	if w, ok := in.words[ph]; ok {
		return w, nil
	}
	if in.words == nil {
		in.words, in.seeds = map[measure.Phase][][]uint64{}, map[measure.Phase][][2]int{}
	}
	launches := in.Program.Phases[ph]
	w := make([][]uint64, len(launches))
	for i, l := range launches {
		args, err := in.args(l)
		if err != nil {
			return nil, err
		}
		w[i] = args
		for j, a := range l.Args {
			if _, ok := a.(Seed); ok {
				in.seeds[ph] = append(in.seeds[ph], [2]int{i, j})
			}
		}
	}
	in.words[ph] = w
	return w, nil
}

// args turns a launch's arguments into the 8-byte words the kernel takes.
func (in *Instance) args(l Launch) ([]uint64, error) {
	out := make([]uint64, len(l.Args))
	for i, a := range l.Args {
		switch v := a.(type) {
		case int64:
			out[i] = uint64(v)
		case float64:
			out[i] = math.Float64bits(v)
		case Div:
			w, err := PackDivisor(int64(v))
			if err != nil {
				return nil, fmt.Errorf("kernel %s argument %d: %w", l.Kernel, i, err)
			}
			out[i] = w
		case Buf:
			if int(v) < 0 || int(v) >= len(in.Addrs) {
				return nil, fmt.Errorf("kernel %s argument %d is buffer %d of %d", l.Kernel, i, v, len(in.Addrs))
			}
			out[i] = in.Addrs[v]
		case Seed:
			out[i] = uint64(in.seed)
		default:
			return nil, fmt.Errorf("kernel %s argument %d has type %T", l.Kernel, i, a)
		}
	}
	return out, nil
}
