package cnn

// GoogLeNet and Inception v3, as in torchvision's googlenet.py and inception.py.

func inceptionModels() []model {
	return []model{{name: "inception_v3", family: "Inception", resolution: 299, layers: 320, build: buildInceptionV3}}
}

func googlenetModels() []model {
	return []model{{name: "googlenet", family: "GoogLeNet", layers: 200, build: buildGoogLeNet}}
}

// basicConv is torchvision's BasicConv2d: conv without bias, batch norm, in-place ReLU.
func (g *graph) basicConv(name string, in, out int, k, s, p Pair) int {
	x := g.conv2d(sub(name, "conv"), in, out, k, s, p, convOpts{})
	x = g.bn(sub(name, "bn"), x)
	return g.relu(sub(name, "relu"), x)
}

// bc is basicConv with a square kernel.
func (g *graph) bc(name string, in, out, k, s, p int) int {
	return g.basicConv(name, in, out, Pair{k, k}, Pair{s, s}, Pair{p, p})
}

var one = Pair{1, 1}

// buildInceptionV3 builds torchvision's inception_v3 in training mode: the auxiliary
// classifier on Mixed_6e is part of the graph and its scores feed the loss.
func buildInceptionV3(g *graph) {
	x := g.bc("Conv2d_1a_3x3", image, 32, 3, 2, 0)
	x = g.bc("Conv2d_2a_3x3", x, 32, 3, 1, 0)
	x = g.bc("Conv2d_2b_3x3", x, 64, 3, 1, 1)
	x = g.maxpool("maxpool1", x, 3, 2, 0, false)
	x = g.bc("Conv2d_3b_1x1", x, 80, 1, 1, 0)
	x = g.bc("Conv2d_4a_3x3", x, 192, 3, 1, 0)
	x = g.maxpool("maxpool2", x, 3, 2, 0, false)
	x = inceptionA(g, "Mixed_5b", x, 32)
	x = inceptionA(g, "Mixed_5c", x, 64)
	x = inceptionA(g, "Mixed_5d", x, 64)
	x = inceptionB(g, "Mixed_6a", x)
	x = inceptionC(g, "Mixed_6b", x, 128)
	x = inceptionC(g, "Mixed_6c", x, 160)
	x = inceptionC(g, "Mixed_6d", x, 160)
	x = inceptionC(g, "Mixed_6e", x, 192)
	aux := g.pool("AuxLogits.avgpool", OpAvgPool, x, 5, 3, 0, false)
	aux = g.bc("AuxLogits.conv0", aux, 128, 1, 1, 0)
	aux = g.bc("AuxLogits.conv1", aux, 768, 5, 1, 0)
	aux = g.gap("AuxLogits.adaptive_avgpool", aux)
	aux = g.flatten("AuxLogits.flatten", aux)
	aux = g.linear("AuxLogits.fc", aux, g.net.Classes, true)
	x = inceptionD(g, "Mixed_7a", x)
	x = inceptionE(g, "Mixed_7b", x)
	x = inceptionE(g, "Mixed_7c", x)
	x = g.gap("avgpool", x)
	x = g.act("dropout", OpDropout, x)
	x = g.flatten("flatten", x)
	x = g.linear("fc", x, g.net.Classes, true)
	g.loss(x, aux)
}

func inceptionA(g *graph, name string, x, poolFeatures int) int {
	b1 := g.bc(sub(name, "branch1x1"), x, 64, 1, 1, 0)
	b5 := g.bc(sub(name, "branch5x5_1"), x, 48, 1, 1, 0)
	b5 = g.bc(sub(name, "branch5x5_2"), b5, 64, 5, 1, 2)
	b3 := g.bc(sub(name, "branch3x3dbl_1"), x, 64, 1, 1, 0)
	b3 = g.bc(sub(name, "branch3x3dbl_2"), b3, 96, 3, 1, 1)
	b3 = g.bc(sub(name, "branch3x3dbl_3"), b3, 96, 3, 1, 1)
	bp := g.pool(sub(name, "avgpool"), OpAvgPool, x, 3, 1, 1, false)
	bp = g.bc(sub(name, "branch_pool"), bp, poolFeatures, 1, 1, 0)
	return g.concat(sub(name, "cat"), b1, b5, b3, bp)
}

func inceptionB(g *graph, name string, x int) int {
	b3 := g.bc(sub(name, "branch3x3"), x, 384, 3, 2, 0)
	bd := g.bc(sub(name, "branch3x3dbl_1"), x, 64, 1, 1, 0)
	bd = g.bc(sub(name, "branch3x3dbl_2"), bd, 96, 3, 1, 1)
	bd = g.bc(sub(name, "branch3x3dbl_3"), bd, 96, 3, 2, 0)
	bp := g.maxpool(sub(name, "maxpool"), x, 3, 2, 0, false)
	return g.concat(sub(name, "cat"), b3, bd, bp)
}

func inceptionC(g *graph, name string, x, c7 int) int {
	k17, p17 := Pair{1, 7}, Pair{0, 3}
	k71, p71 := Pair{7, 1}, Pair{3, 0}
	b1 := g.bc(sub(name, "branch1x1"), x, 192, 1, 1, 0)
	b7 := g.bc(sub(name, "branch7x7_1"), x, c7, 1, 1, 0)
	b7 = g.basicConv(sub(name, "branch7x7_2"), b7, c7, k17, one, p17)
	b7 = g.basicConv(sub(name, "branch7x7_3"), b7, 192, k71, one, p71)
	bd := g.bc(sub(name, "branch7x7dbl_1"), x, c7, 1, 1, 0)
	bd = g.basicConv(sub(name, "branch7x7dbl_2"), bd, c7, k71, one, p71)
	bd = g.basicConv(sub(name, "branch7x7dbl_3"), bd, c7, k17, one, p17)
	bd = g.basicConv(sub(name, "branch7x7dbl_4"), bd, c7, k71, one, p71)
	bd = g.basicConv(sub(name, "branch7x7dbl_5"), bd, 192, k17, one, p17)
	bp := g.pool(sub(name, "avgpool"), OpAvgPool, x, 3, 1, 1, false)
	bp = g.bc(sub(name, "branch_pool"), bp, 192, 1, 1, 0)
	return g.concat(sub(name, "cat"), b1, b7, bd, bp)
}

