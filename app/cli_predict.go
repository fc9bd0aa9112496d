package app

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"cnntime/db"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// maxPredictBatch bounds the batch sizes the CLI accepts.
const maxPredictBatch = 1 << 16

// predictFlags are the flags predict and best share.
type predictFlags struct {
	models, machines, gpus string
	batch                  int
	batches                string
	precision, policy      string
	epochs, images         int
	csv                    bool
	data                   runDataFlags
}

func (pf *predictFlags) register(fs *flag.FlagSet, withBatch bool, defaultBatches string) {
	fs.StringVar(&pf.models, "model", "", "CNNs to predict, comma-separated: zoo names or custom model files (e.g. resnet50,my_net.json)")
	fs.StringVar(&pf.machines, "machine", "", "machines, comma-separated catalog or user ids (e.g. aws/p3.2xlarge)")
	fs.StringVar(&pf.gpus, "gpu", "", "bare GPUs, comma-separated catalog ids: a one-GPU machine with no price")
	if withBatch {
		fs.IntVar(&pf.batch, "batch", 0, "one global batch size")
	}
	fs.StringVar(&pf.batches, "batches", defaultBatches, "batch sizes: a range 1-1024, a list 32,64 or both")
	fs.StringVar(&pf.precision, "precision", "fp32", "fp32 (PyTorch's default: TF32 convolutions on Ampere and later), fp32-strict or amp")
	fs.StringVar(&pf.policy, "policy", "heuristic", "cuDNN algorithm choice: heuristic (cudnn.benchmark=False) or fastest")
	fs.IntVar(&pf.epochs, "epochs", 1, "training epochs")
	fs.IntVar(&pf.images, "images", 0, "training images per epoch (default: the dataset's: 1,281,167 for imagenet-1k, 50,000 for cifar)")
	fs.BoolVar(&pf.csv, "csv", false, "print CSV instead of a table")
	pf.data.register(fs)
}

