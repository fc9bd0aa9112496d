package onnx

import (
	"math"
	"slices"

	"cnntime/predictor/cnn"
)

// Fusions: exporters write some of cnntime's layers as several nodes. Before converting,
// findFusions finds them, marks every node of a pattern but the last as skipped, and the
// last as the one that emits the layer:
//
//   - SiLU: Sigmoid(x) → Mul(x, ·) (torch.onnx before opset 14 writes SiLU so);
//   - hard swish: HardSigmoid(x) → Mul(x, ·);
//   - GELU: Div(x, √2) → Erf → Add(1) → Mul(x) → Mul(0.5), in any order of the last two;
//   - a channels-first layer norm (ConvNeXt's LayerNorm2d): Transpose(0,2,3,1) →
//     LayerNormalization → Transpose(0,3,1,2), one layer norm over the channels;
//   - channel shuffle: Reshape [N,C,H,W]→[N,g,C/g,H,W] → Transpose(0,2,1,3,4) → Reshape back.
//
// Every intermediate tensor of a pattern must have no reader outside it.
type fusion struct {
	op    cnn.Op
	input string // the tensor the fused layer reads
	namer int    // the node whose name names the layer
	inner int    // channel shuffle: the first Reshape
	// layer norm: its nodes, and whether it normalizes an NCHW tensor's channels
	// between two permutes (ConvNeXt's LayerNorm2d)
	ln            *lnMatch
	channelsFirst bool
}

// sole is the one node reading tensor t (not a graph output), if there is exactly one.
func (c *converter) sole(t string) (int, bool) {
	u := c.uses[t]
	if len(u) != 1 || u[0].node < 0 {
		return 0, false
	}
	return u[0].node, true
}

// producer is the node writing t and its op.
func (c *converter) producer(t string) (int, string) {
	k, ok := c.made[t]
	if !ok {
		return -1, ""
	}
	return k, c.nodes[k].GetOpType()
}

// constNear reports whether tensor t is a constant number within 0.1% of want: an
// initializer with data or a Constant node's value.
func (c *converter) constNear(t string, want float64) bool {
	v, ok := c.vals[t]
	if !ok {
		k, op := c.producer(t)
		if op != "Constant" {
			return false
		}
		var err error
		if v, err = constantValue(nodeAttrs(c.nodes[k])); err != nil {
			return false
		}
	}
	f, ok := v.scalar()
	return ok && math.Abs(f-want) <= 1e-3*math.Abs(want)
}

// other is the input of a two-input node that is not t, and whether t is one of them.
func (c *converter) other(k int, t string) (string, bool) {
	ins := c.nodes[k].GetInput()
	if len(ins) != 2 {
		return "", false
	}
	switch t {
	case ins[0]:
		return ins[1], true
	case ins[1]:
		return ins[0], true
	}
	return "", false
}

func (c *converter) findFusions() {
	c.fused = map[int]fusion{}
	for k, n := range c.nodes {
		if c.skip[k] {
			continue
		}
		switch n.GetOpType() {
		case "Sigmoid":
			c.fuseGate(k, cnn.OpSiLU)
		case "HardSigmoid":
			a := nodeAttrs(n)
			if math.Abs(a.float("alpha", 0.2)-1.0/6) < 1e-3 && math.Abs(a.float("beta", 0.5)-0.5) < 1e-3 {
				c.fuseGate(k, cnn.OpHardswish)
			}
		case "Erf":
			c.fuseGELU(k)
		case "LayerNormalization", "ReduceMean":
			c.fuseLayerNorm(k)
		case "Transpose":
			c.fuseShuffle(k)
		}
	}
}

// fuseGate fuses Gate(x) → Mul(x, gate) into one activation layer.
func (c *converter) fuseGate(k int, op cnn.Op) {
	n := c.nodes[k]
	if len(n.GetInput()) != 1 || len(n.GetOutput()) != 1 {
		return
	}
	x, g := n.GetInput()[0], n.GetOutput()[0]
	m, ok := c.sole(g)
	if !ok || c.nodes[m].GetOpType() != "Mul" {
		return
	}
	if o, ok := c.other(m, g); !ok || o != x {
		return
	}
	c.skip[k] = true
	c.fused[m] = fusion{op: op, input: x, namer: k}
}

