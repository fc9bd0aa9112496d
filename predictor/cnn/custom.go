package cnn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A custom model file describes a user's own CNN in JSON, layer by layer:
//
//	{
//	  "name": "cifar_net",
//	  "input": [3, 32, 32],
//	  "classes": 10,
//	  "layers": [
//	    {"name": "conv1", "op": "conv2d", "out": 32, "kernel": 3, "padding": 1},
//	    {"name": "bn1",   "op": "batchnorm2d"},
//	    {"name": "relu1", "op": "relu"},
//	    {"name": "conv2", "op": "conv2d", "out": 32, "kernel": 3, "padding": 1},
//	    {"name": "sum",   "op": "add", "inputs": ["relu1", "conv2"]},
//	    {"name": "gap",   "op": "adaptiveavgpool2d"},
//	    {"name": "flat",  "op": "flatten"},
//	    {"name": "fc",    "op": "linear", "out": 10}
//	  ]
//	}
//
// Each layer names its op (one of the Op constants) and the op's arguments; "inputs"
// lists the names of the layers it reads ("input" is the image), by default the layer
// before it. Shapes are inferred and checked. A cross-entropy loss over the last layer's
// scores is appended unless the file ends with one ("op": "crossentropy").

// customFile is the top level of a custom model file.
type customFile struct {
	Name    string            `json:"name"`
	Family  string            `json:"family"`
	Input   []int             `json:"input"` // C, H, W
	Classes int               `json:"classes"`
	Layers  []json.RawMessage `json:"layers"`
}

// customLayer is one layer of a custom model file. Pointer fields are optional.
type customLayer struct {
	Name     string   `json:"name"`
	Op       Op       `json:"op"`
	Inputs   []string `json:"inputs"`
	In       *int     `json:"in"`  // input channels, checked against the inferred shape when given
	Out      *int     `json:"out"` // output channels (conv2d, linear, slice)
	Kernel   *pairArg `json:"kernel"`
	Stride   *pairArg `json:"stride"`
	Padding  *pairArg `json:"padding"`
	Dilation *int     `json:"dilation"`
	Groups   *int     `json:"groups"`
	Bias     *bool    `json:"bias"`
	CeilMode bool     `json:"ceil_mode"`
	Size     *int     `json:"size"`  // adaptive pooling output size
	Start    *int     `json:"start"` // slice: first channel
	InPlace  bool     `json:"inplace"`
}

// pairArg is a kernel size, stride or padding written as 3 or [3, 1].
type pairArg Pair

func (p *pairArg) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*p = pairArg{n, n}
		return nil
	}
	var two []int
	if err := json.Unmarshal(b, &two); err != nil || len(two) != 2 {
		return fmt.Errorf("want a number or [height, width], got %s", b)
	}
	*p = pairArg{two[0], two[1]}
	return nil
}

// Limits on a custom model file, far beyond real CNNs, that keep every count in range.
const (
	maxCustomLayers = 10000
	maxCustomDim    = 1 << 16 // channels, height, width, classes
)

// TrimBOM is a custom model file without the UTF-8 byte-order mark some editors write
// before it: every reader of the file, and what saves it, takes it off alike.
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, []byte("\ufeff")) }

