package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"cnntime/predictor/cnn/onnx/onnxpb"
)

// Folding: the nodes that compute on constants (shape arithmetic: Shape → Gather →
// Unsqueeze → Concat → Reshape, chunk sizes, pads) are evaluated at import, so that
// every shape in the graph is a number. The shapes of activations are known at import
// (the image's size is fixed), so Shape of an activation folds too.

// foldable lists the ops fold evaluates when all their inputs are constants.
var foldable = map[string]bool{
	"Constant": true, "Identity": true, "Shape": true, "Size": true, "Gather": true, "Unsqueeze": true,
	"Squeeze": true, "Concat": true, "Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Mod": true,
	"Min": true, "Max": true, "Equal": true, "Less": true, "Greater": true, "LessOrEqual": true, "GreaterOrEqual": true,
	"Where": true, "Neg": true, "Floor": true, "Ceil": true, "Sqrt": true, "Abs": true, "Cast": true, "Slice": true,
	"Reshape": true, "ConstantOfShape": true, "Range": true, "Expand": true, "Transpose": true, "Not": true,
	"ReduceProd": true, "ReduceSum": true, "Flatten": true,
}

// attrs reads a node's attributes by name.
type attrs map[string]*onnxpb.AttributeProto

func nodeAttrs(n *onnxpb.NodeProto) attrs {
	a := make(attrs, len(n.GetAttribute()))
	for _, at := range n.GetAttribute() {
		a[at.GetName()] = at
	}
	return a
}

func (a attrs) int(name string, def int64) int64 {
	if at, ok := a[name]; ok {
		return at.GetI()
	}
	return def
}

func (a attrs) float(name string, def float64) float64 {
	if at, ok := a[name]; ok {
		return float64(at.GetF())
	}
	return def
}

func (a attrs) ints(name string) ([]int64, bool) {
	at, ok := a[name]
	if !ok {
		return nil, false
	}
	return at.GetInts(), true
}

func (a attrs) str(name, def string) string {
	if at, ok := a[name]; ok {
		return string(at.GetS())
	}
	return def
}

// constantValue is a Constant node's value.
func constantValue(a attrs) (value, error) {
	switch {
	case a["value"] != nil:
		return tensorValue(a["value"].GetT())
	case a["value_float"] != nil:
		return value{kind: kConst, data: []float64{float64(a["value_float"].GetF())}}, nil
	case a["value_int"] != nil:
		return value{kind: kConst, data: []float64{float64(a["value_int"].GetI())}, isInt: true}, nil
	case a["value_floats"] != nil:
		fs := a["value_floats"].GetFloats()
		v := value{kind: kConst, dims: []int64{int64(len(fs))}, data: make([]float64, len(fs))}
		for i, f := range fs {
			v.data[i] = float64(f)
		}
		return v, nil
	case a["value_ints"] != nil:
		is := a["value_ints"].GetInts()
		return constInts([]int64{int64(len(is))}, is), nil
	}
	return value{}, errors.New("it has no value attribute this import reads (value, value_float(s), value_int(s))")
}

// normAxis turns a possibly negative axis into 0..rank-1.
func normAxis(axis int64, rank int) (int, error) {
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d is outside a tensor of rank %d", axis, rank)
	}
	return int(axis), nil
}

// reshapeDims resolves Reshape's target shape against the input dims: 0 copies the
// input's dim (unless allowZero), -1 takes what is left.
func reshapeDims(in, target []int64, allowZero bool) ([]int64, error) {
	total, err := numElems(in)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(target)
	infer := -1
	known := int64(1)
	for i, d := range out {
		switch {
		case d == 0 && !allowZero:
			if i >= len(in) {
				return nil, fmt.Errorf("target shape %v copies dim %d of an input of rank %d", target, i, len(in))
			}
			out[i] = in[i]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("target shape %v has more than one -1", target)
			}
			infer = i
			continue
		case d < 0:
			return nil, fmt.Errorf("target shape %v has a negative dim", target)
		}
		if out[i] > 0 && known > maxElems/out[i] {
			return nil, fmt.Errorf("target shape %v is too large", target)
		}
		known *= out[i]
	}
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil, fmt.Errorf("cannot reshape %v (%d elements) into %v", in, total, target)
		}
		out[infer] = total / known
	} else if known != total {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) into %v (%d)", in, total, target, known)
	}
	return out, nil
}