// fuseGELU fuses the erf form of GELU around the Erf node k.
func (c *converter) fuseGELU(e int) {
	in := c.nodes[e].GetInput()
	if len(in) != 1 {
		return
	}
	d, dop := c.producer(in[0])
	if d < 0 || len(c.uses[in[0]]) != 1 || len(c.nodes[d].GetInput()) != 2 {
		return
	}
	dn := c.nodes[d]
	var x string
	switch {
	case dop == "Div" && c.constNear(dn.GetInput()[1], math.Sqrt2):
		x = dn.GetInput()[0]
	case dop == "Mul" && c.constNear(dn.GetInput()[1], 1/math.Sqrt2):
		x = dn.GetInput()[0]
	case dop == "Mul" && c.constNear(dn.GetInput()[0], 1/math.Sqrt2):
		x = dn.GetInput()[1]
	default:
		return
	}
	a, ok := c.sole(c.nodes[e].GetOutput()[0])
	if !ok || c.nodes[a].GetOpType() != "Add" {
		return
	}
	if o, ok := c.other(a, c.nodes[e].GetOutput()[0]); !ok || !c.constNear(o, 1) {
		return
	}
	skipped := []int{d, e, a}
	cur := c.nodes[a].GetOutput()[0]
	gotX, gotHalf := false, false
	for step := 0; step < 2; step++ {
		m, ok := c.sole(cur)
		if !ok || c.nodes[m].GetOpType() != "Mul" {
			return
		}
		o, ok := c.other(m, cur)
		if !ok {
			return
		}
		switch p, pop := c.producer(o); {
		case o == x && !gotX:
			gotX = true
		case c.constNear(o, 0.5) && !gotHalf:
			gotHalf = true
		case pop == "Mul" && !gotX && !gotHalf && len(c.uses[o]) == 1:
			po, ok := c.other(p, x)
			if !ok || !c.constNear(po, 0.5) {
				return
			}
			gotX, gotHalf = true, true
			skipped = append(skipped, p)
		default:
			return
		}
		if gotX && gotHalf {
			for _, s := range skipped {
				c.skip[s] = true
			}
			c.fused[m] = fusion{op: cnn.OpGELU, input: x, namer: e}
			return
		}
		skipped = append(skipped, m)
		cur = c.nodes[m].GetOutput()[0]
	}
}

// lnMatch is a layer norm over the last axis: a LayerNormalization node, or the nodes
// opsets before 17 write it as: ReduceMean → Sub → Pow(2) → ReduceMean → Add(eps) → Sqrt
// → Div, then optionally Mul(scale) and Add(shift).
type lnMatch struct {
	input       string // the tensor normalized
	nodes       []int  // the pattern's nodes, the last one last
	scale, bias string // the learned scale and shift ("" when absent)
}

// matchLayerNorm matches a layer norm starting at node k.
func (c *converter) matchLayerNorm(k int) (lnMatch, bool) {
	n := c.nodes[k]
	last := func(axes []int64, ok bool) bool { return ok && len(axes) == 1 && (axes[0] == -1) }
	switch n.GetOpType() {
	case "LayerNormalization":
		if axis := nodeAttrs(n).int("axis", -1); axis != -1 || len(n.GetInput()) < 2 {
			return lnMatch{}, false
		}
		for _, o := range n.GetOutput()[1:] {
			if o != "" && len(c.uses[o]) > 0 {
				return lnMatch{}, false
			}
		}
		m := lnMatch{input: n.GetInput()[0], nodes: []int{k}, scale: n.GetInput()[1]}
		if len(n.GetInput()) > 2 {
			m.bias = n.GetInput()[2]
		}
		return m, true
	case "ReduceMean":
	default:
		return lnMatch{}, false
	}
	if !last(c.axesOfNode(k)) || len(n.GetInput()) == 0 {
		return lnMatch{}, false
	}
	x := n.GetInput()[0]
	m := lnMatch{input: x, nodes: []int{k}}
	// next follows tensor t to its sole reader, which must be op with t and another input.
	next := func(t, op string) (int, string, bool) {
		j, ok := c.sole(t)
		if !ok || c.nodes[j].GetOpType() != op {
			return 0, "", false
		}
		o, ok := c.other(j, t)
		return j, o, ok
	}
	// Sub(x, mean): the mean's sole reader; the centred tensor feeds Pow and Div.
	sub, o, ok := next(n.GetOutput()[0], "Sub")
	if !ok || o != x || c.nodes[sub].GetInput()[0] != x {
		return lnMatch{}, false
	}
	centred := c.nodes[sub].GetOutput()[0]
	var pow, div int = -1, -1
	for _, u := range c.uses[centred] {
		switch {
		case u.node >= 0 && c.nodes[u.node].GetOpType() == "Pow" && u.slot == 0:
			pow = u.node
		case u.node >= 0 && c.nodes[u.node].GetOpType() == "Div" && u.slot == 0:
			div = u.node
		}
	}
	if len(c.uses[centred]) != 2 || pow < 0 || div < 0 || len(c.nodes[pow].GetInput()) != 2 || len(c.nodes[div].GetInput()) != 2 ||
		!c.constNear(c.nodes[pow].GetInput()[1], 2) {
		return lnMatch{}, false
	}
	r2, ok := c.sole(c.nodes[pow].GetOutput()[0])
	if !ok || c.nodes[r2].GetOpType() != "ReduceMean" || !last(c.axesOfNode(r2)) {
		return lnMatch{}, false
	}
	add, eps, ok := next(c.nodes[r2].GetOutput()[0], "Add")
	if !ok || math.IsNaN(c.scalarConst(eps)) {
		return lnMatch{}, false
	}
	sqrt, ok := c.sole(c.nodes[add].GetOutput()[0])
	if !ok || c.nodes[sqrt].GetOpType() != "Sqrt" {
		return lnMatch{}, false
	}
	if d, ok := c.sole(c.nodes[sqrt].GetOutput()[0]); !ok || d != div || c.nodes[div].GetInput()[1] != c.nodes[sqrt].GetOutput()[0] {
		return lnMatch{}, false
	}
	m.nodes = append(m.nodes, sub, pow, r2, add, sqrt, div)
	end := c.nodes[div].GetOutput()[0]
	if j, o, ok := next(end, "Mul"); ok && c.isParam(o) {
		m.nodes, m.scale, end = append(m.nodes, j), o, c.nodes[j].GetOutput()[0]
		if j, o, ok := next(end, "Add"); ok && c.isParam(o) {
			m.nodes, m.bias = append(m.nodes, j), o
		}
	}
	return m, true
}

