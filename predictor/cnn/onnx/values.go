package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"cnntime/predictor/cnn/onnx/onnxpb"
)

// kind says what a tensor of the graph is to the import.
type kind int

const (
	kConst  kind = iota // a constant whose values are known: shape arithmetic, axes, pads, clip bounds
	kWeight             // a learned tensor (or a constant too large to keep): its dims only
	kAct                // an activation: the image or a layer's output, batch first
	kNoise              // random numbers: a dropout mask or a stochastic-depth draw
	kUnused             // an output the import does not model (batch norm's running statistics)
)

func (k kind) String() string {
	return [...]string{"a constant", "a weight", "an activation", "a random mask", "an unmodelled output"}[k]
}

// layout is how an activation's dims map onto cnntime's C×H×W.
type layout int

const (
	nchw     layout = iota // [N, C, H, W]
	nhwc                   // [N, H, W, C]: after a permute to channels-last (ConvNeXt)
	flat                   // [N, F]: features, F×1×1
	shuffle5               // [N, g, C/g, H, W] or its transpose: half-way through a channel shuffle
)

// value is one named tensor of the graph.
type value struct {
	kind kind
	dims []int64
	// kConst: the values, row-major, and whether their type is an integer or bool one.
	data  []float64
	isInt bool
	// kAct: the cnntime layer whose output it is ("input" for the image) and how its dims
	// map onto C×H×W.
	layer  string
	layout layout
	pad    [2]int64 // a zero Pad of H and W waiting to be folded into the next conv or pool
	groups int64    // shuffle5: the channel shuffle's groups
}

// maxConstElems bounds a folded constant: shape arithmetic is small; anything larger is
// not shape arithmetic.
const maxConstElems = keepTensorData

// maxElems bounds a tensor's element count so that products of dims never overflow.
const maxElems = 1 << 40

// numElems is the product of dims, or an error when one is negative or the product huge.
func numElems(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is negative", d)
		}
		if d > 0 && n > maxElems/d {
			return 0, fmt.Errorf("dims %v hold more than %d elements", dims, int64(maxElems))
		}
		n *= d
	}
	return n, nil
}

// elemSize is the bytes of one element of an ONNX data type, 0 for strings and unknown types.
func elemSize(t int32) int64 {
	switch onnxpb.TensorProto_DataType(t) {
	case onnxpb.TensorProto_BOOL, onnxpb.TensorProto_INT8, onnxpb.TensorProto_UINT8:
		return 1
	case onnxpb.TensorProto_INT16, onnxpb.TensorProto_UINT16, onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		return 2
	case onnxpb.TensorProto_INT32, onnxpb.TensorProto_UINT32, onnxpb.TensorProto_FLOAT:
		return 4
	case onnxpb.TensorProto_INT64, onnxpb.TensorProto_UINT64, onnxpb.TensorProto_DOUBLE, onnxpb.TensorProto_COMPLEX64:
		return 8
	case onnxpb.TensorProto_COMPLEX128:
		return 16
	}
	return 0
}

// checkDataType refuses a tensor type no CNN's weight, constant or image has: STRING,
// or a number that is not an ONNX type at all (999). UNDEFINED passes: an export that
// leaves it out says nothing wrong.
func checkDataType(t int32) error {
	name, known := onnxpb.TensorProto_DataType_name[t]
	switch {
	case !known:
		return fmt.Errorf("its data type %d is not an ONNX type: the file is corrupt; export it again", t)
	case onnxpb.TensorProto_DataType(t) == onnxpb.TensorProto_STRING:
		return fmt.Errorf("it holds %s values: a CNN's images, weights and constants are numbers", name)
	}
	return nil
}

func isIntType(t int32) bool {
	switch onnxpb.TensorProto_DataType(t) {
	case onnxpb.TensorProto_BOOL, onnxpb.TensorProto_INT8, onnxpb.TensorProto_UINT8, onnxpb.TensorProto_INT16,
		onnxpb.TensorProto_UINT16, onnxpb.TensorProto_INT32, onnxpb.TensorProto_UINT32, onnxpb.TensorProto_INT64,
		onnxpb.TensorProto_UINT64:
		return true
	}
	return false
}

