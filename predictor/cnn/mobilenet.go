package cnn

import "fmt"

func mobilenetModels() []model {
	return []model{
		{name: "mobilenet_v2", family: "MobileNet", layers: 160, build: buildMobileNetV2},
		{name: "mobilenet_v3_large", family: "MobileNet", layers: 200, build: func(g *graph) { buildMobileNetV3(g, mobilenetV3Large, 1280) }},
		{name: "mobilenet_v3_small", family: "MobileNet", layers: 180, build: func(g *graph) { buildMobileNetV3(g, mobilenetV3Small, 1024) }},
	}
}

// buildMobileNetV2 follows torchvision's mobilenetv2.py at width 1.0.
func buildMobileNetV2(g *graph) {
	settings := [][4]int{ // expansion t, channels c, repeats n, stride s
		{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
	}
	x := g.convBNAct("features.0", image, 32, 3, 2, 1, OpReLU6)
	f := 1
	for _, s := range settings {
		t, c, n, stride := s[0], s[1], s[2], s[3]
		for i := 0; i < n; i++ {
			if i > 0 {
				stride = 1
			}
			x = invertedResidualV2(g, fmt.Sprintf("features.%d", f), x, c, stride, t)
			f++
		}
	}
	x = g.convBNAct(subi("features", f), x, 1280, 1, 1, 1, OpReLU6)
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.act("classifier.0", OpDropout, x)
	x = g.linear("classifier.1", x, g.net.Classes, true)
	g.loss(x)
}

func invertedResidualV2(g *graph, name string, x, out, stride, expand int) int {
	in := g.shape(x).C
	hidden := in * expand
	y, i := x, 0
	if expand != 1 {
		y = g.convBNAct(subi(name+".conv", i), y, hidden, 1, 1, 1, OpReLU6)
		i++
	}
	y = g.convBNAct(subi(name+".conv", i), y, hidden, 3, stride, hidden, OpReLU6)
	y = g.conv(subi(name+".conv", i+1), y, out, 1, 1, 0)
	y = g.bn(subi(name+".conv", i+2), y)
	if stride == 1 && in == out {
		y = g.add(sub(name, "add"), x, y)
	}
	return y
}

// mbv3Block is one row of torchvision's MobileNetV3 configuration.
type mbv3Block struct {
	kernel, expanded, out int
	se                    bool
	act                   Op
	stride                int
}

var mobilenetV3Large = []mbv3Block{
	{3, 16, 16, false, OpReLU, 1}, {3, 64, 24, false, OpReLU, 2}, {3, 72, 24, false, OpReLU, 1},
	{5, 72, 40, true, OpReLU, 2}, {5, 120, 40, true, OpReLU, 1}, {5, 120, 40, true, OpReLU, 1},
	{3, 240, 80, false, OpHardswish, 2}, {3, 200, 80, false, OpHardswish, 1}, {3, 184, 80, false, OpHardswish, 1},
	{3, 184, 80, false, OpHardswish, 1}, {3, 480, 112, true, OpHardswish, 1}, {3, 672, 112, true, OpHardswish, 1},
	{5, 672, 160, true, OpHardswish, 2}, {5, 960, 160, true, OpHardswish, 1}, {5, 960, 160, true, OpHardswish, 1},
}

var mobilenetV3Small = []mbv3Block{
	{3, 16, 16, true, OpReLU, 2}, {3, 72, 24, false, OpReLU, 2}, {3, 88, 24, false, OpReLU, 1},
	{5, 96, 40, true, OpHardswish, 2}, {5, 240, 40, true, OpHardswish, 1}, {5, 240, 40, true, OpHardswish, 1},
	{5, 120, 48, true, OpHardswish, 1}, {5, 144, 48, true, OpHardswish, 1}, {5, 288, 96, true, OpHardswish, 2},
	{5, 576, 96, true, OpHardswish, 1}, {5, 576, 96, true, OpHardswish, 1},
}

// buildMobileNetV3 follows torchvision's mobilenetv3.py at width 1.0 (every channel count
// in the tables is already a multiple of 8).
func buildMobileNetV3(g *graph, blocks []mbv3Block, lastChannel int) {
	x := g.convBNAct("features.0", image, 16, 3, 2, 1, OpHardswish)
	for i, b := range blocks {
		name := fmt.Sprintf("features.%d.block", i+1)
		in := g.shape(x).C
		y, j := x, 0
		if b.expanded != in {
			y = g.convBNAct(subi(name, j), y, b.expanded, 1, 1, 1, b.act)
			j++
		}
		y = g.convBNAct(subi(name, j), y, b.expanded, b.kernel, b.stride, b.expanded, b.act)
		j++
		if b.se {
			y = g.squeezeExcite(subi(name, j), y, makeDivisible(float64(b.expanded/4), 8, 0), OpReLU, OpHardsigmoid)
			j++
		}
		y = g.convBNAct(subi(name, j), y, b.out, 1, 1, 1, "")
		if b.stride == 1 && in == b.out {
			y = g.add(fmt.Sprintf("features.%d.add", i+1), x, y)
		}
		x = y
	}
	x = g.convBNAct(subi("features", len(blocks)+1), x, 6*g.shape(x).C, 1, 1, 1, OpHardswish)
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.linear("classifier.0", x, lastChannel, true)
	x = g.act("classifier.1", OpHardswish, x)
	x = g.act("classifier.2", OpDropout, x)
	x = g.linear("classifier.3", x, g.net.Classes, true)
	g.loss(x)
}

func mnasnetModels() []model {
	var out []model
	for _, v := range []struct {
		name  string
		alpha float64
	}{{"mnasnet0_5", 0.5}, {"mnasnet0_75", 0.75}, {"mnasnet1_0", 1.0}, {"mnasnet1_3", 1.3}} {
		alpha := v.alpha
		out = append(out, model{name: v.name, family: "MNASNet", layers: 160, build: func(g *graph) { buildMNASNet(g, alpha) }})
	}
	return out
}

// buildMNASNet follows torchvision's mnasnet.py (MNASNet-B1) at depth multiplier alpha.
func buildMNASNet(g *graph, alpha float64) {
	var d [8]int
	for i, c := range []int{32, 16, 24, 40, 80, 96, 192, 320} {
		d[i] = makeDivisible(float64(c)*alpha, 8, 0)
	}
	x := g.conv("layers.0", image, d[0], 3, 2, 1)
	x = g.bn("layers.1", x)
	x = g.relu("layers.2", x)
	x = g.convG("layers.3", x, d[0], 3, 1, 1, d[0])
	x = g.bn("layers.4", x)
	x = g.relu("layers.5", x)
	x = g.conv("layers.6", x, d[1], 1, 1, 0)
	x = g.bn("layers.7", x)
	stacks := [][4]int{ // kernel, stride, expansion, repeats
		{3, 2, 3, 3}, {5, 2, 3, 3}, {5, 2, 6, 3}, {3, 1, 6, 2}, {5, 2, 6, 4}, {3, 1, 6, 1},
	}
	for s, st := range stacks {
		k, stride, expand, n := st[0], st[1], st[2], st[3]
		for i := 0; i < n; i++ {
			if i > 0 {
				stride = 1
			}
			x = mnasnetBlock(g, fmt.Sprintf("layers.%d.%d", 8+s, i), x, d[s+2], k, stride, expand)
		}
	}
	x = g.conv("layers.14", x, 1280, 1, 1, 0)
	x = g.bn("layers.15", x)
	x = g.relu("layers.16", x)
	x = g.gap("mean", x)
	x = g.flatten("flatten", x)
	x = g.act("classifier.0", OpDropout, x)
	x = g.linear("classifier.1", x, g.net.Classes, true)
	g.loss(x)
}

func mnasnetBlock(g *graph, name string, x, out, k, stride, expand int) int {
	in := g.shape(x).C
	mid := in * expand
	y := g.conv(sub(name, "layers.0"), x, mid, 1, 1, 0)
	y = g.bn(sub(name, "layers.1"), y)
	y = g.relu(sub(name, "layers.2"), y)
	y = g.convG(sub(name, "layers.3"), y, mid, k, stride, k/2, mid)
	y = g.bn(sub(name, "layers.4"), y)
	y = g.relu(sub(name, "layers.5"), y)
	y = g.conv(sub(name, "layers.6"), y, out, 1, 1, 0)
	y = g.bn(sub(name, "layers.7"), y)
	if in == out && stride == 1 {
		y = g.add(sub(name, "add"), y, x)
	}
	return y
}

func shufflenetModels() []model {
	var out []model
	for _, v := range []struct {
		name     string
		channels [5]int
	}{
		{"shufflenet_v2_x0_5", [5]int{24, 48, 96, 192, 1024}},
		{"shufflenet_v2_x1_0", [5]int{24, 116, 232, 464, 1024}},
		{"shufflenet_v2_x1_5", [5]int{24, 176, 352, 704, 1024}},
		{"shufflenet_v2_x2_0", [5]int{24, 244, 488, 976, 2048}},
	} {
		ch := v.channels
		out = append(out, model{name: v.name, family: "ShuffleNet", layers: 240, build: func(g *graph) { buildShuffleNetV2(g, ch) }})
	}
	return out
}

// buildShuffleNetV2 follows torchvision's shufflenetv2.py: stages of 4, 8 and 4 blocks.
func buildShuffleNetV2(g *graph, ch [5]int) {
	x := g.conv("conv1.0", image, ch[0], 3, 2, 1)
	x = g.bn("conv1.1", x)
	x = g.relu("conv1.2", x)
	x = g.maxpool("maxpool", x, 3, 2, 1, false)
	for s, n := range []int{4, 8, 4} {
		for i := 0; i < n; i++ {
			x = shuffleBlock(g, fmt.Sprintf("stage%d.%d", s+2, i), x, ch[s+1], i == 0)
		}
	}
	x = g.conv("conv5.0", x, ch[4], 1, 1, 0)
	x = g.bn("conv5.1", x)
	x = g.relu("conv5.2", x)
	x = g.gap("mean", x)
	x = g.flatten("flatten", x)
	x = g.linear("fc", x, g.net.Classes, true)
	g.loss(x)
}

func shuffleBlock(g *graph, name string, x, out int, downsample bool) int {
	half := out / 2
	in := g.shape(x).C
	var left, right int
	stride := 1
	if downsample {
		stride = 2
		left = g.convG(sub(name, "branch1.0"), x, in, 3, 2, 1, in)
		left = g.bn(sub(name, "branch1.1"), left)
		left = g.conv(sub(name, "branch1.2"), left, half, 1, 1, 0)
		left = g.bn(sub(name, "branch1.3"), left)
		left = g.relu(sub(name, "branch1.4"), left)
		right = x
	} else {
		left = g.slice(sub(name, "chunk0"), x, 0, in/2)
		right = g.slice(sub(name, "chunk1"), x, in/2, in-in/2)
	}
	right = g.conv(sub(name, "branch2.0"), right, half, 1, 1, 0)
	right = g.bn(sub(name, "branch2.1"), right)
	right = g.relu(sub(name, "branch2.2"), right)
	right = g.convG(sub(name, "branch2.3"), right, half, 3, stride, 1, half)
	right = g.bn(sub(name, "branch2.4"), right)
	right = g.conv(sub(name, "branch2.5"), right, half, 1, 1, 0)
	right = g.bn(sub(name, "branch2.6"), right)
	right = g.relu(sub(name, "branch2.7"), right)
	y := g.concat(sub(name, "cat"), left, right)
	return g.shuffle(sub(name, "shuffle"), y, 2)
}
