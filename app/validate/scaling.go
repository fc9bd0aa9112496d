package validate

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
	"cnntime/predictor/published"
)

// ScalingRow is one published data-parallel scaling figure (assets/validation/
// scaling.csv), within one node or over several, and its prediction.
type ScalingRow struct {
	Source string `json:"source"` // the publication; whole sources are held out
	Run    string `json:"run"`    // the row's own label
	Where  string `json:"where"`
	Set    string `json:"set"` // tuning or held out
	// Data is what the run fed its GPUs: "synthetic" (no input pipeline, so no node
	// jitter: predictor.NetworkModel.NodeJitter) or "real" (the default).
	Data         string  `json:"data"`
	Model        string  `json:"model"`
	Framework    string  `json:"framework"`
	Precision    string  `json:"precision"`
	GPU          string  `json:"gpu"`
	IntraGBs     float64 `json:"intra_gbps"` // the GPU-to-GPU link used, GB/s per direction
	Interconnect string  `json:"interconnect"`
	GPUsPerNode  int     `json:"gpus_per_node"`
	Network      string  `json:"network,omitempty"`
	NetworkGbps  float64 `json:"network_gbps,omitempty"`
	Batch        int     `json:"batch_per_gpu"`
	Nodes        int     `json:"nodes"`
	BaseGPUs     int     `json:"baseline_gpus"`
	Measured     float64 `json:"measured_efficiency"`
	Predicted    float64 `json:"predicted_efficiency"`
	ErrorPct     float64 `json:"error_pct"` // signed, (predicted − measured) / measured
	// Before is the efficiency the model gave before it counted interference and
	// stragglers (every link at 80% of its bandwidth, the network at 45%).
	Before    float64 `json:"before_efficiency"`
	BeforePct float64 `json:"before_error_pct"`

	step, bwd, grad float64
	gpu             hw.GPU
}

// MultiNode reports whether the row spans several nodes.
func (r ScalingRow) MultiNode() bool { return r.Nodes > 1 }

// ScalingParams are the fitted figures of the scaling model: the network's share of
// its line rate, and Overheads.CommInterference and StepJitter.
type ScalingParams struct {
	NetworkEfficiency float64 `json:"network_efficiency"`
	Interference      float64 `json:"comm_interference"`
	Jitter            float64 `json:"step_jitter"`
	NodeJitter        float64 `json:"node_jitter"`
	TuningMAPEPct     float64 `json:"tuning_mape_pct"`
}

// ScalingGroup is the accuracy over the rows of one set, within a node or over several.
type ScalingGroup struct {
	Set        string  `json:"set"`
	Scope      string  `json:"scope"` // "all", "one node" or "several nodes"
	Rows       int     `json:"rows"`
	MAPEPct    float64 `json:"mape_pct"`
	BiasPct    float64 `json:"bias_pct"`
	BeforeMAPE float64 `json:"before_mape_pct"`
}

// ScalingAccuracy is table 5 of `cnntime validate`: data-parallel scaling efficiency,
// predicted vs published, within a node and over several.
type ScalingAccuracy struct {
	Shipped ScalingParams  `json:"shipped"`
	Refit   ScalingParams  `json:"refit"`
	Groups  []ScalingGroup `json:"groups"`
	Rows    []ScalingRow   `json:"rows"`
}

var scalingColumns = []string{"source", "run", "where", "model", "framework", "precision", "gpu", "intra_gbps", "gpus_per_node",
	"nodes", "baseline_gpus", "network", "network_gbps", "batch_per_gpu", "scaling_efficiency", "set"}

