package cnn

// vggConfigs are torchvision's VGG configurations: output channels of each 3×3 conv,
// 0 for a 2×2 max pool.
var vggConfigs = map[string][]int{
	"A": {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0},
	"B": {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0},
	"D": {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0},
	"E": {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0},
}

func vggModels() []model {
	var out []model
	for _, v := range []struct{ name, cfg string }{{"vgg11", "A"}, {"vgg13", "B"}, {"vgg16", "D"}, {"vgg19", "E"}} {
		for _, bn := range []bool{false, true} {
			name, cfg, withBN := v.name, vggConfigs[v.cfg], bn
			if bn {
				name += "_bn"
			}
			out = append(out, model{name: name, family: "VGG", layers: 3*len(cfg) + 12,
				build: func(g *graph) { buildVGG(g, cfg, withBN) }})
		}
	}
	return out
}

func buildVGG(g *graph, cfg []int, withBN bool) {
	x, i := image, 0
	for _, c := range cfg {
		if c == 0 {
			x = g.maxpool(subi("features", i), x, 2, 2, 0, false)
			i++
			continue
		}
		x = g.convB(subi("features", i), x, c, 3, 1, 1)
		i++
		if withBN {
			x = g.bn(subi("features", i), x)
			i++
		}
		x = g.relu(subi("features", i), x)
		i++
	}
	x = g.adaptiveAvg("avgpool", x, 7)
	x = g.flatten("flatten", x)
	x = classifierMLP(g, x, 4096)
	g.loss(x)
}

// classifierMLP is the AlexNet/VGG head: linear, ReLU, dropout, linear, ReLU, dropout,
// linear to the classes (torchvision's order for VGG; AlexNet puts dropout first).
func classifierMLP(g *graph, x, hidden int) int {
	x = g.linear("classifier.0", x, hidden, true)
	x = g.relu("classifier.1", x)
	x = g.act("classifier.2", OpDropout, x)
	x = g.linear("classifier.3", x, hidden, true)
	x = g.relu("classifier.4", x)
	x = g.act("classifier.5", OpDropout, x)
	return g.linear("classifier.6", x, g.net.Classes, true)
}