// strides of row-major dims.
func strides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

// broadcastDims is numpy's broadcast of two shapes.
func broadcastDims(a, b []int64) ([]int64, error) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		da, db := int64(1), int64(1)
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// at reads element idx (row-major in out's dims) of v broadcast to out.
func broadcastAt(v value, out []int64, idx int64) float64 {
	if len(v.data) == 1 {
		return v.data[0]
	}
	os := strides(out)
	vs := strides(v.dims)
	off := int64(0)
	for i := range out {
		coord := idx / os[i] % out[i]
		j := i - (len(out) - len(v.dims))
		if j < 0 {
			continue
		}
		if v.dims[j] != 1 {
			off += coord * vs[j]
		}
	}
	return v.data[off]
}

// elementwise applies f across broadcast constant inputs.
func elementwise(ins []value, isInt bool, f func([]float64) float64) (value, error) {
	for _, v := range ins {
		if v.kind != kConst {
			return value{}, fmt.Errorf("an input is %s, not a constant", v.kind)
		}
	}
	dims := ins[0].dims
	for _, v := range ins[1:] {
		var err error
		if dims, err = broadcastDims(dims, v.dims); err != nil {
			return value{}, err
		}
	}
	n, err := numElems(dims)
	if err != nil {
		return value{}, err
	}
	if n > maxConstElems {
		return value{}, fmt.Errorf("the result has %d elements, too many to be shape arithmetic", n)
	}
	out := value{kind: kConst, dims: dims, data: make([]float64, n), isInt: isInt}
	args := make([]float64, len(ins))
	for i := int64(0); i < n; i++ {
		for k, v := range ins {
			args[k] = broadcastAt(v, dims, i)
		}
		out.data[i] = f(args)
	}
	return out, nil
}

// axesOf reads the axes of Squeeze, Unsqueeze, Reduce* and Slice: an attribute before
// opset 13 (18 for Reduce*), an input after; present is false when neither is given.
func axesOf(a attrs, ins []value, slot int) (axes []int64, present bool, err error) {
	if as, ok := a.ints("axes"); ok {
		return as, true, nil
	}
	if len(ins) > slot && ins[slot].kind != kUnused {
		if ins[slot].kind != kConst {
			return nil, false, errors.New("its axes are not a constant")
		}
		return ins[slot].ints(), true, nil
	}
	return nil, false, nil
}

