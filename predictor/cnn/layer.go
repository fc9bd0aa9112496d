package cnn

import (
	"fmt"
	"strings"
)

// Op names one kind of operation in a layer graph.
type Op string

// The operations a network can hold. Their names are stable: they appear in config keys,
// custom model files, the cache and JSON output.
const (
	OpConv2d          Op = "conv2d"
	OpLinear          Op = "linear" // over the channel dim; H×W positions per sample (ConvNeXt runs it on NHWC)
	OpBatchNorm       Op = "batchnorm2d"
	OpLayerNorm       Op = "layernorm" // over channels, per position
	OpReLU            Op = "relu"
	OpReLU6           Op = "relu6"
	OpSiLU            Op = "silu"
	OpHardswish       Op = "hardswish"
	OpHardsigmoid     Op = "hardsigmoid"
	OpSigmoid         Op = "sigmoid"
	OpGELU            Op = "gelu"
	OpMaxPool         Op = "maxpool2d"
	OpAvgPool         Op = "avgpool2d"
	OpAdaptiveAvg     Op = "adaptiveavgpool2d"
	OpAdd             Op = "add"    // elementwise sum of inputs of equal shape
	OpMul             Op = "mul"    // elementwise product; the second input may broadcast (C×1×1, squeeze-excitation scale)
	OpScale           Op = "scale"  // multiply by a learned per-channel vector (ConvNeXt layer scale)
	OpConcat          Op = "concat" // along channels
	OpChannelShuffle  Op = "channelshuffle"
	OpDropout         Op = "dropout"
	OpStochasticDepth Op = "stochasticdepth" // row-wise drop of a residual branch
	OpFlatten         Op = "flatten"
	OpPermute         Op = "permute" // NCHW <-> NHWC copy
	OpSlice           Op = "slice"   // a view of a run of channels (ShuffleNet's chunk); runs no kernel
	OpLoss            Op = "crossentropy"
)

// Shape is the per-sample shape of a tensor, C×H×W. The batch dimension is not part of it.
// A vector of F features is F×1×1.
type Shape struct {
	C, H, W int
}

// Elems is the number of elements of one sample of the tensor.
func (s Shape) Elems() int64 { return int64(s.C) * int64(s.H) * int64(s.W) }

// Valid reports whether every dimension is positive.
func (s Shape) Valid() bool { return s.C > 0 && s.H > 0 && s.W > 0 }

func (s Shape) String() string { return fmt.Sprintf("%dx%dx%d", s.C, s.H, s.W) }

// Pair is a (height, width) pair: kernel size, stride, padding or dilation.
type Pair [2]int

func (p Pair) String() string { return fmt.Sprintf("%dx%d", p[0], p[1]) }

// Config is what determines the kernels a layer runs, independent of the layer's name,
// its place in the network and the batch size. Layers of different CNNs with equal
// Configs cost the same and are measured once. Config is comparable and usable as a map key.
//
// For concat, In.C is the sum of the inputs' channels and NumInputs their count.
// For linear, In.C is in_features, Out.C is out_features and In.H×In.W the positions
// per sample it is applied to (1×1 for a classifier).
type Config struct {
	Op        Op
	In        Shape
	Out       Shape
	NumInputs int // inputs to the op (2 for add, k for concat); 1 otherwise
	Kernel    Pair
	Stride    Pair
	Padding   Pair
	Dilation  Pair
	Groups    int
	Bias      bool
	CeilMode  bool // pooling rounds the output size up (torchvision's ceil_mode=True)
}

// Key is the canonical, stable text form of a Config: the cache's and the planner's
// identity for a layer configuration. Only the fields an op uses appear in it.
func (c Config) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:in=%s,out=%s", c.Op, c.In, c.Out)
	if c.NumInputs > 1 {
		fmt.Fprintf(&b, ",n=%d", c.NumInputs)
	}
	switch c.Op {
	case OpConv2d:
		fmt.Fprintf(&b, ",k=%s,s=%s,p=%s,d=%s,g=%d,bias=%t", c.Kernel, c.Stride, c.Padding, c.Dilation, c.Groups, c.Bias)
	case OpMaxPool, OpAvgPool:
		fmt.Fprintf(&b, ",k=%s,s=%s,p=%s", c.Kernel, c.Stride, c.Padding)
		if c.CeilMode {
			b.WriteString(",ceil")
		}
	case OpLinear:
		fmt.Fprintf(&b, ",bias=%t", c.Bias)
	}
	return b.String()
}

// Layer is one node of a network: an operation, where its inputs come from, and what it costs.
type Layer struct {
	Config
	Name     string  // torchvision-style module path, e.g. "layer1.0.conv1"
	Inputs   []int   // indices of the layers that feed it; -1 is the network's input image
	InShapes []Shape // the shape of each input, in the order of Inputs
	Params   int64   // learnable parameters
	MACs     int64   // multiply-accumulates of the forward pass, per sample (conv2d and linear only, as torchvision counts)
	// InPlace says the op writes its output into its input's storage, as torchvision's
	// ReLU(inplace=True) does: the output then costs no memory of its own.
	InPlace bool
}

// Network is a CNN as a topologically ordered list of layers. The last layer is the loss.
type Network struct {
	Name    string // torchvision's name, e.g. "resnet50", or the custom model's name
	Family  string // e.g. "ResNet"
	Input   Shape  // 3×224×224 by default
	Classes int
	Layers  []Layer
	Custom  bool // read from a user's model file
}

// Params is the network's number of learnable parameters.
func (n *Network) Params() int64 {
	var p int64
	for i := range n.Layers {
		p += n.Layers[i].Params
	}
	return p
}

// MACs is the network's forward multiply-accumulates per sample.
func (n *Network) MACs() int64 {
	var m int64
	for i := range n.Layers {
		m += n.Layers[i].MACs
	}
	return m
}

// Configs returns the network's distinct layer configurations in order of first use,
// each with how many layers share it.
func (n *Network) Configs() ([]Config, map[Config]int) {
	count := make(map[Config]int)
	var order []Config
	for i := range n.Layers {
		c := n.Layers[i].Config
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	return order, count
}
