package cnn

import "fmt"

// ConvNeXt, as in torchvision's convnext.py.

// convnextSpec is a ConvNeXt variant: channels and blocks of its four stages.
type convnextSpec struct {
	dims   [4]int
	blocks [4]int
	sdProb float64
}

func convnextModels() []model {
	specs := []struct {
		name string
		spec convnextSpec
	}{
		{"convnext_tiny", convnextSpec{[4]int{96, 192, 384, 768}, [4]int{3, 3, 9, 3}, 0.1}},
		{"convnext_small", convnextSpec{[4]int{96, 192, 384, 768}, [4]int{3, 3, 27, 3}, 0.4}},
		{"convnext_base", convnextSpec{[4]int{128, 256, 512, 1024}, [4]int{3, 3, 27, 3}, 0.5}},
		{"convnext_large", convnextSpec{[4]int{192, 384, 768, 1536}, [4]int{3, 3, 27, 3}, 0.5}},
	}
	out := make([]model, len(specs))
	for i, s := range specs {
		spec := s.spec
		out[i] = model{name: s.name, family: "ConvNeXt", layers: 400, build: func(g *graph) { buildConvNeXt(g, spec) }}
	}
	return out
}

// buildConvNeXt: a 4×4 stride-4 stem with LayerNorm2d, stages of CNBlocks (depthwise 7×7,
// permute to channels-last, LayerNorm, Linear 4×, GELU, Linear, permute back, layer scale,
// stochastic depth, residual add) joined by LayerNorm2d and a 2×2 stride-2 conv. A
// LayerNorm2d is one layer norm over the channels at each position.
func buildConvNeXt(g *graph, s convnextSpec) {
	x := g.conv2d("features.0.0", image, s.dims[0], Pair{4, 4}, Pair{4, 4}, Pair{0, 0}, convOpts{Bias: true})
	x = g.norm("features.0.1", OpLayerNorm, x)
	total := s.blocks[0] + s.blocks[1] + s.blocks[2] + s.blocks[3]
	id, f := 0, 1
	for st, n := range s.blocks {
		for i := 0; i < n; i++ {
			sd := s.sdProb * float64(id) / float64(total-1)
			x = cnBlock(g, fmt.Sprintf("features.%d.%d", f, i), x, sd)
			id++
		}
		f++
		if st < 3 {
			x = g.norm(fmt.Sprintf("features.%d.0", f), OpLayerNorm, x)
			x = g.conv2d(fmt.Sprintf("features.%d.1", f), x, s.dims[st+1], Pair{2, 2}, Pair{2, 2}, Pair{0, 0}, convOpts{Bias: true})
			f++
		}
	}
	x = g.gap("avgpool", x)
	x = g.norm("classifier.0", OpLayerNorm, x)
	x = g.flatten("classifier.1", x)
	x = g.linear("classifier.2", x, g.net.Classes, true)
	g.loss(x)
}

func cnBlock(g *graph, name string, x int, sd float64) int {
	c := g.shape(x).C
	y := g.conv2d(sub(name, "block.0"), x, c, Pair{7, 7}, Pair{1, 1}, Pair{3, 3}, convOpts{Groups: c, Bias: true})
	y = g.act(sub(name, "block.1"), OpPermute, y)
	y = g.norm(sub(name, "block.2"), OpLayerNorm, y)
	y = g.linear(sub(name, "block.3"), y, 4*c, true)
	y = g.act(sub(name, "block.4"), OpGELU, y)
	y = g.linear(sub(name, "block.5"), y, c, true)
	y = g.act(sub(name, "block.6"), OpPermute, y)
	y = g.scale(sub(name, "layer_scale"), y)
	return g.residual(name, x, y, sd)
}
