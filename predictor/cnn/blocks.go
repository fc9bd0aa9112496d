package cnn

import "strconv"

// Helpers shared by several families: torchvision's Conv2dNormActivation and
// SqueezeExcitation, and the classifier heads.

// sub joins a module path and a child name: sub("layer1.0", "conv1") = "layer1.0.conv1".
func sub(prefix, child string) string {
	if prefix == "" {
		return child
	}
	return prefix + "." + child
}

// subi is sub with a numeric child.
func subi(prefix string, i int) string { return sub(prefix, strconv.Itoa(i)) }

// convBNAct adds torchvision's Conv2dNormActivation: conv (no bias, padding (k-1)/2·d),
// batch norm, then the activation act ("" for none). Its modules are name.0, name.1, name.2.
func (g *graph) convBNAct(name string, in, out, k, s, groups int, act Op) int {
	p := (k - 1) / 2
	x := g.conv2d(subi(name, 0), in, out, Pair{k, k}, Pair{s, s}, Pair{p, p}, convOpts{Groups: groups})
	x = g.bn(subi(name, 1), x)
	if act != "" {
		x = g.unary(subi(name, 2), act, x, false) // inplace=None: a new tensor
	}
	return x
}

// squeezeExcite adds torchvision's SqueezeExcitation on x: global average pool, 1×1 conv
// to squeeze channels (with bias), act, 1×1 conv back (with bias), gate, and x × gate.
func (g *graph) squeezeExcite(name string, x, squeeze int, act, gate Op) int {
	c := g.shape(x).C
	s := g.gap(sub(name, "avgpool"), x)
	s = g.convB(sub(name, "fc1"), s, squeeze, 1, 1, 0)
	s = g.act(sub(name, "activation"), act, s)
	s = g.convB(sub(name, "fc2"), s, c, 1, 1, 0)
	s = g.act(sub(name, "scale_activation"), gate, s)
	return g.mul(sub(name, "mul"), x, s)
}

// makeDivisible is torchvision's _make_divisible: v rounded to the nearest multiple of
// divisor, at least minValue (divisor when 0), and never more than 10% below v.
func makeDivisible(v float64, divisor, minValue int) int {
	if minValue == 0 {
		minValue = divisor
	}
	n := max(minValue, int(v+float64(divisor)/2)/divisor*divisor)
	if float64(n) < 0.9*v {
		n += divisor
	}
	return n
}