// tensorValue turns an initializer or a Constant node's tensor into a value: a constant
// when its data was kept and its type is numeric, a weight (dims only) otherwise. A
// tensor whose data disagrees with its dims is an error: the file is corrupt.
func tensorValue(t *onnxpb.TensorProto) (value, error) {
	dims := t.GetDims()
	n, err := numElems(dims)
	if err != nil {
		return value{}, err
	}
	dt := t.GetDataType()
	if err := checkDataType(dt); err != nil {
		return value{}, err
	}
	size := elemSize(dt)
	skipped := SkippedBytes(t)
	if skipped > 0 {
		// The data went past unread: check that it is the size the dims say.
		switch {
		case size == 0:
		case dt == int32(onnxpb.TensorProto_INT64) || dt == int32(onnxpb.TensorProto_UINT64) || isIntType(dt):
			if skipped > 10*n+16 {
				return value{}, fmt.Errorf("it holds %s of data, but its dims %v need at most %s: the file is corrupt; export it again", byteCount(skipped), dims, byteCount(10*n))
			}
		case skipped != n*size:
			return value{}, fmt.Errorf("it holds %s of data, but its dims %v of %s need %s: the file is corrupt; export it again",
				byteCount(skipped), dims, onnxpb.TensorProto_DataType(dt), byteCount(n*size))
		}
		return value{kind: kWeight, dims: dims}, nil
	}
	switch onnxpb.TensorProto_DataType(dt) {
	case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16, onnxpb.TensorProto_COMPLEX64, onnxpb.TensorProto_COMPLEX128:
		size = 0 // values cnntime never needs: keep the dims only
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL || size == 0 {
		return value{kind: kWeight, dims: dims}, nil
	}
	data, ok, err := tensorData(t, n, size)
	if err != nil {
		return value{}, err
	}
	if !ok { // no data at all: an export without parameters
		return value{kind: kWeight, dims: dims}, nil
	}
	return value{kind: kConst, dims: dims, data: data, isInt: isIntType(dt)}, nil
}

// tensorData reads a kept tensor's n values as float64s; ok is false when it has none.
func tensorData(t *onnxpb.TensorProto, n, size int64) (data []float64, ok bool, err error) {
	dt := onnxpb.TensorProto_DataType(t.GetDataType())
	mismatch := func(got int) error {
		return fmt.Errorf("it holds %d values, but its dims %v need %d: the file is corrupt; export it again", got, t.GetDims(), n)
	}
	if raw := t.GetRawData(); len(raw) > 0 {
		if int64(len(raw)) != n*size {
			return nil, false, fmt.Errorf("its raw data is %d bytes, but its dims %v of %s need %d: the file is corrupt; export it again", len(raw), t.GetDims(), dt, n*size)
		}
		data = make([]float64, n)
		for i := range data {
			b := raw[int64(i)*size:]
			switch dt {
			case onnxpb.TensorProto_FLOAT:
				data[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
			case onnxpb.TensorProto_DOUBLE:
				data[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			case onnxpb.TensorProto_INT64:
				data[i] = float64(int64(binary.LittleEndian.Uint64(b)))
			case onnxpb.TensorProto_UINT64:
				data[i] = float64(binary.LittleEndian.Uint64(b))
			case onnxpb.TensorProto_INT32:
				data[i] = float64(int32(binary.LittleEndian.Uint32(b)))
			case onnxpb.TensorProto_UINT32:
				data[i] = float64(binary.LittleEndian.Uint32(b))
			case onnxpb.TensorProto_INT16:
				data[i] = float64(int16(binary.LittleEndian.Uint16(b)))
			case onnxpb.TensorProto_UINT16:
				data[i] = float64(binary.LittleEndian.Uint16(b))
			case onnxpb.TensorProto_INT8:
				data[i] = float64(int8(b[0]))
			default: // UINT8, BOOL
				data[i] = float64(b[0])
			}
		}
		return data, true, nil
	}
	var got []float64
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		for _, v := range t.GetFloatData() {
			got = append(got, float64(v))
		}
	case onnxpb.TensorProto_DOUBLE:
		got = t.GetDoubleData()
	case onnxpb.TensorProto_INT64:
		for _, v := range t.GetInt64Data() {
			got = append(got, float64(v))
		}
	case onnxpb.TensorProto_UINT32, onnxpb.TensorProto_UINT64:
		for _, v := range t.GetUint64Data() {
			got = append(got, float64(v))
		}
	default: // the int32_data types
		for _, v := range t.GetInt32Data() {
			got = append(got, float64(v))
		}
	}
	if len(got) == 0 && n > 0 {
		return nil, false, nil
	}
	if int64(len(got)) != n {
		return nil, false, mismatch(len(got))
	}
	return got, true, nil
}

// byteCount writes a size in bytes for people: 1.0 GB, 37 KB, 12 bytes.
func byteCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}

// toInt converts a folded value to an int64, clamping the huge sentinels exporters use
// for "to the end" (INT64_MAX) into range.
func toInt(f float64) int64 {
	switch {
	case f >= 1<<62:
		return 1 << 62
	case f <= -(1 << 62):
		return -(1 << 62)
	}
	return int64(f)
}

// ints is a constant's values as int64s.
func (v value) ints() []int64 {
	out := make([]int64, len(v.data))
	for i, f := range v.data {
		out[i] = toInt(f)
	}
	return out
}

// scalar is a one-element constant's value.
func (v value) scalar() (float64, bool) {
	if v.kind != kConst || len(v.data) != 1 {
		return 0, false
	}
	return v.data[0], true
}

func constInts(dims []int64, vals []int64) value {
	data := make([]float64, len(vals))
	for i, x := range vals {
		data[i] = float64(x)
	}
	return value{kind: kConst, dims: dims, data: data, isInt: true}
}
