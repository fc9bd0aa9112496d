package cnn

import (
	"fmt"
	"math"
)

// EfficientNet (B0–B7) and EfficientNetV2 (S, M, L), as in torchvision's efficientnet.py.

// mbConfig is one stage of an EfficientNet: torchvision's MBConvConfig or
// FusedMBConvConfig, before width and depth scaling.
type mbConfig struct {
	fused          bool
	expand, kernel int
	stride         int
	in, out        int
	layers         int
}

// efficientnetSpec is one EfficientNet variant.
type efficientnetSpec struct {
	stages       []mbConfig
	width, depth float64
	lastChannel  int     // 0: four times the last stage's channels (V1)
	sdProb       float64 // stochastic depth probability at the last block
}

var efficientnetV1Stages = []mbConfig{
	{false, 1, 3, 1, 32, 16, 1}, {false, 6, 3, 2, 16, 24, 2}, {false, 6, 5, 2, 24, 40, 2}, {false, 6, 3, 2, 40, 80, 3},
	{false, 6, 5, 1, 80, 112, 3}, {false, 6, 5, 2, 112, 192, 4}, {false, 6, 3, 1, 192, 320, 1},
}

func efficientnetModels() []model {
	var out []model
	v1 := []struct {
		name         string
		width, depth float64
		resolution   int // the crop size of torchvision's default weights (0.14)
	}{
		{"efficientnet_b0", 1.0, 1.0, 224}, {"efficientnet_b1", 1.0, 1.1, 240}, {"efficientnet_b2", 1.1, 1.2, 288},
		{"efficientnet_b3", 1.2, 1.4, 300}, {"efficientnet_b4", 1.4, 1.8, 380}, {"efficientnet_b5", 1.6, 2.2, 456},
		{"efficientnet_b6", 1.8, 2.6, 528}, {"efficientnet_b7", 2.0, 3.1, 600},
	}
	for _, v := range v1 {
		spec := efficientnetSpec{stages: efficientnetV1Stages, width: v.width, depth: v.depth, sdProb: 0.2}
		out = append(out, model{name: v.name, family: "EfficientNet", resolution: v.resolution, layers: 400, build: func(g *graph) { buildEfficientNet(g, spec) }})
	}
	v2 := []struct {
		name       string
		resolution int // the crop size of torchvision's default weights (0.14)
		stages     []mbConfig
	}{
		{"efficientnet_v2_s", 384, []mbConfig{
			{true, 1, 3, 1, 24, 24, 2}, {true, 4, 3, 2, 24, 48, 4}, {true, 4, 3, 2, 48, 64, 4},
			{false, 4, 3, 2, 64, 128, 6}, {false, 6, 3, 1, 128, 160, 9}, {false, 6, 3, 2, 160, 256, 15}}},
		{"efficientnet_v2_m", 480, []mbConfig{
			{true, 1, 3, 1, 24, 24, 3}, {true, 4, 3, 2, 24, 48, 5}, {true, 4, 3, 2, 48, 80, 5},
			{false, 4, 3, 2, 80, 160, 7}, {false, 6, 3, 1, 160, 176, 14}, {false, 6, 3, 2, 176, 304, 18},
			{false, 6, 3, 1, 304, 512, 5}}},
		{"efficientnet_v2_l", 480, []mbConfig{
			{true, 1, 3, 1, 32, 32, 4}, {true, 4, 3, 2, 32, 64, 7}, {true, 4, 3, 2, 64, 96, 7},
			{false, 4, 3, 2, 96, 192, 10}, {false, 6, 3, 1, 192, 224, 19}, {false, 6, 3, 2, 224, 384, 25},
			{false, 6, 3, 1, 384, 640, 7}}},
	}
	for _, v := range v2 {
		spec := efficientnetSpec{stages: v.stages, width: 1, depth: 1, lastChannel: 1280, sdProb: 0.2}
		out = append(out, model{name: v.name, family: "EfficientNetV2", resolution: v.resolution, layers: 1200, build: func(g *graph) { buildEfficientNet(g, spec) }})
	}
	return out
}

func buildEfficientNet(g *graph, s efficientnetSpec) {
	adjust := func(c int) int { return makeDivisible(float64(c)*s.width, 8, 0) }
	total := 0
	for _, st := range s.stages {
		total += int(math.Ceil(float64(st.layers) * s.depth))
	}
	x := g.convBNAct("features.0", image, adjust(s.stages[0].in), 3, 2, 1, OpSiLU)
	blockID := 0
	for si, st := range s.stages {
		n := int(math.Ceil(float64(st.layers) * s.depth))
		out := adjust(st.out)
		for i := 0; i < n; i++ {
			stride := st.stride
			if i > 0 {
				stride = 1
			}
			sd := s.sdProb * float64(blockID) / float64(total)
			name := fmt.Sprintf("features.%d.%d", si+1, i)
			if st.fused {
				x = fusedMBConv(g, name, x, out, st.expand, st.kernel, stride, sd)
			} else {
				x = mbConv(g, name, x, out, st.expand, st.kernel, stride, sd)
			}
			blockID++
		}
	}
	last := s.lastChannel
	if last == 0 {
		last = 4 * g.shape(x).C
	}
	x = g.convBNAct(subi("features", len(s.stages)+1), x, last, 1, 1, 1, OpSiLU)
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.act("classifier.0", OpDropout, x)
	x = g.linear("classifier.1", x, g.net.Classes, true)
	g.loss(x)
}

// residual adds stochastic depth (when its probability is positive) and the skip
// connection where the block keeps its shape.
func (g *graph) residual(name string, x, y int, sd float64) int {
	if g.shape(x) != g.shape(y) {
		return y
	}
	if sd > 0 {
		y = g.act(sub(name, "stochastic_depth"), OpStochasticDepth, y)
	}
	return g.add(sub(name, "add"), y, x)
}

// mbConv is torchvision's MBConv: expand 1×1, depthwise k×k, squeeze-excitation (squeeze
// to a quarter of the block's input channels), project 1×1.
func mbConv(g *graph, name string, x, out, expand, k, stride int, sd float64) int {
	in := g.shape(x).C
	hidden := makeDivisible(float64(in*expand), 8, 0)
	y, j := x, 0
	if hidden != in {
		y = g.convBNAct(subi(name+".block", j), y, hidden, 1, 1, 1, OpSiLU)
		j++
	}
	y = g.convBNAct(subi(name+".block", j), y, hidden, k, stride, hidden, OpSiLU)
	y = g.squeezeExcite(subi(name+".block", j+1), y, max(1, in/4), OpSiLU, OpSigmoid)
	y = g.convBNAct(subi(name+".block", j+2), y, out, 1, 1, 1, "")
	if stride == 1 {
		y = g.residual(name, x, y, sd)
	}
	return y
}

// fusedMBConv is torchvision's FusedMBConv: a k×k conv that expands, then a 1×1 project
// (or a single k×k conv when it does not expand).
func fusedMBConv(g *graph, name string, x, out, expand, k, stride int, sd float64) int {
	in := g.shape(x).C
	hidden := makeDivisible(float64(in*expand), 8, 0)
	var y int
	if hidden != in {
		y = g.convBNAct(name+".block.0", x, hidden, k, stride, 1, OpSiLU)
		y = g.convBNAct(name+".block.1", y, out, 1, 1, 1, "")
	} else {
		y = g.convBNAct(name+".block.0", x, out, k, stride, 1, OpSiLU)
	}
	if stride == 1 {
		y = g.residual(name, x, y, sd)
	}
	return y
}
