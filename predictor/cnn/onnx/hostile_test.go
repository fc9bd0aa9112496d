package onnx_test

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"cnntime/predictor/cnn/onnx"
	"cnntime/predictor/cnn/onnx/onnxpb"
	ot "cnntime/predictor/cnn/onnx/onnxtest"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Hostile and broken files: each is refused with a message, without a panic, and
// without memory that grows with what the file claims.

// repeatReader yields b n times without holding more than one copy.
type repeatReader struct {
	b    []byte
	n    int64
	off  int
	read int64 // bytes handed out
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:], r.b[r.off:])
		k += c
		r.off += c
		if r.off == len(r.b) {
			r.off = 0
			r.n--
		}
	}
	r.read += int64(k)
	return k, nil
}

// field is a length-delimited field's tag and length (its bytes follow).
func field(num protowire.Number, length int64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.BytesType), uint64(length))
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A million nodes: refused once the graph passes MaxNodes, without reading the rest.
func TestHostileMillionNodes(t *testing.T) {
	const n = 1_000_000
	head, node := ot.ManyNodes(n)
	nodes := &repeatReader{b: node, n: n}
	var err error
	bytesAlloc := allocated(func() { _, err = onnx.Import(io.MultiReader(bytes.NewReader(head), nodes), onnx.Options{Name: "x"}) })
	if err == nil || !strings.Contains(err.Error(), "more than 100000 nodes") {
		t.Fatalf("err %v, want a refusal of more than 100000 nodes", err)
	}
	if total := int64(n * len(node)); nodes.read > total/5 {
		t.Errorf("read %d of the %d bytes of nodes: the decoder should stop at the limit", nodes.read, total)
	}
	if bytesAlloc > 256<<20 {
		t.Errorf("allocated %d MB refusing it", bytesAlloc>>20)
	}
}

