package cnn

import "fmt"

// resnetSpec is one ResNet variant, following torchvision's resnet.py (ResNet v1.5: the
// stride of a bottleneck sits in its 3×3 conv).
type resnetSpec struct {
	bottleneck bool
	blocks     [4]int
	groups     int
	widthPerG  int // base width per group: 64, or 4/8 for ResNeXt, 128 for wide ResNets
}

func resnetModels() []model {
	specs := []struct {
		name, family string
		spec         resnetSpec
	}{
		{"resnet18", "ResNet", resnetSpec{false, [4]int{2, 2, 2, 2}, 1, 64}},
		{"resnet34", "ResNet", resnetSpec{false, [4]int{3, 4, 6, 3}, 1, 64}},
		{"resnet50", "ResNet", resnetSpec{true, [4]int{3, 4, 6, 3}, 1, 64}},
		{"resnet101", "ResNet", resnetSpec{true, [4]int{3, 4, 23, 3}, 1, 64}},
		{"resnet152", "ResNet", resnetSpec{true, [4]int{3, 8, 36, 3}, 1, 64}},
		{"resnext50_32x4d", "ResNeXt", resnetSpec{true, [4]int{3, 4, 6, 3}, 32, 4}},
		{"resnext101_32x8d", "ResNeXt", resnetSpec{true, [4]int{3, 4, 23, 3}, 32, 8}},
		{"resnext101_64x4d", "ResNeXt", resnetSpec{true, [4]int{3, 4, 23, 3}, 64, 4}},
		{"wide_resnet50_2", "Wide ResNet", resnetSpec{true, [4]int{3, 4, 6, 3}, 1, 128}},
		{"wide_resnet101_2", "Wide ResNet", resnetSpec{true, [4]int{3, 4, 23, 3}, 1, 128}},
	}
	out := make([]model, len(specs))
	for i, s := range specs {
		spec := s.spec
		n := spec.blocks[0] + spec.blocks[1] + spec.blocks[2] + spec.blocks[3]
		out[i] = model{name: s.name, family: s.family, layers: 12*n + 16, build: func(g *graph) { buildResNet(g, spec) }}
	}
	return out
}

func buildResNet(g *graph, s resnetSpec) {
	x := g.conv("conv1", image, 64, 7, 2, 3)
	x = g.bn("bn1", x)
	x = g.relu("relu", x)
	x = g.maxpool("maxpool", x, 3, 2, 1, false)
	for stage, n := range s.blocks {
		planes := 64 << stage
		for b := 0; b < n; b++ {
			stride := 1
			if b == 0 && stage > 0 {
				stride = 2
			}
			name := fmt.Sprintf("layer%d.%d", stage+1, b)
			if s.bottleneck {
				x = resnetBottleneck(g, name, x, planes, stride, s.groups, s.widthPerG)
			} else {
				x = resnetBasic(g, name, x, planes, stride)
			}
		}
	}
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.linear("fc", x, g.net.Classes, true)
	g.loss(x)
}

// resnetShortcut is the block's identity, or a 1×1 conv and batch norm where the shape changes.
func resnetShortcut(g *graph, name string, x, out, stride int) int {
	if stride == 1 && g.shape(x).C == out {
		return x
	}
	d := g.conv(sub(name, "downsample.0"), x, out, 1, stride, 0)
	return g.bn(sub(name, "downsample.1"), d)
}

func resnetBasic(g *graph, name string, x, planes, stride int) int {
	y := g.conv(sub(name, "conv1"), x, planes, 3, stride, 1)
	y = g.bn(sub(name, "bn1"), y)
	y = g.relu(sub(name, "relu"), y)
	y = g.conv(sub(name, "conv2"), y, planes, 3, 1, 1)
	y = g.bn(sub(name, "bn2"), y)
	id := resnetShortcut(g, name, x, planes, stride)
	y = g.add(sub(name, "add"), y, id)
	return g.relu(sub(name, "relu_out"), y)
}

func resnetBottleneck(g *graph, name string, x, planes, stride, groups, widthPerG int) int {
	width := planes * widthPerG / 64 * groups
	out := planes * 4
	y := g.conv(sub(name, "conv1"), x, width, 1, 1, 0)
	y = g.bn(sub(name, "bn1"), y)
	y = g.relu(sub(name, "relu1"), y)
	y = g.convG(sub(name, "conv2"), y, width, 3, stride, 1, groups)
	y = g.bn(sub(name, "bn2"), y)
	y = g.relu(sub(name, "relu2"), y)
	y = g.conv(sub(name, "conv3"), y, out, 1, 1, 0)
	y = g.bn(sub(name, "bn3"), y)
	id := resnetShortcut(g, name, x, out, stride)
	y = g.add(sub(name, "add"), y, id)
	return g.relu(sub(name, "relu3"), y)
}