// ParseScalingRows reads the published scaling figures.
func ParseScalingRows(data []byte) ([]ScalingRow, error) {
	var rows []ScalingRow
	err := published.Read("scaling.csv", data, scalingColumns, func(f *published.Row) error {
		row := ScalingRow{Source: f.Text("source"), Run: f.Text("run"), Where: f.Text("where"), Set: f.Text("set"), Model: f.Text("model"),
			Framework: f.Text("framework"), Precision: f.Text("precision"), GPU: f.Text("gpu"), Network: f.Text("network"),
			Interconnect: f.Text("interconnect"), IntraGBs: f.Num("intra_gbps", false), GPUsPerNode: int(f.Num("gpus_per_node", true)), Batch: int(f.Num("batch_per_gpu", true)),
			Nodes: int(f.Num("nodes", true)), BaseGPUs: int(f.Num("baseline_gpus", true)), Measured: f.Num("scaling_efficiency", true),
			Data: f.Text("data")} // an optional column
		row.NetworkGbps = f.Num("network_gbps", row.Nodes > 1)
		if row.Data == "" {
			row.Data = "real"
		}
		if f.Err() != nil {
			return f.Err()
		}
		switch {
		case row.Source == "" || row.Model == "" || row.GPU == "":
			return f.Errorf("a row needs its source, model and gpu")
		case row.Nodes == 1 && row.BaseGPUs >= row.GPUsPerNode:
			return f.Errorf("%d GPUs in one node do not scale from a baseline of %d", row.GPUsPerNode, row.BaseGPUs)
		case row.BaseGPUs > row.GPUsPerNode && row.BaseGPUs%row.GPUsPerNode != 0:
			return f.Errorf("a baseline of %d GPUs is not whole nodes of %d", row.BaseGPUs, row.GPUsPerNode)
		case row.Interconnect != "" && row.Interconnect != "NVLink" && row.Interconnect != "PCIe":
			return f.CellErrorf("interconnect", "%q is neither NVLink nor PCIe", row.Interconnect)
		case row.Data != "real" && row.Data != "synthetic":
			return f.CellErrorf("data", "%q is neither real nor synthetic", row.Data)
		case row.Measured > 1.2:
			return f.Errorf("a scaling efficiency of %g is not plausible (want at most 1.2)", row.Measured)
		}
		if row.Run == "" {
			row.Run = row.Source
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// prepareScaling times each row's one-GPU step and backward pass once, at its per-GPU
// batch, with the framework its description names.
func prepareScaling(eng *app.Engine, rows []ScalingRow) error {
	pred := eng.Predictor()
	for i := range rows {
		r := &rows[i]
		net, err := eng.Network(r.Model)
		if err != nil {
			return fmt.Errorf("scaling.csv %s: %w", r.Run, err)
		}
		gpu, err := eng.Catalog().GPU(r.GPU)
		if err != nil {
			return fmt.Errorf("scaling.csv %s: %w", r.Run, err)
		}
		// A row may name the link its machines used where the catalog's GPU has another
		// (a V100 on PCIe, a P100 on NVLink).
		if r.IntraGBs > 0 {
			gpu.InterconnectGBs = r.IntraGBs
		} else {
			r.IntraGBs = gpu.InterconnectGBs
		}
		if r.Interconnect != "" {
			gpu.Interconnect = r.Interconnect
		} else {
			r.Interconnect = gpu.Interconnect
		}
		p, err := predictor.ParseTrainingPrecision(r.Precision)
		if err != nil {
			return fmt.Errorf("scaling.csv %s: %w", r.Run, err)
		}
		r.step, r.bwd, err = pred.StepParts(predictor.Request{Network: net, GPU: gpu, Precision: p, Policy: measure.Heuristic,
			Framework: predictor.FrameworkOf(r.Framework)}, r.Batch)
		if err != nil {
			return fmt.Errorf("scaling.csv %s: %w", r.Run, err)
		}
		r.grad, r.gpu = 4*float64(net.Params()), gpu
	}
	return nil
}

// scalingEfficiency is a prepared row's efficiency under the overheads o and network
// model nm: its baseline's step time over its full configuration's. A run on synthetic
// data has no input pipeline to make one node slower than another.
func scalingEfficiency(r *ScalingRow, o predictor.Overheads, nm predictor.NetworkModel) float64 {
	if r.Data == "synthetic" {
		nm.NodeJitter = 0
	}
	link := hw.Network{Fabric: r.Network, Gbps: r.NetworkGbps}
	baseG, baseNodes := r.BaseGPUs, 1
	if r.BaseGPUs > r.GPUsPerNode {
		baseG, baseNodes = r.GPUsPerNode, r.BaseGPUs/r.GPUsPerNode
	}
	base := predictor.ScalingStep(o, nm, r.step, r.bwd, r.grad, baseG, baseNodes, r.gpu, link)
	full := predictor.ScalingStep(o, nm, r.step, r.bwd, r.grad, r.GPUsPerNode, r.Nodes, r.gpu, link)
	return base / full
}

// beforeScaling is the scaling model before this table covered one node: every link
// at 80% of its bandwidth, the network at 45% of its line rate, nothing beyond the
// exposed all-reduce.
func beforeScaling(o predictor.Overheads) (predictor.Overheads, predictor.NetworkModel) {
	o.NVLinkAllReduceEfficiency, o.PCIeAllReduceEfficiency, o.CommInterference, o.StepJitter = 0.8, 0.8, 0, 0
	nm := predictor.DefaultNetworkModel
	nm.Efficiency, nm.NodeJitter = 0.45, 0
	return o, nm
}

// ScalingGrid is where FitScaling looks.
var ScalingGrid = struct{ NetworkEfficiency, Interference, Jitter, NodeJitter []float64 }{
	NetworkEfficiency: steps(0.3, 0.95, 0.05),
	Interference:      steps(0, 0.5, 0.05),
	Jitter:            steps(0, 0.05, 0.0025),
	NodeJitter:        steps(0, 0.1, 0.0025),
}

func steps(from, to, by float64) []float64 {
	var out []float64
	for i := 0; ; i++ {
		v := math.Round((from+float64(i)*by)*1e6) / 1e6
		if v > to+1e-9 {
			return out
		}
		out = append(out, v)
	}
}

// FitScaling chooses the scaling model's figures over ScalingGrid, on the tuning rows of
// prepared rows alone, for the least MAPE of the scaling efficiency: in turns,
// CommInterference and StepJitter on every tuning row, then the network's share of its
// line rate and the node jitter on the rows over several nodes (the only ones they
// change), until neither turn moves; it starts from predictor.DefaultNetworkModel. o
// holds every other figure.
func FitScaling(rows []ScalingRow, o predictor.Overheads) (ScalingParams, error) {
	var tuning, several []*ScalingRow
	for i := range rows {
		if r := &rows[i]; r.Set == "tuning" {
			tuning = append(tuning, r)
			if r.MultiNode() {
				several = append(several, r)
			}
		}
	}
	if len(tuning) == 0 || len(several) == 0 {
		return ScalingParams{}, fmt.Errorf("scaling.csv needs tuning rows over several nodes; it has %d tuning rows, %d of them over several", len(tuning), len(several))
	}
	nm := predictor.DefaultNetworkModel
	sumAPE := func(rs []*ScalingRow) float64 {
		sum := 0.0
		for _, r := range rs {
			sum += math.Abs(scalingEfficiency(r, o, nm)-r.Measured) / r.Measured
		}
		return sum
	}
	var best ScalingParams
	for round := 0; round < 20; round++ {
		prev := best
		best.Interference, best.Jitter = argmin2(ScalingGrid.Interference, ScalingGrid.Jitter, func(f, j float64) float64 {
			o.CommInterference, o.StepJitter = f, j
			return sumAPE(tuning)
		})
		o.CommInterference, o.StepJitter = best.Interference, best.Jitter
		best.NetworkEfficiency, best.NodeJitter = argmin2(ScalingGrid.NetworkEfficiency, ScalingGrid.NodeJitter, func(ne, nj float64) float64 {
			nm.Efficiency, nm.NodeJitter = ne, nj
			return sumAPE(several)
		})
		nm.Efficiency, nm.NodeJitter = best.NetworkEfficiency, best.NodeJitter
		best.TuningMAPEPct = 100 * sumAPE(tuning) / float64(len(tuning))
		if round > 0 && best == prev {
			break
		}
	}
	return best, nil
}

// argmin2 is the pair of xs × ys with the least cost, the first one on a tie.
func argmin2(xs, ys []float64, cost func(x, y float64) float64) (bx, by float64) {
	low := math.Inf(1)
	for _, x := range xs {
		for _, y := range ys {
			if c := cost(x, y); c < low-1e-12 {
				low, bx, by = c, x, y
			}
		}
	}
	return bx, by
}

// Scaling predicts every embedded scaling figure with the shipped model, refits the
// model on the tuning sources, and summarises the errors per set and scope.
func Scaling(eng *app.Engine) (*ScalingAccuracy, error) {
	rows, err := ParseScalingRows(assets.Scaling)
	if err != nil {
		return nil, fmt.Errorf("the embedded scaling figures are broken (a build mistake; report it): %w", err)
	}
	if err := prepareScaling(eng, rows); err != nil {
		return nil, err
	}
	o := eng.Predictor().Overheads()
	nm := predictor.DefaultNetworkModel
	bo, bnm := beforeScaling(o)
	for i := range rows {
		r := &rows[i]
		r.Predicted = scalingEfficiency(r, o, nm)
		r.ErrorPct = 100 * (r.Predicted - r.Measured) / r.Measured
		r.Before = scalingEfficiency(r, bo, bnm)
		r.BeforePct = 100 * (r.Before - r.Measured) / r.Measured
	}
	acc := &ScalingAccuracy{Rows: rows,
		Shipped: ScalingParams{NetworkEfficiency: nm.Efficiency, Interference: o.CommInterference, Jitter: o.StepJitter, NodeJitter: nm.NodeJitter}}
	if acc.Refit, err = FitScaling(rows, o); err != nil {
		return nil, err
	}
	for _, set := range []string{"tuning", "held out"} {
		for _, scope := range []string{"all", "one node", "several nodes"} {
			g := ScalingGroup{Set: set, Scope: scope}
			for _, r := range rows {
				if r.Set != set || scope == "one node" && r.MultiNode() || scope == "several nodes" && !r.MultiNode() {
					continue
				}
				g.Rows++
				g.MAPEPct += math.Abs(r.ErrorPct)
				g.BiasPct += r.ErrorPct
				g.BeforeMAPE += math.Abs(r.BeforePct)
			}
			if g.Rows > 0 {
				n := float64(g.Rows)
				g.MAPEPct, g.BiasPct, g.BeforeMAPE = g.MAPEPct/n, g.BiasPct/n, g.BeforeMAPE/n
				acc.Groups = append(acc.Groups, g)
			}
		}
		if set == "tuning" && len(acc.Groups) > 0 {
			acc.Shipped.TuningMAPEPct = acc.Groups[0].MAPEPct
		}
	}
	return acc, nil
}

// WriteScalingTable prints table 5.
func WriteScalingTable(w io.Writer, acc *ScalingAccuracy) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintln(w, "\n5. Data-parallel scaling efficiency, within a node and over several, vs published figures (scaling.csv)")
	s, f := acc.Shipped, acc.Refit
	fmt.Fprintf(w, "model: NCCL bus bandwidth per link (nccl-tests), over several nodes a ring through every GPU, the network at %.0f%% of its line rate, %.0f%% of the hidden all-reduce slowing the backward pass, step jitter %.2f%% per GPU and %.2f%% per node on real data (stragglers: × sqrt(2 ln N))\n",
		100*s.NetworkEfficiency, 100*s.Interference, 100*s.Jitter, 100*s.NodeJitter)
	fmt.Fprintf(w, "refitted now on the tuning sources: %.0f%%, %.0f%%, %.2f%%, %.2f%% (tuning MAPE %.1f%%); \"before\": every link at 80%%, the network at 45%%, no interference or stragglers\n\n",
		100*f.NetworkEfficiency, 100*f.Interference, 100*f.Jitter, 100*f.NodeJitter, f.TuningMAPEPct)
	t := app.NewTable(w, "SET", "SCOPE", "ROWS", "MAPE", "BIAS", "BEFORE")
	for _, g := range acc.Groups {
		t.Row(g.Set, g.Scope, strconv.Itoa(g.Rows), fmt.Sprintf("%.1f%%", g.MAPEPct), fmt.Sprintf("%+.1f%%", g.BiasPct), fmt.Sprintf("%.1f%%", g.BeforeMAPE))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t = app.NewTable(w, "SET", "SOURCE", "RUN", "MODEL", "PRECISION", "GPUS", "LINK", "BATCH", "DATA", "MEASURED", "PREDICTED", "ERROR", "BEFORE")
	for _, r := range acc.Rows {
		link := fmt.Sprintf("%s %g GB/s", r.Interconnect, r.IntraGBs)
		if r.MultiNode() {
			link += fmt.Sprintf("; %s %g Gbit/s", r.Network, r.NetworkGbps)
		}
		t.Row(r.Set, r.Source, r.Run, r.Model, r.Precision, fmt.Sprintf("%d→%d×%d", r.BaseGPUs, r.Nodes, r.GPUsPerNode),
			link, strconv.Itoa(r.Batch), r.Data, fmt.Sprintf("%.3f", r.Measured), fmt.Sprintf("%.3f", r.Predicted),
			fmt.Sprintf("%+.1f%%", r.ErrorPct), fmt.Sprintf("%.3f", r.Before))
	}
	return t.Flush()
}