// A gigabyte of initializer data that the graph's dims do not account for (a conv
// weight of 8×3×3×3 floats with 1 GB of raw data) streams past unread and is refused.
func TestHostileGigabyteOfInitializers(t *testing.T) {
	const gb = 1 << 30
	head, tail := ot.HugeInitializer(gb)
	zeros := &repeatReader{b: make([]byte, 1<<16), n: gb >> 16}
	var err error
	bytesAlloc := allocated(func() {
		_, err = onnx.Import(io.MultiReader(bytes.NewReader(head), zeros, bytes.NewReader(tail)), onnx.Options{Name: "x"})
	})
	if err == nil || !strings.Contains(err.Error(), "it holds 1.1 GB of data, but its dims [8 3 3 3] of FLOAT need 864 bytes") {
		t.Fatalf("err %v, want a refusal of 1.1 GB of data for 864 bytes of dims", err)
	}
	if zeros.read != gb {
		t.Errorf("read %d of the %d bytes of data", zeros.read, int64(gb))
	}
	if bytesAlloc > 64<<20 {
		t.Errorf("allocated %d MB reading 1 GB of data it skips", bytesAlloc>>20)
	}

	// The same gigabyte claimed but not there: the file ends early.
	_, err = onnx.Import(bytes.NewReader(head), onnx.Options{Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("err %v, want a truncated file", err)
	}
}

// A model with 512 MB of weights imports without holding them: what Import allocates
// does not grow with the weights it streams past.
func TestImportStreamsPastLargeWeights(t *testing.T) {
	const size = 512 << 20
	head, tail := ot.LargeWeights(size)
	data := &repeatReader{b: make([]byte, 1<<16), n: size >> 16}
	var m *onnx.Model
	var err error
	bytesAlloc := allocated(func() {
		m, err = onnx.Import(io.MultiReader(bytes.NewReader(head), data, bytes.NewReader(tail)), onnx.Options{Name: "x"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if data.read != size || m.Network.Params() != ot.TinyCNNParams(4) {
		t.Errorf("read %d of %d bytes of weights; %d params, want %d", data.read, int64(size), m.Network.Params(), ot.TinyCNNParams(4))
	}
	if bytesAlloc > 32<<20 {
		t.Errorf("allocated %d MB importing a model with 512 MB of weights", bytesAlloc>>20)
	}
}

// Millions of tiny entries, each a few bytes in the file and hundreds once decoded
// (2M empty initializers took 1.73 GB, 20M empty value infos 1.44 GB), and many
// initializers just under the size whose data is kept (150k × 4,000 bytes took 2.9 GB:
// small data was not counted): each is refused once what the graph would cost in memory
// passes the limit, early in the file, in bounded memory.
func TestHostileManySmallEntries(t *testing.T) {
	empty, err := proto.Marshal(&onnxpb.TensorProto{Name: proto.String("i0000001")})
	if err != nil {
		t.Fatal(err)
	}
	small, err := proto.Marshal(&onnxpb.TensorProto{Name: proto.String("w0000001"), RawData: make([]byte, 4000)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		field protowire.Number
		msg   []byte
		n     int64
	}{
		{"2M empty initializers", 5, empty, 2_000_000},
		{"20M empty value infos", 13, nil, 20_000_000},
		{"150k initializers of 4,000 bytes", 5, small, 150_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, item, tail := ot.Repeated(ot.TinyCNN(16, 4), tc.field, tc.msg, tc.n)
			items := &repeatReader{b: item, n: tc.n}
			var err error
			bytesAlloc := allocated(func() {
				_, err = onnx.Import(io.MultiReader(bytes.NewReader(head), items, bytes.NewReader(tail)), onnx.Options{Name: "x"})
			})
			if err == nil || !strings.Contains(err.Error(), "would take over 32 MiB of memory") {
				t.Fatalf("err %v, want a refusal of a graph over 32 MiB in memory", err)
			}
			if total := tc.n * int64(len(item)); items.read > total/2 {
				t.Errorf("read %d of the %d bytes of entries: the decoder should stop at the limit", items.read, total)
			}
			if bytesAlloc > 300<<20 { // all it allocated, garbage included: its peak was less
				t.Errorf("allocated %d MB refusing it, want under 300 MB", bytesAlloc>>20)
			}
		})
	}
}

// Every prefix of a model is refused with a message, never a panic.
func TestHostileTruncated(t *testing.T) {
	full := ot.TinyCNN(16, 4).Bytes()
	if _, err := onnx.Import(bytes.NewReader(full), onnx.Options{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(full); n++ {
		m, err := onnx.Import(bytes.NewReader(full[:n]), onnx.Options{Name: "x"})
		if err == nil {
			t.Errorf("the first %d of %d bytes imported as %d layers", n, len(full), len(m.Network.Layers))
		}
	}
}

// Nesting beyond any real model (a subgraph in an attribute in a node in a subgraph…)
// is refused without recursing without bound.
func TestHostileDeepNesting(t *testing.T) {
	inner := []byte{}
	for i := 0; i < 200; i++ {
		attr := append(field(6, int64(len(inner))), inner...) // AttributeProto.g
		node := append(field(5, int64(len(attr))), attr...)   // NodeProto.attribute
		inner = append(field(1, int64(len(node))), node...)   // GraphProto.node
	}
	model := append(field(7, int64(len(inner))), inner...)
	_, err := onnx.Import(bytes.NewReader(model), onnx.Options{Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "nest more than") {
		t.Fatalf("err %v, want a refusal of deep nesting", err)
	}
}

// A length that runs past its message's end is corrupt.
func TestHostileLengthPastEnd(t *testing.T) {
	name := append(field(1, 100), []byte("abc")...) // NodeProto.input says 100 bytes, has 3
	node := append(field(1, int64(len(name))), name...)
	model := append(field(7, int64(len(node))), node...)
	_, err := onnx.Import(bytes.NewReader(model), onnx.Options{Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "the file is corrupt") {
		t.Fatalf("err %v, want a corrupt file", err)
	}
}

// FuzzImport feeds the decoder's entry point arbitrary bytes: it returns a network or an
// error, never panics, and a network it returns checks.
func FuzzImport(f *testing.F) {
	tiny := ot.TinyCNN(16, 4).Bytes()
	f.Add(tiny)
	f.Add(tiny[:len(tiny)/2])
	g := ot.New(1, 8, 16, 16)
	r := g.Node("Reshape", []string{"image", g.Ints([]int64{5}, 1, 2, 4, 16, 16)})
	tr := g.Node("Transpose", []string{r}, ot.AttrInts("perm", 0, 2, 1, 3, 4))
	x := g.Node("Reshape", []string{tr, g.Ints([]int64{4}, 1, -1, 16, 16)})
	g.Output(head(g, x, 8))
	f.Add(g.Bytes())
	f.Add([]byte{})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := onnx.Import(bytes.NewReader(data), onnx.Options{Name: "fuzz"})
		if err != nil {
			return
		}
		if m.Network == nil || len(m.Network.Layers) == 0 || m.Network.Params() < 0 || m.Network.MACs() < 0 {
			t.Fatalf("imported a network that does not check: %+v", m.Network)
		}
	})
}

// manyHeads is TinyCNN with n more heads: each a Relu of the class scores, each an
// output of the graph.
func manyHeads(n int) []byte {
	g := ot.TinyCNN(16, 4)
	logits := g.Model.Graph.Output[0].GetName()
	for i := 0; i < n; i++ {
		g.Output(g.Node("Relu", []string{logits}))
	}
	return g.Bytes()
}

// A graph of many outputs imports, each output's layer feeding the loss once. (The
// outputs were matched to the layers in quadratic time: 80k outputs took 20 s before the
// refusal; BenchmarkImportManyOutputs times it.)
func TestImportManyOutputs(t *testing.T) {
	m, err := onnx.Import(bytes.NewReader(manyHeads(3000)), onnx.Options{Name: "heads"})
	if err != nil {
		t.Fatal(err)
	}
	loss := m.Network.Layers[len(m.Network.Layers)-1]
	if len(loss.Inputs) != 3001 {
		t.Errorf("the loss reads %d layers, want the 3001 outputs' layers", len(loss.Inputs))
	}
}

func BenchmarkImportManyOutputs(b *testing.B) {
	file := manyHeads(9000)
	for b.Loop() {
		if _, err := onnx.Import(bytes.NewReader(file), onnx.Options{Name: "heads"}); err != nil {
			b.Fatal(err)
		}
	}
}