// query checks the flags and resolves them against the engine; every mistake is a
// usage error that names the bad value.
func (pf *predictFlags) query(eng *Engine, fs *flag.FlagSet) (Query, error) {
	var q Query
	if fs.NArg() > 0 {
		return q, Usagef("unexpected argument %q: models and machines are given with --model and --machine", fs.Arg(0))
	}
	if pf.models == "" {
		return q, Usagef("--model is required (e.g. --model resnet50)")
	}
	if pf.machines == "" && pf.gpus == "" {
		return q, Usagef("give --machine or --gpu (e.g. --machine aws/p3.2xlarge or --gpu a100-sxm4-40gb)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	batchSet := set["batch"]
	if batchSet && set["batches"] {
		return q, Usagef("give --batch or --batches, not both")
	}
	switch {
	case batchSet && pf.batch <= 0:
		return q, Usagef("--batch %d: the batch size must be positive", pf.batch)
	case batchSet && pf.batch > maxPredictBatch:
		return q, Usagef("--batch %d is above the largest this tool predicts (%d)", pf.batch, maxPredictBatch)
	case batchSet:
		q.Batches = []int{pf.batch}
	case pf.batches == "":
		return q, Usagef("give --batch B or --batches 1-1024")
	default:
		b, err := ParseBatches(pf.batches, maxPredictBatch)
		if err != nil {
			return q, Usagef("--batches: %v", err)
		}
		q.Batches = b
	}
	if pf.epochs <= 0 {
		return q, Usagef("--epochs %d: must be positive", pf.epochs)
	}
	if set["images"] && pf.images <= 0 {
		return q, Usagef("--images %d: must be positive", pf.images)
	}
	data, err := pf.data.runData()
	if err != nil {
		return q, err
	}
	q.Data = data
	images := pf.images
	if !set["images"] {
		images = data.Images()
	}
	q.Run = predictor.Run{Epochs: pf.epochs, Images: images}
	p, err := predictor.ParseTrainingPrecision(pf.precision)
	if err != nil {
		return q, Usagef("--precision: %v", err)
	}
	q.Precision = p
	if q.Policy, err = measure.ParsePolicy(pf.policy); err != nil {
		return q, Usagef("--policy: %v", err)
	}
	nets, err := ResolveModels(eng, splitList(pf.models))
	if err != nil {
		return q, Usagef("--model: %v", err)
	}
	for _, n := range nets {
		q.Models = append(q.Models, n.Name)
	}
	for _, id := range splitList(pf.machines) {
		t, err := eng.MachineTarget(id)
		if err != nil {
			return q, Usagef("--machine: %v", err)
		}
		q.Targets = append(q.Targets, t)
	}
	for _, id := range splitList(pf.gpus) {
		t, err := eng.GPUTarget(id)
		if err != nil {
			return q, Usagef("--gpu: %v", err)
		}
		q.Targets = append(q.Targets, t)
	}
	return q, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// openEngine builds the engine over the cache at env.DBPath.
// predictCurves is what predict and best share: it reads the command's flags, opens the
// engine on the cache and predicts every CNN × machine the flags name.
func predictCurves(env *Env, cmd Command, args []string, withBatch bool, defaultBatches string) (predictFlags, Query, []predictor.Curve, error) {
	fs := env.Flags(cmd)
	var pf predictFlags
	pf.register(fs, withBatch, defaultBatches)
	if err := fs.Parse(args); err != nil {
		return pf, Query{}, nil, err
	}
	if pf.csv && env.JSON {
		return pf, Query{}, nil, Usagef("give --json or --csv, not both")
	}
	eng, done, err := openEngine(env)
	if err != nil {
		return pf, Query{}, nil, err
	}
	defer done()
	q, err := pf.query(eng, fs)
	if err != nil {
		return pf, Query{}, nil, err
	}
	curves, err := eng.Curves(env.Ctx, q)
	return pf, q, curves, err
}

func openEngine(env *Env) (*Engine, func(), error) {
	d, err := db.Open(env.DBPath)
	if err != nil {
		return nil, nil, err
	}
	eng, err := NewEngine(env.Ctx, d)
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return eng, func() { d.Close() }, nil
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
}

func rowOf(c *predictor.Curve, p predictor.Point) PredictRow {
	r := PredictRow{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, Batch: p.Batch,
		Precision: string(c.Precision), MemoryGB: round(p.MemoryGB, 3), Fits: p.Fits, Source: string(p.Source),
		Input: c.Input, Loader: string(c.Loader), Workers: c.Workers, Bound: p.Bound, MemoryFormat: string(c.Format)}
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

func init() {
	cmd := Command{
		Name:    "predict",
		Summary: "predict training time, cost and memory of CNNs on machines at batch sizes",
		Usage: "predict --model M[,…] (--machine ID[,…] | --gpu ID[,…]) (--batch B | --batches 1-1024)\n" +
			"        [--precision fp32|fp32-strict|amp] [--policy heuristic|fastest] [--epochs E] [--images N] [--json|--csv]\n" +
			"        [--dataset imagenet-1k|cifar-10|cifar-100] [--input N] [--classes K] [--loader synthetic|pytorch|dali]\n" +
			"        [--workers N] [--memory-format nchw|nhwc]",
		Details: RunDataUsage,
	}
	cmd.Run = func(env *Env, args []string) error {
		pf, q, curves, err := predictCurves(env, cmd, args, true, "")
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
		return writePredictTable(env, rows)
	}
	Register(cmd)
}

func fmtOpt(p *float64, format string, unknown string) string {
	if p == nil {
		return unknown
	}
	return fmt.Sprintf(format, *p)
}

func writePredictTable(env *Env, rows []PredictRow) error {
	t := NewTable(env.Stdout, "MODEL", "MACHINE", "GPU", "INPUT", "BATCH", "ITER MS", "IMAGES/S", "BOUND", "EPOCH", "TOTAL", "COST $", "ENERGY KWH", "MEM GB", "SOURCE")
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

func writePredictCSV(env *Env, rows []PredictRow) error {
	w := csv.NewWriter(env.Stdout)
	w.Write([]string{"model", "machine", "gpu", "gpu_count", "batch", "precision", "iter_ms", "images_per_s", "epoch_s",
		"total_s", "cost_usd", "energy_kwh", "memory_gb", "fits", "source", "error_pct",
		"input", "loader", "workers", "loader_images_per_s", "bound", "memory_format"})
	for _, r := range rows {
		w.Write([]string{r.Model, r.Machine, r.GPU, strconv.Itoa(r.GPUCount), strconv.Itoa(r.Batch), r.Precision,
			fmtOpt(r.IterMS, "%g", ""), fmtOpt(r.ImagesPerS, "%g", ""), fmtOpt(r.EpochS, "%g", ""), fmtOpt(r.TotalS, "%g", ""),
			fmtOpt(r.CostUSD, "%g", ""), fmtOpt(r.EnergyKWh, "%g", ""), strconv.FormatFloat(r.MemoryGB, 'g', -1, 64),
			strconv.FormatBool(r.Fits), r.Source, fmtOpt(r.ErrorPct, "%g", ""),
			strconv.Itoa(r.Input), r.Loader, strconv.Itoa(r.Workers), fmtOpt(r.LoaderImagesPerS, "%g", ""), r.Bound, r.MemoryFormat})
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
}

func bestOf(c *predictor.Curve) BestRow {
	r := BestRow{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, Precision: string(c.Precision),
		MaxBatch: c.MaxBatch, BestPow2: c.BestPow2, SavingVsPow2Pct: round(c.SavingVsPow2Pct, 2), SweetSpots: c.SweetSpots}
	if r.SweetSpots == nil {
		r.SweetSpots = []int{}
	}
	if c.Best >= 0 {
		row := rowOf(c, c.Points[c.Best])
		r.Best = &row
	}
	return r
}

func init() {
	cmd := Command{
		Name:    "best",
		Summary: "the fastest batch size of each CNN on each machine, with its time and cost",
		Usage: "best --model M[,…] (--machine ID[,…] | --gpu ID[,…]) [--batches 1-1024]\n" +
			"        [--precision fp32|fp32-strict|amp] [--policy heuristic|fastest] [--epochs E] [--images N] [--json|--csv]\n" +
			"        [--dataset D] [--input N] [--classes K] [--loader L] [--workers N] [--memory-format F]",
		Details: RunDataUsage,
	}
	cmd.Run = func(env *Env, args []string) error {
		pf, _, curves, err := predictCurves(env, cmd, args, false, "1-1024")
		if err != nil {
			return err
		}
		rows := make([]BestRow, len(curves))
		for i := range curves {
			rows[i] = bestOf(&curves[i])
		}
		switch {
		case env.JSON:
			return WriteJSON(env.Stdout, rows)
		case pf.csv:
			return writeBestCSV(env, rows)
		}
		t := NewTable(env.Stdout, "MODEL", "MACHINE", "GPU", "BEST BATCH", "ITER MS", "IMAGES/S", "TOTAL", "COST $", "MAX BATCH", "BEST POW2", "SAVING", "SWEET SPOTS", "SOURCE")
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
		return t.Flush()
	}
	Register(cmd)
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

func writeBestCSV(env *Env, rows []BestRow) error {
	w := csv.NewWriter(env.Stdout)
	w.Write([]string{"model", "machine", "gpu", "gpu_count", "precision", "best_batch", "iter_ms", "images_per_s", "total_s",
		"cost_usd", "energy_kwh", "max_batch", "best_pow2", "saving_vs_pow2_pct", "sweet_spots", "source"})
	for _, r := range rows {
		rec := []string{r.Model, r.Machine, r.GPU, strconv.Itoa(r.GPUCount), r.Precision, "", "", "", "", "", "",
			strconv.Itoa(r.MaxBatch), strconv.Itoa(r.BestPow2), strconv.FormatFloat(r.SavingVsPow2Pct, 'g', -1, 64),
			strings.ReplaceAll(intsText(r.SweetSpots), "-", ""), ""}
		if b := r.Best; b != nil {
			rec[5], rec[6], rec[7], rec[8] = strconv.Itoa(b.Batch), fmtOpt(b.IterMS, "%g", ""), fmtOpt(b.ImagesPerS, "%g", ""), fmtOpt(b.TotalS, "%g", "")
			rec[9], rec[10], rec[15] = fmtOpt(b.CostUSD, "%g", ""), fmtOpt(b.EnergyKWh, "%g", ""), b.Source
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
