package cli

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/db/csvsafe"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// predictOutput is predict's and best's flags: the shared run flags and --csv.
type predictOutput struct {
	runFlags
	csv bool
}

// predictCurves is what predict and best share: it reads the command's flags, opens the
// engine on the cache and predicts every CNN × machine the flags name.
func predictCurves(env *Env, cmd Command, args []string, withBatch bool) (predictOutput, app.Query, []predictor.Curve, error) {
	fs := env.Flags(cmd)
	var pf predictOutput
	pf.chooseNodes = cmd.Name == "best"
	pf.register(fs, withBatch)
	fs.BoolVar(&pf.csv, "csv", false, "print CSV instead of a table")
	if err := checkFlagValues(fs, args); err != nil {
		return pf, app.Query{}, nil, err
	}
	if err := fs.Parse(args); err != nil {
		return pf, app.Query{}, nil, err
	}
	if pf.csv && env.JSON {
		return pf, app.Query{}, nil, Usagef("give --json or --csv, not both")
	}
	eng, done, err := openEngine(env)
	if err != nil {
		return pf, app.Query{}, nil, err
	}
	defer done()
	q, err := pf.query(eng, fs)
	if err != nil {
		return pf, app.Query{}, nil, err
	}
	curves, err := curvesOverNodes(env, eng, q, pf.nodeCounts)
	return pf, q, curves, err
}

func openEngine(env *Env) (*app.Engine, func(), error) {
	d, err := env.Cache()
	if err != nil {
		return nil, nil, err
	}
	eng, err := app.NewEngine(env.Ctx, d)
	if err != nil {
		return nil, nil, err
	}
	return eng, func() {}, nil
}

// PredictRow is one line of `cnntime predict --json`: one CNN on one machine at one
// batch size. Cost and energy are null when the price or the power is unknown; the
// times are null when the batch does not fit.
type PredictRow struct {
	Model      string   `json:"model"`
	Machine    string   `json:"machine"`
	GPU        string   `json:"gpu"`
	GPUCount   int      `json:"gpu_count"`
	Batch      int      `json:"batch"`
	Precision  string   `json:"precision"`
	IterMS     *float64 `json:"iter_ms"`
	ImagesPerS *float64 `json:"images_per_s"`
	EpochS     *float64 `json:"epoch_s"`
	TotalS     *float64 `json:"total_s"`
	CostUSD    *float64 `json:"cost_usd"`
	EnergyKWh  *float64 `json:"energy_kwh"`
	MemoryGB   float64  `json:"memory_gb"`
	Fits       bool     `json:"fits"`
	Source     string   `json:"source"`
	ErrorPct   *float64 `json:"error_pct"`
	// Nodes and Network are present for a run over several instances of the machine:
	// their count and the network assumed between them (its source; assumed: true
	// when not published). GPUCount is then the total.
	Nodes   int         `json:"nodes,omitempty"`
	Network *hw.Network `json:"network,omitempty"`
	// Input is the input size (pixels); Loader, Workers (per GPU) and LoaderImagesPerS
	// (the loader's own rate over all GPUs; null for synthetic data) the input
	// pipeline; Bound what sets the pace ("gpu" or "input"; "" when the batch does not
	// fit); MemoryFormat the activations' layout.
	Input            int      `json:"input"`
	Loader           string   `json:"loader"`
	Workers          int      `json:"workers,omitempty"`
	LoaderImagesPerS *float64 `json:"loader_images_per_s"`
	Bound            string   `json:"bound,omitempty"`
	MemoryFormat     string   `json:"memory_format,omitempty"`
	// Script is the training script around the step and ScriptMS its cost in iter_ms
	// (null where the batch does not fit).
	Script   string   `json:"script,omitempty"`
	ScriptMS *float64 `json:"script_ms"`
	// Framework is what runs the step (pytorch2, pytorch1 or graph): its work per
	// parameter tensor is in iter_ms.
	Framework string `json:"framework,omitempty"`
	// CPU is the machine's host CPU the loader's rate is scaled by ("assumed": the
	// reference CPU stood in for an unknown one, as for a bare --gpu).
	CPU *hw.CPU `json:"cpu,omitempty"`
	// Backend says, for a measured CPU (local/cpu), whose measurements answered:
	// "pytorch" (scripts/pytorch_sweep.py) or "cnntime-cpu" (the Go CPU backend).
	Backend string `json:"backend,omitempty"`
}

