package onnxtest

import (
	"fmt"

	"cnntime/predictor/cnn/onnx/onnxpb"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Graph is an ONNX model under construction. Its methods return the name of the tensor
// they add.
type Graph struct {
	Model *onnxpb.ModelProto
	n     int
}

// Dynamic marks a dim of the input as symbolic (a dynamic axis).
const Dynamic = -1

// New starts a model whose one input, "image", has the dims given (Dynamic for an open one).
func New(dims ...int64) *Graph {
	g := &Graph{Model: &onnxpb.ModelProto{
		IrVersion:    proto.Int64(8),
		ProducerName: proto.String("onnxtest"),
		OpsetImport:  []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(17)}},
		Graph:        &onnxpb.GraphProto{Name: proto.String("test")},
	}}
	g.Model.Graph.Input = append(g.Model.Graph.Input, ValueInfo("image", dims...))
	return g
}

// ValueInfo is a float tensor's name and dims (Dynamic for a symbolic one).
func ValueInfo(name string, dims ...int64) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for i, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		if d == Dynamic {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: fmt.Sprintf("d%d", i)}
		} else {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Shape: shape}}}}
}

func (g *Graph) fresh(prefix string) string {
	g.n++
	return fmt.Sprintf("%s_%d", prefix, g.n)
}

// Node adds a node of op reading inputs and returns its first output; outputs beyond the
// first are named after it with a suffix ("t_7:1").
func (g *Graph) Node(op string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	return g.NodeN(op, 1, inputs, attrs...)[0]
}

// NodeN adds a node with n outputs and returns their names.
func (g *Graph) NodeN(op string, n int, inputs []string, attrs ...*onnxpb.AttributeProto) []string {
	out := g.fresh("t")
	outs := []string{out}
	for i := 1; i < n; i++ {
		outs = append(outs, fmt.Sprintf("%s:%d", out, i))
	}
	g.Model.Graph.Node = append(g.Model.Graph.Node, &onnxpb.NodeProto{
		Name: proto.String(fmt.Sprintf("/%s_%d", op, g.n)), OpType: proto.String(op), Input: inputs, Output: outs, Attribute: attrs})
	return outs
}

// Weight adds an initializer of float dims without data, as an export without its
// parameters has it.
func (g *Graph) Weight(dims ...int64) string {
	name := g.fresh("w")
	g.Model.Graph.Initializer = append(g.Model.Graph.Initializer, &onnxpb.TensorProto{
		Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT))})
	return name
}

// WeightData adds a float initializer with raw data of the given length (zeros).
func (g *Graph) WeightData(bytes int, dims ...int64) string {
	name := g.Weight(dims...)
	g.Model.Graph.Initializer[len(g.Model.Graph.Initializer)-1].RawData = make([]byte, bytes)
	return name
}

// Ints adds an INT64 constant initializer.
func (g *Graph) Ints(dims []int64, vals ...int64) string {
	name := g.fresh("c")
	g.Model.Graph.Initializer = append(g.Model.Graph.Initializer, &onnxpb.TensorProto{
		Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: vals})
	return name
}

// Float adds a scalar FLOAT Constant node.
func (g *Graph) Float(v float32) string {
	return g.Node("Constant", nil, &onnxpb.AttributeProto{Name: proto.String("value"), Type: onnxpb.AttributeProto_TENSOR.Enum(),
		T: &onnxpb.TensorProto{DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), FloatData: []float32{v}}})
}

// Output makes tensor x an output of the graph.
func (g *Graph) Output(x string) { g.Model.Graph.Output = append(g.Model.Graph.Output, ValueInfo(x)) }

// Bytes is the model's file.
func (g *Graph) Bytes() []byte {
	b, err := proto.Marshal(g.Model)
	if err != nil {
		panic(err) // every message here is valid
	}
	return b
}

// AttrInts, AttrInt and AttrFloat are node attributes.
func AttrInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func AttrInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func AttrFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

// Conv adds a square conv of x (c input channels) to out channels with kernel k, stride
// s, padding p and groups.
func (g *Graph) Conv(x string, c, out, k, s, p, groups int64, bias bool) string {
	in := []string{x, g.Weight(out, c/groups, k, k)}
	if bias {
		in = append(in, g.Weight(out))
	}
	return g.Node("Conv", in, AttrInts("kernel_shape", k, k), AttrInts("strides", s, s), AttrInts("pads", p, p, p, p), AttrInt("group", groups))
}

// BN adds a batch norm over c channels, as torch.onnx exports it in training mode.
func (g *Graph) BN(x string, c int64) string {
	return g.NodeN("BatchNormalization", 3, []string{x, g.Weight(c), g.Weight(c), g.Weight(c), g.Weight(c)}, AttrInt("training_mode", 1))[0]
}

// Gemm adds a linear layer of in to out features with bias, as torch exports nn.Linear.
func (g *Graph) Gemm(x string, in, out int64) string {
	return g.Node("Gemm", []string{x, g.Weight(out, in), g.Weight(out)}, AttrInt("transB", 1))
}

