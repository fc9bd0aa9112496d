package cnn

import (
	"fmt"
	"strconv"
	"strings"
)

// knownOps are the operations a configuration key may name.
var knownOps = func() map[Op]bool {
	m := map[Op]bool{}
	for _, op := range []Op{OpConv2d, OpLinear, OpBatchNorm, OpLayerNorm, OpReLU, OpReLU6, OpSiLU, OpHardswish,
		OpHardsigmoid, OpSigmoid, OpGELU, OpMaxPool, OpAvgPool, OpAdaptiveAvg, OpAdd, OpMul, OpScale, OpConcat,
		OpChannelShuffle, OpDropout, OpStochasticDepth, OpFlatten, OpPermute, OpSlice, OpLoss} {
		m[op] = true
	}
	return m
}()

// ParseKey reads a configuration key back into the Config it was made from: the
// inverse of Config.Key, so that measurements known only by their key (a kernel
// measurement CSV from another tool, such as scripts/pytorch_sweep.py --layers) have
// their configuration. Fields the key leaves out for the op keep their zero value,
// which is what they hold in every Config that the zoo builds, except a channel
// shuffle's groups, which are 2 (ShuffleNet v2's). A key that does not read, or that
// does not come back to itself, is an error.
func ParseKey(key string) (Config, error) {
	var c Config
	op, rest, ok := strings.Cut(key, ":")
	if !ok || !knownOps[Op(op)] {
		return c, fmt.Errorf("layer configuration key %q: no known op before ':'", key)
	}
	c.Op = Op(op)
	var err error
	seen := map[string]bool{}
	for _, item := range strings.Split(rest, ",") {
		name, val, hasVal := strings.Cut(item, "=")
		if seen[name] {
			return c, fmt.Errorf("layer configuration key %q: %s given twice", key, name)
		}
		seen[name] = true
		switch {
		case name == "ceil" && !hasVal:
			c.CeilMode = true
		case !hasVal:
			err = fmt.Errorf("%q has no value", name)
		case name == "in":
			c.In, err = parseShape(val)
		case name == "out":
			c.Out, err = parseShape(val)
		case name == "n":
			c.NumInputs, err = strconv.Atoi(val)
		case name == "k":
			c.Kernel, err = parsePair(val)
		case name == "s":
			c.Stride, err = parsePair(val)
		case name == "p":
			c.Padding, err = parsePair(val)
		case name == "d":
			c.Dilation, err = parsePair(val)
		case name == "g":
			c.Groups, err = strconv.Atoi(val)
		case name == "bias":
			c.Bias, err = strconv.ParseBool(val)
		default:
			err = fmt.Errorf("unknown field %q", name)
		}
		if err != nil {
			return c, fmt.Errorf("layer configuration key %q: %v", key, err)
		}
	}
	if !seen["in"] || !seen["out"] {
		return c, fmt.Errorf("layer configuration key %q: in= and out= are required", key)
	}
	if c.NumInputs == 0 {
		c.NumInputs = 1
	}
	if c.Op == OpChannelShuffle {
		c.Groups = 2 // not in the key: torchvision's ShuffleNet v2 shuffles two groups
	}
	if back := c.Key(); back != key {
		return c, fmt.Errorf("layer configuration key %q is not in canonical form (it reads as %q)", key, back)
	}
	return c, nil
}

func parseShape(s string) (Shape, error) {
	f := strings.Split(s, "x")
	if len(f) != 3 {
		return Shape{}, fmt.Errorf("shape %q is not CxHxW", s)
	}
	var v [3]int
	for i, x := range f {
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 {
			return Shape{}, fmt.Errorf("shape %q is not CxHxW", s)
		}
		v[i] = n
	}
	return Shape{C: v[0], H: v[1], W: v[2]}, nil
}

func parsePair(s string) (Pair, error) {
	a, b, ok := strings.Cut(s, "x")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return Pair{}, fmt.Errorf("pair %q is not AxB", s)
	}
	return Pair{x, y}, nil
}