func rowOf(c *predictor.Curve, p predictor.Point) PredictRow {
	r := PredictRow{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, Batch: p.Batch,
		Precision: string(c.Precision), MemoryGB: round(p.MemoryGB, 3), Fits: p.Fits, Source: string(p.Source),
		Input: c.Input, Loader: string(c.Loader), Workers: c.Workers, Bound: p.Bound, MemoryFormat: string(c.Format),
		Backend: c.Backend, Script: string(c.Script), Framework: string(c.Framework), CPU: c.CPU}
	r.Nodes, r.Network = c.Nodes, c.Network
	ptr := func(x float64, digits int) *float64 { v := round(x, digits); return &v }
	if c.LoaderImagesPerS > 0 {
		r.LoaderImagesPerS = ptr(c.LoaderImagesPerS, 1)
	}
	if !p.Fits {
		return r
	}
	r.IterMS, r.ImagesPerS = ptr(p.IterMS, 3), ptr(p.ImagesPerS, 1)
	r.EpochS, r.TotalS = ptr(p.EpochS, 1), ptr(p.TotalS, 1)
	r.ErrorPct = ptr(p.ErrorPct, 1)
	r.ScriptMS = ptr(p.ScriptMS, 3)
	if c.CostKnown {
		r.CostUSD = ptr(p.CostUSD, 4)
	}
	if c.EnergyKnown {
		r.EnergyKWh = ptr(p.EnergyKWh, 4)
	}
	return r
}

func round(x float64, digits int) float64 {
	s := math.Pow(10, float64(digits))
	return math.Round(x*s) / s
}

func predictCommands(register func(Command)) {
	cmd := Command{
		Name:    "predict",
		Summary: "predict training time, cost and memory of CNNs on machines at batch sizes",
		Usage:   "predict " + runFlagsUsage + " " + nodesUsage + " [--batch B] [--json|--csv]",
		Details: RunDataUsage,
	}
	cmd.Run = func(env *Env, args []string) error {
		pf, q, curves, err := predictCurves(env, cmd, args, true)
		if err != nil {
			return err
		}
		var rows []PredictRow
		for i := range curves {
			for _, p := range curves[i].Points {
				rows = append(rows, rowOf(&curves[i], p))
			}
		}
		if len(q.Batches) == 1 {
			for _, r := range rows {
				if !r.Fits {
					loader := ""
					if r.LoaderImagesPerS != nil {
						loader = fmt.Sprintf("; its %s loader (%d workers per GPU) would deliver %.0f images/s", r.Loader, r.Workers, *r.LoaderImagesPerS)
					}
					return fmt.Errorf("batch %d of %s does not fit in %s's GPU memory (%.1f GB needed per GPU%s); try a smaller batch, more GPUs or --precision amp",
						r.Batch, r.Model, r.Machine, r.MemoryGB, loader)
				}
			}
		}
		switch {
		case env.JSON:
			return WriteJSON(env.Stdout, rows)
		case pf.csv:
			return writePredictCSV(env, rows)
		}
		if err := writePredictTable(env, rows); err != nil {
			return err
		}
		ms, ns, nets := make([]string, len(rows)), make([]int, len(rows)), make([]*hw.Network, len(rows))
		for i, r := range rows {
			ms[i], ns[i], nets[i] = r.Machine, r.Nodes, r.Network
		}
		writeNodeNotes(env, ms, ns, nets, nil)
		return nil
	}
	register(cmd)
}

func fmtOpt(p *float64, format string, unknown string) string {
	if p == nil {
		return unknown
	}
	return fmt.Sprintf(format, *p)
}

