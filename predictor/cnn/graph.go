package cnn

import "fmt"

// graph appends layers to a network, inferring and checking each layer's output shape,
// parameters and MACs. The zoo builders and the custom model parser both use it.
//
// The first mistake is kept in err and every later call is ignored, so a builder can be
// written as straight-line code and check g.err once at the end.
type graph struct {
	net *Network
	err error

	ints   []int   // backing store for Inputs, handed out in pieces to save allocations
	shapes []Shape // backing store for InShapes
}

// maxMACs bounds one layer's multiply-accumulates per sample, far above any real CNN
// (the largest zoo layer has about 1e10), so that counts never overflow.
const maxMACs = 1e15

// image is the index that names the network's input image in Layer.Inputs.
const image = -1

func newGraph(net *Network, capLayers int) *graph {
	net.Layers = make([]Layer, 0, capLayers)
	return &graph{net: net, ints: make([]int, 0, capLayers+capLayers/2), shapes: make([]Shape, 0, capLayers+capLayers/2)}
}

// shape is the output shape of layer i, or the input image's shape for i == image.
func (g *graph) shape(i int) Shape {
	if i == image || i < 0 || i >= len(g.net.Layers) {
		return g.net.Input
	}
	return g.net.Layers[i].Out
}

// last is the index of the most recent layer (the image before any layer).
func (g *graph) last() int { return len(g.net.Layers) - 1 }

func (g *graph) failf(format string, args ...any) int {
	if g.err == nil {
		i := len(g.net.Layers)
		g.err = &LayerError{Index: i, Msg: fmt.Sprintf(format, args...)}
	}
	return g.last()
}

// LayerError is a mistake in a network's description, found at one layer.
type LayerError struct {
	Index int    // the layer's index in the network (0-based)
	Name  string // the layer's name
	Msg   string
}

func (e *LayerError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("layer %d: %s", e.Index, e.Msg)
	}
	return fmt.Sprintf("layer %d (%s): %s", e.Index, e.Name, e.Msg)
}

// push appends l, fed by inputs, and returns its index.
func (g *graph) push(name string, l Layer, inputs ...int) int {
	if g.err != nil {
		return g.last()
	}
	if !l.Out.Valid() {
		g.failf("output shape %s is not positive", l.Out)
		g.err.(*LayerError).Name = name
		return g.last()
	}
	l.Name = name
	if l.NumInputs == 0 {
		l.NumInputs = 1
	}
	n := len(inputs)
	if len(g.ints)+n > cap(g.ints) {
		g.ints = make([]int, 0, max(256, n))
		g.shapes = make([]Shape, 0, max(256, n))
	}
	start := len(g.ints)
	g.ints = append(g.ints, inputs...)
	for _, in := range inputs {
		g.shapes = append(g.shapes, g.shape(in))
	}
	l.Inputs = g.ints[start : start+n : start+n]
	l.InShapes = g.shapes[start : start+n : start+n]
	g.net.Layers = append(g.net.Layers, l)
	return g.last()
}

// fail records a mistake at the layer about to be added.
func (g *graph) fail(name, format string, args ...any) int {
	if g.err == nil {
		g.failf(format, args...)
		g.err.(*LayerError).Name = name
	}
	return g.last()
}

// convOpts are conv2d's arguments beyond output channels, kernel, stride and padding.
type convOpts struct {
	Groups   int  // 0 means 1
	Dilation int  // 0 means 1
	Bias     bool // a learned bias per output channel
}

// conv adds a square conv2d without bias.
func (g *graph) conv(name string, in, out, k, s, p int) int {
	return g.conv2d(name, in, out, Pair{k, k}, Pair{s, s}, Pair{p, p}, convOpts{})
}

// convG adds a square grouped (or depthwise) conv2d without bias.
func (g *graph) convG(name string, in, out, k, s, p, groups int) int {
	return g.conv2d(name, in, out, Pair{k, k}, Pair{s, s}, Pair{p, p}, convOpts{Groups: groups})
}

// convB adds a square conv2d with bias.
func (g *graph) convB(name string, in, out, k, s, p int) int {
	return g.conv2d(name, in, out, Pair{k, k}, Pair{s, s}, Pair{p, p}, convOpts{Bias: true})
}

// outSize is the output length of a window of k (dilated by d) sliding with stride s
// over n positions padded by p on each side, or an error when the window does not fit.
func outSize(n, k, s, p, d int, ceil bool) (int, error) {
	span := d*(k-1) + 1
	switch {
	case k <= 0:
		return 0, fmt.Errorf("kernel size %d must be positive", k)
	case s <= 0:
		return 0, fmt.Errorf("stride %d must be positive", s)
	case p < 0:
		return 0, fmt.Errorf("padding %d must not be negative", p)
	case d <= 0:
		return 0, fmt.Errorf("dilation %d must be positive", d)
	case n+2*p < span && d > 1:
		return 0, fmt.Errorf("kernel %d dilated by %d spans %d, more than its padded input %d", k, d, span, n+2*p)
	case n+2*p < span:
		return 0, fmt.Errorf("kernel %d is larger than its padded input %d", k, n+2*p)
	}
	if !ceil {
		return (n+2*p-span)/s + 1, nil
	}
	o := (n+2*p-span+s-1)/s + 1
	if (o-1)*s >= n+p { // the last window must start inside the input or its left padding
		o--
	}
	return o, nil
}

