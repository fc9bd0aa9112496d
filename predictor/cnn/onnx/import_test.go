package onnx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/cnn/onnx"
	"cnntime/predictor/cnn/onnx/onnxpb"
	ot "cnntime/predictor/cnn/onnx/onnxtest"

	"google.golang.org/protobuf/proto"
)

func importGraph(t *testing.T, g *ot.Graph, opt onnx.Options) (*onnx.Model, error) {
	t.Helper()
	if opt.Name == "" {
		opt.Name = "net"
	}
	return onnx.Import(bytes.NewReader(g.Bytes()), opt)
}

// ops lists a network's layer ops, the loss left out.
func ops(net *cnn.Network) []cnn.Op {
	var out []cnn.Op
	for _, l := range net.Layers {
		if l.Op != cnn.OpLoss {
			out = append(out, l.Op)
		}
	}
	return out
}

func TestImportTinyCNN(t *testing.T) {
	m, err := importGraph(t, ot.TinyCNN(32, 10), onnx.Options{Name: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	net := m.Network
	want := []cnn.Op{cnn.OpConv2d, cnn.OpBatchNorm, cnn.OpReLU, cnn.OpConv2d, cnn.OpBatchNorm, cnn.OpAdd, cnn.OpReLU,
		cnn.OpMaxPool, cnn.OpAdaptiveAvg, cnn.OpFlatten, cnn.OpDropout, cnn.OpLinear}
	if got := ops(net); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	if net.Name != "tiny" || net.Classes != 10 || net.Input != (cnn.Shape{C: 3, H: 32, W: 32}) || !net.Custom {
		t.Errorf("network %s: %d classes, input %s, custom %t", net.Name, net.Classes, net.Input, net.Custom)
	}
	if p := ot.TinyCNNParams(10); net.Params() != p || m.WeightElems != p {
		t.Errorf("params %d, weights from dims %d, want %d", net.Params(), m.WeightElems, p)
	}
	// conv1 3→8 3×3 at 32×32, conv2 8→8, fc 8→10
	if got, want := net.MACs(), int64(32*32*8*3*9+32*32*8*8*9+8*10); got != want {
		t.Errorf("MACs %d, want %d", got, want)
	}
	// The JSON is a custom model file that reads back to the same network.
	again, err := cnn.ParseCustom(m.JSON)
	if err != nil {
		t.Fatalf("the import's JSON does not parse: %v\n%s", err, m.JSON)
	}
	if again.Params() != net.Params() || len(again.Layers) != len(net.Layers) {
		t.Errorf("the JSON reads back as %d layers, %d params", len(again.Layers), again.Params())
	}
	if len(m.Notes) != 0 {
		t.Errorf("notes %q, want none", m.Notes)
	}
}

// graphCase builds a model around a body that maps the image [1, 8, 16, 16] to a tensor
// the test then classifies with GAP → Flatten → Gemm to 4 classes (unless the body returns "").
type graphCase struct {
	name    string
	body    func(g *ot.Graph) string
	opt     onnx.Options
	dims    []int64 // the image's dims; default [1, 8, 16, 16]
	want    []cnn.Op
	params  int64  // when not 0: the parameters expected
	wantErr string // a part of the error expected
	note    string // a part of a note expected
}

// head classifies an NCHW tensor of c channels into 4 classes.
func head(g *ot.Graph, x string, c int64) string {
	x = g.Node("GlobalAveragePool", []string{x})
	x = g.Node("Flatten", []string{x}, ot.AttrInt("axis", 1))
	return g.Gemm(x, c, 4)
}

var headOps = []cnn.Op{cnn.OpAdaptiveAvg, cnn.OpFlatten, cnn.OpLinear}

func runCases(t *testing.T, cases []graphCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dims := tc.dims
			if dims == nil {
				dims = []int64{1, 8, 16, 16}
			}
			g := ot.New(dims...)
			if out := tc.body(g); out != "" {
				g.Output(out)
			}
			m, err := importGraph(t, g, tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ops(m.Network); !slices.Equal(got, tc.want) {
				t.Errorf("ops %v, want %v\n%s", got, tc.want, m.JSON)
			}
			if tc.params != 0 && (m.Network.Params() != tc.params || m.WeightElems != tc.params) {
				t.Errorf("params %d, weights from dims %d, want %d", m.Network.Params(), m.WeightElems, tc.params)
			}
			if tc.note != "" && !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
				t.Errorf("notes %q, want one saying %q", m.Notes, tc.note)
			}
		})
	}
}

