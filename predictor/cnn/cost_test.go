package cnn

import (
	"reflect"
	"slices"
	"testing"

	"cnntime/predictor/measure"
)

// smallNet builds image 3x4x4 → conv1 (1×1, 2 ch) → bn → relu (in place) → conv2 (3×3,
// 4 ch, bias) → add with a projection → flatten → linear → loss.
func smallNet(t *testing.T) *Network {
	t.Helper()
	net := &Network{Name: "small", Input: Shape{3, 4, 4}, Classes: 10}
	g := newGraph(net, 16)
	x := g.conv("conv1", image, 2, 1, 1, 0) // 0
	x = g.bn("bn", x)                       // 1
	x = g.relu("relu", x)                   // 2
	y := g.convB("conv2", x, 4, 3, 1, 1)    // 3
	p := g.conv("proj", x, 4, 1, 1, 0)      // 4
	x = g.add("add", y, p)                  // 5
	x = g.flatten("flatten", x)             // 6
	x = g.linear("fc", x, 10, true)         // 7
	g.loss(x)                               // 8
	if g.err != nil {
		t.Fatal(g.err)
	}
	return net
}

func TestPhases(t *testing.T) {
	net := smallNet(t)
	all := []measure.Phase{measure.Forward, measure.BackwardData, measure.BackwardWeights}
	tests := []struct {
		layer int
		want  []measure.Phase
	}{
		{0, []measure.Phase{measure.Forward, measure.BackwardWeights}}, // conv on the image: no input gradient
		{1, []measure.Phase{measure.Forward, measure.BackwardData}},    // batch norm: one fused backward
		{2, []measure.Phase{measure.Forward, measure.BackwardData}},
		{3, all},
		{5, []measure.Phase{measure.Forward}}, // add: gradient passes through
		{6, nil},                              // flatten: a view
		{7, all},
		{8, []measure.Phase{measure.Forward, measure.BackwardData}},
	}
	for _, tt := range tests {
		l := &net.Layers[tt.layer]
		if got := l.Phases(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s phases = %v, want %v", l.Name, got, tt.want)
		}
	}
}

func TestWork(t *testing.T) {
	net := &Network{Input: Shape{16, 8, 8}, Classes: 10}
	g := newGraph(net, 8)
	relu := g.relu("relu", image)             // 0
	conv := g.conv("conv", relu, 32, 3, 1, 1) // 1: 16→32 on 8×8, MACs/sample 32·64·144 = 294912
	bn := g.bn("bn", conv)                    // 2
	pool := g.maxpool("pool", bn, 2, 2, 0, false)
	if g.err != nil {
		t.Fatal(g.err)
	}
	const b, eb = 2, 4
	tests := []struct {
		layer int
		phase measure.Phase
		want  Work
	}{
		{conv, measure.Forward, Work{2 * 2 * 294912, 2*16*64*4 + 32*16*9*4, 2 * 32 * 64 * 4}},
		{conv, measure.BackwardData, Work{2 * 2 * 294912, 2*32*64*4 + 32*16*9*4, 2 * 16 * 64 * 4}},
		{conv, measure.BackwardWeights, Work{2 * 2 * 294912, 2 * (16 + 32) * 64 * 4, 32 * 16 * 9 * 4}},
		{bn, measure.Forward, Work{6 * 2 * 2048, 2*2*2048*4 + 64*4, 2 * 2048 * 4}},
		{bn, measure.BackwardWeights, Work{}}, // fused into the backward-data kernel
		{relu, measure.Forward, Work{2 * 1024, 2 * 1024 * 4, 2 * 1024 * 4}},
		{relu, measure.BackwardData, Work{}}, // its only input is the image
		{pool, measure.Forward, Work{4 * 2 * 512, 2 * 2048 * 4, 2*512*4 + 8*2*512}},
		{pool, measure.BackwardData, Work{2 * 512, 2*512*4 + 8*2*512, 2 * 2048 * 4}},
	}
	for _, tt := range tests {
		l := &net.Layers[tt.layer]
		if got := l.Work(tt.phase, b, eb); got != tt.want {
			t.Errorf("%s %s: %+v, want %+v", l.Name, tt.phase, got, tt.want)
		}
	}
}