// fold evaluates a node whose inputs are all constants (or, for Shape and Size, any
// tensor with known dims). Missing optional inputs are kUnused values.
func fold(op string, a attrs, ins []value) ([]value, error) {
	in := func(i int) value {
		if i < len(ins) {
			return ins[i]
		}
		return value{kind: kUnused}
	}
	if op != "Constant" && len(ins) == 0 {
		return nil, errors.New("it has no inputs")
	}
	if op == "Shape" || op == "Size" {
		if in(0).kind == kUnused {
			return nil, errors.New("its input is missing")
		}
	}
	isInt := len(ins) > 0 && ins[0].isInt
	binary := func(f func(x, y float64) float64) ([]value, error) {
		if len(ins) != 2 {
			return nil, fmt.Errorf("it takes 2 inputs, not %d", len(ins))
		}
		v, err := elementwise(ins, isInt, func(x []float64) float64 {
			r := f(x[0], x[1])
			if isInt {
				r = math.Trunc(r)
			}
			return r
		})
		return []value{v}, err
	}
	compare := func(f func(x, y float64) bool) ([]value, error) {
		v, err := elementwise(ins, true, func(x []float64) float64 {
			if f(x[0], x[1]) {
				return 1
			}
			return 0
		})
		return []value{v}, err
	}
	unary := func(f func(x float64) float64) ([]value, error) {
		v, err := elementwise(ins[:1], isInt, func(x []float64) float64 { return f(x[0]) })
		return []value{v}, err
	}
	switch op {
	case "Constant":
		v, err := constantValue(a)
		return []value{v}, err
	case "Identity":
		return []value{in(0)}, nil
	case "Shape":
		d := in(0).dims
		start, end := a.int("start", 0), a.int("end", int64(len(d)))
		r := int64(len(d))
		if start < 0 {
			start += r
		}
		if end < 0 {
			end += r
		}
		start, end = min(max(start, 0), r), min(max(end, 0), r)
		if end < start {
			end = start
		}
		part := d[start:end]
		return []value{constInts([]int64{int64(len(part))}, part)}, nil
	case "Size":
		n, err := numElems(in(0).dims)
		return []value{constInts(nil, []int64{n})}, err
	case "Add":
		return binary(func(x, y float64) float64 { return x + y })
	case "Sub":
		return binary(func(x, y float64) float64 { return x - y })
	case "Mul":
		return binary(func(x, y float64) float64 { return x * y })
	case "Div":
		if isInt && slices.Contains(in(1).data, 0) {
			return nil, errors.New("it divides an integer by zero")
		}
		return binary(func(x, y float64) float64 { return x / y })
	case "Mod":
		return binary(math.Mod)
	case "Pow":
		return binary(math.Pow)
	case "Min", "Max":
		if len(ins) == 0 {
			return nil, errors.New("it has no inputs")
		}
		f := math.Min
		if op == "Max" {
			f = math.Max
		}
		v, err := elementwise(ins, isInt, func(x []float64) float64 {
			r := x[0]
			for _, y := range x[1:] {
				r = f(r, y)
			}
			return r
		})
		return []value{v}, err
	case "Equal":
		return compare(func(x, y float64) bool { return x == y })
	case "Less":
		return compare(func(x, y float64) bool { return x < y })
	case "Greater":
		return compare(func(x, y float64) bool { return x > y })
	case "LessOrEqual":
		return compare(func(x, y float64) bool { return x <= y })
	case "GreaterOrEqual":
		return compare(func(x, y float64) bool { return x >= y })
	case "Not":
		return unary(func(x float64) float64 { return 1 - math.Min(math.Abs(x), 1) })
	case "Where":
		if len(ins) != 3 {
			return nil, fmt.Errorf("it takes 3 inputs, not %d", len(ins))
		}
		v, err := elementwise(ins, ins[1].isInt, func(x []float64) float64 {
			if x[0] != 0 {
				return x[1]
			}
			return x[2]
		})
		return []value{v}, err
	case "Neg":
		return unary(func(x float64) float64 { return -x })
	case "Floor":
		return unary(math.Floor)
	case "Ceil":
		return unary(math.Ceil)
	case "Sqrt":
		return unary(math.Sqrt)
	case "Abs":
		return unary(math.Abs)
	case "Cast":
		to := int32(a.int("to", int64(onnxpb.TensorProto_FLOAT)))
		v := in(0)
		v.isInt = isIntType(to)
		if v.isInt {
			v.data = slices.Clone(v.data)
			for i, x := range v.data {
				v.data[i] = math.Trunc(x)
			}
		}
		return []value{v}, nil
	case "Gather":
		return gather(a, in(0), in(1))
	case "Unsqueeze":
		axes, ok, err := axesOf(a, ins, 1)
		if err != nil || !ok {
			return nil, errors.Join(err, errors.New("it has no axes"))
		}
		dims, err := unsqueezeDims(in(0).dims, axes)
		v := in(0)
		v.dims = dims
		return []value{v}, err
	case "Squeeze":
		axes, _, err := axesOf(a, ins, 1)
		if err != nil {
			return nil, err
		}
		dims, err := squeezeDims(in(0).dims, axes)
		v := in(0)
		v.dims = dims
		return []value{v}, err
	case "Flatten":
		v := in(0)
		dims, err := flattenDims(v.dims, a.int("axis", 1))
		v.dims = dims
		return []value{v}, err
	case "Concat":
		return concatConst(a.int("axis", 0), ins)
	case "Reshape":
		if in(1).kind != kConst {
			return nil, errors.New("its target shape is not a constant")
		}
		dims, err := reshapeDims(in(0).dims, in(1).ints(), a.int("allowzero", 0) != 0)
		v := in(0)
		v.dims = dims
		return []value{v}, err
	case "Expand":
		if in(1).kind != kConst {
			return nil, errors.New("its target shape is not a constant")
		}
		shape := in(1).ints()
		v, err := elementwise([]value{in(0), {kind: kConst, dims: shape, data: []float64{0}}}, isInt, func(x []float64) float64 { return x[0] })
		return []value{v}, err
	case "ConstantOfShape":
		shape := in(0).ints()
		n, err := numElems(shape)
		if err != nil {
			return nil, err
		}
		if n > maxConstElems {
			return nil, fmt.Errorf("it makes a constant of shape %v, too large to be shape arithmetic", shape)
		}
		fill := value{kind: kConst, data: []float64{0}}
		if at := a["value"]; at != nil {
			if fill, err = tensorValue(at.GetT()); err != nil {
				return nil, err
			}
			if fill.kind != kConst || len(fill.data) != 1 {
				return nil, errors.New("its value is not one number")
			}
		}
		v := value{kind: kConst, dims: shape, data: make([]float64, n), isInt: fill.isInt || at0IsInt(a)}
		for i := range v.data {
			v.data[i] = fill.data[0]
		}
		return []value{v}, nil
	case "Range":
		start, ok1 := in(0).scalar()
		limit, ok2 := in(1).scalar()
		delta, ok3 := in(2).scalar()
		if !ok1 || !ok2 || !ok3 || delta == 0 {
			return nil, errors.New("its start, limit and delta must be numbers, delta not zero")
		}
		n := int64(math.Max(math.Ceil((limit-start)/delta), 0))
		if n > maxConstElems {
			return nil, fmt.Errorf("it makes %d numbers, too many to be shape arithmetic", n)
		}
		v := value{kind: kConst, dims: []int64{n}, data: make([]float64, n), isInt: isInt}
		for i := range v.data {
			v.data[i] = start + float64(i)*delta
		}
		return []value{v}, nil
	case "Transpose":
		return transposeConst(a, in(0))
	case "Slice":
		return sliceConst(a, ins)
	case "ReduceProd", "ReduceSum":
		v := in(0)
		if v.kind != kConst {
			return nil, fmt.Errorf("its input is %s, not a constant", v.kind)
		}
		axes, ok, err := axesOf(a, ins, 1)
		if err != nil {
			return nil, err
		}
		if len(v.dims) > 1 && (!ok || len(axes) != 1 || len(v.dims) != 1) {
			return nil, errors.New("it reduces a constant of more than one dimension")
		}
		r := 0.0
		if op == "ReduceProd" {
			r = 1
		}
		for _, x := range v.data {
			if op == "ReduceProd" {
				r *= x
			} else {
				r += x
			}
		}
		out := value{kind: kConst, data: []float64{r}, isInt: v.isInt}
		if a.int("keepdims", 1) != 0 && len(v.dims) == 1 {
			out.dims = []int64{1}
		}
		return []value{out}, nil
	}
	return nil, fmt.Errorf("cnntime does not fold %s", op)
}