// axesOfNode reads a Reduce node's axes, from its attribute or a constant input.
func (c *converter) axesOfNode(k int) ([]int64, bool) {
	n := c.nodes[k]
	if axes, ok := nodeAttrs(n).ints("axes"); ok {
		return axes, true
	}
	if len(n.GetInput()) > 1 {
		if v, ok := c.constOf(n.GetInput()[1]); ok {
			return v.ints(), true
		}
	}
	return nil, false
}

// constOf is tensor t's value when it is an initializer or a Constant node's.
func (c *converter) constOf(t string) (value, bool) {
	if v, ok := c.vals[t]; ok {
		return v, v.kind == kConst
	}
	k, op := c.producer(t)
	if op != "Constant" {
		return value{}, false
	}
	v, err := constantValue(nodeAttrs(c.nodes[k]))
	return v, err == nil && v.kind == kConst
}

// scalarConst is t's value when it is a constant number, NaN otherwise.
func (c *converter) scalarConst(t string) float64 {
	if v, ok := c.constOf(t); ok {
		if f, ok := v.scalar(); ok {
			return f
		}
	}
	return math.NaN()
}

// isParam reports whether t is an initializer or a graph input that is not computed.
func (c *converter) isParam(t string) bool {
	_, computed := c.made[t]
	_, known := c.vals[t]
	return known && !computed
}

// fuseLayerNorm fuses a layer norm found at node k: with a Transpose(0,2,3,1) before it
// and a Transpose(0,3,1,2) after (ConvNeXt's LayerNorm2d) into one layer norm over the
// channels of the NCHW tensor; a decomposed one on its own into one layer norm.
func (c *converter) fuseLayerNorm(k int) {
	m, ok := c.matchLayerNorm(k)
	if !ok {
		return
	}
	lastNode := m.nodes[len(m.nodes)-1]
	f := fusion{op: cnn.OpLayerNorm, input: m.input, namer: k, ln: &m}
	t1, op := c.producer(m.input)
	if op == "Transpose" && len(c.nodes[t1].GetInput()) != 1 {
		op = ""
	}
	inside := true
	for _, u := range c.uses[m.input] {
		inside = inside && slices.Contains(m.nodes, u.node)
	}
	if op == "Transpose" && inside {
		perm, _ := nodeAttrs(c.nodes[t1]).ints("perm")
		t2, ok := c.sole(c.nodes[lastNode].GetOutput()[0])
		if ok && slices.Equal(perm, []int64{0, 2, 3, 1}) && c.nodes[t2].GetOpType() == "Transpose" {
			if perm2, _ := nodeAttrs(c.nodes[t2]).ints("perm"); slices.Equal(perm2, []int64{0, 3, 1, 2}) {
				for _, j := range append(m.nodes, t1) {
					c.skip[j] = true
				}
				f.input, f.channelsFirst = c.nodes[t1].GetInput()[0], true
				c.fused[t2] = f
				return
			}
		}
	}
	if len(m.nodes) == 1 {
		return // a LayerNormalization node on its own converts as it is
	}
	for _, j := range m.nodes[:len(m.nodes)-1] {
		c.skip[j] = true
	}
	c.fused[lastNode] = f
}

