package validate

import (
	"bytes"
	"cnntime/app"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// ScalingRow is one published multi-node scaling figure (assets/validation/
// multinode_scaling.csv) and its prediction.
type ScalingRow struct {
	Source      string  `json:"source"`
	Where       string  `json:"where"`
	Set         string  `json:"set"` // tuning or held out
	Model       string  `json:"model"`
	Framework   string  `json:"framework"`
	Precision   string  `json:"precision"`
	GPU         string  `json:"gpu"`
	IntraGBs    float64 `json:"intra_gbps"` // the GPU-to-GPU link used, GB/s per direction
	GPUsPerNode int     `json:"gpus_per_node"`
	Network     string  `json:"network"`
	NetworkGbps float64 `json:"network_gbps"`
	Batch       int     `json:"batch_per_gpu"`
	Nodes       int     `json:"nodes"`
	BaseGPUs    int     `json:"baseline_gpus"`
	Measured    float64 `json:"measured_efficiency"`
	Predicted   float64 `json:"predicted_efficiency"`
	ErrorPct    float64 `json:"error_pct"` // signed, (predicted − measured) / measured
}

// ScalingAccuracy is table 5 of `cnntime validate`: multi-node scaling efficiency,
// predicted vs published, with the network model used.
type ScalingAccuracy struct {
	Model predictor.NetworkModel `json:"network_model"`
	Sets  []ModernGroup          `json:"sets"`
	Rows  []ScalingRow           `json:"rows"`
}

var scalingColumns = []string{"source", "where", "model", "framework", "precision", "gpu", "intra_gbps", "gpus_per_node",
	"network", "network_gbps", "batch_per_gpu", "nodes", "baseline_gpus", "scaling_efficiency", "set", "notes"}

// ParseScalingRows reads the published multi-node scaling figures.
func ParseScalingRows(data []byte) ([]ScalingRow, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("multinode_scaling.csv: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range scalingColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("multinode_scaling.csv: the header lacks column %q", c)
		}
	}
	var rows []ScalingRow
	for line := 2; ; line++ {
		f, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("multinode_scaling.csv: %w", err)
		}
		get := func(c string) string { return strings.TrimSpace(f[col[c]]) }
		num := func(c string, required bool) float64 {
			s := get(c)
			if s == "" && !required {
				return 0
			}
			v, perr := strconv.ParseFloat(s, 64)
			if perr != nil || !(v > 0) {
				err = fmt.Errorf("multinode_scaling.csv line %d, %s: %q is not a positive number", line, c, s)
			}
			return v
		}
		row := ScalingRow{Source: get("source"), Where: get("where"), Set: get("set"), Model: get("model"),
			Framework: get("framework"), Precision: get("precision"), GPU: get("gpu"), Network: get("network"),
			IntraGBs: num("intra_gbps", false), NetworkGbps: num("network_gbps", true),
			GPUsPerNode: int(num("gpus_per_node", true)), Batch: int(num("batch_per_gpu", true)),
			Nodes: int(num("nodes", true)), BaseGPUs: int(num("baseline_gpus", true)), Measured: num("scaling_efficiency", true)}
		if err != nil {
			return nil, err
		}
		if row.Set != "tuning" && row.Set != "held out" {
			return nil, fmt.Errorf("multinode_scaling.csv line %d, set: %q is neither tuning nor held out", line, row.Set)
		}
		if row.BaseGPUs > row.GPUsPerNode && row.BaseGPUs%row.GPUsPerNode != 0 {
			return nil, fmt.Errorf("multinode_scaling.csv line %d: a baseline of %d GPUs is not whole nodes of %d", line, row.BaseGPUs, row.GPUsPerNode)
		}
		rows = append(rows, row)
	}
}

