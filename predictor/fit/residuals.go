package fit

import (
	"math"
	"sort"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
)

// NetworkKind sorts a network by the kernels that set its pace off the dense-GEMM
// path: "depthwise+SE" (MobileNetV3, EfficientNet: depthwise convolutions and
// squeeze-excitation gates), "depthwise" (MobileNetV2, MNASNet, ShuffleNet),
// "grouped" (ResNeXt, RegNet) or "dense" (everything else).
func NetworkKind(net *cnn.Network) string {
	var dw, se, grouped bool
	for i := range net.Layers {
		c := net.Layers[i].Config
		switch {
		case c.Op == cnn.OpConv2d && c.Groups > 1 && c.Groups == c.In.C:
			dw = true
		case c.Op == cnn.OpConv2d && c.Groups > 1:
			grouped = true
		case c.Op == cnn.OpMul && len(net.Layers[i].InShapes) == 2 && net.Layers[i].InShapes[1].H == 1:
			se = true
		}
	}
	switch {
	case dw && se:
		return "depthwise+SE"
	case dw:
		return "depthwise"
	case grouped:
		return "grouped"
	}
	return "dense"
}

// Residual is the accuracy over one group of published rows.
type Residual struct {
	Set     string  `json:"set"`
	Family  string  `json:"gpu_family"`   // hw.Family name; "unknown" for pre-Volta GPUs other than Kepler
	Kind    string  `json:"network_kind"` // NetworkKind
	Data    string  `json:"data"`         // "synthetic" or the loader of a real-data run
	Rows    int     `json:"rows"`
	MAPEPct float64 `json:"mape_pct"`
	BiasPct float64 `json:"bias_pct"` // mean signed error: positive is predicted too fast
}

// Residuals groups the errors of preds (one per case) by set, GPU family, network
// kind and data, sorted tuning first.
func Residuals(cases []Case, preds []Prediction) []Residual {
	idx := map[Residual]int{}
	var out []Residual
	for i, c := range cases {
		data := "synthetic"
		if c.RealData() {
			data = string(c.Loader)
		}
		k := Residual{Set: c.Set(), Family: hw.FamilyOf(c.Dev).String(), Kind: NetworkKind(c.Net), Data: data}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, k)
		}
		e := preds[i].ErrorPct(c.ImagesPerS)
		out[j].Rows++
		out[j].MAPEPct += math.Abs(e)
		out[j].BiasPct += e
	}
	for i := range out {
		out[i].MAPEPct /= float64(out[i].Rows)
		out[i].BiasPct /= float64(out[i].Rows)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Set != b.Set {
			return a.Set == "tuning"
		}
		if a.Data != b.Data {
			return a.Data < b.Data
		}
		if a.Family != b.Family {
			return a.Family < b.Family
		}
		return a.Kind < b.Kind
	})
	return out
}