func inceptionD(g *graph, name string, x int) int {
	b3 := g.bc(sub(name, "branch3x3_1"), x, 192, 1, 1, 0)
	b3 = g.bc(sub(name, "branch3x3_2"), b3, 320, 3, 2, 0)
	b7 := g.bc(sub(name, "branch7x7x3_1"), x, 192, 1, 1, 0)
	b7 = g.basicConv(sub(name, "branch7x7x3_2"), b7, 192, Pair{1, 7}, one, Pair{0, 3})
	b7 = g.basicConv(sub(name, "branch7x7x3_3"), b7, 192, Pair{7, 1}, one, Pair{3, 0})
	b7 = g.bc(sub(name, "branch7x7x3_4"), b7, 192, 3, 2, 0)
	bp := g.maxpool(sub(name, "maxpool"), x, 3, 2, 0, false)
	return g.concat(sub(name, "cat"), b3, b7, bp)
}

func inceptionE(g *graph, name string, x int) int {
	k13, p13 := Pair{1, 3}, Pair{0, 1}
	k31, p31 := Pair{3, 1}, Pair{1, 0}
	b1 := g.bc(sub(name, "branch1x1"), x, 320, 1, 1, 0)
	b3 := g.bc(sub(name, "branch3x3_1"), x, 384, 1, 1, 0)
	b3a := g.basicConv(sub(name, "branch3x3_2a"), b3, 384, k13, one, p13)
	b3b := g.basicConv(sub(name, "branch3x3_2b"), b3, 384, k31, one, p31)
	bd := g.bc(sub(name, "branch3x3dbl_1"), x, 448, 1, 1, 0)
	bd = g.bc(sub(name, "branch3x3dbl_2"), bd, 384, 3, 1, 1)
	bda := g.basicConv(sub(name, "branch3x3dbl_3a"), bd, 384, k13, one, p13)
	bdb := g.basicConv(sub(name, "branch3x3dbl_3b"), bd, 384, k31, one, p31)
	bp := g.pool(sub(name, "avgpool"), OpAvgPool, x, 3, 1, 1, false)
	bp = g.bc(sub(name, "branch_pool"), bp, 192, 1, 1, 0)
	return g.concat(sub(name, "cat"), b1, b3a, b3b, bda, bdb, bp)
}

// buildGoogLeNet builds torchvision's googlenet without the auxiliary heads
// (aux_logits=False, as its published weights and parameter count are).
func buildGoogLeNet(g *graph) {
	x := g.bc("conv1", image, 64, 7, 2, 3)
	x = g.maxpool("maxpool1", x, 3, 2, 0, true)
	x = g.bc("conv2", x, 64, 1, 1, 0)
	x = g.bc("conv3", x, 192, 3, 1, 1)
	x = g.maxpool("maxpool2", x, 3, 2, 0, true)
	x = googlenetInception(g, "inception3a", x, 64, 96, 128, 16, 32, 32)
	x = googlenetInception(g, "inception3b", x, 128, 128, 192, 32, 96, 64)
	x = g.maxpool("maxpool3", x, 3, 2, 0, true)
	x = googlenetInception(g, "inception4a", x, 192, 96, 208, 16, 48, 64)
	x = googlenetInception(g, "inception4b", x, 160, 112, 224, 24, 64, 64)
	x = googlenetInception(g, "inception4c", x, 128, 128, 256, 24, 64, 64)
	x = googlenetInception(g, "inception4d", x, 112, 144, 288, 32, 64, 64)
	x = googlenetInception(g, "inception4e", x, 256, 160, 320, 32, 128, 128)
	x = g.maxpool("maxpool4", x, 2, 2, 0, true)
	x = googlenetInception(g, "inception5a", x, 256, 160, 320, 32, 128, 128)
	x = googlenetInception(g, "inception5b", x, 384, 192, 384, 48, 128, 128)
	x = g.gap("avgpool", x)
	x = g.flatten("flatten", x)
	x = g.act("dropout", OpDropout, x)
	x = g.linear("fc", x, g.net.Classes, true)
	g.loss(x)
}

// googlenetInception is torchvision's Inception module; its "5×5" branch uses a 3×3
// kernel, a known quirk that torchvision keeps for its weights.
func googlenetInception(g *graph, name string, x, c1, c3red, c3, c5red, c5, poolProj int) int {
	b1 := g.bc(sub(name, "branch1"), x, c1, 1, 1, 0)
	b2 := g.bc(sub(name, "branch2.0"), x, c3red, 1, 1, 0)
	b2 = g.bc(sub(name, "branch2.1"), b2, c3, 3, 1, 1)
	b3 := g.bc(sub(name, "branch3.0"), x, c5red, 1, 1, 0)
	b3 = g.bc(sub(name, "branch3.1"), b3, c5, 3, 1, 1)
	b4 := g.maxpool(sub(name, "branch4.0"), x, 3, 1, 1, true)
	b4 = g.bc(sub(name, "branch4.1"), b4, poolProj, 1, 1, 0)
	return g.concat(sub(name, "cat"), b1, b2, b3, b4)
}
