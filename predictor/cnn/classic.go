package cnn

import "fmt"

// The early ImageNet CNNs: AlexNet, SqueezeNet and DenseNet, as in torchvision's
// alexnet.py, squeezenet.py and densenet.py.

func alexnetModels() []model {
	return []model{{name: "alexnet", family: "AlexNet", layers: 24, build: buildAlexNet}}
}

func buildAlexNet(g *graph) {
	x := g.convB("features.0", image, 64, 11, 4, 2)
	x = g.relu("features.1", x)
	x = g.maxpool("features.2", x, 3, 2, 0, false)
	x = g.convB("features.3", x, 192, 5, 1, 2)
	x = g.relu("features.4", x)
	x = g.maxpool("features.5", x, 3, 2, 0, false)
	x = g.convB("features.6", x, 384, 3, 1, 1)
	x = g.relu("features.7", x)
	x = g.convB("features.8", x, 256, 3, 1, 1)
	x = g.relu("features.9", x)
	x = g.convB("features.10", x, 256, 3, 1, 1)
	x = g.relu("features.11", x)
	x = g.maxpool("features.12", x, 3, 2, 0, false)
	x = g.adaptiveAvg("avgpool", x, 6)
	x = g.flatten("flatten", x)
	x = g.act("classifier.0", OpDropout, x)
	x = g.linear("classifier.1", x, 4096, true)
	x = g.relu("classifier.2", x)
	x = g.act("classifier.3", OpDropout, x)
	x = g.linear("classifier.4", x, 4096, true)
	x = g.relu("classifier.5", x)
	x = g.linear("classifier.6", x, g.net.Classes, true)
	g.loss(x)
}

func squeezenetModels() []model {
	return []model{
		{name: "squeezenet1_0", family: "SqueezeNet", layers: 64, build: func(g *graph) { buildSqueezeNet(g, "1_0") }},
		{name: "squeezenet1_1", family: "SqueezeNet", layers: 64, build: func(g *graph) { buildSqueezeNet(g, "1_1") }},
	}
}

// fireSpec is a Fire module's squeeze, expand-1×1 and expand-3×3 channels; a zero
// squeeze marks a 3×3 max pool (ceil mode).
type fireSpec struct{ squeeze, e1, e3 int }

func buildSqueezeNet(g *graph, version string) {
	var x int
	var fires []fireSpec
	pool := fireSpec{}
	if version == "1_0" {
		x = g.convB("features.0", image, 96, 7, 2, 0)
		fires = []fireSpec{pool, {16, 64, 64}, {16, 64, 64}, {32, 128, 128}, pool, {32, 128, 128}, {48, 192, 192},
			{48, 192, 192}, {64, 256, 256}, pool, {64, 256, 256}}
	} else {
		x = g.convB("features.0", image, 64, 3, 2, 0)
		fires = []fireSpec{pool, {16, 64, 64}, {16, 64, 64}, pool, {32, 128, 128}, {32, 128, 128}, pool,
			{48, 192, 192}, {48, 192, 192}, {64, 256, 256}, {64, 256, 256}}
	}
	x = g.relu("features.1", x)
	for i, f := range fires {
		name := subi("features", i+2)
		if f.squeeze == 0 {
			x = g.maxpool(name, x, 3, 2, 0, true)
			continue
		}
		s := g.convB(sub(name, "squeeze"), x, f.squeeze, 1, 1, 0)
		s = g.relu(sub(name, "squeeze_activation"), s)
		a := g.convB(sub(name, "expand1x1"), s, f.e1, 1, 1, 0)
		a = g.relu(sub(name, "expand1x1_activation"), a)
		b := g.convB(sub(name, "expand3x3"), s, f.e3, 3, 1, 1)
		b = g.relu(sub(name, "expand3x3_activation"), b)
		x = g.concat(sub(name, "cat"), a, b)
	}
	x = g.act("classifier.0", OpDropout, x)
	x = g.convB("classifier.1", x, g.net.Classes, 1, 1, 0)
	x = g.relu("classifier.2", x)
	x = g.gap("classifier.3", x)
	x = g.flatten("flatten", x)
	g.loss(x)
}

// densenetSpec is a DenseNet variant: growth rate, layers per dense block, stem channels.
type densenetSpec struct {
	growth int
	blocks [4]int
	init   int
}

func densenetModels() []model {
	specs := []struct {
		name string
		spec densenetSpec
	}{
		{"densenet121", densenetSpec{32, [4]int{6, 12, 24, 16}, 64}},
		{"densenet161", densenetSpec{48, [4]int{6, 12, 36, 24}, 96}},
		{"densenet169", densenetSpec{32, [4]int{6, 12, 32, 32}, 64}},
		{"densenet201", densenetSpec{32, [4]int{6, 12, 48, 32}, 64}},
	}
	out := make([]model, len(specs))
	for i, s := range specs {
		spec := s.spec
		n := spec.blocks[0] + spec.blocks[1] + spec.blocks[2] + spec.blocks[3]
		out[i] = model{name: s.name, family: "DenseNet", layers: 8*n + 32, build: func(g *graph) { buildDenseNet(g, spec) }}
	}
	return out
}

// buildDenseNet follows torchvision: each dense layer concatenates every earlier feature
// map of its block (torch.cat of the list), then BN-ReLU-conv1×1 (4·growth) and
// BN-ReLU-conv3×3 (growth); transitions halve the channels and the resolution.
func buildDenseNet(g *graph, s densenetSpec) {
	x := g.conv("features.conv0", image, s.init, 7, 2, 3)
	x = g.bn("features.norm0", x)
	x = g.relu("features.relu0", x)
	x = g.maxpool("features.pool0", x, 3, 2, 1, false)
	for b, n := range s.blocks {
		block := fmt.Sprintf("features.denseblock%d", b+1)
		feats := []int{x}
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("%s.denselayer%d", block, i+1)
			in := feats[0]
			if len(feats) > 1 {
				in = g.concat(sub(name, "cat"), feats...)
			}
			y := g.bn(sub(name, "norm1"), in)
			y = g.relu(sub(name, "relu1"), y)
			y = g.conv(sub(name, "conv1"), y, 4*s.growth, 1, 1, 0)
			y = g.bn(sub(name, "norm2"), y)
			y = g.relu(sub(name, "relu2"), y)
			y = g.conv(sub(name, "conv2"), y, s.growth, 3, 1, 1)
			feats = append(feats, y)
		}
		x = g.concat(sub(block, "cat"), feats...)
		if b == len(s.blocks)-1 {
			break
		}
		tr := fmt.Sprintf("features.transition%d", b+1)
		x = g.bn(sub(tr, "norm"), x)
		x = g.relu(sub(tr, "relu"), x)
		x = g.conv(sub(tr, "conv"), x, g.shape(x).C/2, 1, 1, 0)
		x = g.pool(sub(tr, "pool"), OpAvgPool, x, 2, 2, 0, false)
	}
	x = g.bn("features.norm5", x)
	x = g.relu("relu", x)
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.linear("classifier", x, g.net.Classes, true)
	g.loss(x)
}