// conv2d adds a conv2d layer.
func (g *graph) conv2d(name string, in, out int, k, s, p Pair, o convOpts) int {
	if g.err != nil {
		return g.last()
	}
	x := g.shape(in)
	groups, dil := max(o.Groups, 1), max(o.Dilation, 1)
	if out <= 0 {
		return g.fail(name, "conv2d needs a positive number of output channels, not %d", out)
	}
	if x.C%groups != 0 || out%groups != 0 {
		return g.fail(name, "conv2d groups %d must divide both input channels %d and output channels %d", groups, x.C, out)
	}
	ho, err := outSize(x.H, k[0], s[0], p[0], dil, false)
	if err != nil {
		return g.fail(name, "conv2d on input %s: %v", x, err)
	}
	wo, err := outSize(x.W, k[1], s[1], p[1], dil, false)
	if err != nil {
		return g.fail(name, "conv2d on input %s: %v", x, err)
	}
	if float64(out)*float64(ho)*float64(wo)*float64(x.C/groups)*float64(k[0])*float64(k[1]) > maxMACs {
		return g.fail(name, "conv2d is too large: more than %.0e multiply-accumulates per sample", maxMACs)
	}
	perOut := int64(x.C/groups) * int64(k[0]) * int64(k[1])
	l := Layer{Config: Config{Op: OpConv2d, In: x, Out: Shape{out, ho, wo}, Kernel: k, Stride: s, Padding: p,
		Dilation: Pair{dil, dil}, Groups: groups, Bias: o.Bias}}
	l.Params = int64(out) * perOut
	if o.Bias {
		l.Params += int64(out)
	}
	l.MACs = int64(out) * int64(ho) * int64(wo) * perOut
	return g.push(name, l, in)
}

// linear adds a fully connected layer over the channel dimension of its input, applied at
// each of the input's H×W positions.
func (g *graph) linear(name string, in, out int, bias bool) int {
	if g.err != nil {
		return g.last()
	}
	x := g.shape(in)
	if out <= 0 {
		return g.fail(name, "linear needs a positive number of output features, not %d", out)
	}
	if float64(out)*float64(x.C)*float64(x.H)*float64(x.W) > maxMACs {
		return g.fail(name, "linear is too large: more than %.0e multiply-accumulates per sample", maxMACs)
	}
	l := Layer{Config: Config{Op: OpLinear, In: x, Out: Shape{out, x.H, x.W}, Bias: bias}}
	l.Params = int64(x.C) * int64(out)
	if bias {
		l.Params += int64(out)
	}
	l.MACs = int64(x.C) * int64(out) * int64(x.H) * int64(x.W)
	return g.push(name, l, in)
}

// unary adds a shape-preserving op with no parameters (activations, dropout, permute).
func (g *graph) unary(name string, op Op, in int, inPlace bool) int {
	x := g.shape(in)
	return g.push(name, Layer{Config: Config{Op: op, In: x, Out: x}, InPlace: inPlace}, in)
}

func (g *graph) relu(name string, in int) int       { return g.unary(name, OpReLU, in, true) }
func (g *graph) act(name string, op Op, in int) int { return g.unary(name, op, in, false) }

// norm adds batch norm or layer norm over the channels: 2 parameters per channel.
func (g *graph) norm(name string, op Op, in int) int {
	x := g.shape(in)
	return g.push(name, Layer{Config: Config{Op: op, In: x, Out: x}, Params: 2 * int64(x.C)}, in)
}

func (g *graph) bn(name string, in int) int { return g.norm(name, OpBatchNorm, in) }

// scale adds a learned per-channel multiplier (ConvNeXt's layer scale).
func (g *graph) scale(name string, in int) int {
	x := g.shape(in)
	return g.push(name, Layer{Config: Config{Op: OpScale, In: x, Out: x}, Params: int64(x.C)}, in)
}

// pool adds max or average pooling.
func (g *graph) pool(name string, op Op, in, k, s, p int, ceil bool) int {
	if g.err != nil {
		return g.last()
	}
	x := g.shape(in)
	if 2*p > k {
		return g.fail(name, "%s padding %d must be at most half the kernel size %d", op, p, k)
	}
	ho, err := outSize(x.H, k, s, p, 1, ceil)
	if err != nil {
		return g.fail(name, "%s on input %s: %v", op, x, err)
	}
	wo, err := outSize(x.W, k, s, p, 1, ceil)
	if err != nil {
		return g.fail(name, "%s on input %s: %v", op, x, err)
	}
	l := Layer{Config: Config{Op: op, In: x, Out: Shape{x.C, ho, wo}, Kernel: Pair{k, k}, Stride: Pair{s, s},
		Padding: Pair{p, p}, CeilMode: ceil}}
	return g.push(name, l, in)
}

