package cnn

import (
	"fmt"
	"math"
)

// RegNet X and Y, as in torchvision's regnet.py: block widths from the linear
// parameterisation quantized to multiples of 8, bottleneck blocks with group convs, and
// for Y a squeeze-excitation that squeezes to a quarter of the block's input width.

// regnetSpec is torchvision's BlockParams.from_init_params arguments.
type regnetSpec struct {
	depth      int
	w0         float64
	wa, wm     float64
	groupWidth int
	se         bool
}

func regnetModels() []model {
	specs := []struct {
		name string
		spec regnetSpec
	}{
		{"regnet_x_400mf", regnetSpec{22, 24, 24.48, 2.54, 16, false}},
		{"regnet_x_800mf", regnetSpec{16, 56, 35.73, 2.28, 16, false}},
		{"regnet_x_1_6gf", regnetSpec{18, 80, 34.01, 2.25, 24, false}},
		{"regnet_x_3_2gf", regnetSpec{25, 88, 26.31, 2.25, 48, false}},
		{"regnet_x_8gf", regnetSpec{23, 80, 49.56, 2.88, 120, false}},
		{"regnet_x_16gf", regnetSpec{22, 216, 55.59, 2.1, 128, false}},
		{"regnet_x_32gf", regnetSpec{23, 320, 69.86, 2.0, 168, false}},
		{"regnet_y_400mf", regnetSpec{16, 48, 27.89, 2.09, 8, true}},
		{"regnet_y_800mf", regnetSpec{14, 56, 38.84, 2.4, 16, true}},
		{"regnet_y_1_6gf", regnetSpec{27, 48, 20.71, 2.65, 24, true}},
		{"regnet_y_3_2gf", regnetSpec{21, 80, 42.63, 2.66, 24, true}},
		{"regnet_y_8gf", regnetSpec{17, 192, 76.82, 2.19, 56, true}},
		{"regnet_y_16gf", regnetSpec{18, 200, 106.23, 2.48, 112, true}},
		{"regnet_y_32gf", regnetSpec{20, 232, 115.89, 2.53, 232, true}},
		{"regnet_y_128gf", regnetSpec{27, 456, 160.83, 2.52, 264, true}},
	}
	out := make([]model, len(specs))
	for i, s := range specs {
		spec := s.spec
		out[i] = model{name: s.name, family: "RegNet", layers: 16*spec.depth + 16, build: func(g *graph) { buildRegNet(g, spec) }}
	}
	return out
}

// regnetStage is one stage's width, depth and group width after torchvision's
// width/group compatibility adjustment.
type regnetStage struct{ width, depth, groupWidth int }

// stages computes torchvision's BlockParams.from_init_params (bottleneck multiplier 1),
// in float32 as torch does.
func (s regnetSpec) stages() []regnetStage {
	widths := make([]int, s.depth)
	for i := range widths {
		cont := float32(float32(i)*float32(s.wa) + float32(s.w0))
		capacity := math.RoundToEven(float64(float32(math.Log(float64(cont/float32(s.w0))))) / float64(float32(math.Log(s.wm))))
		w := float32(s.w0) * float32(math.Pow(float64(float32(s.wm)), capacity))
		widths[i] = int(math.RoundToEven(float64(w/8))) * 8
	}
	var out []regnetStage
	for _, w := range widths {
		if len(out) > 0 && out[len(out)-1].width == w {
			out[len(out)-1].depth++
			continue
		}
		out = append(out, regnetStage{width: w, depth: 1})
	}
	for i := range out {
		gw := min(s.groupWidth, out[i].width)
		out[i].width = makeDivisible(float64(out[i].width), gw, 0)
		out[i].groupWidth = gw
	}
	return out
}

func buildRegNet(g *graph, s regnetSpec) {
	x := g.convBNAct("stem", image, 32, 3, 2, 1, OpReLU)
	for i, st := range s.stages() {
		for b := 0; b < st.depth; b++ {
			stride := 1
			if b == 0 {
				stride = 2
			}
			x = regnetBlock(g, fmt.Sprintf("trunk_output.block%d.block%d-%d", i+1, i+1, b), x, st.width, stride, st.groupWidth, s.se)
		}
	}
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.linear("fc", x, g.net.Classes, true)
	g.loss(x)
}

// regnetBlock is torchvision's ResBottleneckBlock with bottleneck multiplier 1.
func regnetBlock(g *graph, name string, x, out, stride, groupWidth int, se bool) int {
	in := g.shape(x).C
	y := g.convBNAct(sub(name, "f.a"), x, out, 1, 1, 1, OpReLU)
	y = g.convBNAct(sub(name, "f.b"), y, out, 3, stride, out/groupWidth, OpReLU)
	if se {
		y = g.squeezeExcite(sub(name, "f.se"), y, int(math.RoundToEven(0.25*float64(in))), OpReLU, OpSigmoid)
	}
	y = g.convBNAct(sub(name, "f.c"), y, out, 1, 1, 1, "")
	id := x
	if in != out || stride != 1 {
		id = g.convBNAct(sub(name, "proj"), x, out, 1, stride, 1, "")
	}
	y = g.add(sub(name, "add"), id, y)
	return g.relu(sub(name, "activation"), y)
}