func writePredictTable(env *Env, rows []PredictRow) error {
	t := app.NewTable(env.Stdout, "MODEL", "MACHINE", "GPU", "INPUT", "BATCH", "ITER MS", "IMAGES/S", "BOUND", "EPOCH", "TOTAL", "COST $", "ENERGY KWH", "MEM GB", "SOURCE")
	for _, r := range rows {
		if !r.Fits {
			t.Row(r.Model, r.Machine, fmt.Sprintf("%d×%s", r.GPUCount, r.GPU), strconv.Itoa(r.Input), strconv.Itoa(r.Batch),
				"out of memory", "-", "-", "-", "-", "-", "-", fmt.Sprintf("%.1f", r.MemoryGB), "-")
			continue
		}
		t.Row(r.Model, r.Machine, fmt.Sprintf("%d×%s", r.GPUCount, r.GPU), strconv.Itoa(r.Input), strconv.Itoa(r.Batch),
			fmt.Sprintf("%.2f ±%.0f%%", *r.IterMS, *r.ErrorPct), fmt.Sprintf("%.0f", *r.ImagesPerS), boundText(r),
			duration(*r.EpochS), duration(*r.TotalS), fmtOpt(r.CostUSD, "%.2f", "unknown"),
			fmtOpt(r.EnergyKWh, "%.2f", "unknown"), fmt.Sprintf("%.1f", r.MemoryGB), r.Source)
	}
	return t.Flush()
}

// boundText says what sets a row's pace, with the loader's rate when it is the loader.
func boundText(r PredictRow) string {
	if r.Bound == "input" && r.LoaderImagesPerS != nil {
		return fmt.Sprintf("input (%s %.0f/s)", r.Loader, *r.LoaderImagesPerS)
	}
	return r.Bound
}