func TestGEMM(t *testing.T) {
	net := &Network{Input: Shape{16, 8, 8}, Classes: 10}
	g := newGraph(net, 8)
	x := g.relu("relu", image)
	conv := g.conv("conv", x, 32, 3, 2, 1)     // 16→32, 8×8 → 4×4
	dw := g.convG("dw", conv, 32, 3, 1, 1, 32) // depthwise
	fc := g.linear("fc", g.flatten("f", dw), 10, true)
	if g.err != nil {
		t.Fatal(g.err)
	}
	tests := []struct {
		layer int
		phase measure.Phase
		want  GEMM
	}{
		{conv, measure.Forward, GEMM{M: 3 * 16, N: 32, K: 144, Groups: 1}},
		{conv, measure.BackwardData, GEMM{M: 3 * 64, N: 16, K: 288, Groups: 1}},
		{conv, measure.BackwardWeights, GEMM{M: 32, N: 144, K: 3 * 16, Groups: 1}},
		{dw, measure.Forward, GEMM{M: 3 * 16, N: 1, K: 9, Groups: 32}},
		{fc, measure.Forward, GEMM{M: 3, N: 10, K: 512, Groups: 1}},
		{fc, measure.BackwardWeights, GEMM{M: 10, N: 512, K: 3, Groups: 1}},
	}
	for _, tt := range tests {
		l := &net.Layers[tt.layer]
		got, ok := l.GEMM(tt.phase, 3)
		if !ok || got != tt.want {
			t.Errorf("%s %s: %+v %v, want %+v", l.Name, tt.phase, got, ok, tt.want)
		}
		if tt.phase == measure.Forward && got.MACs() != 3*l.MACs {
			t.Errorf("%s: GEMM MACs %d, layer MACs×batch %d", l.Name, got.MACs(), 3*l.MACs)
		}
	}
	if _, ok := net.Layers[x].GEMM(measure.Forward, 3); ok {
		t.Error("relu has a GEMM view")
	}
}

func TestSavedBytes(t *testing.T) {
	net := smallNet(t)
	// Per sample: conv1 out 32 (saved by bn), bn out 32 shared by the in-place relu, conv2
	// and proj, add out 64 (saved by fc through flatten), the loss's 10 log-probabilities.
	// The image saved by conv1 is not counted.
	if got, want := net.SavedBytes(4), int64((32+32+64+10)*4); got != want {
		t.Errorf("network saved bytes = %d, want %d", got, want)
	}
	tests := []struct {
		layer int
		want  int64
	}{
		{0, 48 * 4}, {1, 32 * 4}, {2, 32 * 4}, {3, 32 * 4}, {5, 0}, {6, 0}, {7, 64 * 4}, {8, 10 * 4}, // the loss keeps FP32 log-probabilities under amp too
	}
	for _, tt := range tests {
		eb := 4
		if tt.layer == 8 {
			eb = 2
		}
		if got := net.Layers[tt.layer].SavedBytes(eb); got != tt.want {
			t.Errorf("%s saved bytes = %d, want %d", net.Layers[tt.layer].Name, got, tt.want)
		}
	}
}

