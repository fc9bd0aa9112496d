package cnn

import "fmt"

func mobilenetModels() []model {
	return []model{
		{name: "mobilenet_v2", family: "MobileNet", layers: 160, build: buildMobileNetV2},
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
