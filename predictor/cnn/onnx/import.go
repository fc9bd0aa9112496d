package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"cnntime/predictor/cnn"
	"cnntime/predictor/cnn/onnx/onnxpb"

	"google.golang.org/protobuf/proto"
)

// Options choose what Import makes of a file.
type Options struct {
	// Name is the model's name in cnntime (required).
	Name string
	// Resolution fixes the input's height and width where the file leaves them open
	// (exported with dynamic axes); 0 takes the file's. A file that fixes them must
	// agree.
	Resolution int
}

// Model is an imported network.
type Model struct {
	Network *cnn.Network
	// JSON is the network as a custom model file (cnn.ParseCustom's format): what the
	// cache keeps.
	JSON []byte
	// Notes say what the import approximated (a constant scale left out, a final
	// softmax folded into the loss), one sentence each.
	Notes []string
	// WeightElems counts the learned elements of the layers' weights from their dims in
	// the file (convolutions, linear layers, norms' scales and shifts, layer scales): the
	// parameters torch counts, which Network.Params must equal.
	WeightElems int64
	// Nodes is how many nodes the file's graph has.
	Nodes int
	// Producer is the program that wrote the file ("pytorch 1.13.0"), when it says.
	Producer string
}

// NodeError is a node of the graph that cnntime cannot import, and why.
type NodeError struct {
	Node string // the node's name (or its first output's when it has none)
	Op   string // its op type
	Msg  string // what is wrong and what to do
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %q (%s): %s", e.Node, e.Op, e.Msg) }

// maxOpset is far above the newest ONNX opset (23 in 2025; about one a year is added):
// a larger one is a corrupt or made-up file.
const maxOpset = 100

// Import reads an ONNX model from r (see Decode) and maps its graph onto cnntime's layers.
func Import(r io.Reader, opt Options) (*Model, error) {
	m, err := Decode(r)
	if err != nil {
		return nil, err
	}
	return Convert(m, opt)
}

// Convert maps a decoded model's graph onto cnntime's layers: every node becomes a layer,
// folds into one (a Pad into the conv after it, a bias Add into its linear layer, the
// nodes of a GELU, SiLU, hard swish, channel shuffle or channels-last layer norm into
// one), or is shape arithmetic, folded away. Anything else is a NodeError that names the
// node and says what to do.
func Convert(m *onnxpb.ModelProto, opt Options) (*Model, error) {
	name := strings.TrimSpace(opt.Name)
	switch {
	case name == "":
		return nil, errors.New("import ONNX: the model needs a name")
	case opt.Resolution < 0 || opt.Resolution > 1<<16:
		return nil, fmt.Errorf("import ONNX: input size %d must be from 1 to %d", opt.Resolution, 1<<16)
	case m.GetGraph() == nil:
		return nil, errors.New("import ONNX: the file has no graph: is it an ONNX model (ModelProto)? Export it with torch.onnx.export")
	}
	opset := int64(0)
	for _, o := range m.GetOpsetImport() {
		if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
			opset = o.GetVersion()
		}
	}
	switch {
	case opset == 0:
		// Every ONNX model names its opset, after the graph: a file without one is cut short.
		return nil, errors.New("import ONNX: the file names no ONNX opset (opset_import), which every model does after its graph: the file is truncated or not an ONNX model; export or copy it again")
	case opset < 7:
		return nil, fmt.Errorf("import ONNX: the file uses opset %d; cnntime reads opset 7 and later: export it again with a newer opset (torch.onnx.export(..., opset_version=17))", opset)
	case opset > maxOpset:
		return nil, fmt.Errorf("import ONNX: the file says it uses opset %d, which is no ONNX opset (they are numbered in the twenties): the file is corrupt; export it again", opset)
	}
	c := &converter{g: m.GetGraph(), opt: opt, name: name, vals: map[string]value{}, names: map[string]bool{"input": true, "loss": true},
		layerAt: map[string]int{}, wrote: map[string]string{}}
	if err := c.run(); err != nil {
		return nil, err
	}
	out := &Model{JSON: c.json, Notes: c.notes, WeightElems: c.weights, Nodes: len(c.g.GetNode())}
	if p := strings.TrimSpace(m.GetProducerName() + " " + m.GetProducerVersion()); p != "" {
		out.Producer = p
	}
	net, err := cnn.ParseCustom(c.json)
	if err != nil {
		return nil, fmt.Errorf("import ONNX: the imported layers do not check: %w", err)
	}
	for i := range c.layers {
		if got, want := net.Layers[i].Out, c.shapes[i]; got != want {
			return nil, fmt.Errorf("import ONNX: layer %d (%s): cnntime makes its output %s, the graph %s: please report this with the file", i, c.layers[i].Name, got, want)
		}
	}
	out.Network = net
	return out, nil
}

// jsonFile and jsonLayer are cnn.ParseCustom's format (see docs/models.md, "Your own CNN").
type jsonFile struct {
	Name    string      `json:"name"`
	Input   [3]int      `json:"input"`
	Classes int         `json:"classes"`
	Layers  []jsonLayer `json:"layers"`
}

