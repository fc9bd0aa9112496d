package cnn

import (
	"os"
	"strings"
	"testing"
)

func TestParseCustomExample(t *testing.T) {
	data, err := os.ReadFile("testdata/cifar_resnet.json")
	if err != nil {
		t.Fatal(err)
	}
	net, err := ParseCustom(data)
	if err != nil {
		t.Fatal(err)
	}
	// conv1 864 + three BNs of 32 channels 192 + two 3×3 32→32 convs 18432
	// + down.conv 18432 + down.bn 128 + fc 650.
	if got, want := net.Params(), int64(864+192+18432+18432+128+650); got != want {
		t.Errorf("params = %d, want %d", got, want)
	}
	// conv1 32·32·32·27, block convs 2·32·32·32·288, down.conv 64·16·16·288, fc 640.
	if got, want := net.MACs(), int64(884736+2*9437184+4718592+640); got != want {
		t.Errorf("MACs = %d, want %d", got, want)
	}
	if !net.Custom || net.Name != "cifar_resnet_mini" || net.Input != (Shape{3, 32, 32}) || net.Classes != 10 {
		t.Errorf("network header %q custom=%v input %s classes %d", net.Name, net.Custom, net.Input, net.Classes)
	}
	if n := len(net.Layers); n != 19 || net.Layers[n-1].Op != OpLoss {
		t.Errorf("%d layers ending in %s, want 19 ending in the loss", n, net.Layers[n-1].Op)
	}
	add := net.Layers[8]
	if add.Name != "block1.add" || len(add.Inputs) != 2 || add.Inputs[0] != 7 || add.Inputs[1] != 2 {
		t.Errorf("layer 8 is %s with inputs %v, want block1.add from [7 2]", add.Name, add.Inputs)
	}
	if pool := net.Layers[13]; pool.Out != (Shape{64, 8, 8}) || pool.Stride != (Pair{2, 2}) {
		t.Errorf("pool: out %s stride %s, want 64x8x8 with the stride defaulting to the kernel", pool.Out, pool.Stride)
	}
	if net.Layers[0].Inputs[0] != image {
		t.Errorf("first layer reads %v, want the image", net.Layers[0].Inputs)
	}
}

// custom wraps layers in a valid header for a 3×8×8 input and 4 classes.
func custom(layers string) string {
	return `{"name": "m", "input": [3, 8, 8], "classes": 4, "layers": [` + layers + `]}`
}