// fuseShuffle fuses Reshape → Transpose(0,2,1,3,4) → Reshape around the Transpose k.
func (c *converter) fuseShuffle(t int) {
	tn := c.nodes[t]
	if perm, _ := nodeAttrs(tn).ints("perm"); !slices.Equal(perm, []int64{0, 2, 1, 3, 4}) || len(tn.GetInput()) != 1 {
		return
	}
	r1, op := c.producer(tn.GetInput()[0])
	if op != "Reshape" || len(c.uses[tn.GetInput()[0]]) != 1 || len(c.nodes[r1].GetInput()) != 2 {
		return
	}
	r2, ok := c.sole(tn.GetOutput()[0])
	if !ok || c.nodes[r2].GetOpType() != "Reshape" || len(c.nodes[r2].GetInput()) != 2 || c.nodes[r2].GetInput()[0] != tn.GetOutput()[0] {
		return
	}
	c.skip[r1], c.skip[t] = true, true
	c.fused[r2] = fusion{op: cnn.OpChannelShuffle, input: c.nodes[r1].GetInput()[0], namer: t, inner: r1}
}

// convertFused emits the layer a fused pattern stands for.
func (c *converter) convertFused(f fusion) error {
	x, ok := c.vals[f.input]
	if !ok || x.kind != kAct {
		return c.fail("it ends a %s pattern whose input is not an activation", f.op)
	}
	if err := c.checkAct(x); err != nil {
		return err
	}
	c.namer = c.nodes[f.namer]
	defer func() { c.namer = nil }()
	switch f.op {
	case cnn.OpLayerNorm:
		if f.channelsFirst != (x.layout == nchw) || x.layout == shuffle5 {
			return c.fail("its layer norm's input %v is not the layout it normalizes", x.dims)
		}
		ch := int64(shapeOf(x).C)
		for _, p := range []string{f.ln.scale, f.ln.bias} {
			if p == "" {
				continue
			}
			if v, ok := c.vals[p]; !ok || elems(v.dims) != ch {
				return c.fail("its layer norm's scale or shift %q does not have %d elements, one per channel", p, ch)
			}
		}
		if f.ln.scale == "" || f.ln.bias == "" {
			c.note("layer norm %s has no learned scale or shift; cnntime counts both, %d parameters each", nodeLabel(c.nodes[f.namer]), ch)
		}
		c.weights += 2 * ch
		c.set(0, c.emit(jsonLayer{Op: cnn.OpLayerNorm}, "", like(x), x))
		return nil
	case cnn.OpChannelShuffle:
		if x.layout != nchw {
			return c.fail("its channel shuffle's input is not NCHW")
		}
		s1, s2 := c.vals[c.nodes[f.inner].GetInput()[1]], c.in(1)
		if s1.kind != kConst || s2.kind != kConst {
			return c.fail("its channel shuffle's shapes are not constants: export with a fixed input size")
		}
		d1, err := reshapeDims(x.dims, s1.ints(), false)
		if err != nil {
			return c.fail("%v", err)
		}
		if len(d1) != 5 || d1[0] != x.dims[0] || d1[1]*d1[2] != x.dims[1] || d1[3] != x.dims[2] || d1[4] != x.dims[3] {
			return c.fail("it reshapes %v to %v, not [N, groups, C/groups, H, W] of a channel shuffle", x.dims, d1)
		}
		d2, err := reshapeDims([]int64{d1[0], d1[2], d1[1], d1[3], d1[4]}, s2.ints(), false)
		if err != nil || !slices.Equal(d2, x.dims) {
			return c.fail("its channel shuffle does not reshape back to %v", x.dims)
		}
		c.set(0, c.emit(jsonLayer{Op: cnn.OpChannelShuffle, Groups: ptr(int(d1[1]))}, "", like(x), x))
		return nil
	}
	c.set(0, c.emit(jsonLayer{Op: f.op}, "", like(x), x))
	return nil
}