func at0IsInt(a attrs) bool {
	if at := a["value"]; at != nil {
		return isIntType(at.GetT().GetDataType())
	}
	return false
}

func gather(a attrs, data, idx value) ([]value, error) {
	if idx.kind != kConst || data.kind != kConst {
		return nil, errors.New("its indices are not constants")
	}
	rank := len(data.dims)
	if rank == 0 {
		return nil, errors.New("it gathers from a scalar")
	}
	axis, err := normAxis(a.int("axis", 0), rank)
	if err != nil {
		return nil, err
	}
	outDims := append(append(slices.Clone(data.dims[:axis]), idx.dims...), data.dims[axis+1:]...)
	n, err := numElems(outDims)
	if err != nil {
		return nil, err
	}
	if n > maxConstElems {
		return nil, errors.New("it gathers too much to be shape arithmetic")
	}
	outer, _ := numElems(data.dims[:axis])
	inner, _ := numElems(data.dims[axis+1:])
	out := value{kind: kConst, dims: outDims, data: make([]float64, 0, n), isInt: data.isInt}
	for o := int64(0); o < outer; o++ {
		for _, ix := range idx.ints() {
			if ix < 0 {
				ix += data.dims[axis]
			}
			if ix < 0 || ix >= data.dims[axis] {
				return nil, fmt.Errorf("index %d is outside dim %d of size %d", ix, axis, data.dims[axis])
			}
			base := (o*data.dims[axis] + ix) * inner
			out.data = append(out.data, data.data[base:base+inner]...)
		}
	}
	return []value{out}, nil
}