// TestConvNeXtSavedBytesByPrecision checks convnext_tiny's saved activations per sample
// against a count by hand. Per block of C channels at S = H·W positions:
//   - FP32: the depthwise conv's input (4C), the layer norm's input (4C), the first
//     linear's input (4C), GELU's input (16C), the second linear's input (16C) and the
//     layer scale's input (4C), plus the layer norm's FP32 mean and rstd (8 per position).
//   - amp: the depthwise conv saves an FP16 copy of the FP32 residual stream (2C); the
//     layer norm runs in FP32 (autocast's float32 list) and saves an FP32 copy of the
//     conv's FP16 output (4C); the first linear saves an FP16 copy of the layer norm's
//     FP32 output (2C); GELU, the second linear and the layer scale save FP16 tensors
//     (8C, 8C, 2C); the layer scale's FP32 parameter makes the stream FP32 again.
//
// The stem's layer norm saves the stem conv's output; each downsampling layer norm saves
// the stream and its conv the norm's output; the head's layer norm saves the pooled 768
// features and the classifier their copy; the loss keeps 1000 log-probabilities. Every
// block but the first (whose drop probability is 0) has a stochastic depth that saves its
// per-sample noise, one element in the activations' precision.
func TestConvNeXtSavedBytesByPrecision(t *testing.T) {
	net, err := Build("convnext_tiny", Options{})
	if err != nil {
		t.Fatal(err)
	}
	dims := [4]int64{96, 192, 384, 768}
	blocks := [4]int64{3, 3, 9, 3}
	sides := [4]int64{56, 28, 14, 7}
	tests := []struct {
		name                                          string
		elemBytes                                     int
		block, stem, downNorm, downConv, head, logits int64 // bytes per element of each saved tensor
	}{
		{"fp32", 4, 48, 4, 4, 4, 4 + 4, 4},
		{"amp", 2, 26, 4, 4, 2, 4 + 2, 4}, // FP32 log-probabilities
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const stats = 8 // FP32 mean and rstd per position of each layer norm
			s0 := sides[0] * sides[0]
			want := tt.stem*dims[0]*s0 + stats*s0
			for st := range dims {
				s := sides[st] * sides[st]
				want += blocks[st] * (tt.block*dims[st]*s + stats*s)
				if st < 3 {
					want += (tt.downNorm+tt.downConv)*dims[st]*s + stats*s
				}
			}
			want += tt.head*dims[3] + stats + tt.logits*1000
			want += (3 + 3 + 9 + 3 - 1) * int64(tt.elemBytes) // stochastic depth noise
			if got := net.SavedBytes(tt.elemBytes); got != want {
				t.Errorf("convnext_tiny %s saved bytes per sample = %d, want %d by hand", tt.name, got, want)
			}
		})
	}
}

// TestSavedBytesCastCopies checks the amp precision rules on a small graph: a layer norm
// saves an FP32 copy of an FP16 conv output, each of two convs reading the norm's FP32
// output saves its own FP16 copy, and a batch norm after a conv saves the FP16 tensor
// itself, shared with nothing.
func TestSavedBytesCastCopies(t *testing.T) {
	net := &Network{Name: "casts", Input: Shape{3, 4, 4}, Classes: 10}
	g := newGraph(net, 16)
	x := g.conv("conv", image, 2, 1, 1, 0) // 0: out 2×4×4 = 32 elements, FP16 under amp
	n := g.norm("ln", OpLayerNorm, x)      // 1: saves an FP32 copy of conv (32×4) + stats 16×8
	a := g.conv("a", n, 2, 1, 1, 0)        // 2: saves an FP16 copy of ln (32×2)
	b := g.conv("b", n, 2, 1, 1, 0)        // 3: saves another FP16 copy of ln (32×2)
	y := g.add("add", a, b)                // 4
	y = g.bn("bn", y)                      // 5: saves add's FP16 output (32×2)
	y = g.flatten("flatten", y)            // 6
	y = g.linear("fc", y, 10, true)        // 7: saves bn's FP16 output (32×2)
	g.loss(y)                              // 8: 10 log-probabilities, FP32 also under amp
	if g.err != nil {
		t.Fatal(g.err)
	}
	tests := []struct {
		elemBytes int
		want      int64
	}{
		// FP32: conv out, ln out (shared by a and b), add out, bn out; stats; logits.
		{4, 4*32*4 + 16*8 + 10*4},
		{2, 32*4 + 16*8 + 2*32*2 + 32*2 + 32*2 + 10*4},
	}
	for _, tt := range tests {
		if got := net.SavedBytes(tt.elemBytes); got != tt.want {
			t.Errorf("SavedBytes(%d) = %d, want %d", tt.elemBytes, got, tt.want)
		}
	}
	if got, want := net.Layers[1].SavedBytes(2), int64(32*4+16*8); got != want {
		t.Errorf("layer norm on its own under amp saves %d bytes, want %d (FP32 input and stats)", got, want)
	}
}