// ParseCustom reads a custom model file (see the format above) and returns its network,
// or an error naming the layer (index and name) and what is wrong with it.
func ParseCustom(data []byte) (*Network, error) {
	data = TrimBOM(data)
	var f customFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, jsonError(data, 0, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("custom model: unexpected data after the model's closing brace at %s", position(data, dec.InputOffset()))
	}
	if strings.TrimSpace(f.Name) == "" {
		return nil, errors.New(`custom model: "name" is missing: give the model a name`)
	}
	if !utf8.ValidString(f.Name) || strings.IndexFunc(f.Name, unprintableRune) >= 0 {
		return nil, fmt.Errorf(`custom model: "name" %q holds a control or formatting character (a terminal would act on it): give a plain name`, f.Name)
	}
	if len(f.Input) != 3 {
		return nil, fmt.Errorf(`custom model %s: "input" must be [channels, height, width], got %d numbers`, f.Name, len(f.Input))
	}
	in := Shape{f.Input[0], f.Input[1], f.Input[2]}
	if !in.Valid() || in.C > maxCustomDim || in.H > maxCustomDim || in.W > maxCustomDim {
		return nil, fmt.Errorf(`custom model %s: "input" %v must have sizes from 1 to %d`, f.Name, f.Input, maxCustomDim)
	}
	if f.Classes <= 0 || f.Classes > maxCustomDim {
		return nil, fmt.Errorf(`custom model %s: "classes" must be from 1 to %d, got %d`, f.Name, maxCustomDim, f.Classes)
	}
	if len(f.Layers) == 0 || len(f.Layers) > maxCustomLayers {
		return nil, fmt.Errorf(`custom model %s: "layers" must list from 1 to %d layers, got %d`, f.Name, maxCustomLayers, len(f.Layers))
	}
	family := f.Family
	if family == "" {
		family = "Custom"
	}
	net := &Network{Name: f.Name, Family: family, Input: in, Classes: f.Classes, Custom: true}
	g := newGraph(net, len(f.Layers)+1)
	names := make(map[string]int, len(f.Layers)+1)
	names["input"] = image
	for i, raw := range f.Layers {
		var l customLayer
		ld := json.NewDecoder(bytes.NewReader(raw))
		ld.DisallowUnknownFields()
		if err := ld.Decode(&l); err != nil {
			return nil, fmt.Errorf("custom model %s: layer %d: %w", f.Name, i, jsonError(data, offsetIn(data, raw), err))
		}
		if l.Name == "" {
			l.Name = fmt.Sprintf("%s%d", l.Op, i)
		}
		if err := CheckLayerName(l.Name); err != nil {
			return nil, fmt.Errorf("custom model %s: layer %d: %w", f.Name, i, err)
		}
		if _, dup := names[l.Name]; dup {
			return nil, fmt.Errorf("custom model %s: layer %d (%s): the name %q is used twice: give each layer its own name", f.Name, i, l.Name, l.Name)
		}
		if l.Op == OpLoss && i != len(f.Layers)-1 {
			return nil, fmt.Errorf("custom model %s: layer %d (%s): crossentropy must be the last layer", f.Name, i, l.Name)
		}
		if err := addCustomLayer(g, i, &l, names); err != nil {
			return nil, fmt.Errorf("custom model %s: %w", f.Name, err)
		}
		names[l.Name] = g.last()
	}
	if net.Layers[len(net.Layers)-1].Op != OpLoss {
		g.loss(g.last())
		if g.err != nil {
			var le *LayerError
			if errors.As(g.err, &le) && len(f.Layers) > 0 {
				return nil, fmt.Errorf("custom model %s: the loss after the last layer %d (%s): %s", f.Name, len(f.Layers)-1, net.Layers[len(net.Layers)-1].Name, le.Msg)
			}
			return nil, fmt.Errorf("custom model %s: %w", f.Name, g.err)
		}
	}
	return net, nil
}