// TinyCNN is a small CNN on 3×size×size images with the given classes: conv 3×3 to 8
// channels, batch norm, ReLU, a residual conv block, max pool, global average pool,
// flatten, dropout and a linear classifier, without weights (TinyCNNParams counts them).
func TinyCNN(size, classes int64) *Graph {
	g := New(1, 3, size, size)
	x := g.Conv("image", 3, 8, 3, 1, 1, 1, false)
	x = g.BN(x, 8)
	x = g.Node("Relu", []string{x})
	y := g.Conv(x, 8, 8, 3, 1, 1, 1, true)
	y = g.BN(y, 8)
	x = g.Node("Add", []string{y, x})
	x = g.Node("Relu", []string{x})
	x = g.Node("MaxPool", []string{x}, AttrInts("kernel_shape", 2, 2), AttrInts("strides", 2, 2))
	x = g.Node("GlobalAveragePool", []string{x})
	x = g.Node("Flatten", []string{x}, AttrInt("axis", 1))
	x = g.NodeN("Dropout", 2, []string{x})[0]
	x = g.Gemm(x, 8, classes)
	g.Output(x)
	return g
}

// TinyCNNParams is TinyCNN's parameter count.
func TinyCNNParams(classes int64) int64 {
	return 3*8*9 + 2*8 + // conv1, bn1
		8*8*9 + 8 + 2*8 + // conv2 with bias, bn2
		8*classes + classes // fc
}

// field is a length-delimited protobuf field's tag and length; its bytes follow.
func field(num protowire.Number, length int64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.BytesType), uint64(length))
}

// ManyNodes is a model of n Relu nodes (all writing the same tensor), in parts so that a
// test need not hold it: the file is head followed by n copies of node.
func ManyNodes(n int64) (head, node []byte) {
	b, err := proto.Marshal(&onnxpb.NodeProto{OpType: proto.String("Relu"), Input: []string{"image"}, Output: []string{"x"}})
	if err != nil {
		panic(err)
	}
	node = append(field(1, int64(len(b))), b...)                                        // GraphProto.node
	head = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 8) // ir_version
	head = append(head, field(7, n*int64(len(node)))...)                                // ModelProto.graph
	return head, node
}

// HugeInitializer is TinyCNN(16, 4) whose first conv weight (8×3×3×3 floats, 864 bytes)
// carries size bytes of raw data instead, in parts: the file is head, size zero bytes,
// then tail.
func HugeInitializer(size int64) (head, tail []byte) {
	g := TinyCNN(16, 4)
	w := g.Model.Graph.Initializer[0]
	g.Model.Graph.Initializer = g.Model.Graph.Initializer[1:]
	return withRawTensor(g, &onnxpb.TensorProto{Name: w.Name, Dims: w.Dims, DataType: w.DataType}, size)
}

// LargeWeights is TinyCNN(16, 4) with one more float initializer of size bytes (size/4
// elements, a multiple of 4), whose data is there and agrees with its dims, as a large
// model's weights do; in parts as HugeInitializer's.
func LargeWeights(size int64) (head, tail []byte) {
	return withRawTensor(TinyCNN(16, 4), &onnxpb.TensorProto{Name: proto.String("large"), Dims: []int64{size / 4},
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT))}, size)
}

// withRawTensor writes g with tensor t appended to its initializers, t's raw data left for
// the caller to stream (size zero bytes between head and tail).
func withRawTensor(g *Graph, t *onnxpb.TensorProto, size int64) (head, tail []byte) {
	graph, err := proto.Marshal(g.Model.Graph)
	if err != nil {
		panic(err)
	}
	meta, err := proto.Marshal(t)
	if err != nil {
		panic(err)
	}
	raw := field(9, size) // TensorProto.raw_data
	tensorLen := int64(len(meta)+len(raw)) + size
	init := append(append(field(5, tensorLen), meta...), raw...) // GraphProto.initializer
	head = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 8)
	head = append(head, field(7, int64(len(graph)+len(init))+size)...)
	head = append(append(head, graph...), init...)
	tail, err = proto.Marshal(&onnxpb.ModelProto{OpsetImport: g.Model.OpsetImport}) // after the graph, as exporters write it
	if err != nil {
		panic(err)
	}
	return head, tail
}

// Repeated is g with n more copies of msg in its graph's repeated field num (5: an
// initializer, 12: an output, 13: a value info), in parts so that a test need not hold
// them: the file is head, n copies of item, then tail.
func Repeated(g *Graph, num protowire.Number, msg []byte, n int64) (head, item, tail []byte) {
	graph, err := proto.Marshal(g.Model.Graph)
	if err != nil {
		panic(err)
	}
	item = append(field(num, int64(len(msg))), msg...)
	head = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 8) // ir_version
	head = append(head, field(7, int64(len(graph))+n*int64(len(item)))...)              // ModelProto.graph
	head = append(head, graph...)
	tail, err = proto.Marshal(&onnxpb.ModelProto{OpsetImport: g.Model.OpsetImport})
	if err != nil {
		panic(err)
	}
	return head, item, tail
}