func concat(a []cnn.Op, b ...cnn.Op) []cnn.Op { return append(slices.Clone(a), b...) }

func TestImportOps(t *testing.T) {
	gemm := int64(8*4 + 4)
	runCases(t, []graphCase{
		{name: "SiLU as Sigmoid and Mul", body: func(g *ot.Graph) string {
			s := g.Node("Sigmoid", []string{"image"})
			return head(g, g.Node("Mul", []string{"image", s}), 8)
		}, want: concat([]cnn.Op{cnn.OpSiLU}, headOps...)},
		{name: "a sigmoid gate stays a sigmoid and a mul", body: func(g *ot.Graph) string {
			p := g.Node("GlobalAveragePool", []string{"image"})
			s := g.Node("Sigmoid", []string{p})
			return head(g, g.Node("Mul", []string{s, "image"}), 8)
		}, want: concat([]cnn.Op{cnn.OpAdaptiveAvg, cnn.OpSigmoid, cnn.OpMul}, headOps...)},
		{name: "hard swish as HardSigmoid and Mul", body: func(g *ot.Graph) string {
			s := g.Node("HardSigmoid", []string{"image"}, ot.AttrFloat("alpha", 1.0/6))
			return head(g, g.Node("Mul", []string{s, "image"}), 8)
		}, want: concat([]cnn.Op{cnn.OpHardswish}, headOps...)},
		{name: "GELU in erf form", body: func(g *ot.Graph) string {
			d := g.Node("Div", []string{"image", g.Float(1.4142135)})
			e := g.Node("Erf", []string{d})
			a := g.Node("Add", []string{e, g.Float(1)})
			m := g.Node("Mul", []string{"image", a})
			return head(g, g.Node("Mul", []string{m, g.Float(0.5)}), 8)
		}, want: concat([]cnn.Op{cnn.OpGELU}, headOps...)},
		{name: "Clip to 0..6 is ReLU6", body: func(g *ot.Graph) string {
			return head(g, g.Node("Clip", []string{"image", g.Float(0), g.Float(6)}), 8)
		}, want: concat([]cnn.Op{cnn.OpReLU6}, headOps...)},
		{name: "Clip to other bounds", body: func(g *ot.Graph) string {
			return head(g, g.Node("Clip", []string{"image", g.Float(-1), g.Float(1)}), 8)
		}, wantErr: "clips to [-1, 1]"},
		{name: "a zero Pad folds into the average pool after it", body: func(g *ot.Graph) string {
			p := g.Node("Pad", []string{"image", g.Ints([]int64{8}, 0, 0, 1, 1, 0, 0, 1, 1)})
			return head(g, g.Node("AveragePool", []string{p}, ot.AttrInts("kernel_shape", 3, 3)), 8)
		}, want: concat([]cnn.Op{cnn.OpAvgPool}, headOps...), params: gemm},
		{name: "a Pad before anything but a conv or pool", body: func(g *ot.Graph) string {
			p := g.Node("Pad", []string{"image", g.Ints([]int64{8}, 0, 0, 1, 1, 0, 0, 1, 1)})
			return head(g, g.Node("Relu", []string{p}), 8)
		}, wantErr: "folds a Pad only into the Conv or pooling"},
		{name: "channel shuffle as Reshape, Transpose, Reshape", body: func(g *ot.Graph) string {
			r := g.Node("Reshape", []string{"image", g.Ints([]int64{5}, 1, 2, 4, 16, 16)})
			tr := g.Node("Transpose", []string{r}, ot.AttrInts("perm", 0, 2, 1, 3, 4))
			return head(g, g.Node("Reshape", []string{tr, g.Ints([]int64{4}, 1, -1, 16, 16)}), 8)
		}, want: concat([]cnn.Op{cnn.OpChannelShuffle}, headOps...)},
		{name: "a 5-D reshape that is not a shuffle", body: func(g *ot.Graph) string {
			r := g.Node("Reshape", []string{"image", g.Ints([]int64{5}, 1, 2, 4, 16, 16)})
			return head(g, g.Node("Relu", []string{r}), 8)
		}, wantErr: "reshapes [1 8 16 16] to [1 2 4 16 16]"},
		{name: "Split of channels into slices", body: func(g *ot.Graph) string {
			parts := g.NodeN("Split", 2, []string{"image", g.Ints([]int64{2}, 3, 5)}, ot.AttrInt("axis", 1))
			return head(g, g.Node("Concat", []string{parts[1], parts[0]}, ot.AttrInt("axis", 1)), 8)
		}, want: concat([]cnn.Op{cnn.OpSlice, cnn.OpSlice, cnn.OpConcat}, headOps...)},
		{name: "Slice of the spatial axes", body: func(g *ot.Graph) string {
			s := g.Node("Slice", []string{"image", g.Ints([]int64{1}, 0), g.Ints([]int64{1}, 8), g.Ints([]int64{1}, 2)})
			return head(g, s, 8)
		}, wantErr: "slices axis 2"},
		{name: "Slice of channels through shape arithmetic", body: func(g *ot.Graph) string {
			sh := g.Node("Shape", []string{"image"})
			c := g.Node("Gather", []string{sh, g.Ints([]int64{1}, 1)}, ot.AttrInt("axis", 0))
			half := g.Node("Div", []string{c, g.Ints([]int64{1}, 2)})
			s := g.Node("Slice", []string{"image", half, c, g.Ints([]int64{1}, 1)})
			return head(g, s, 4)
		}, want: concat([]cnn.Op{cnn.OpSlice}, headOps...), params: 4*4 + 4},
		{name: "LayerNorm2d: permute, layer norm, permute back", body: func(g *ot.Graph) string {
			a := g.Node("Transpose", []string{"image"}, ot.AttrInts("perm", 0, 2, 3, 1))
			l := g.Node("LayerNormalization", []string{a, g.Weight(8), g.Weight(8)}, ot.AttrInt("axis", -1))
			return head(g, g.Node("Transpose", []string{l}, ot.AttrInts("perm", 0, 3, 1, 2)), 8)
		}, want: concat([]cnn.Op{cnn.OpLayerNorm}, headOps...), params: 16 + gemm},
		{name: "layer norm written out (opset 14) between permutes", body: func(g *ot.Graph) string {
			a := g.Node("Transpose", []string{"image"}, ot.AttrInts("perm", 0, 2, 3, 1))
			mean := g.Node("ReduceMean", []string{a}, ot.AttrInts("axes", -1))
			sub := g.Node("Sub", []string{a, mean})
			pw := g.Node("Pow", []string{sub, g.Float(2)})
			v := g.Node("ReduceMean", []string{pw}, ot.AttrInts("axes", -1))
			e := g.Node("Add", []string{v, g.Float(1e-6)})
			sq := g.Node("Sqrt", []string{e})
			d := g.Node("Div", []string{sub, sq})
			m := g.Node("Mul", []string{d, g.Weight(8)})
			b := g.Node("Add", []string{m, g.Weight(8)})
			return head(g, g.Node("Transpose", []string{b}, ot.AttrInts("perm", 0, 3, 1, 2)), 8)
		}, want: concat([]cnn.Op{cnn.OpLayerNorm}, headOps...), params: 16 + gemm},
		{name: "a channels-last block: permute, linear with bias, GELU, permute back, layer scale", body: func(g *ot.Graph) string {
			a := g.Node("Transpose", []string{"image"}, ot.AttrInts("perm", 0, 2, 3, 1))
			w := g.Node("Transpose", []string{g.Weight(32, 8)}, ot.AttrInts("perm", 1, 0))
			mm := g.Node("MatMul", []string{a, w})
			l := g.Node("Add", []string{g.Weight(32), mm})
			b := g.Node("Transpose", []string{l}, ot.AttrInts("perm", 0, 3, 1, 2))
			s := g.Node("Mul", []string{g.Weight(32, 1, 1), b})
			return head(g, s, 32)
		}, want: concat([]cnn.Op{cnn.OpPermute, cnn.OpLinear, cnn.OpPermute, cnn.OpScale}, headOps...), params: 8*32 + 32 + 32 + 32*4 + 4},
		{name: "stochastic depth: an activation times a per-sample random mask", body: func(g *ot.Graph) string {
			shape := g.Ints([]int64{4}, 1, 1, 1, 1)
			noise := g.Node("ConstantOfShape", []string{shape})
			u := g.Node("RandomUniformLike", []string{noise})
			keep := g.Node("Cast", []string{g.Node("Less", []string{u, g.Float(0.9)})}, ot.AttrInt("to", 1))
			scaled := g.Node("Div", []string{keep, g.Float(0.9)})
			sd := g.Node("Mul", []string{"image", scaled})
			return head(g, g.Node("Add", []string{sd, "image"}), 8)
		}, want: concat([]cnn.Op{cnn.OpStochasticDepth, cnn.OpAdd}, headOps...)},
		{name: "dropout as a mask of the activation's shape", body: func(g *ot.Graph) string {
			u := g.Node("RandomUniformLike", []string{"image"})
			keep := g.Node("Cast", []string{g.Node("Less", []string{u, g.Float(0.5)})}, ot.AttrInt("to", 1))
			return head(g, g.Node("Mul", []string{"image", keep}), 8)
		}, want: concat([]cnn.Op{cnn.OpDropout}, headOps...)},
		{name: "a final Softmax folds into the loss", body: func(g *ot.Graph) string {
			return g.Node("Softmax", []string{head(g, "image", 8)}, ot.AttrInt("axis", 1))
		}, want: headOps, note: "Softmax over the class scores is left out"},
		{name: "a Softmax inside the network", body: func(g *ot.Graph) string {
			return head(g, g.Node("Softmax", []string{"image"}, ot.AttrInt("axis", 1)), 8)
		}, wantErr: "a softmax inside the network"},
		{name: "a mean over height and width without keepdims", body: func(g *ot.Graph) string {
			m := g.Node("ReduceMean", []string{"image"}, ot.AttrInts("axes", 2, 3), ot.AttrInt("keepdims", 0))
			return g.Gemm(m, 8, 4)
		}, want: []cnn.Op{cnn.OpAdaptiveAvg, cnn.OpFlatten, cnn.OpLinear}},
		{name: "flatten through Shape, Gather, Unsqueeze, Concat, Reshape", body: func(g *ot.Graph) string {
			p := g.Node("GlobalAveragePool", []string{"image"})
			sh := g.Node("Shape", []string{p})
			n := g.Node("Gather", []string{sh, g.Ints(nil, 0)}, ot.AttrInt("axis", 0))
			nn := g.Node("Unsqueeze", []string{n, g.Ints([]int64{1}, 0)})
			target := g.Node("Concat", []string{nn, g.Ints([]int64{1}, -1)}, ot.AttrInt("axis", 0))
			return g.Gemm(g.Node("Reshape", []string{p, target}), 8, 4)
		}, want: headOps},
		{name: "a reshape that moves the batch", body: func(g *ot.Graph) string {
			return g.Gemm(g.Node("Reshape", []string{"image", g.Ints([]int64{2}, -1, 256)}), 256, 4)
		}, wantErr: "changes the batch dimension"},
		{name: "an Add of a learned tensor that is not a bias", body: func(g *ot.Graph) string {
			return head(g, g.Node("Add", []string{"image", g.Weight(8, 16, 16)}), 8)
		}, wantErr: "folds such an Add only as the bias"},
		{name: "MatMul of two activations", body: func(g *ot.Graph) string {
			a := g.Node("Transpose", []string{"image"}, ot.AttrInts("perm", 0, 2, 3, 1))
			return head(g, g.Node("MatMul", []string{a, a}), 8)
		}, wantErr: "multiplies two activations"},
		{name: "an op cnntime has no layer for", body: func(g *ot.Graph) string {
			return head(g, g.Node("LeakyRelu", []string{"image"}), 8)
		}, wantErr: `node "/LeakyRelu_1" (LeakyRelu): cnntime has no layer for LeakyRelu`},
		{name: "an op of another domain", body: func(g *ot.Graph) string {
			x := g.Node("Relu", []string{"image"})
			g.Model.Graph.Node[len(g.Model.Graph.Node)-1].Domain = proto.String("com.microsoft")
			return head(g, x, 8)
		}, wantErr: `of the "com.microsoft" domain`},
		{name: "dynamic height and width without an input size", dims: []int64{ot.Dynamic, 8, ot.Dynamic, ot.Dynamic},
			body: func(g *ot.Graph) string { return head(g, "image", 8) }, wantErr: "dynamic height or width"},
		{name: "dynamic height and width with an input size", dims: []int64{ot.Dynamic, 8, ot.Dynamic, ot.Dynamic}, opt: onnx.Options{Resolution: 40},
			body: func(g *ot.Graph) string { return head(g, "image", 8) }, want: headOps},
		{name: "an input size against the file's fixed one", opt: onnx.Options{Resolution: 40},
			body: func(g *ot.Graph) string { return head(g, "image", 8) }, wantErr: "fixes the input \"image\" at 16x16, not 40x40"},
		{name: "an input that is not an image batch", dims: []int64{1, 8},
			body: func(g *ot.Graph) string { return g.Gemm("image", 8, 4) }, wantErr: "one batch of images [N, C, H, W]"},
		{name: "a second image input", body: func(g *ot.Graph) string {
			g.Model.Graph.Input = append(g.Model.Graph.Input, ot.ValueInfo("image2", 1, 8, ot.Dynamic, 16))
			return head(g, g.Node("Add", []string{"image", "image2"}), 8)
		}, wantErr: `second input "image2"`},
		{name: "a negative input dimension", dims: []int64{1, 8, -5, 16},
			body: func(g *ot.Graph) string { return head(g, "image", 8) }, wantErr: "negative dimension -5"},
		{name: "an initializer with a negative dimension", body: func(g *ot.Graph) string {
			return head(g, g.Node("Conv", []string{"image", g.Weight(-8, 8, 3, 3)}, ot.AttrInts("kernel_shape", 3, 3)), 8)
		}, wantErr: "dimension -8 is negative"},
		{name: "an output that is not class scores", body: func(g *ot.Graph) string {
			return g.Conv("image", 8, 4, 3, 1, 1, 1, false)
		}, wantErr: "has shape [1 4 16 16]: cnntime trains classifiers"},
		{name: "a cycle", body: func(g *ot.Graph) string {
			a := g.Node("Relu", []string{"t_3"})
			b := g.Node("Add", []string{a, "image"})
			_ = b
			return head(g, a, 8)
		}, wantErr: "is on a cycle"},
		{name: "a tensor no node writes", body: func(g *ot.Graph) string {
			return head(g, g.Node("Relu", []string{"nowhere"}), 8)
		}, wantErr: `reads "nowhere", which no node`},
		{name: "a tensor two nodes write", body: func(g *ot.Graph) string {
			x := g.Node("Relu", []string{"image"})
			g.Node("Sigmoid", []string{"image"})
			g.Model.Graph.Node[len(g.Model.Graph.Node)-1].Output = []string{x}
			return head(g, x, 8)
		}, wantErr: "which another node writes too"},
		{name: "asymmetric padding", body: func(g *ot.Graph) string {
			return head(g, g.Node("Conv", []string{"image", g.Weight(8, 8, 3, 3)}, ot.AttrInts("pads", 1, 1, 0, 0)), 8)
		}, wantErr: "differs between opposite sides"},
		{name: "huge pads", body: func(g *ot.Graph) string {
			const huge = 1 << 62 // the padded size overflowed to a negative one
			return head(g, g.Node("Conv", []string{"image", g.Weight(8, 8, 3, 3)}, ot.AttrInts("pads", huge, huge, huge, huge)), 8)
		}, wantErr: "its pads [4611686018427387904 4611686018427387904 4611686018427387904 4611686018427387904] must be from 0 to 65536"},
		{name: "a conv weight that does not fit the input's channels", body: func(g *ot.Graph) string {
			return head(g, g.Node("Conv", []string{"image", g.Weight(8, 3, 3, 3)}), 8)
		}, wantErr: "does not fit its input's 8 channels"},
		// Types and opsets no CNN has.
		{name: "an image of strings", body: func(g *ot.Graph) string {
			g.Model.Graph.Input[0].Type.GetTensorType().ElemType = proto.Int32(int32(onnxpb.TensorProto_STRING))
			return head(g, "image", 8)
		}, wantErr: `input "image": it holds STRING values: a CNN's images, weights and constants are numbers`},
		{name: "a weight of strings", body: func(g *ot.Graph) string {
			w := g.Weight(8, 8, 3, 3)
			g.Model.Graph.Initializer[len(g.Model.Graph.Initializer)-1].DataType = proto.Int32(int32(onnxpb.TensorProto_STRING))
			return head(g, g.Node("Conv", []string{"image", w}, ot.AttrInts("pads", 1, 1, 1, 1)), 8)
		}, wantErr: `initializer "w_1": it holds STRING values`},
		{name: "a weight of element type 999", body: func(g *ot.Graph) string {
			w := g.Weight(8, 8, 3, 3)
			g.Model.Graph.Initializer[len(g.Model.Graph.Initializer)-1].DataType = proto.Int32(999)
			return head(g, g.Node("Conv", []string{"image", w}, ot.AttrInts("pads", 1, 1, 1, 1)), 8)
		}, wantErr: `initializer "w_1": its data type 999 is not an ONNX type`},
		{name: "an image of element type 999", body: func(g *ot.Graph) string {
			g.Model.Graph.Input[0].Type.GetTensorType().ElemType = proto.Int32(999)
			return head(g, "image", 8)
		}, wantErr: `input "image": its data type 999 is not an ONNX type`},
		{name: "opset 2^40", body: func(g *ot.Graph) string {
			g.Model.OpsetImport[0].Version = proto.Int64(1 << 40)
			return head(g, "image", 8)
		}, wantErr: "opset 1099511627776, which is no ONNX opset"},
		{name: "a grouped, strided, dilated conv", body: func(g *ot.Graph) string {
			c := g.Node("Conv", []string{"image", g.Weight(16, 2, 3, 3), g.Weight(16)}, ot.AttrInt("group", 4),
				ot.AttrInts("strides", 2, 2), ot.AttrInts("dilations", 2, 2), ot.AttrInts("pads", 2, 2, 2, 2))
			return head(g, c, 16)
		}, want: concat([]cnn.Op{cnn.OpConv2d}, headOps...), params: 16*2*9 + 16 + 16*4 + 4},
	})
}