func unsqueezeDims(in, axes []int64) ([]int64, error) {
	rank := len(in) + len(axes)
	mark := make([]bool, rank)
	for _, ax := range axes {
		i, err := normAxis(ax, rank)
		if err != nil {
			return nil, err
		}
		if mark[i] {
			return nil, fmt.Errorf("axis %d is given twice", ax)
		}
		mark[i] = true
	}
	out := make([]int64, 0, rank)
	j := 0
	for i := 0; i < rank; i++ {
		if mark[i] {
			out = append(out, 1)
		} else {
			out = append(out, in[j])
			j++
		}
	}
	return out, nil
}

func squeezeDims(in, axes []int64) ([]int64, error) {
	drop := make([]bool, len(in))
	if len(axes) == 0 {
		for i, d := range in {
			drop[i] = d == 1
		}
	}
	for _, ax := range axes {
		i, err := normAxis(ax, len(in))
		if err != nil {
			return nil, err
		}
		if in[i] != 1 {
			return nil, fmt.Errorf("it squeezes axis %d of size %d", ax, in[i])
		}
		drop[i] = true
	}
	var out []int64
	for i, d := range in {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return out, nil
}

func flattenDims(in []int64, axis int64) ([]int64, error) {
	if axis < 0 {
		axis += int64(len(in))
	}
	if axis < 0 || axis > int64(len(in)) {
		return nil, fmt.Errorf("axis %d is outside a tensor of rank %d", axis, len(in))
	}
	a, err := numElems(in[:axis])
	if err != nil {
		return nil, err
	}
	b, err := numElems(in[axis:])
	return []int64{a, b}, err
}

func concatConst(axis int64, ins []value) ([]value, error) {
	if len(ins) == 0 {
		return nil, errors.New("it has no inputs")
	}
	rank := len(ins[0].dims)
	ax, err := normAxis(axis, rank)
	if err != nil {
		return nil, err
	}
	outDims := slices.Clone(ins[0].dims)
	outDims[ax] = 0
	for _, v := range ins {
		if v.kind != kConst {
			return nil, fmt.Errorf("an input is %s, not a constant", v.kind)
		}
		if len(v.dims) != rank {
			return nil, errors.New("its inputs differ in rank")
		}
		for i := range v.dims {
			if i != ax && v.dims[i] != outDims[i] {
				return nil, fmt.Errorf("its inputs %v and %v differ off the axis", ins[0].dims, v.dims)
			}
		}
		outDims[ax] += v.dims[ax]
	}
	n, err := numElems(outDims)
	if err != nil || n > maxConstElems {
		return nil, errors.Join(err, errors.New("it concatenates too much to be shape arithmetic"))
	}
	outer, _ := numElems(outDims[:ax])
	out := value{kind: kConst, dims: outDims, data: make([]float64, 0, n), isInt: ins[0].isInt}
	for o := int64(0); o < outer; o++ {
		for _, v := range ins {
			chunk, _ := numElems(v.dims[ax:])
			out.data = append(out.data, v.data[o*chunk:(o+1)*chunk]...)
		}
	}
	return []value{out}, nil
}

func transposeConst(a attrs, v value) ([]value, error) {
	rank := len(v.dims)
	perm, ok := a.ints("perm")
	if !ok {
		for i := rank - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if err := checkPerm(perm, rank); err != nil {
		return nil, err
	}
	outDims := make([]int64, rank)
	for i, p := range perm {
		outDims[i] = v.dims[p]
	}
	out := value{kind: v.kind, dims: outDims, isInt: v.isInt}
	if v.kind != kConst {
		return []value{out}, nil
	}
	in := strides(v.dims)
	os := strides(outDims)
	out.data = make([]float64, len(v.data))
	for i := range out.data {
		off := int64(0)
		for d := 0; d < rank; d++ {
			off += int64(i) / os[d] % outDims[d] * in[perm[d]]
		}
		out.data[i] = v.data[off]
	}
	return []value{out}, nil
}

func checkPerm(perm []int64, rank int) error {
	if len(perm) != rank {
		return fmt.Errorf("perm %v does not permute a tensor of rank %d", perm, rank)
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= int64(rank) || seen[p] {
			return fmt.Errorf("perm %v is not a permutation of 0..%d", perm, rank-1)
		}
		seen[p] = true
	}
	return nil
}

// sliceSpec is Slice's arguments resolved against a tensor's dims: for each axis, the
// first index, the step and how many elements.
type sliceSpec struct {
	start, step, count []int64
}

func sliceArgs(a attrs, ins []value) (starts, ends, axes, steps []int64, err error) {
	if s, ok := a.ints("starts"); ok { // opset < 10
		e, _ := a.ints("ends")
		ax, _ := a.ints("axes")
		return s, e, ax, nil, nil
	}
	get := func(i int) ([]int64, error) {
		if i >= len(ins) || ins[i].kind == kUnused {
			return nil, nil
		}
		if ins[i].kind != kConst {
			return nil, fmt.Errorf("its input %d is not a constant", i)
		}
		return ins[i].ints(), nil
	}
	if starts, err = get(1); err != nil {
		return
	}
	if ends, err = get(2); err != nil {
		return
	}
	if axes, err = get(3); err != nil {
		return
	}
	steps, err = get(4)
	return
}

func resolveSlice(dims []int64, starts, ends, axes, steps []int64) (sliceSpec, error) {
	rank := len(dims)
	sp := sliceSpec{start: make([]int64, rank), step: make([]int64, rank), count: slices.Clone(dims)}
	for i := range sp.step {
		sp.step[i] = 1
	}
	if len(ends) != len(starts) || (axes != nil && len(axes) != len(starts)) || (steps != nil && len(steps) != len(starts)) {
		return sp, errors.New("its starts, ends, axes and steps differ in length")
	}
	for i := range starts {
		ax := int64(i)
		if axes != nil {
			ax = axes[i]
		}
		d, err := normAxis(ax, rank)
		if err != nil {
			return sp, err
		}
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step == 0 {
			return sp, errors.New("a step is 0")
		}
		n := dims[d]
		clamp := func(x int64, lo, hi int64) int64 {
			if x < 0 {
				x += n
			}
			return min(max(x, lo), hi)
		}
		var s, e int64
		if step > 0 {
			s, e = clamp(starts[i], 0, n), clamp(ends[i], 0, n)
			sp.count[d] = max(0, (e-s+step-1)/step)
		} else {
			s, e = clamp(starts[i], 0, n-1), clamp(ends[i], -1, n-1)
			if ends[i] < -n { // to the very start
				e = -1
			}
			sp.count[d] = max(0, (s-e-step-1)/(-step))
		}
		sp.start[d], sp.step[d] = s, step
	}
	return sp, nil
}

func sliceConst(a attrs, ins []value) ([]value, error) {
	v := ins[0]
	if v.kind != kConst {
		return nil, fmt.Errorf("its data is %s, not a constant", v.kind)
	}
	starts, ends, axes, steps, err := sliceArgs(a, ins)
	if err != nil {
		return nil, err
	}
	sp, err := resolveSlice(v.dims, starts, ends, axes, steps)
	if err != nil {
		return nil, err
	}
	n, _ := numElems(sp.count)
	out := value{kind: kConst, dims: sp.count, data: make([]float64, n), isInt: v.isInt}
	in := strides(v.dims)
	os := strides(sp.count)
	for i := range out.data {
		off := int64(0)
		for d := range sp.count {
			off += (sp.start[d] + int64(i)/os[d]%sp.count[d]*sp.step[d]) * in[d]
		}
		out.data[i] = v.data[off]
	}
	return []value{out}, nil
}
