package app

import (
	"context"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
)

// tinyModelJSON is a custom model small enough to sweep on the CPU in a moment.
func tinyModelJSON(name string) string {
	return `{"name": "` + name + `", "input": [3, 8, 8], "classes": 4, "layers": [
		{"name": "conv", "op": "conv2d", "out": 4, "kernel": 3, "padding": 1},
		{"name": "relu", "op": "relu"},
		{"name": "pool", "op": "adaptiveavgpool2d", "size": 1},
		{"name": "flatten", "op": "flatten"},
		{"name": "fc", "op": "linear", "out": 4}
	]}`
}

func TestAddNetworkRefusesZooNamesAndReplacesCustomOnes(t *testing.T) {
	eng, err := NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(text string) *cnn.Network {
		n, err := cnn.ParseCustom([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tests := []struct {
		name    string
		net     *cnn.Network
		wantErr string
	}{
		{"zoo name", parse(tinyModelJSON("vgg16")), `"vgg16" has the name of a zoo model`},
		{"no network", nil, "it has no name"},
		{"no name", &cnn.Network{Layers: []cnn.Layer{{Name: "x"}}}, "it has no name"},
		{"no layers", &cnn.Network{Name: "empty"}, "empty: it has no layers"},
	}
	for _, tc := range tests {
		if err := eng.AddNetwork(tc.net); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: AddNetwork = %v, want an error with %q", tc.name, err, tc.wantErr)
		}
	}
	if names := eng.CustomNames(); len(names) != 0 {
		t.Errorf("refused networks were added: %v", names)
	}
	if n, err := eng.Network("vgg16"); err != nil || n.Custom || n.Params() != 138_357_544 {
		t.Errorf("vgg16 after a refused clash: %v, %v; want the zoo's", n, err)
	}

	first, second := parse(tinyModelJSON("mine")), parse(strings.Replace(tinyModelJSON("mine"), `"out": 4, "kernel"`, `"out": 8, "kernel"`, 1))
	for _, n := range []*cnn.Network{first, parse(tinyModelJSON("other")), second} {
		if err := eng.AddNetwork(n); err != nil {
			t.Fatal(err)
		}
	}
	if names := eng.CustomNames(); strings.Join(names, ",") != "mine,other" {
		t.Errorf("CustomNames() = %v, want [mine other]", names)
	}
	if got, err := eng.Network("mine"); err != nil || got != second {
		t.Errorf("Network(mine) = %v, %v; want the second network added under that name", got, err)
	}
	if _, err := eng.Network("mien"); err == nil || !strings.Contains(err.Error(), `did you mean "mine"`) {
		t.Errorf("Network(mien) = %v, want a suggestion of the custom model", err)
	}
}