// A node that reads the same tensor twice names it once in the layer's inputs? No: an
// Add of x and x is two inputs, as torch runs it.
func TestImportAddOfItself(t *testing.T) {
	g := ot.New(1, 8, 16, 16)
	g.Output(head(g, g.Node("Add", []string{"image", "image"}), 8))
	m, err := importGraph(t, g, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l := m.Network.Layers[0]; l.Op != cnn.OpAdd || len(l.Inputs) != 2 {
		t.Errorf("first layer %s with inputs %v, want an add of two", l.Op, l.Inputs)
	}
}

// Auxiliary heads: every output of class scores feeds the loss, as in training.
func TestImportAuxiliaryOutputs(t *testing.T) {
	g := ot.New(1, 8, 16, 16)
	main := head(g, g.Node("Relu", []string{"image"}), 8)
	aux := head(g, "image", 8)
	g.Output(main)
	g.Output(aux)
	m, err := importGraph(t, g, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	loss := m.Network.Layers[len(m.Network.Layers)-1]
	if loss.Op != cnn.OpLoss || len(loss.Inputs) != 2 {
		t.Errorf("last layer %s with %d inputs, want the loss over both heads", loss.Op, len(loss.Inputs))
	}
}

// A file exported in eval mode (batch norm folded into biased convs, no dropout) imports
// with a note that says so.
func TestImportNotesAnInferenceExport(t *testing.T) {
	g := ot.New(1, 3, 16, 16)
	x := g.Node("Relu", []string{g.Conv("image", 3, 8, 3, 1, 1, 1, true)})
	g.Output(head(g, x, 8))
	m, err := importGraph(t, g, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "exported for inference") {
		t.Errorf("notes %q, want the one about an inference export", m.Notes)
	}
}

// The import's JSON names layers after torch's module scopes.
func TestImportLayerNames(t *testing.T) {
	g := ot.New(1, 8, 16, 16)
	x := g.Node("Relu", []string{"image"})
	g.Model.Graph.Node[0].Name = proto.String("/features/features.1/features.1.0/block/block.0/Relu")
	y := g.Node("Relu", []string{x})
	g.Model.Graph.Node[1].Name = proto.String("/features/features.1/features.1.0/block/block.0/Relu_1")
	g.Output(head(g, y, 8))
	m, err := importGraph(t, g, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Layers []struct{ Name string } `json:"layers"`
	}
	if err := json.Unmarshal(m.JSON, &f); err != nil {
		t.Fatal(err)
	}
	if got := []string{f.Layers[0].Name, f.Layers[1].Name}; !slices.Equal(got, []string{"features.1.0.block.0", "features.1.0.block.0.relu_1"}) {
		t.Errorf("names %q", got)
	}
}

func TestNodeErrorNamesTheNode(t *testing.T) {
	g := ot.New(1, 8, 16, 16)
	g.Output(head(g, g.Node("Tanh", []string{"image"}), 8))
	_, err := importGraph(t, g, onnx.Options{})
	var ne *onnx.NodeError
	if !errors.As(err, &ne) || ne.Op != "Tanh" || ne.Node != "/Tanh_1" {
		t.Fatalf("err %v, want a NodeError for /Tanh_1 (Tanh)", err)
	}
}

// Decode keeps small tensors' data (shape constants) and skips larger ones, recording
// how many bytes it skipped.
func TestDecodeSkipsWeightData(t *testing.T) {
	g := ot.TinyCNN(16, 4)
	big := g.WeightData(100_000, 25_000)
	small := g.Ints([]int64{3}, 7, 8, 9)
	m, err := onnx.Decode(bytes.NewReader(g.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, init := range m.GetGraph().GetInitializer() {
		switch init.GetName() {
		case big:
			if len(init.GetRawData()) != 0 || onnx.SkippedBytes(init) != 100_000 || !slices.Equal(init.GetDims(), []int64{25_000}) {
				t.Errorf("big initializer: %d bytes kept, %d skipped, dims %v; want 0, 100000, [25000]", len(init.GetRawData()), onnx.SkippedBytes(init), init.GetDims())
			}
		case small:
			if !slices.Equal(init.GetInt64Data(), []int64{7, 8, 9}) || onnx.SkippedBytes(init) != 0 {
				t.Errorf("small initializer: data %v, %d skipped; want [7 8 9] kept", init.GetInt64Data(), onnx.SkippedBytes(init))
			}
		}
	}
	if n := len(m.GetGraph().GetNode()); n != len(g.Model.Graph.Node) {
		t.Errorf("%d nodes decoded, want %d", n, len(g.Model.Graph.Node))
	}
	// With its data the model imports as without it.
	if _, err := onnx.Import(bytes.NewReader(g.Bytes()), onnx.Options{Name: "x"}); err != nil {
		t.Error(err)
	}
}

// A file that is not ONNX at all says so.
func TestImportRefusesOtherFiles(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":          nil,
		"a custom model": []byte(`{"name": "x", "input": [3, 8, 8], "classes": 2, "layers": []}`),
		"text":           []byte("hello, world\n"),
		"a bare model":   mustMarshal(t, &onnxpb.ModelProto{IrVersion: proto.Int64(8)}),
	} {
		_, err := onnx.Import(bytes.NewReader(data), onnx.Options{Name: "x"})
		if err == nil {
			t.Errorf("%s: imported", name)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "ONNX") {
			t.Errorf("%s: %v, want an error that says it is not a readable ONNX model", name, err)
		}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What the file says is text a terminal could act on: an op type with an ANSI escape or
// a line break is named escaped in the refusal (it was printed raw), and node names
// with ESC, NUL or a line break make layer names without them.
func TestImportEscapesWhatTheFileSays(t *testing.T) {
	for _, op := range []string{"Evil\x1b[2J\x1b[31mRED", "Op\nInjected line", "Zero\u200bWidth"} {
		g := ot.New(1, 8, 16, 16)
		g.Output(head(g, g.Node(op, []string{"image"}), 8))
		_, err := onnx.Import(bytes.NewReader(g.Bytes()), onnx.Options{Name: "x"})
		quoted := strconv.Quote(op)
		if err == nil || !strings.Contains(err.Error(), "("+quoted+"): cnntime has no layer for "+quoted) {
			t.Errorf("op %q: err %v, want it named as %s", op, err, quoted)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x1b\n\u200b") {
			t.Errorf("op %q: the refusal holds it raw: %q", op, err)
		}
	}

	g := ot.New(1, 8, 16, 16)
	x := g.Node("Relu", []string{"image"})
	g.Model.Graph.Node[len(g.Model.Graph.Node)-1].Name = proto.String("/blk\x1b[2J\x00/act\nInjected/Relu")
	g.Output(head(g, x, 8))
	m, err := onnx.Import(bytes.NewReader(g.Bytes()), onnx.Options{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range m.Network.Layers {
		if err := cnn.CheckLayerName(l.Name); err != nil {
			t.Errorf("layer %q: %v", l.Name, err)
		}
	}
	if l := m.Network.Layers[0]; l.Name != "blk_[2J_.act_Injected" {
		t.Errorf("the Relu's layer is named %q, want blk_[2J_.act_Injected", l.Name)
	}
}