// writePredictCSV writes predict's rows as CSV; text cells that a spreadsheet would read
// as a formula (a custom model named =cmd) are neutralised (csvsafe.Text), numbers are
// written as numbers.
func writePredictCSV(env *Env, rows []PredictRow) error {
	w := csv.NewWriter(env.Stdout)
	w.Write([]string{"model", "machine", "gpu", "gpu_count", "batch", "precision", "iter_ms", "images_per_s", "epoch_s",
		"total_s", "cost_usd", "energy_kwh", "memory_gb", "fits", "source", "error_pct",
		"input", "loader", "workers", "loader_images_per_s", "bound", "memory_format"})
	for _, r := range rows {
		t := csvsafe.Text
		w.Write([]string{t(r.Model), t(r.Machine), t(r.GPU), strconv.Itoa(r.GPUCount), strconv.Itoa(r.Batch), t(r.Precision),
			fmtOpt(r.IterMS, "%g", ""), fmtOpt(r.ImagesPerS, "%g", ""), fmtOpt(r.EpochS, "%g", ""), fmtOpt(r.TotalS, "%g", ""),
			fmtOpt(r.CostUSD, "%g", ""), fmtOpt(r.EnergyKWh, "%g", ""), strconv.FormatFloat(r.MemoryGB, 'g', -1, 64),
			strconv.FormatBool(r.Fits), t(r.Source), fmtOpt(r.ErrorPct, "%g", ""),
			strconv.Itoa(r.Input), t(r.Loader), strconv.Itoa(r.Workers), fmtOpt(r.LoaderImagesPerS, "%g", ""), t(r.Bound), t(r.MemoryFormat)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}

// duration writes seconds as "42.0s", "12m05s" or "3h12m".
func duration(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
}

// BestRow is one line of `cnntime best --json`: one CNN on one machine at its fastest
// batch size. Best is null when no batch size fits.
type BestRow struct {
	Model           string      `json:"model"`
	Machine         string      `json:"machine"`
	GPU             string      `json:"gpu"`
	GPUCount        int         `json:"gpu_count"`
	Precision       string      `json:"precision"`
	Best            *PredictRow `json:"best"`
	MaxBatch        int         `json:"max_batch"`
	BestPow2        int         `json:"best_pow2"`
	SavingVsPow2Pct float64     `json:"saving_vs_pow2_pct"`
	SweetSpots      []int       `json:"sweet_spots"`
	// Nodes is the node count (chosen by best when --nodes lists several; absent for
	// one) and Network the network assumed between the nodes; NodesNote says when no
	// count met --budget or --deadline.
	Nodes     int         `json:"nodes,omitempty"`
	Network   *hw.Network `json:"network,omitempty"`
	NodesNote string      `json:"nodes_note,omitempty"`
}

func bestOf(c *predictor.Curve) BestRow {
	r := BestRow{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, Precision: string(c.Precision),
		MaxBatch: c.MaxBatch, BestPow2: c.BestPow2, SavingVsPow2Pct: round(c.SavingVsPow2Pct, 2), SweetSpots: c.SweetSpots,
		Nodes: c.Nodes, Network: c.Network}
	if r.SweetSpots == nil {
		r.SweetSpots = []int{}
	}
	if c.Best >= 0 {
		row := rowOf(c, c.Points[c.Best])
		r.Best = &row
	}
	return r
}

func bestCommands(register func(Command)) {
	cmd := Command{
		Name:    "best",
		Summary: "the fastest batch size of each CNN on each machine, with its time and cost",
		Usage:   "best " + runFlagsUsage + " [--json|--csv]\n        " + bestNodesUsage,
		Details: RunDataUsage,
	}
	cmd.Run = func(env *Env, args []string) error {
		pf, _, curves, err := predictCurves(env, cmd, args, false)
		if err != nil {
			return err
		}
		var notes []string
		if len(pf.nodeCounts) > 1 {
			curves, notes = chooseNodes(curves, pf.nodes.budget, pf.nodes.deadline)
		}
		rows := make([]BestRow, len(curves))
		for i := range curves {
			rows[i] = bestOf(&curves[i])
			if notes != nil {
				rows[i].Nodes, rows[i].NodesNote = max(curves[i].Nodes, 1), notes[i]
			}
		}
		switch {
		case env.JSON:
			return WriteJSON(env.Stdout, rows)
		case pf.csv:
			return writeBestCSV(env, rows)
		}
		t := app.NewTable(env.Stdout, "MODEL", "MACHINE", "GPU", "BEST BATCH", "ITER MS", "IMAGES/S", "TOTAL", "COST $", "MAX BATCH", "BEST POW2", "SAVING", "SWEET SPOTS", "SOURCE")
		for _, r := range rows {
			gpu := fmt.Sprintf("%d×%s", r.GPUCount, r.GPU)
			if r.Best == nil {
				t.Row(r.Model, r.Machine, gpu, "none fits", "-", "-", "-", "-", strconv.Itoa(r.MaxBatch), "-", "-", "-", "-")
				continue
			}
			b := r.Best
			t.Row(r.Model, r.Machine, gpu, strconv.Itoa(b.Batch), fmt.Sprintf("%.2f ±%.0f%%", *b.IterMS, *b.ErrorPct),
				fmt.Sprintf("%.0f", *b.ImagesPerS), duration(*b.TotalS), fmtOpt(b.CostUSD, "%.2f", "unknown"),
				maxBatchText(r.MaxBatch), strconv.Itoa(r.BestPow2), fmt.Sprintf("%.1f%%", r.SavingVsPow2Pct),
				intsText(r.SweetSpots), b.Source)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		ms, ns, nets := make([]string, len(rows)), make([]int, len(rows)), make([]*hw.Network, len(rows))
		for i, r := range rows {
			ms[i], ns[i], nets[i] = r.Machine, r.Nodes, r.Network
		}
		writeNodeNotes(env, ms, ns, nets, notes)
		return nil
	}
	register(cmd)
}

func maxBatchText(b int) string {
	if b < 0 {
		return "unknown"
	}
	return strconv.Itoa(b)
}

func intsText(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, " ")
}

// writeBestCSV writes best's rows as CSV, text cells neutralised as in writePredictCSV.
func writeBestCSV(env *Env, rows []BestRow) error {
	w := csv.NewWriter(env.Stdout)
	w.Write([]string{"model", "machine", "gpu", "gpu_count", "precision", "best_batch", "iter_ms", "images_per_s", "total_s",
		"cost_usd", "energy_kwh", "max_batch", "best_pow2", "saving_vs_pow2_pct", "sweet_spots", "source"})
	for _, r := range rows {
		t := csvsafe.Text
		rec := []string{t(r.Model), t(r.Machine), t(r.GPU), strconv.Itoa(r.GPUCount), t(r.Precision), "", "", "", "", "", "",
			strconv.Itoa(r.MaxBatch), strconv.Itoa(r.BestPow2), strconv.FormatFloat(r.SavingVsPow2Pct, 'g', -1, 64),
			strings.ReplaceAll(intsText(r.SweetSpots), "-", ""), ""}
		if b := r.Best; b != nil {
			rec[5], rec[6], rec[7], rec[8] = strconv.Itoa(b.Batch), fmtOpt(b.IterMS, "%g", ""), fmtOpt(b.ImagesPerS, "%g", ""), fmtOpt(b.TotalS, "%g", "")
			rec[9], rec[10], rec[15] = fmtOpt(b.CostUSD, "%g", ""), fmtOpt(b.EnergyKWh, "%g", ""), t(b.Source)
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