// TestSavedBytesOfPoolsAndInPlaceReLU6 checks what autograd keeps for the layers whose
// rules torchvision_parity.py found: an in-place ReLU6 clones its input (hardtanh_'s
// derivative reads self), pools keep their input except a global one (a mean over H×W
// needs only the shape), stochastic depth keeps one noise element per sample.
func TestSavedBytesOfPoolsAndInPlaceReLU6(t *testing.T) {
	in := Shape{C: 8, H: 4, W: 4}
	tests := []struct {
		name  string
		layer Layer
		want4 int64 // FP32
		want2 int64 // amp
	}{
		{"relu6 in place", Layer{Config: Config{Op: OpReLU6, In: in, Out: in}, InShapes: []Shape{in}, InPlace: true}, 128 * 4, 128 * 2},
		{"relu6", Layer{Config: Config{Op: OpReLU6, In: in, Out: in}, InShapes: []Shape{in}}, 128 * 4, 128 * 2},
		{"avgpool", Layer{Config: Config{Op: OpAvgPool, In: in, Out: Shape{C: 8, H: 2, W: 2}}, InShapes: []Shape{in}}, 128 * 4, 128 * 2},
		{"adaptive to 2x2", Layer{Config: Config{Op: OpAdaptiveAvg, In: in, Out: Shape{C: 8, H: 2, W: 2}}, InShapes: []Shape{in}}, 128 * 4, 128 * 2},
		{"adaptive to 1x1", Layer{Config: Config{Op: OpAdaptiveAvg, In: in, Out: Shape{C: 8, H: 1, W: 1}}, InShapes: []Shape{in}}, 0, 0},
		{"stochastic depth", Layer{Config: Config{Op: OpStochasticDepth, In: in, Out: in}, InShapes: []Shape{in}}, 4, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.layer.SavedBytes(4); got != tt.want4 {
				t.Errorf("FP32 saved bytes = %d, want %d", got, tt.want4)
			}
			if got := tt.layer.SavedBytes(2); got != tt.want2 {
				t.Errorf("amp saved bytes = %d, want %d", got, tt.want2)
			}
		})
	}
}

// PhaseList gives the forward pass, then the gradients asked for, and its shared
// lists stay as they are when a caller appends to one.
func TestPhaseList(t *testing.T) {
	for _, tc := range []struct {
		data, weights bool
		want          []measure.Phase
	}{
		{false, false, []measure.Phase{measure.Forward}},
		{true, false, []measure.Phase{measure.Forward, measure.BackwardData}},
		{false, true, []measure.Phase{measure.Forward, measure.BackwardWeights}},
		{true, true, []measure.Phase{measure.Forward, measure.BackwardData, measure.BackwardWeights}},
	} {
		got := PhaseList(tc.data, tc.weights)
		if !slices.Equal(got, tc.want) {
			t.Errorf("PhaseList(%t, %t) = %v, want %v", tc.data, tc.weights, got, tc.want)
		}
		_ = append(got, measure.BackwardData)
		if again := PhaseList(tc.data, tc.weights); !slices.Equal(again, tc.want) {
			t.Errorf("after an append, PhaseList(%t, %t) = %v, want %v", tc.data, tc.weights, again, tc.want)
		}
	}
}