func (g *graph) maxpool(name string, in, k, s, p int, ceil bool) int {
	return g.pool(name, OpMaxPool, in, k, s, p, ceil)
}

// adaptiveAvg adds adaptive average pooling to size×size.
func (g *graph) adaptiveAvg(name string, in, size int) int {
	x := g.shape(in)
	if size <= 0 {
		return g.fail(name, "adaptive average pooling needs a positive output size, not %d", size)
	}
	return g.push(name, Layer{Config: Config{Op: OpAdaptiveAvg, In: x, Out: Shape{x.C, size, size}}}, in)
}

// gap adds global average pooling (adaptive to 1×1).
func (g *graph) gap(name string, in int) int { return g.adaptiveAvg(name, in, 1) }

// add adds the elementwise sum of inputs of equal shape.
func (g *graph) add(name string, inputs ...int) int {
	if g.err != nil {
		return g.last()
	}
	x := g.shape(inputs[0])
	for _, in := range inputs[1:] {
		if y := g.shape(in); y != x {
			return g.fail(name, "add needs inputs of equal shape, got %s and %s", x, y)
		}
	}
	return g.push(name, Layer{Config: Config{Op: OpAdd, In: x, Out: x, NumInputs: len(inputs)}}, inputs...)
}

// mul adds x times s, where s has x's shape or broadcasts over H×W (C×1×1).
func (g *graph) mul(name string, x, s int) int {
	if g.err != nil {
		return g.last()
	}
	a, b := g.shape(x), g.shape(s)
	if b != a && (b.C != a.C || b.H != 1 || b.W != 1) {
		return g.fail(name, "mul needs a second input of shape %s or %dx1x1, got %s", a, a.C, b)
	}
	return g.push(name, Layer{Config: Config{Op: OpMul, In: a, Out: a, NumInputs: 2}}, x, s)
}

// concat adds the concatenation of its inputs along channels; their H×W must agree.
func (g *graph) concat(name string, inputs ...int) int {
	if g.err != nil {
		return g.last()
	}
	first := g.shape(inputs[0])
	c := 0
	for _, in := range inputs {
		y := g.shape(in)
		if y.H != first.H || y.W != first.W {
			return g.fail(name, "concat needs inputs of equal height and width, got %s and %s", first, y)
		}
		c += y.C
	}
	out := Shape{c, first.H, first.W}
	return g.push(name, Layer{Config: Config{Op: OpConcat, In: out, Out: out, NumInputs: len(inputs)}}, inputs...)
}

// shuffle adds a channel shuffle over groups.
func (g *graph) shuffle(name string, in, groups int) int {
	x := g.shape(in)
	if groups <= 0 || x.C%groups != 0 {
		return g.fail(name, "channel shuffle groups %d must divide the channels %d", groups, x.C)
	}
	return g.push(name, Layer{Config: Config{Op: OpChannelShuffle, In: x, Out: x, Groups: groups}}, in)
}

// flatten adds a flatten of C×H×W to (C·H·W)×1×1.
func (g *graph) flatten(name string, in int) int {
	x := g.shape(in)
	return g.push(name, Layer{Config: Config{Op: OpFlatten, In: x, Out: Shape{int(x.Elems()), 1, 1}}}, in)
}

// loss adds the cross-entropy loss over the class scores of its inputs (more than one for
// auxiliary heads).
func (g *graph) loss(inputs ...int) int {
	if g.err != nil {
		return g.last()
	}
	x := g.shape(inputs[0])
	if x.H != 1 || x.W != 1 {
		return g.fail("loss", "the loss needs class scores of shape Kx1x1, got %s: flatten or pool first", x)
	}
	if x.C != g.net.Classes {
		return g.fail("loss", "the loss needs %d class scores, got %d", g.net.Classes, x.C)
	}
	return g.push("loss", Layer{Config: Config{Op: OpLoss, In: x, Out: Shape{1, 1, 1}, NumInputs: len(inputs)}}, inputs...)
}

// slice adds a view of channels [from, from+c) of its input (torch.chunk).
func (g *graph) slice(name string, in, from, c int) int {
	x := g.shape(in)
	if from < 0 || c <= 0 || from+c > x.C {
		return g.fail(name, "slice of channels %d..%d is outside the input's %d channels", from, from+c, x.C)
	}
	return g.push(name, Layer{Config: Config{Op: OpSlice, In: x, Out: Shape{c, x.H, x.W}}}, in)
}