// PredictScaling predicts each row's scaling efficiency with the network model nm:
// one GPU's step and backward pass at the row's per-GPU batch from the calibrated
// per-layer model, then the hierarchical all-reduce over the baseline and over the
// row's nodes; the efficiency is the baseline's step time over the N-node one.
func PredictScaling(eng *app.Engine, rows []ScalingRow, nm predictor.NetworkModel) error {
	pred := eng.Predictor()
	over := pred.Overheads()
	for i := range rows {
		r := &rows[i]
		net, err := eng.Network(r.Model)
		if err != nil {
			return fmt.Errorf("multinode_scaling.csv %s: %w", r.Source, err)
		}
		gpu, err := eng.Catalog().GPU(r.GPU)
		if err != nil {
			return fmt.Errorf("multinode_scaling.csv %s: %w", r.Source, err)
		}
		if r.IntraGBs > 0 {
			gpu.InterconnectGBs = r.IntraGBs
		} else {
			r.IntraGBs = gpu.InterconnectGBs
		}
		p, err := predictor.ParseTrainingPrecision(r.Precision)
		if err != nil {
			return fmt.Errorf("multinode_scaling.csv %s: %w", r.Source, err)
		}
		step, bwd, err := pred.StepParts(predictor.Request{Network: net, GPU: gpu, Precision: p, Policy: measure.Heuristic}, r.Batch)
		if err != nil {
			return fmt.Errorf("multinode_scaling.csv %s: %w", r.Source, err)
		}
		grad := 4 * float64(net.Params())
		link := hw.Network{Fabric: r.Network, Gbps: r.NetworkGbps}
		baseG, baseNodes := r.BaseGPUs, 1
		if r.BaseGPUs > r.GPUsPerNode {
			baseG, baseNodes = r.GPUsPerNode, r.BaseGPUs/r.GPUsPerNode
		}
		base := predictor.ScalingStep(over, nm, step, bwd, grad, baseG, baseNodes, gpu, link)
		full := predictor.ScalingStep(over, nm, step, bwd, grad, r.GPUsPerNode, r.Nodes, gpu, link)
		r.Predicted = base / full
		r.ErrorPct = 100 * (r.Predicted - r.Measured) / r.Measured
	}
	return nil
}

// Multinode predicts every embedded multi-node scaling figure with the
// default network model and summarises the errors per set.
func Multinode(eng *app.Engine) (*ScalingAccuracy, error) {
	rows, err := ParseScalingRows(assets.MultinodeScaling)
	if err != nil {
		return nil, fmt.Errorf("the embedded multi-node figures are broken (a build mistake; report it): %w", err)
	}
	if err := PredictScaling(eng, rows, predictor.DefaultNetworkModel); err != nil {
		return nil, err
	}
	acc := &ScalingAccuracy{Model: predictor.DefaultNetworkModel, Rows: rows}
	for _, set := range []string{"tuning", "held out"} {
		g := ModernGroup{Set: set}
		for _, r := range rows {
			if r.Set == set {
				g.Rows++
				g.MAPEPct += math.Abs(r.ErrorPct)
				g.BiasPct += r.ErrorPct
			}
		}
		if g.Rows > 0 {
			g.MAPEPct /= float64(g.Rows)
			g.BiasPct /= float64(g.Rows)
			acc.Sets = append(acc.Sets, g)
		}
	}
	return acc, nil
}

// WriteScalingTable prints table 5.
func WriteScalingTable(w io.Writer, acc *ScalingAccuracy) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintln(w, "\n5. Multi-node data-parallel scaling efficiency vs published figures (multinode_scaling.csv)")
	fmt.Fprintf(w, "network model: %.0f%% of the line rate between nodes, %g µs per ring step where unknown\n\n", 100*acc.Model.Efficiency, acc.Model.LatencyUS)
	for _, s := range acc.Sets {
		fmt.Fprintf(w, "%s: %d rows, MAPE %.1f%%, bias %+.1f%%\n", s.Set, s.Rows, s.MAPEPct, s.BiasPct)
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", "SOURCE", "MODEL", "PRECISION", "GPUS", "NETWORK", "BATCH", "MEASURED", "PREDICTED", "ERROR")
	for _, r := range acc.Rows {
		t.Row(r.Set, r.Source, r.Model, r.Precision, fmt.Sprintf("%d→%d×%d", r.BaseGPUs, r.Nodes, r.GPUsPerNode),
			fmt.Sprintf("%s %g Gbit/s", r.Network, r.NetworkGbps), strconv.Itoa(r.Batch),
			fmt.Sprintf("%.3f", r.Measured), fmt.Sprintf("%.3f", r.Predicted), fmt.Sprintf("%+.1f%%", r.ErrorPct))
	}
	return t.Flush()
}