// addCustomLayer checks layer i's arguments and appends it to g.
func addCustomLayer(g *graph, i int, l *customLayer, names map[string]int) error {
	bad := func(format string, args ...any) error {
		return &LayerError{Index: i, Name: l.Name, Msg: fmt.Sprintf(format, args...)}
	}
	inputs := make([]int, 0, max(1, len(l.Inputs)))
	for _, n := range l.Inputs {
		idx, ok := names[n]
		if !ok {
			return bad("unknown input %q: inputs must name an earlier layer or \"input\"", n)
		}
		inputs = append(inputs, idx)
	}
	if len(inputs) == 0 {
		inputs = append(inputs, g.last())
	}
	want := 1
	switch l.Op {
	case OpAdd, OpConcat:
		want = -2 // two or more
	case OpMul:
		want = 2
	case OpLoss:
		want = -1 // one or more
	case "":
		return bad(`"op" is missing: use one of %s`, opList())
	}
	switch {
	case want > 0 && len(inputs) != want:
		return bad("%s takes %d input(s), got %d", l.Op, want, len(inputs))
	case want == -2 && len(inputs) < 2:
		return bad("%s takes two or more inputs, got %d", l.Op, len(inputs))
	}
	x := inputs[0]
	if l.In != nil && *l.In != g.shape(x).C {
		return bad("channel mismatch: %q says %d input channels, its input %s has %d", "in", *l.In, g.shape(x), g.shape(x).C)
	}
	for _, v := range []struct {
		name string
		val  *int
		min  int
	}{{"out", l.Out, 1}, {"dilation", l.Dilation, 1}, {"groups", l.Groups, 1}, {"size", l.Size, 1}, {"start", l.Start, 0}} {
		if v.val != nil && (*v.val < v.min || *v.val > maxCustomDim) {
			return bad("%q is %d: it must be from %d to %d", v.name, *v.val, v.min, maxCustomDim)
		}
	}
	for _, v := range []struct {
		name string
		val  *pairArg
		min  int
	}{{"kernel", l.Kernel, 1}, {"stride", l.Stride, 1}, {"padding", l.Padding, 0}} {
		if v.val != nil && (v.val[0] < v.min || v.val[1] < v.min || v.val[0] > maxCustomDim || v.val[1] > maxCustomDim) {
			return bad("%q is %v: it must be from %d to %d", v.name, Pair(*v.val), v.min, maxCustomDim)
		}
	}
	need := func(arg string, present bool) error {
		if !present {
			return bad("%s needs %q", l.Op, arg)
		}
		return nil
	}
	pair := func(p *pairArg, def Pair) Pair {
		if p == nil {
			return def
		}
		return Pair(*p)
	}
	intOr := func(p *int, def int) int {
		if p == nil {
			return def
		}
		return *p
	}
	boolOr := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	switch l.Op {
	case OpConv2d:
		if err := need("out", l.Out != nil); err != nil {
			return err
		}
		if err := need("kernel", l.Kernel != nil); err != nil {
			return err
		}
		g.conv2d(l.Name, x, *l.Out, Pair(*l.Kernel), pair(l.Stride, Pair{1, 1}), pair(l.Padding, Pair{0, 0}),
			convOpts{Groups: intOr(l.Groups, 1), Dilation: intOr(l.Dilation, 1), Bias: boolOr(l.Bias, true)})
	case OpLinear:
		if err := need("out", l.Out != nil); err != nil {
			return err
		}
		g.linear(l.Name, x, *l.Out, boolOr(l.Bias, true))
	case OpBatchNorm, OpLayerNorm:
		g.norm(l.Name, l.Op, x)
	case OpScale:
		g.scale(l.Name, x)
	case OpReLU, OpReLU6, OpSiLU, OpHardswish, OpHardsigmoid, OpSigmoid, OpGELU:
		g.unary(l.Name, l.Op, x, l.InPlace)
	case OpDropout, OpStochasticDepth, OpPermute:
		g.unary(l.Name, l.Op, x, false)
	case OpMaxPool, OpAvgPool:
		if err := need("kernel", l.Kernel != nil); err != nil {
			return err
		}
		k := Pair(*l.Kernel)
		s, p := pair(l.Stride, k), pair(l.Padding, Pair{0, 0})
		if k[0] != k[1] || s[0] != s[1] || p[0] != p[1] {
			return bad("%s takes square kernel, stride and padding, got %s, %s, %s", l.Op, k, s, p)
		}
		g.pool(l.Name, l.Op, x, k[0], s[0], p[0], l.CeilMode)
	case OpAdaptiveAvg:
		g.adaptiveAvg(l.Name, x, intOr(l.Size, 1))
	case OpAdd:
		g.add(l.Name, inputs...)
	case OpMul:
		g.mul(l.Name, inputs[0], inputs[1])
	case OpConcat:
		g.concat(l.Name, inputs...)
	case OpChannelShuffle:
		if err := need("groups", l.Groups != nil); err != nil {
			return err
		}
		g.shuffle(l.Name, x, *l.Groups)
	case OpFlatten:
		g.flatten(l.Name, x)
	case OpSlice:
		if err := need("out", l.Out != nil); err != nil {
			return err
		}
		g.slice(l.Name, x, intOr(l.Start, 0), *l.Out)
	case OpLoss:
		if g.loss(inputs...); g.err == nil {
			g.net.Layers[g.last()].Name = l.Name
		}
	default:
		return bad("unknown op %q: use one of %s", l.Op, opList())
	}
	if g.err != nil {
		var le *LayerError
		if errors.As(g.err, &le) {
			le.Index, le.Name = i, l.Name
		}
		return g.err
	}
	return nil
}

// Ops lists every op a custom model file may use.
func Ops() []Op {
	return []Op{OpConv2d, OpLinear, OpBatchNorm, OpLayerNorm, OpReLU, OpReLU6, OpSiLU, OpHardswish, OpHardsigmoid,
		OpSigmoid, OpGELU, OpMaxPool, OpAvgPool, OpAdaptiveAvg, OpAdd, OpMul, OpScale, OpConcat, OpChannelShuffle,
		OpDropout, OpStochasticDepth, OpFlatten, OpPermute, OpSlice, OpLoss}
}

func opList() string {
	ops := Ops()
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

// jsonError turns a JSON decoding error into one that gives the line and column in the
// file; base is where the decoded text starts in it.
func jsonError(file []byte, base int64, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("bad JSON at %s: %v", position(file, base+syn.Offset-1), syn) // Offset is just past the bad byte
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Errorf("bad JSON at %s (the end of the value): %q must be %s, not a JSON %s", position(file, base+typ.Offset), field, typ.Type, typ.Value)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("bad JSON: the file ends early: check for a missing closing brace or bracket")
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s: check its spelling against the format in docs/models.md", f)
	}
	return fmt.Errorf("bad JSON: %v", err)
}

// offsetIn is where raw, a copy of part of file, starts in it (0 if not found).
func offsetIn(file, raw []byte) int64 {
	return max(int64(bytes.Index(file, raw)), 0)
}

// position gives "line L, column C" of a byte offset in data.
func position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}