func TestParseCustomErrors(t *testing.T) {
	tests := []struct {
		what, file, want string
	}{
		{"syntax", "{\n  \"name\": \"m\",\n  \"input\": [3, 8, 8]\n  \"classes\": 4}", "bad JSON at line 4, column 3"},
		{"type", "{\"name\": \"m\",\n \"classes\": \"ten\"}", `bad JSON at line 2, column 18 (the end of the value): "classes" must be int, not a JSON string`},
		{"truncated", `{"name": "m", "input": [3, 8`, "the file ends early"},
		{"trailing data", custom(`{"op": "flatten"}, {"op": "linear", "out": 4}`) + " {}", "unexpected data after"},
		{"no name", `{"input": [3, 8, 8], "classes": 4, "layers": [{"op": "flatten"}]}`, `"name" is missing`},
		{"an ANSI escape in the name", `{"name": "\u001b[2Jnet", "input": [3, 8, 8], "classes": 4, "layers": [{"op": "flatten"}]}`, `holds a control or formatting character`},
		{"bad input", `{"name": "m", "input": [3, 0, 8], "classes": 4, "layers": [{"op": "flatten"}]}`, `"input" [3 0 8] must have sizes from 1`},
		{"no classes", `{"name": "m", "input": [3, 8, 8], "layers": [{"op": "flatten"}]}`, `"classes" must be from 1`},
		{"no layers", `{"name": "m", "input": [3, 8, 8], "classes": 4}`, `"layers" must list from 1`},
		{"unknown op", custom(`{"name": "c1", "op": "conv3d", "out": 4, "kernel": 3}`), `layer 0 (c1): unknown op "conv3d": use one of conv2d,`},
		{"missing op", custom(`{"name": "c1"}`), `layer 0 (c1): "op" is missing`},
		{"unknown field", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernal": 3}`), `layer 0: unknown field "kernal"`},
		{"layer type", custom(`{"name": "c1", "op": "conv2d", "out": "4"}`), `layer 0: bad JSON at line 1, column 101 (the end of the value): "out" must be int`},
		{"missing kernel", custom(`{"name": "c1", "op": "conv2d", "out": 4}`), `layer 0 (c1): conv2d needs "kernel"`},
		{"negative size", custom(`{"name": "c1", "op": "conv2d", "out": -4, "kernel": 3}`), `layer 0 (c1): "out" is -4: it must be from 1`},
		{"negative padding", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 3, "padding": [1, -1]}`), `layer 0 (c1): "padding" is 1x-1`},
		{"kernel too large", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 9}`), "layer 0 (c1): conv2d on input 3x8x8: kernel 9 is larger than its padded input 8"},
		{"channel mismatch", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 3}, {"name": "c2", "op": "conv2d", "in": 8, "out": 4, "kernel": 3}`), "layer 1 (c2): channel mismatch: \"in\" says 8 input channels, its input 4x6x6 has 4"},
		{"add mismatch", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 3}, {"name": "s", "op": "add", "inputs": ["c1", "input"]}`), "layer 1 (s): add needs inputs of equal shape, got 4x6x6 and 3x8x8"},
		{"bad groups", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 3, "groups": 2}`), "layer 0 (c1): conv2d groups 2 must divide both input channels 3"},
		{"unknown input", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 3}, {"name": "r", "op": "relu", "inputs": ["c9"]}`), `layer 1 (r): unknown input "c9"`},
		{"forward reference", custom(`{"name": "r", "op": "relu", "inputs": ["c1"]}, {"name": "c1", "op": "conv2d", "out": 4, "kernel": 3}`), `layer 0 (r): unknown input "c1"`},
		{"duplicate name", custom(`{"name": "a", "op": "relu"}, {"name": "a", "op": "relu"}`), `layer 1 (a): the name "a" is used twice`},
		{"add one input", custom(`{"name": "s", "op": "add"}`), "layer 0 (s): add takes two or more inputs, got 1"},
		{"loss not last", custom(`{"name": "l", "op": "crossentropy"}, {"op": "relu"}`), "layer 0 (l): crossentropy must be the last layer"},
		{"scores not flat", custom(`{"name": "c1", "op": "conv2d", "out": 4, "kernel": 3}`), "the loss after the last layer 0 (c1): the loss needs class scores of shape Kx1x1, got 4x6x6"},
		{"wrong class count", custom(`{"op": "flatten"}, {"name": "fc", "op": "linear", "out": 5}`), "the loss after the last layer 1 (fc): the loss needs 4 class scores, got 5"},
		{"pool not square", custom(`{"name": "p", "op": "maxpool2d", "kernel": [2, 3]}`), "layer 0 (p): maxpool2d takes square kernel"},
		{"shuffle groups", custom(`{"name": "s", "op": "channelshuffle", "groups": 2}`), "layer 0 (s): channel shuffle groups 2 must divide the channels 3"},
		{"a right-to-left override in the name", `{"name": "net\u202egnp.exe", "input": [3, 8, 8], "classes": 4, "layers": [{"op": "flatten"}]}`, `holds a control or formatting character`},
		// Layer names: text a terminal shows, a table aligns and a CSV holds as it is.
		{"a NUL in a layer name", custom(`{"name": "c\u0000", "op": "flatten"}`), `layer 0: the layer name "c\x00" holds a control or formatting character`},
		{"an ESC in a layer name", custom(`{"name": "\u001b[31mred", "op": "flatten"}`), `layer 0: the layer name "\x1b[31mred" holds a control or formatting character`},
		{"a line break in a layer name", custom(`{"name": "a\nInjected", "op": "flatten"}`), `layer 0: the layer name "a\nInjected" holds a control`},
		{"a long layer name", custom(`{"name": "` + strings.Repeat("x", 201) + `", "op": "flatten"}`), `is 201 bytes long: give at most 200`},
		{"huge layer", `{"name": "m", "input": [65536, 65536, 65536], "classes": 4, "layers": [{"name": "c", "op": "conv2d", "out": 65536, "kernel": 3}]}`, "layer 0 (c): conv2d is too large"},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			net, err := ParseCustom([]byte(tt.file))
			if err == nil {
				t.Fatalf("parsed into %d layers, want an error containing %q", len(net.Layers), tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseCustomDefaults(t *testing.T) {
	net, err := ParseCustom([]byte(custom(`{"op": "conv2d", "out": 4, "kernel": 1}, {"op": "flatten"}, {"op": "linear", "out": 4, "bias": false}, {"op": "crossentropy"}`)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		layer  int
		name   string
		params int64
	}{
		{0, "conv2d0", 3*4 + 4}, // conv bias defaults to true, as in PyTorch
		{1, "flatten1", 0},
		{2, "linear2", 256 * 4},
		{3, "crossentropy3", 0},
	}
	for _, tt := range tests {
		l := net.Layers[tt.layer]
		if l.Name != tt.name || l.Params != tt.params {
			t.Errorf("layer %d: %s with %d params, want %s with %d", tt.layer, l.Name, l.Params, tt.name, tt.params)
		}
	}
	if len(net.Layers) != 4 {
		t.Errorf("%d layers, want 4: an explicit loss is not doubled", len(net.Layers))
	}
}

func FuzzParseCustom(f *testing.F) {
	example, err := os.ReadFile("testdata/cifar_resnet.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(custom(`{"op": "conv2d", "out": 4, "kernel": 3, "groups": 1}, {"op": "slice", "start": 2, "out": 2}, {"op": "gap"}`)))
	f.Add([]byte(custom(`{"name": "a", "op": "relu"}, {"name": "b", "op": "mul", "inputs": ["a", "input"]}, {"op": "concat", "inputs": ["a", "b"]}, {"op": "adaptiveavgpool2d"}, {"op": "flatten"}, {"op": "linear", "out": 4}`)))
	f.Add([]byte(`{"name": "m", "input": [1, 1, 1], "classes": 1, "layers": [{"op": "crossentropy", "inputs": ["input"]}]}`))
	f.Add([]byte(`{"layers": [1, 2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		net, err := ParseCustom(data)
		if err != nil {
			if net != nil {
				t.Fatalf("error %v with a network", err)
			}
			return
		}
		last := net.Layers[len(net.Layers)-1]
		if last.Op != OpLoss {
			t.Fatalf("parsed network ends in %s, not the loss", last.Op)
		}
		for i, l := range net.Layers {
			if !l.Out.Valid() || l.Params < 0 || l.MACs < 0 {
				t.Fatalf("layer %d (%s): out %s params %d MACs %d", i, l.Name, l.Out, l.Params, l.MACs)
			}
		}
	})
}