type jsonLayer struct {
	Name     string   `json:"name"`
	Op       cnn.Op   `json:"op"`
	Inputs   []string `json:"inputs"`
	Out      *int     `json:"out,omitempty"`
	Kernel   *[2]int  `json:"kernel,omitempty"`
	Stride   *[2]int  `json:"stride,omitempty"`
	Padding  *[2]int  `json:"padding,omitempty"`
	Dilation *int     `json:"dilation,omitempty"`
	Groups   *int     `json:"groups,omitempty"`
	Bias     *bool    `json:"bias,omitempty"`
	CeilMode bool     `json:"ceil_mode,omitempty"`
	Size     *int     `json:"size,omitempty"`
	Start    *int     `json:"start,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// use is one place a tensor is read: node index and input slot; node -1 is a graph output.
type use struct{ node, slot int }

type converter struct {
	g     *onnxpb.GraphProto
	opt   Options
	name  string
	nodes []*onnxpb.NodeProto // in topological order
	vals  map[string]value
	uses  map[string][]use
	made  map[string]int // tensor name → the node (index in nodes) that writes it
	// fusions: nodes folded into a later one (skip) and the node that stands for the
	// whole pattern (fused).
	skip  []bool
	fused map[int]fusion

	layers  []jsonLayer
	shapes  []cnn.Shape       // each layer's output, as the graph says
	layerAt map[string]int    // layer name → index
	wrote   map[string]string // layer name → the tensor its node wrote
	names   map[string]bool
	notes   []string
	weights int64
	b0      int64 // the batch size the file's shapes use
	json    []byte

	err   error             // a mistake found while emitting a layer
	at    int               // the node being converted
	namer *onnxpb.NodeProto // names the layers of a fused pattern
}

func (c *converter) node() *onnxpb.NodeProto { return c.nodes[c.at] }

// nodeLabel names a node for messages: its name, or its first output.
func nodeLabel(n *onnxpb.NodeProto) string {
	if n.GetName() != "" {
		return n.GetName()
	}
	if len(n.GetOutput()) > 0 {
		return n.GetOutput()[0]
	}
	return "(unnamed)"
}

func (c *converter) fail(format string, args ...any) error {
	n := c.node()
	return &NodeError{Node: nodeLabel(n), Op: n.GetOpType(), Msg: fmt.Sprintf(format, args...)}
}

func (c *converter) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

func (c *converter) run() error {
	quoteOpTypes(c.g)
	if err := c.initializers(); err != nil {
		return err
	}
	in, err := c.graphInputs()
	if err != nil {
		return err
	}
	if err := c.sort(); err != nil {
		return err
	}
	c.findFusions()
	for c.at = range c.nodes {
		if c.skip[c.at] {
			continue
		}
		if err := c.convert(); err != nil {
			return err
		}
		if c.err != nil {
			return c.err
		}
	}
	c.noteInference()
	classes, outputs, err := c.outputs()
	if err != nil {
		return err
	}
	c.layers = append(c.layers, jsonLayer{Name: "loss", Op: cnn.OpLoss, Inputs: outputs})
	c.shapes = append(c.shapes, cnn.Shape{C: 1, H: 1, W: 1})
	f := jsonFile{Name: c.name, Input: in, Classes: classes, Layers: c.layers}
	c.json, err = json.MarshalIndent(f, "", " ")
	return err
}

// noteInference says when the file looks exported for inference: torch.onnx.export in
// eval mode folds batch norm into the convolutions (which gain a bias) and drops
// dropout, so the graph is not the one that trains.
func (c *converter) noteInference() {
	biased := false
	for _, l := range c.layers {
		switch l.Op {
		case cnn.OpBatchNorm, cnn.OpLayerNorm, cnn.OpDropout, cnn.OpStochasticDepth:
			return
		case cnn.OpConv2d:
			biased = biased || *l.Bias
		}
	}
	if biased {
		c.note("the graph has no batch norm and no dropout: if the model has them, the file was exported for inference " +
			"(torch.onnx.export in eval mode folds batch norm into the convolutions and drops dropout); export it in training mode " +
			"(scripts/export_model.py does) to predict the graph that trains")
	}
}

// initializers reads every initializer's dims (and small data).
func (c *converter) initializers() error {
	for _, t := range c.g.GetInitializer() {
		name := t.GetName()
		if name == "" {
			return errors.New("import ONNX: an initializer has no name: the file is corrupt; export it again")
		}
		if _, dup := c.vals[name]; dup {
			return fmt.Errorf("import ONNX: two initializers are called %q: the file is corrupt; export it again", name)
		}
		v, err := tensorValue(t)
		if err != nil {
			return fmt.Errorf("import ONNX: initializer %q: %w", name, err)
		}
		c.vals[name] = v
	}
	if len(c.g.GetSparseInitializer()) > 0 {
		return errors.New("import ONNX: the file has sparse initializers, which cnntime does not read: export it again without sparsity")
	}
	return nil
}

// dimsOf reads a graph input's dims: -1 where a dim is symbolic or missing. A negative
// dim is an error.
func dimsOf(vi *onnxpb.ValueInfoProto) ([]int64, bool, error) {
	tt := vi.GetType().GetTensorType()
	if tt == nil || tt.GetShape() == nil {
		return nil, false, nil
	}
	var dims []int64
	for _, d := range tt.GetShape().GetDim() {
		if v, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok {
			if v.DimValue < 0 {
				return nil, true, fmt.Errorf("import ONNX: input %q has a negative dimension %d: the file is corrupt; export it again", vi.GetName(), v.DimValue)
			}
			dims = append(dims, v.DimValue)
		} else {
			dims = append(dims, -1)
		}
	}
	return dims, true, nil
}

// graphInputs finds the image among the graph's inputs (the first one that is not an
// initializer) and reads the others, the weights of a file exported without parameters,
// by their declared dims.
func (c *converter) graphInputs() ([3]int, error) {
	var in [3]int
	image := ""
	for _, vi := range c.g.GetInput() {
		name := vi.GetName()
		if _, isInit := c.vals[name]; isInit {
			continue
		}
		dims, ok, err := dimsOf(vi)
		if err != nil {
			return in, err
		}
		if tt := vi.GetType().GetTensorType(); tt != nil {
			if err := checkDataType(tt.GetElemType()); err != nil {
				return in, fmt.Errorf("import ONNX: input %q: %w", name, err)
			}
		}
		if image == "" {
			image = name
			if !ok || len(dims) != 4 {
				return in, fmt.Errorf("import ONNX: the model's input %q has shape %s: cnntime imports CNNs that take one batch of images [N, C, H, W]", name, dimText(dims, ok))
			}
			if slices.Contains(dims, 0) {
				return in, fmt.Errorf("import ONNX: the model's input %q has shape %s, with a dimension of size 0: the file is corrupt; export it again", name, dimText(dims, ok))
			}
			c.b0 = 1
			if dims[0] > 0 {
				c.b0 = dims[0]
			}
			if dims[1] < 0 {
				return in, fmt.Errorf("import ONNX: the model's input %q has no fixed channel count (shape %s): export it with a fixed one", name, dimText(dims, ok))
			}
			res := int64(c.opt.Resolution)
			for _, i := range []int{2, 3} {
				switch {
				case dims[i] < 0 && res > 0:
					dims[i] = res
				case dims[i] < 0:
					return in, fmt.Errorf("import ONNX: the model's input %q has a dynamic height or width (shape %s): give the input size (--input N, or Input size in the app) or export with a fixed size (no dynamic_axes for them)", name, dimText(dims, ok))
				case res > 0 && dims[i] != res:
					return in, fmt.Errorf("import ONNX: the file fixes the input %q at %dx%d, not %dx%d: leave the input size out, or export the model again at %d", name, dims[2], dims[3], res, res, res)
				}
			}
			for _, d := range dims[1:] {
				if d > 1<<16 {
					return in, fmt.Errorf("import ONNX: the model's input %q has shape %s: sizes above %d are not images", name, dimText(dims, ok), 1<<16)
				}
			}
			dims[0] = c.b0
			c.vals[name] = value{kind: kAct, dims: dims, layer: "input", layout: nchw}
			in = [3]int{int(dims[1]), int(dims[2]), int(dims[3])}
			continue
		}
		// A weight of a file exported without its parameters.
		if !ok || slices.Contains(dims, -1) {
			return in, fmt.Errorf("import ONNX: the model takes a second input %q of shape %s: cnntime imports CNNs that take one batch of images; if it is a weight, export with export_params=True or give it a fixed shape", name, dimText(dims, ok))
		}
		if _, err := numElems(dims); err != nil {
			return in, fmt.Errorf("import ONNX: input %q: %w: the file is corrupt; export it again", name, err)
		}
		c.vals[name] = value{kind: kWeight, dims: dims}
	}
	if image == "" {
		return in, errors.New("import ONNX: the graph has no input that is not a weight: it takes no image")
	}
	return in, nil
}

func dimText(dims []int64, ok bool) string {
	if !ok {
		return "unknown"
	}
	s := make([]string, len(dims))
	for i, d := range dims {
		if d < 0 {
			s[i] = "?"
		} else {
			s[i] = fmt.Sprint(d)
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// sort orders the nodes so that each comes after the nodes whose outputs it reads, and
// refuses a graph that reads a tensor nobody writes, writes one twice, or has a cycle.
func (c *converter) sort() error {
	nodes := c.g.GetNode()
	writer := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if len(n.GetOutput()) == 0 || n.GetOutput()[0] == "" {
			return &NodeError{Node: nodeLabel(n), Op: n.GetOpType(), Msg: "it writes no tensor: the graph is corrupt; export it again"}
		}
		for _, o := range n.GetOutput() {
			if o == "" {
				continue
			}
			if _, dup := writer[o]; dup {
				return &NodeError{Node: nodeLabel(n), Op: n.GetOpType(), Msg: fmt.Sprintf("it writes %q, which another node writes too: the graph is corrupt; export it again", o)}
			}
			if _, ok := c.vals[o]; ok {
				return &NodeError{Node: nodeLabel(n), Op: n.GetOpType(), Msg: fmt.Sprintf("it writes %q, which is an input or initializer of the graph: the graph is corrupt; export it again", o)}
			}
			writer[o] = i
		}
	}
	waiting := make([]int, len(nodes)) // inputs not yet written
	readers := make(map[int][]int)
	for i, n := range nodes {
		for _, in := range n.GetInput() {
			if in == "" {
				continue
			}
			if _, ok := c.vals[in]; ok {
				continue
			}
			w, ok := writer[in]
			if !ok {
				return &NodeError{Node: nodeLabel(n), Op: n.GetOpType(), Msg: fmt.Sprintf("it reads %q, which no node, input or initializer of the graph defines: the graph is corrupt (or uses an outer scope); export it again", in)}
			}
			waiting[i]++
			readers[w] = append(readers[w], i)
		}
	}
	ready := make([]int, 0, len(nodes))
	for i := range nodes {
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}
	order := make([]int, 0, len(nodes))
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		order = append(order, i)
		for _, r := range readers[i] {
			if waiting[r]--; waiting[r] == 0 {
				ready = append(ready, r)
			}
		}
	}
	if len(order) < len(nodes) {
		for i, n := range nodes {
			if waiting[i] > 0 {
				return &NodeError{Node: nodeLabel(n), Op: n.GetOpType(), Msg: "it is on a cycle: it reads, through other nodes, its own output; a CNN's graph has no cycles: the file is corrupt; export it again"}
			}
		}
	}
	c.nodes = make([]*onnxpb.NodeProto, len(order))
	c.made = make(map[string]int, len(writer))
	c.uses = make(map[string][]use, len(writer))
	for k, i := range order {
		c.nodes[k] = nodes[i]
	}
	for k, n := range c.nodes {
		for _, o := range n.GetOutput() {
			if o != "" {
				c.made[o] = k
			}
		}
		for s, in := range n.GetInput() {
			if in != "" {
				c.uses[in] = append(c.uses[in], use{k, s})
			}
		}
	}
	for _, o := range c.g.GetOutput() {
		c.uses[o.GetName()] = append(c.uses[o.GetName()], use{-1, 0})
	}
	c.skip = make([]bool, len(c.nodes))
	return nil
}

// in is input i of the current node; a missing optional input is kUnused.
func (c *converter) in(i int) value {
	ins := c.node().GetInput()
	if i >= len(ins) || ins[i] == "" {
		return value{kind: kUnused}
	}
	return c.vals[ins[i]]
}

func (c *converter) inputs() []value {
	out := make([]value, len(c.node().GetInput()))
	for i := range out {
		out[i] = c.in(i)
	}
	return out
}

// set gives output i of the current node its value.
func (c *converter) set(i int, v value) {
	if outs := c.node().GetOutput(); i < len(outs) && outs[i] != "" {
		c.vals[outs[i]] = v
	}
}

// setRest marks the current node's outputs from i on as unmodelled.
func (c *converter) setRest(from int) {
	for i := from; i < len(c.node().GetOutput()); i++ {
		c.set(i, value{kind: kUnused})
	}
}

// layerName makes a unique, readable layer name from a node's name: torch.onnx names
// nodes after their module's scopes ("/layer1/layer1.0/conv1/Conv" → "layer1.0.conv1").
func (c *converter) layerName(n *onnxpb.NodeProto, suffix string) string {
	full := n.GetName()
	base := full
	last := strings.ToLower(n.GetOpType())
	if strings.HasPrefix(full, "/") {
		parts := strings.Split(strings.Trim(full, "/"), "/")
		last = strings.ToLower(parts[len(parts)-1])
		base = modulePath(parts[:len(parts)-1])
	}
	if base == "" {
		base = last
	}
	// A node's name is the file's, anything at all: made a name a layer may have, short
	// enough for the suffixes below.
	base = clipName(cnn.CleanLayerName(base)) + suffix
	last = clipName(cnn.CleanLayerName(last))
	cands := []string{base, base + "." + last + suffix}
	for _, s := range cands {
		if !c.names[s] {
			c.names[s] = true
			return s
		}
	}
	for k := 2; ; k++ {
		s := fmt.Sprintf("%s_%d", cands[1], k)
		if !c.names[s] {
			c.names[s] = true
			return s
		}
	}
}

// quoteOpTypes writes out, as a Go string literal, each op type of g a terminal would
// act on or could not show ("Evil\x1b[2J", "Op\nInjected line"): every message that
// names a node's op then shows it escaped. No real op type changes.
func quoteOpTypes(g *onnxpb.GraphProto) {
	for _, n := range g.GetNode() {
		op := n.GetOpType()
		if !utf8.ValidString(op) || strings.IndexFunc(op, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0 {
			n.OpType = proto.String(strconv.Quote(op))
		}
	}
}

// clipName cuts s to at most a third of a layer name, at a rune's boundary.
func clipName(s string) string {
	for len(s) > cnn.MaxLayerName/3 {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}

// modulePath joins torch.onnx's scope names into a module path: each scope is named
// relative to its parent's attribute ("features", "features.1", "features.1.0", "block",
// "block.0" is features.1.0.block.0).
func modulePath(scopes []string) string {
	path, prev := "", ""
	for _, s := range scopes {
		switch {
		case s == "":
			continue
		case prev != "" && strings.HasPrefix(s, prev+"."):
			path += s[len(prev):]
		case path == "":
			path = s
		default:
			path += "." + s
		}
		prev = s
	}
	return path
}

// shapeOf maps an activation's dims onto cnntime's C×H×W.
func shapeOf(v value) cnn.Shape {
	d := v.dims
	switch v.layout {
	case nchw:
		return cnn.Shape{C: int(d[1]), H: int(d[2]), W: int(d[3])}
	case nhwc:
		return cnn.Shape{C: int(d[3]), H: int(d[1]), W: int(d[2])}
	case flat:
		return cnn.Shape{C: int(d[1]), H: 1, W: 1}
	}
	return cnn.Shape{}
}

// emit appends a layer fed by the given activations (in order) and returns its output.
func (c *converter) emit(l jsonLayer, suffix string, out value, from ...value) value {
	namer := c.node()
	if c.namer != nil {
		namer = c.namer
	}
	l.Name = c.layerName(namer, suffix)
	for _, v := range from {
		l.Inputs = append(l.Inputs, v.layer)
	}
	out.kind, out.layer = kAct, l.Name
	for _, d := range out.dims {
		if d <= 0 || d > maxActDim {
			c.err = c.fail("its output %v has a dimension outside 1..%d: not a CNN cnntime can import", out.dims, int64(maxActDim))
		}
	}
	c.layerAt[l.Name] = len(c.layers)
	if outs := c.node().GetOutput(); len(outs) > 0 {
		c.wrote[l.Name] = outs[0]
	}
	c.layers = append(c.layers, l)
	c.shapes = append(c.shapes, shapeOf(out))
	return out
}

// maxActDim bounds an activation's dimension (a flattened one included).
const maxActDim = 1 << 30

// like is an activation with x's dims and layout.
func like(x value) value { return value{kind: kAct, dims: slices.Clone(x.dims), layout: x.layout} }

// channelAxis is the axis of the channels in an activation's dims.
func channelAxis(v value) int {
	if v.layout == nhwc {
		return 3
	}
	return 1
}

// act checks that input i is an activation of one of cnntime's layouts, not waiting for
// a Pad to fold, and returns it.
func (c *converter) act(i int) (value, error) {
	v := c.in(i)
	if v.kind != kAct {
		return v, c.fail("input %d is %s, not an activation: cnntime imports %s on activations only", i, v.kind, c.node().GetOpType())
	}
	return v, c.checkAct(v)
}

// checkAct refuses an activation that is waiting for a Pad to fold or half-way through a
// channel shuffle.
func (c *converter) checkAct(v value) error {
	if v.pad != [2]int64{} {
		return c.fail("its input is zero-padded by a Pad node: cnntime folds a Pad only into the Conv or pooling after it; pad inside the convolution instead (padding=...)")
	}
	if v.layout == shuffle5 {
		return c.fail("its input is the middle of a channel shuffle (a 5-D reshape): cnntime imports a shuffle only as Reshape → Transpose(0, 2, 1, 3, 4) → Reshape")
	}
	return nil
}

// weight checks that input i is a learned tensor (or a constant used as one) and returns its dims.
func (c *converter) weight(i int, what string) ([]int64, error) {
	v := c.in(i)
	if v.kind != kWeight && v.kind != kConst {
		return nil, c.fail("its %s (input %d) is %s: cnntime imports layers whose weights are the model's parameters, not computed tensors", what, i, v.kind)
	}
	return v.dims, nil
}

// elems is the element count of dims that numElems has already checked.
func elems(dims []int64) int64 {
	n, _ := numElems(dims)
	return n
}

// convert maps the current node.
func (c *converter) convert() error {
	n := c.node()
	op := n.GetOpType()
	if d := n.GetDomain(); d != "" && d != "ai.onnx" {
		return c.fail("it is an op of the %q domain, which cnntime does not know: export with standard ONNX ops only (torch.onnx.export with operator_export_type ONNX)", d)
	}
	if f, ok := c.fused[c.at]; ok {
		return c.convertFused(f)
	}
	ins := c.inputs()
	// Shape arithmetic: everything constant (or the dims of anything).
	if foldable[op] {
		allConst := true
		for i, v := range ins {
			if v.kind == kConst || v.kind == kUnused || ((op == "Shape" || op == "Size") && i == 0 && v.kind != kUnused) {
				continue
			}
			if op == "Transpose" && v.kind == kWeight {
				continue
			}
			allConst = false
		}
		if allConst && !(op == "Constant" && len(ins) > 0) {
			outs, err := fold(op, nodeAttrs(n), ins)
			if err != nil {
				return c.fail("folding it as shape arithmetic: %v", err)
			}
			for i, v := range outs {
				c.set(i, v)
			}
			return nil
		}
	}
	return c.convertOp(op, nodeAttrs(n), ins)
}

// isNoise reports whether any input is random (and none an activation).
func noiseOnly(ins []value) (bool, []int64) {
	found := false
	var dims []int64
	for _, v := range ins {
		switch v.kind {
		case kNoise:
			found = true
			var err error
			if dims, err = broadcastDims(dims, v.dims); err != nil {
				return false, nil
			}
		case kConst, kUnused:
		default:
			return false, nil
		}
	}
	return found, dims
}

func (c *converter) convertOp(op string, a attrs, ins []value) error {
	// Random masks: their arithmetic stays a mask until an activation is multiplied by it.
	switch op {
	case "RandomUniformLike", "RandomNormalLike", "Bernoulli":
		c.set(0, value{kind: kNoise, dims: slices.Clone(c.in(0).dims)})
		return nil
	case "RandomUniform", "RandomNormal":
		shape, _ := a.ints("shape")
		c.set(0, value{kind: kNoise, dims: slices.Clone(shape)})
		return nil
	case "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Cast", "Div", "Mul", "Add", "Sub", "Floor", "Identity":
		if ok, dims := noiseOnly(ins); ok {
			c.set(0, value{kind: kNoise, dims: dims})
			return nil
		}
	}
	switch op {
	case "Identity", "Cast":
		v := c.in(0)
		if v.kind == kUnused {
			return c.fail("it reads a tensor cnntime does not model")
		}
		c.set(0, v)
		return nil
	case "Conv":
		return c.conv(a)
	case "Gemm":
		return c.gemm(a)
	case "MatMul":
		return c.matmul()
	case "BatchNormalization":
		x, err := c.act(0)
		if err != nil {
			return err
		}
		if x.layout != nchw && x.layout != flat {
			return c.fail("it normalizes a channels-last tensor: cnntime's batch norm is over the channels of NCHW")
		}
		ch := int64(shapeOf(x).C)
		if dims, err := c.weight(1, "scale"); err != nil {
			return err
		} else if elems(dims) != ch {
			return c.fail("its scale has %d elements for %d channels", elems(dims), ch)
		}
		c.weights += 2 * ch
		c.set(0, c.emit(jsonLayer{Op: cnn.OpBatchNorm}, "", like(x), x))
		c.setRest(1)
		return nil
	case "LayerNormalization":
		x, err := c.act(0)
		if err != nil {
			return err
		}
		return c.layerNorm(a, x, x.layout, "")
	case "Relu":
		return c.unary(cnn.OpReLU)
	case "Sigmoid":
		return c.unary(cnn.OpSigmoid)
	case "HardSigmoid":
		return c.unary(cnn.OpHardsigmoid)
	case "HardSwish":
		return c.unary(cnn.OpHardswish)
	case "Gelu":
		return c.unary(cnn.OpGELU)
	case "Clip":
		return c.clip(a)
	case "Dropout":
		if err := c.unary(cnn.OpDropout); err != nil {
			return err
		}
		c.setRest(1)
		return nil
	case "MaxPool", "AveragePool":
		return c.pool(op, a)
	case "GlobalAveragePool":
		x, err := c.act(0)
		if err != nil || x.layout != nchw {
			return errors.Join(err, c.fail("it pools a tensor that is not NCHW"))
		}
		out := like(x)
		out.dims[2], out.dims[3] = 1, 1
		c.set(0, c.emit(jsonLayer{Op: cnn.OpAdaptiveAvg, Size: ptr(1)}, "", out, x))
		return nil
	case "GlobalMaxPool":
		x, err := c.act(0)
		if err != nil || x.layout != nchw || x.dims[2] != x.dims[3] {
			return errors.Join(err, c.fail("cnntime pools a square NCHW tensor only, not %v", x.dims))
		}
		k := int(x.dims[2])
		out := like(x)
		out.dims[2], out.dims[3] = 1, 1
		c.set(0, c.emit(jsonLayer{Op: cnn.OpMaxPool, Kernel: &[2]int{k, k}, Stride: &[2]int{k, k}}, "", out, x))
		return nil
	case "ReduceMean":
		return c.reduceMean(a, ins)
	case "Pad":
		return c.pad(a, ins)
	case "Add", "Sum":
		return c.add(ins)
	case "Mul":
		return c.mul(ins)
	case "Sub", "Div":
		return c.scalarArith(op, ins)
	case "Concat":
		return c.concat(a, ins)
	case "Flatten":
		x, err := c.act(0)
		if err != nil {
			return err
		}
		if a.int("axis", 1) != 1 && a.int("axis", 1) != -int64(len(x.dims))+1 {
			return c.fail("it flattens from axis %d: cnntime keeps the batch as the first axis and flattens the rest (axis=1)", a.int("axis", 1))
		}
		return c.toFlat(x)
	case "Reshape":
		return c.reshape(a, ins)
	case "Squeeze", "Unsqueeze":
		x, err := c.act(0)
		if err != nil {
			return err
		}
		axes, _, err := axesOf(a, ins, 1)
		if err != nil {
			return c.fail("%v", err)
		}
		var dims []int64
		if op == "Squeeze" {
			dims, err = squeezeDims(x.dims, axes)
		} else {
			dims, err = unsqueezeDims(x.dims, axes)
		}
		if err != nil {
			return c.fail("%v", err)
		}
		return c.view(x, dims)
	case "Transpose":
		return c.transpose(a)
	case "Split":
		return c.split(a, ins)
	case "Slice":
		return c.slice(a, ins)
	case "Softmax", "LogSoftmax":
		x, err := c.act(0)
		if err != nil {
			return err
		}
		if !c.feedsOutputOnly(c.node().GetOutput()[0]) {
			return c.fail("a softmax inside the network (attention, say) is not a layer cnntime models; only a final softmax over the class scores, which folds into the loss")
		}
		c.note("the final %s over the class scores is left out: the cross-entropy loss cnntime adds computes it", op)
		c.set(0, x)
		return nil
	case "Constant":
		return c.fail("it has inputs, which a Constant never has: the file is corrupt")
	}
	if foldable[op] {
		for i, v := range ins {
			if v.kind == kAct {
				return c.fail("input %d is an activation: cnntime folds %s only as shape arithmetic on constants", i, op)
			}
		}
		return c.fail("its inputs are not all constants (one is %s): cnntime folds %s only as shape arithmetic", firstNonConst(ins), op)
	}
	return c.fail("cnntime has no layer for %s. It imports Conv, Gemm/MatMul, BatchNormalization, LayerNormalization, Relu, Clip, Sigmoid, HardSigmoid, HardSwish, SiLU, GELU, pooling, Add, Mul, Concat, Split/Slice of channels, Flatten/Reshape, Transpose, Dropout and Softmax; "+
		"replace the module with one of those, or describe the model as a custom model file (docs/models.md, \"Your own CNN\")", op)
}

func firstNonConst(ins []value) string {
	for _, v := range ins {
		if v.kind != kConst && v.kind != kUnused {
			return v.kind.String()
		}
	}
	return "unknown"
}

// feedsOutputOnly reports whether tensor t reaches the graph's outputs through
// layout-only nodes and nothing else reads it.
func (c *converter) feedsOutputOnly(t string) bool {
	for _, u := range c.uses[t] {
		if u.node == -1 {
			continue
		}
		n := c.nodes[u.node]
		switch n.GetOpType() {
		case "Identity", "Flatten", "Squeeze", "Reshape", "Cast":
			if !c.feedsOutputOnly(n.GetOutput()[0]) {
				return false
			}
		default:
			return false
		}
	}
	return len(c.uses[t]) > 0
}

func (c *converter) unary(op cnn.Op) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	c.set(0, c.emit(jsonLayer{Op: op}, "", like(x), x))
	return nil
}

// padsOf reads a conv's or pool's pads ([top, left, bottom, right]) with auto_pad, adds
// a folded Pad and checks that each side equals its opposite.
func (c *converter) padsOf(a attrs, x value, k, s, d [2]int64) ([2]int64, error) {
	var p [2]int64
	switch ap := a.str("auto_pad", "NOTSET"); ap {
	case "NOTSET", "":
		if pads, ok := a.ints("pads"); ok {
			if len(pads) != 4 {
				return p, c.fail("its pads %v are not [top, left, bottom, right]", pads)
			}
			for _, v := range pads { // a huge pad overflowed the padded size into a negative one
				if v < 0 || v > 1<<16 {
					return p, c.fail("its pads %v must be from 0 to %d", pads, 1<<16)
				}
			}
			if pads[0] != pads[2] || pads[1] != pads[3] {
				return p, c.fail("its padding %v differs between opposite sides: cnntime's layers pad both sides alike; pad symmetrically (PyTorch's padding=N does)", pads)
			}
			p = [2]int64{pads[0], pads[1]}
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		for i := 0; i < 2; i++ {
			in := x.dims[2+i] - 2*x.pad[i]
			out := (in + s[i] - 1) / s[i]
			total := max((out-1)*s[i]+(k[i]-1)*d[i]+1-in, 0)
			if total%2 != 0 {
				return p, c.fail("auto_pad %s pads one side more than the other: cnntime's layers pad both sides alike; use explicit symmetric padding", ap)
			}
			p[i] = total / 2
		}
	default:
		return p, c.fail("auto_pad %q is not an ONNX value", ap)
	}
	for i := range p {
		if p[i] < 0 {
			return p, c.fail("its padding %d is negative", p[i])
		}
		p[i] += x.pad[i]
	}
	return p, nil
}

// pair reads a 2-D attribute (kernel_shape, strides, dilations), def where absent.
func (c *converter) pair(a attrs, name string, def [2]int64) ([2]int64, error) {
	v, ok := a.ints(name)
	if !ok {
		return def, nil
	}
	if len(v) != 2 {
		return def, c.fail("its %s %v is not 2-D: cnntime imports 2-D convolutions and pooling (images)", name, v)
	}
	for _, x := range v {
		if x <= 0 || x > 1<<16 {
			return def, c.fail("its %s %v must be from 1 to %d", name, v, 1<<16)
		}
	}
	return [2]int64{v[0], v[1]}, nil
}

// windowOut is the output size of a window of k dilated by d, stride s, padding p.
func windowOut(n, k, s, p, d int64, ceil bool) int64 {
	span := d*(k-1) + 1
	if n+2*p < span {
		return 0
	}
	if !ceil {
		return (n+2*p-span)/s + 1
	}
	o := (n+2*p-span+s-1)/s + 1
	if (o-1)*s >= n+p {
		o--
	}
	return o
}

func (c *converter) conv(a attrs) error {
	x := c.in(0)
	if x.kind != kAct || x.layout != nchw {
		if _, err := c.act(0); err != nil {
			return err
		}
		return c.fail("it convolves a tensor that is not NCHW (%v)", x.dims)
	}
	w, err := c.weight(1, "weight")
	if err != nil {
		return err
	}
	if len(w) != 4 {
		return c.fail("its weight has shape %v: cnntime imports 2-D convolutions ([out, in/groups, kh, kw])", w)
	}
	groups := a.int("group", 1)
	inC := x.dims[1]
	if groups <= 0 || inC%groups != 0 || w[0]%groups != 0 || w[1]*groups != inC {
		return c.fail("its weight %v with %d groups does not fit its input's %d channels", w, groups, inC)
	}
	k := [2]int64{w[2], w[3]}
	if ks, ok := a.ints("kernel_shape"); ok && (len(ks) != 2 || ks[0] != k[0] || ks[1] != k[1]) {
		return c.fail("its kernel_shape %v disagrees with its weight's shape %v", ks, w)
	}
	s, err := c.pair(a, "strides", [2]int64{1, 1})
	if err != nil {
		return err
	}
	d, err := c.pair(a, "dilations", [2]int64{1, 1})
	if err != nil {
		return err
	}
	if d[0] != d[1] {
		return c.fail("its dilation %v differs between height and width: cnntime's convolutions dilate both alike", d)
	}
	p, err := c.padsOf(a, x, k, s, d)
	if err != nil {
		return err
	}
	h, wd := x.dims[2]-2*x.pad[0], x.dims[3]-2*x.pad[1]
	oh, ow := windowOut(h, k[0], s[0], p[0], d[0], false), windowOut(wd, k[1], s[1], p[1], d[1], false)
	if oh <= 0 || ow <= 0 {
		return c.fail("its kernel %v does not fit its padded input %dx%d", k, h+2*p[0], wd+2*p[1])
	}
	bias := c.in(2).kind != kUnused
	c.weights += elems(w)
	if bias {
		bd, err := c.weight(2, "bias")
		if err != nil {
			return err
		}
		if elems(bd) != w[0] {
			return c.fail("its bias has %d elements for %d output channels", elems(bd), w[0])
		}
		c.weights += w[0]
	}
	src := x
	src.pad = [2]int64{}
	l := jsonLayer{Op: cnn.OpConv2d, Out: ptr(int(w[0])), Kernel: &[2]int{int(k[0]), int(k[1])}, Stride: &[2]int{int(s[0]), int(s[1])},
		Padding: &[2]int{int(p[0]), int(p[1])}, Dilation: ptr(int(d[0])), Groups: ptr(int(groups)), Bias: ptr(bias)}
	c.set(0, c.emit(l, "", value{dims: []int64{x.dims[0], w[0], oh, ow}, layout: nchw}, src))
	return nil
}

// linear emits a linear layer of out features on x (flat, or channels-last).
func (c *converter) linear(x value, in, out int64, bias bool) value {
	c.weights += in * out
	if bias {
		c.weights += out
	}
	y := like(x)
	y.dims[len(y.dims)-1] = out
	return c.emit(jsonLayer{Op: cnn.OpLinear, Out: ptr(int(out)), Bias: ptr(bias)}, "", y, x)
}

func (c *converter) gemm(a attrs) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	if x.layout != flat {
		return c.fail("its input has shape %v: Gemm takes [N, features]; flatten first", x.dims)
	}
	if a.int("transA", 0) != 0 {
		return c.fail("it transposes its input (transA=1), which mixes the batch with the features")
	}
	w, err := c.weight(1, "weight")
	if err != nil {
		return err
	}
	if len(w) != 2 {
		return c.fail("its weight has shape %v, not 2-D", w)
	}
	in, out := w[0], w[1]
	if a.int("transB", 0) != 0 {
		in, out = w[1], w[0]
	}
	if in != x.dims[1] {
		return c.fail("its weight %v does not fit its input's %d features", w, x.dims[1])
	}
	bias := c.in(2).kind != kUnused
	if bias {
		bd, err := c.weight(2, "bias")
		if err != nil {
			return err
		}
		if elems(bd) != out && elems(bd) != 1 {
			return c.fail("its bias %v does not fit %d outputs", bd, out)
		}
	}
	c.set(0, c.linear(x, in, out, bias))
	return nil
}

func (c *converter) matmul() error {
	x, err := c.act(0)
	if err != nil {
		if c.in(1).kind == kAct {
			return c.fail("it multiplies two activations (attention, say): cnntime models linear layers, an activation times a weight")
		}
		return err
	}
	if c.in(1).kind == kAct {
		return c.fail("it multiplies two activations (attention, say): cnntime models linear layers, an activation times a weight")
	}
	if x.layout == nchw {
		return c.fail("it multiplies over the width of an NCHW tensor %v: cnntime's linear layers act on features ([N, F]) or on channels-last tensors ([N, H, W, C])", x.dims)
	}
	w, err := c.weight(1, "weight")
	if err != nil {
		return err
	}
	if len(w) != 2 || w[0] != x.dims[len(x.dims)-1] {
		return c.fail("its weight %v does not fit its input %v", w, x.dims)
	}
	c.set(0, c.linear(x, w[0], w[1], false))
	return nil
}

// layerNorm emits a layer norm over the channels of x (channels-last or features).
func (c *converter) layerNorm(a attrs, x value, lay layout, suffix string) error {
	axis := a.int("axis", -1)
	rank := int64(len(x.dims))
	if axis < 0 {
		axis += rank
	}
	ok := (lay == nhwc && axis == 3) || (lay == flat && axis == 1) || (lay == nchw && axis == 1 && x.dims[2] == 1 && x.dims[3] == 1)
	if !ok {
		return c.fail("it normalizes over axes %d.. of %v: cnntime's layer norm is over the channels at each position (a channels-last tensor's last axis, as ConvNeXt's)", axis, x.dims)
	}
	ch := int64(shapeOf(x).C)
	if c.in(2).kind == kUnused {
		c.note("layer norm %s has no bias; cnntime counts a scale and a shift per channel (%d parameters more)", nodeLabel(c.node()), ch)
	}
	c.weights += 2 * ch
	c.set(0, c.emit(jsonLayer{Op: cnn.OpLayerNorm}, suffix, like(x), x))
	c.setRest(1)
	return nil
}

func (c *converter) clip(a attrs) error {
	lo, hi := math.Inf(-1), math.Inf(1)
	if _, ok := a["min"]; ok { // opset < 11
		lo = a.float("min", lo)
	}
	if _, ok := a["max"]; ok {
		hi = a.float("max", hi)
	}
	for i, p := range []*float64{&lo, &hi} {
		v := c.in(i + 1)
		if v.kind == kUnused {
			continue
		}
		f, ok := v.scalar()
		if !ok {
			return c.fail("its bound (input %d) is not a constant number", i+1)
		}
		*p = f
	}
	switch {
	case lo == 0 && hi == 6:
		return c.unary(cnn.OpReLU6)
	case lo == 0 && math.IsInf(hi, 1):
		return c.unary(cnn.OpReLU)
	}
	return c.fail("it clips to [%g, %g]: cnntime models Clip as ReLU ([0, inf)) or ReLU6 ([0, 6]) only", lo, hi)
}

func (c *converter) pool(op string, a attrs) error {
	x := c.in(0)
	if x.kind != kAct || x.layout != nchw {
		if _, err := c.act(0); err != nil {
			return err
		}
		return c.fail("it pools a tensor that is not NCHW (%v)", x.dims)
	}
	k, err := c.pair(a, "kernel_shape", [2]int64{})
	if err != nil {
		return err
	}
	if k[0] == 0 {
		return c.fail("it has no kernel_shape")
	}
	s, err := c.pair(a, "strides", [2]int64{1, 1})
	if err != nil {
		return err
	}
	d, err := c.pair(a, "dilations", [2]int64{1, 1})
	if err != nil {
		return err
	}
	if d != [2]int64{1, 1} {
		return c.fail("it dilates its window %v: cnntime's pooling does not dilate", d)
	}
	p, err := c.padsOf(a, x, k, s, d)
	if err != nil {
		return err
	}
	if len(c.node().GetOutput()) > 1 && c.node().GetOutput()[1] != "" && len(c.uses[c.node().GetOutput()[1]]) > 0 {
		return c.fail("the indices of its maxima are used (max unpooling): cnntime does not model them")
	}
	ceil := a.int("ceil_mode", 0) != 0
	h, w := x.dims[2]-2*x.pad[0], x.dims[3]-2*x.pad[1]
	out := like(x)
	out.pad = [2]int64{}
	out.dims[2], out.dims[3] = windowOut(h, k[0], s[0], p[0], 1, ceil), windowOut(w, k[1], s[1], p[1], 1, ceil)
	if out.dims[2] <= 0 || out.dims[3] <= 0 {
		return c.fail("its kernel %v does not fit its padded input %dx%d", k, h+2*p[0], w+2*p[1])
	}
	src := x
	src.pad = [2]int64{}
	// torch exports adaptive_avg_pool2d to the input's own size as a 1×1 average pool.
	if op == "AveragePool" && k == [2]int64{1, 1} && s == [2]int64{1, 1} && p == [2]int64{} && h == w {
		c.set(0, c.emit(jsonLayer{Op: cnn.OpAdaptiveAvg, Size: ptr(int(h))}, "", out, src))
		return nil
	}
	if k[0] != k[1] || s[0] != s[1] || p[0] != p[1] {
		return c.fail("its kernel %v, strides %v and padding %v are not square: cnntime's pooling takes square windows", k, s, p)
	}
	if 2*p[0] > k[0] {
		return c.fail("its padding %d is more than half its kernel %d", p[0], k[0])
	}
	cop := cnn.OpMaxPool
	if op == "AveragePool" {
		cop = cnn.OpAvgPool
	}
	c.set(0, c.emit(jsonLayer{Op: cop, Kernel: &[2]int{int(k[0]), int(k[0])}, Stride: &[2]int{int(s[0]), int(s[0])},
		Padding: &[2]int{int(p[0]), int(p[0])}, CeilMode: ceil}, "", out, src))
	c.setRest(1)
	return nil
}

// spatialAxes reports whether axes (normalized) are exactly the H and W axes of x.
func spatialAxes(x value, axes []int64) bool {
	rank := len(x.dims)
	var got []int
	for _, ax := range axes {
		i, err := normAxis(ax, rank)
		if err != nil {
			return false
		}
		got = append(got, i)
	}
	slices.Sort(got)
	if x.layout == nhwc {
		return slices.Equal(got, []int{1, 2})
	}
	return x.layout == nchw && slices.Equal(got, []int{2, 3})
}

func (c *converter) reduceMean(a attrs, ins []value) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	axes, _, err := axesOf(a, ins, 1)
	if err != nil {
		return c.fail("%v", err)
	}
	if !spatialAxes(x, axes) {
		return c.fail("it averages over axes %v of %v: cnntime imports a mean over height and width (global average pooling) only", axes, x.dims)
	}
	if x.layout != nchw {
		return c.fail("it averages a channels-last tensor: permute back to NCHW first")
	}
	out := like(x)
	out.dims[2], out.dims[3] = 1, 1
	y := c.emit(jsonLayer{Op: cnn.OpAdaptiveAvg, Size: ptr(1)}, "", out, x)
	if a.int("keepdims", 1) == 0 {
		y = c.emit(jsonLayer{Op: cnn.OpFlatten}, ".flatten", value{dims: []int64{x.dims[0], x.dims[1]}, layout: flat}, y)
	}
	c.set(0, y)
	return nil
}

func (c *converter) pad(a attrs, ins []value) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	if x.layout != nchw {
		return c.fail("it pads a tensor that is not NCHW")
	}
	if mode := a.str("mode", "constant"); mode != "constant" {
		return c.fail("it pads in %q mode: cnntime folds only zero padding into the next conv or pooling", mode)
	}
	pads, ok := a.ints("pads")
	if !ok {
		if c.in(1).kind != kConst {
			return c.fail("its pads are not a constant")
		}
		pads = c.in(1).ints()
	}
	for _, p := range pads {
		if p < 0 || p > 1<<16 {
			return c.fail("its pads %v must be from 0 to %d", pads, 1<<16)
		}
	}
	if len(ins) > 2 && ins[2].kind != kUnused {
		if f, ok := ins[2].scalar(); !ok || f != 0 {
			return c.fail("it pads with a value other than 0")
		}
	}
	if a.float("value", 0) != 0 {
		return c.fail("it pads with a value other than 0")
	}
	if len(ins) > 3 && ins[3].kind != kUnused {
		return c.fail("it pads chosen axes (opset 18's axes input), which cnntime does not read: pad inside the conv instead")
	}
	if len(pads) != 8 {
		return c.fail("its pads %v are not for a 4-D tensor", pads)
	}
	if pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0 {
		return c.fail("it pads the batch or the channels (%v): cnntime folds only zero padding of height and width", pads)
	}
	if pads[2] != pads[6] || pads[3] != pads[7] || pads[2] < 0 || pads[3] < 0 {
		return c.fail("its padding %v differs between opposite sides or is negative: cnntime's layers pad both sides alike", pads)
	}
	for _, u := range c.uses[c.node().GetOutput()[0]] {
		if u.node < 0 || !slices.Contains([]string{"Conv", "AveragePool", "MaxPool"}, c.nodes[u.node].GetOpType()) || u.slot != 0 {
			return c.fail("its output feeds more than a Conv or pooling: cnntime folds a Pad only into the Conv or pooling after it")
		}
	}
	if pads[2] == 0 && pads[3] == 0 {
		c.set(0, x)
		return nil
	}
	y := x
	y.dims = slices.Clone(x.dims)
	y.dims[2] += 2 * pads[2]
	y.dims[3] += 2 * pads[3]
	y.pad = [2]int64{x.pad[0] + pads[2], x.pad[1] + pads[3]}
	c.set(0, y)
	return nil
}

// actsAndOthers splits a node's inputs into activations and the rest.
func actsAndOthers(ins []value) (acts, others []value) {
	for _, v := range ins {
		switch v.kind {
		case kAct:
			acts = append(acts, v)
		case kUnused:
		default:
			others = append(others, v)
		}
	}
	return acts, others
}

func (c *converter) add(ins []value) error {
	acts, others := actsAndOthers(ins)
	for i, v := range ins {
		if v.kind == kAct {
			if _, err := c.act(i); err != nil {
				return err
			}
		}
	}
	switch {
	case len(acts) >= 2 && len(others) == 0:
		s := shapeOf(acts[0])
		for _, y := range acts[1:] {
			if shapeOf(y) != s || y.layout != acts[0].layout {
				return c.fail("it adds tensors of different shapes %v and %v: cnntime adds equal shapes only", acts[0].dims, y.dims)
			}
		}
		c.set(0, c.emit(jsonLayer{Op: cnn.OpAdd}, "", like(acts[0]), acts...))
		return nil
	case len(acts) == 1 && len(others) == 1 && others[0].kind == kWeight:
		return c.biasAdd(acts[0], others[0])
	case len(acts) == 1 && len(others) == 1 && others[0].kind == kConst:
		if len(others[0].data) == 1 {
			c.note("%s adds the constant %g: cnntime leaves the elementwise kernel out", nodeLabel(c.node()), others[0].data[0])
			c.set(0, acts[0])
			return nil
		}
		return c.biasAdd(acts[0], others[0])
	case len(acts) == 1 && len(others) == 1 && others[0].kind == kNoise:
		return c.fail("it adds random noise to an activation, which cnntime does not model")
	}
	return c.fail("it adds %d activations and %d other tensors: cnntime adds two or more activations of equal shape, or a bias to a linear layer", len(acts), len(others))
}

// biasAdd folds an Add of a learned vector into the linear layer or conv whose only
// reader it is.
func (c *converter) biasAdd(x, b value) error {
	i, ok := c.layerAt[x.layer]
	read := ""
	for k, v := range c.inputs() {
		if v.kind == kAct {
			read = c.node().GetInput()[k]
		}
	}
	if ok && read == c.wrote[x.layer] && len(c.uses[read]) == 1 {
		l := &c.layers[i]
		if (l.Op == cnn.OpLinear || l.Op == cnn.OpConv2d) && l.Bias != nil && !*l.Bias && elems(b.dims) == int64(*l.Out) {
			l.Bias = ptr(true)
			c.weights += int64(*l.Out)
			c.set(0, x)
			return nil
		}
	}
	return c.fail("it adds a tensor of shape %v to an activation %v: cnntime folds such an Add only as the bias of the linear layer or conv just before it", b.dims, x.dims)
}

func (c *converter) mul(ins []value) error {
	acts, others := actsAndOthers(ins)
	for i, v := range ins {
		if v.kind == kAct {
			if _, err := c.act(i); err != nil {
				return err
			}
		}
	}
	switch {
	case len(acts) == 2:
		x, s := acts[0], acts[1]
		if elems(x.dims) < elems(s.dims) {
			x, s = s, x
		}
		xs, ss := shapeOf(x), shapeOf(s)
		if x.layout != s.layout && !(ss.H == 1 && ss.W == 1) {
			return c.fail("it multiplies tensors of different layouts %v and %v", x.dims, s.dims)
		}
		if ss != xs && (ss.C != xs.C || ss.H != 1 || ss.W != 1) {
			return c.fail("it multiplies %v by %v: cnntime multiplies equal shapes, or by a per-channel gate (C×1×1, squeeze-excitation)", x.dims, s.dims)
		}
		c.set(0, c.emit(jsonLayer{Op: cnn.OpMul}, "", like(x), x, s))
		return nil
	case len(acts) == 1 && len(others) == 1:
		x, o := acts[0], others[0]
		switch o.kind {
		case kNoise:
			return c.dropMask(x, o)
		case kWeight:
			if elems(o.dims) == int64(shapeOf(x).C) && broadcastsOverChannels(x, o.dims) {
				c.weights += elems(o.dims)
				c.set(0, c.emit(jsonLayer{Op: cnn.OpScale}, "", like(x), x))
				return nil
			}
			return c.fail("it multiplies an activation %v by a learned tensor %v: cnntime models a learned per-channel scale only", x.dims, o.dims)
		case kConst:
			if f, ok := o.scalar(); ok {
				c.note("%s multiplies by the constant %g: cnntime leaves the elementwise kernel out", nodeLabel(c.node()), f)
				c.set(0, x)
				return nil
			}
			if elems(o.dims) == int64(shapeOf(x).C) && broadcastsOverChannels(x, o.dims) {
				c.weights += elems(o.dims)
				c.set(0, c.emit(jsonLayer{Op: cnn.OpScale}, "", like(x), x))
				return nil
			}
			return c.fail("it multiplies an activation %v by a constant %v: cnntime models a per-channel scale only", x.dims, o.dims)
		}
	}
	return c.fail("it multiplies %d activations and %d other tensors: cnntime multiplies two activations (a gate) or an activation by a per-channel scale or a dropout mask", len(acts), len(others))
}

// broadcastsOverChannels reports whether a tensor of dims multiplies x channel by channel.
func broadcastsOverChannels(x value, dims []int64) bool {
	ch := channelAxis(x)
	// Right-align dims against x's.
	off := len(x.dims) - len(dims)
	if off < 0 {
		return false
	}
	for i, d := range dims {
		if j := i + off; j != ch && d != 1 {
			return false
		}
	}
	return true
}

// dropMask is an activation times a random mask: dropout when the mask has an element per
// activation element, stochastic depth when it has one per sample (or one per batch).
func (c *converter) dropMask(x, mask value) error {
	if slices.Equal(mask.dims, x.dims) {
		c.set(0, c.emit(jsonLayer{Op: cnn.OpDropout}, "", like(x), x))
		return nil
	}
	perSample := len(mask.dims) <= len(x.dims)
	for i, d := range mask.dims {
		j := i + len(x.dims) - len(mask.dims)
		if d != 1 && !(j == 0 && d == x.dims[0]) {
			perSample = false
		}
	}
	if !perSample {
		return c.fail("it multiplies %v by a random mask of shape %v, which is neither dropout (one draw per element) nor stochastic depth (one per sample)", x.dims, mask.dims)
	}
	c.set(0, c.emit(jsonLayer{Op: cnn.OpStochasticDepth}, "", like(x), x))
	return nil
}

// scalarArith is Sub or Div of an activation by a constant number, which cnntime leaves out.
func (c *converter) scalarArith(op string, ins []value) error {
	if len(ins) == 2 && ins[0].kind == kAct && ins[1].kind == kConst && len(ins[1].data) == 1 {
		if _, err := c.act(0); err != nil {
			return err
		}
		c.note("%s (%s) by the constant %g: cnntime leaves the elementwise kernel out", nodeLabel(c.node()), op, ins[1].data[0])
		c.set(0, ins[0])
		return nil
	}
	return c.fail("cnntime imports %s only of an activation by a constant number (or in shape arithmetic)", op)
}

func (c *converter) concat(a attrs, ins []value) error {
	acts, others := actsAndOthers(ins)
	if len(others) > 0 || len(acts) == 0 {
		return c.fail("it concatenates activations with %s: cnntime concatenates activations only", firstNonConst(others))
	}
	for i := range ins {
		if _, err := c.act(i); err != nil {
			return err
		}
	}
	x := acts[0]
	axis, err := normAxis(a.int("axis", 1), len(x.dims))
	if err != nil {
		return c.fail("%v", err)
	}
	if axis != channelAxis(x) {
		return c.fail("it concatenates along axis %d of %v: cnntime concatenates along the channels only", axis, x.dims)
	}
	out := like(x)
	out.dims[axis] = 0
	for _, y := range acts {
		if y.layout != x.layout || len(y.dims) != len(x.dims) {
			return c.fail("it concatenates tensors of different layouts")
		}
		for i := range y.dims {
			if i != axis && y.dims[i] != x.dims[i] {
				return c.fail("it concatenates %v and %v, which differ off the channel axis", x.dims, y.dims)
			}
		}
		out.dims[axis] += y.dims[axis]
	}
	if len(acts) == 1 {
		c.set(0, x)
		return nil
	}
	c.set(0, c.emit(jsonLayer{Op: cnn.OpConcat}, "", out, acts...))
	return nil
}

// toFlat makes x [N, features]: a flatten layer (a view), or x itself when it already is.
func (c *converter) toFlat(x value) error {
	if x.layout == flat {
		c.set(0, x)
		return nil
	}
	if x.layout == nhwc && (x.dims[1] != 1 || x.dims[2] != 1) {
		return c.fail("it flattens a channels-last tensor %v: permute back to NCHW first", x.dims)
	}
	c.set(0, c.emit(jsonLayer{Op: cnn.OpFlatten}, "", value{dims: []int64{x.dims[0], elems(x.dims[1:])}, layout: flat}, x))
	return nil
}

// view gives x the dims of a Reshape, Squeeze or Unsqueeze: a flatten, or x itself when
// cnntime's C×H×W does not change.
func (c *converter) view(x value, dims []int64) error {
	if len(dims) == 0 || dims[0] != x.dims[0] {
		return c.fail("it changes the batch dimension (%v to %v): cnntime keeps the batch as the first axis", x.dims, dims)
	}
	switch {
	case slices.Equal(dims, x.dims):
		c.set(0, x)
		return nil
	case len(dims) == 2 && dims[1] == elems(x.dims[1:]):
		return c.toFlat(x)
	case len(dims) == 4 && x.layout == flat && dims[2] == 1 && dims[3] == 1 && dims[1] == x.dims[1]:
		c.set(0, value{kind: kAct, dims: dims, layer: x.layer, layout: nchw})
		return nil
	case len(dims) == 4 && x.layout == nchw && x.dims[2] == 1 && x.dims[3] == 1 && dims[2] == 1 && dims[3] == 1:
		c.set(0, value{kind: kAct, dims: dims, layer: x.layer, layout: nchw})
		return nil
	}
	return c.fail("it reshapes %v to %v: cnntime imports reshapes that flatten ([N, C, H, W] to [N, C·H·W]) or that are part of a channel shuffle", x.dims, dims)
}

func (c *converter) reshape(a attrs, ins []value) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	if c.in(1).kind != kConst {
		return c.fail("its target shape is computed from something other than shapes and constants: export with a fixed input size")
	}
	dims, err := reshapeDims(x.dims, c.in(1).ints(), a.int("allowzero", 0) != 0)
	if err != nil {
		return c.fail("%v", err)
	}
	return c.view(x, dims)
}

func (c *converter) transpose(a attrs) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	perm, ok := a.ints("perm")
	if !ok {
		return c.fail("it reverses all axes, batch included: cnntime keeps the batch as the first axis")
	}
	if err := checkPerm(perm, len(x.dims)); err != nil {
		return c.fail("%v", err)
	}
	switch {
	case slices.Equal(perm, []int64{0, 1, 2, 3}) || slices.Equal(perm, []int64{0, 1}):
		c.set(0, x)
		return nil
	case x.layout == nchw && slices.Equal(perm, []int64{0, 2, 3, 1}):
		out := value{dims: []int64{x.dims[0], x.dims[2], x.dims[3], x.dims[1]}, layout: nhwc}
		c.set(0, c.emit(jsonLayer{Op: cnn.OpPermute}, "", out, x))
		return nil
	case x.layout == nhwc && slices.Equal(perm, []int64{0, 3, 1, 2}):
		out := value{dims: []int64{x.dims[0], x.dims[3], x.dims[1], x.dims[2]}, layout: nchw}
		c.set(0, c.emit(jsonLayer{Op: cnn.OpPermute}, "", out, x))
		return nil
	}
	return c.fail("it permutes %v by %v: cnntime imports permutes between NCHW and channels-last (0,2,3,1 and 0,3,1,2) and the transpose of a channel shuffle", x.dims, perm)
}

// channelSlice emits a slice of channels [start, start+count) of x.
func (c *converter) channelSlice(x value, start, count int64, suffix string) value {
	out := like(x)
	out.dims[channelAxis(x)] = count
	return c.emit(jsonLayer{Op: cnn.OpSlice, Start: ptr(int(start)), Out: ptr(int(count))}, suffix, out, x)
}

func (c *converter) split(a attrs, ins []value) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	axis, err := normAxis(a.int("axis", 0), len(x.dims))
	if err != nil {
		return c.fail("%v", err)
	}
	if axis != channelAxis(x) {
		return c.fail("it splits axis %d of %v: cnntime splits the channels only", axis, x.dims)
	}
	outs := c.node().GetOutput()
	total := x.dims[axis]
	var sizes []int64
	if s, ok := a.ints("split"); ok {
		sizes = s
	} else if len(ins) > 1 && ins[1].kind != kUnused {
		if ins[1].kind != kConst {
			return c.fail("its split sizes are not constants")
		}
		sizes = ins[1].ints()
	} else {
		parts := int64(len(outs))
		if n := a.int("num_outputs", 0); n > 0 {
			parts = n
		}
		each := (total + parts - 1) / parts
		for left := total; left > 0; left -= each {
			sizes = append(sizes, min(each, left))
		}
	}
	if len(sizes) != len(outs) {
		return c.fail("it has %d split sizes for %d outputs", len(sizes), len(outs))
	}
	start := int64(0)
	for i, s := range sizes {
		if s <= 0 || start+s > total {
			return c.fail("its split sizes %v do not fit %d channels", sizes, total)
		}
		if outs[i] != "" && len(c.uses[outs[i]]) > 0 {
			c.set(i, c.channelSlice(x, start, s, fmt.Sprintf(".%d", i)))
		}
		start += s
	}
	if start != total {
		return c.fail("its split sizes %v do not add up to %d channels", sizes, total)
	}
	return nil
}

func (c *converter) slice(a attrs, ins []value) error {
	x, err := c.act(0)
	if err != nil {
		return err
	}
	starts, ends, axes, steps, err := sliceArgs(a, ins)
	if err != nil {
		return c.fail("%v", err)
	}
	sp, err := resolveSlice(x.dims, starts, ends, axes, steps)
	if err != nil {
		return c.fail("%v", err)
	}
	ch := channelAxis(x)
	for d := range x.dims {
		if d != ch && (sp.start[d] != 0 || sp.count[d] != x.dims[d]) {
			return c.fail("it slices axis %d of %v: cnntime slices the channels only", d, x.dims)
		}
	}
	switch {
	case sp.step[ch] != 1 && sp.count[ch] > 1:
		return c.fail("it takes every %d-th channel: cnntime slices a run of channels only", sp.step[ch])
	case sp.count[ch] <= 0:
		return c.fail("it slices no channels")
	case sp.count[ch] == x.dims[ch]:
		c.set(0, x)
		return nil
	}
	c.set(0, c.channelSlice(x, sp.start[ch], sp.count[ch], ""))
	return nil
}

// outputs turns the graph's outputs into the loss's inputs: class scores [N, K] (or
// [N, K, 1, 1]), all with the same K.
func (c *converter) outputs() (classes int, layers []string, err error) {
	listed := map[string]bool{} // layers already in the list: linear in the outputs
	for _, o := range c.g.GetOutput() {
		v, ok := c.vals[o.GetName()]
		if !ok {
			return 0, nil, fmt.Errorf("import ONNX: the graph's output %q is not written by any node", o.GetName())
		}
		if v.kind != kAct {
			continue // a constant or a statistic, not scores
		}
		s := shapeOf(v)
		if v.pad != [2]int64{} || v.layout == shuffle5 || s.H != 1 || s.W != 1 {
			return 0, nil, fmt.Errorf("import ONNX: the graph's output %q has shape %v: cnntime trains classifiers with a cross-entropy loss over class scores [N, classes]", o.GetName(), v.dims)
		}
		if v.layer == "input" {
			return 0, nil, fmt.Errorf("import ONNX: the graph's output %q is its input: the model has no layers", o.GetName())
		}
		if classes != 0 && s.C != classes {
			return 0, nil, fmt.Errorf("import ONNX: the graph's outputs have %d and %d class scores: cnntime trains one classifier (auxiliary heads must have as many classes)", classes, s.C)
		}
		classes = s.C
		if !listed[v.layer] {
			listed[v.layer] = true
			layers = append(layers, v.layer)
		}
	}
	if len(layers) == 0 {
		return 0, nil, errors.New("import ONNX: no output of the graph is class scores computed from the image")
	}
	return classes, layers, nil
}
