package cli

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/app/numfmt"
	"cnntime/db/csvsafe"
	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/recipe"
)

// predictOutput is predict's and best's flags: the shared run flags and --csv.
type predictOutput struct {
	runFlags
	csv bool
}

// predictSetup is what predict and best share: it reads the command's flags, opens the
// engine on the cache and checks the query against it.
func predictSetup(env *Env, cmd Command, args []string, withBatch bool) (predictOutput, app.Query, *app.Engine, error) {
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
	q, err := pf.query(env.Ctx, eng, fs)
	if err != nil {
		return pf, app.Query{}, nil, err
	}
	return pf, q, eng, nil
}

func openEngine(env *Env) (*app.Engine, func(), error) {
	d, err := env.ExistingCache() // a command that predicts only reads it
	if err != nil {
		return nil, nil, err
	}
	if d == nil {
		env.noteNoCache()
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
	Model   string `json:"model"`
	Machine string `json:"machine"`
	// Device is "cpu" when a measured CPU runs the step: GPU and GPUCount are then
	// absent (a CPU is not one GPU). It is absent for GPUs.
	Device     string   `json:"device,omitempty"`
	GPU        string   `json:"gpu,omitempty"`
	GPUCount   int      `json:"gpu_count,omitempty"`
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
	// AnchoredTo is how many measured whole steps of the cache the point's curve
	// passes through (source "measured" at their per-GPU batches, "anchored"
	// elsewhere; docs/cache.md); absent when none.
	AnchoredTo int `json:"anchored_to,omitempty"`
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
	// Framework is the stack that runs the step (predictor.Frameworks): its work per
	// parameter tensor is in iter_ms.
	Framework string `json:"framework,omitempty"`
	// Software is the release of the kernel libraries the step is predicted for
	// (predictor.Software's name: pytorch-X.Y, ngc-YY.MM or YYYY-MM).
	Software string `json:"software"`
	// Host is the machine's host the loader's rate is scaled by: its CPU ("assumed":
	// the reference CPU stood in for an unknown one, as for a bare --gpu), family,
	// vCPUs, one core's speed against the reference core and the range an assumed
	// one may take; HostErrorPct is how far that assumption moves iter_ms (in
	// error_pct).
	Host         *host.Host `json:"host,omitempty"`
	HostErrorPct *float64   `json:"host_error_pct,omitempty"`
	HostSlowPct  *float64   `json:"host_slow_pct,omitempty"` // the slow end's part of it: what a ranking charges
	// Backend says, for a measured CPU (local/cpu), whose measurements answered:
	// "pytorch" (scripts/pytorch_sweep.py) or "cnntime-cpu" (the Go CPU backend).
	Backend string `json:"backend,omitempty"`
	// The price the cost uses: per hour (null when unknown: PriceNote says why), its
	// kind (on-demand, spot or your-price), region and date, its age in days (null when
	// undated) and whether that is older than 90 days.
	PriceUSDPerHour *float64 `json:"price_usd_per_hour"`
	PriceKind       string   `json:"price_kind,omitempty"`
	PriceRegion     string   `json:"price_region,omitempty"`
	PriceDate       string   `json:"price_date,omitempty"`
	PriceAgeDays    *int     `json:"price_age_days"`
	PriceStale      bool     `json:"price_stale,omitempty"`
	PriceNote       string   `json:"price_note,omitempty"`
	// GPUSource is where the GPU's specifications come from.
	GPUSource string `json:"gpu_source,omitempty"`
	// Epochs is how many epochs total_s counts (null when the batch does not fit) and
	// EpochsSource where they come from: "fixed" (--epochs), or to a target the recipe
	// (its ID, "torchvision-v1/resnet50"; "custom" for --ref-epochs) and Target the
	// accuracy it reaches ("76.13% top-1 on imagenet-1k"). To a target, EpochsErrorPct
	// is the epochs' expected error and RunErrorPct that of total_s and cost_usd, both
	// errors combined; Regime is the recipe law's optimizer regime ("sgd", "lars") or
	// "extrapolated" outside its evidence, and RegimeNote then says why.
	Epochs         *float64 `json:"epochs"`
	EpochsSource   string   `json:"epochs_source"`
	Target         string   `json:"target,omitempty"`
	EpochsErrorPct *float64 `json:"epochs_error_pct,omitempty"`
	RunErrorPct    *float64 `json:"run_error_pct,omitempty"`
	Regime         string   `json:"regime,omitempty"`
	RegimeNote     string   `json:"regime_note,omitempty"`
}

// deviceFields are a row's device fields for curve c: "cpu" alone for a measured
// CPU, else its GPU and their count.
func deviceFields(c *predictor.Curve) (device, gpu string, count int) {
	if app.IsCPU(c.GPU) {
		return hw.CPUGPUID, "", 0
	}
	return "", c.GPU, c.GPUCount
}

// deviceID is the row's device as a curve names it: its GPU, or "cpu".
func (r PredictRow) deviceID() string {
	if r.Device != "" {
		return r.Device
	}
	return r.GPU
}

// deviceID is the row's device as a curve names it: its GPU, or "cpu".
func (r BestRow) deviceID() string {
	if r.Device != "" {
		return r.Device
	}
	return r.GPU
}

// rowOf is the row of point p of curve c.
func rowOf(c *predictor.Curve, p predictor.Point) PredictRow {
	var r PredictRow
	fillRow(&r, new(pointValues), c, &p)
	return r
}

// fillRow sets r to the row of point p of curve c, its figures held in v (r points into
// v): predict --json fills one row and one v again and again.
func fillRow(r *PredictRow, v *pointValues, c *predictor.Curve, p *predictor.Point) {
	*v = valuesOf(c, p)
	*r = PredictRow{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, Batch: p.Batch,
		Precision: string(c.Precision), MemoryGB: v.memoryGB, Fits: p.Fits, Source: string(p.Source),
		Input: c.Input, Loader: string(c.Loader), Workers: c.Workers, Bound: p.Bound, MemoryFormat: string(c.Format),
		Backend: c.Backend, Script: string(c.Script), Framework: string(c.Framework), Software: c.Software.Name, Host: c.Host}
	r.Device, r.GPU, r.GPUCount = deviceFields(c)
	r.Nodes, r.Network = c.Nodes, c.Network
	r.AnchoredTo = len(c.Anchors)
	r.EpochsSource = c.EpochsSource
	if c.Recipe != nil {
		r.Target = c.Recipe.TargetName()
	}
	r.PriceKind, r.PriceRegion, r.PriceDate = string(c.Price.Kind), c.Price.Region, c.Price.Date
	r.PriceAgeDays, r.PriceStale, r.PriceNote, r.GPUSource = c.Price.AgeDays, c.Price.Stale, c.Price.Note, c.GPUSource
	if c.CostKnown {
		r.PriceUSDPerHour = &v.priceUSDPerHour
	}
	if v.hasLoader {
		r.LoaderImagesPerS = &v.loaderImagesPerS
	}
	if !p.Fits {
		return
	}
	r.IterMS, r.ImagesPerS, r.EpochS, r.TotalS, r.ErrorPct = &v.iterMS, &v.imagesPerS, &v.epochS, &v.totalS, &v.errorPct
	r.ScriptMS = &v.scriptMS
	if v.hostErrorPct > 0 {
		r.HostErrorPct = &v.hostErrorPct
	}
	if v.hostSlowPct > 0 {
		r.HostSlowPct = &v.hostSlowPct
	}
	if v.hasCost {
		r.CostUSD = &v.costUSD
	}
	if v.hasEnergy {
		r.EnergyKWh = &v.energyKWh
	}
	r.Epochs = &v.epochs
	if v.toTarget {
		r.EpochsErrorPct, r.RunErrorPct = &v.epochsErrorPct, &v.runErrorPct
		r.Regime, r.RegimeNote = v.regime, v.regimeNote
	}
}

// pointValues are a point's figures rounded as predict prints them (rowOf, the CSV);
// the has* fields say which are known (the times are known when the point fits), and
// toTarget that the run trains to a target accuracy (the epochs then have an error and
// a regime, "extrapolated" outside the recipe's evidence).
type pointValues struct {
	iterMS, imagesPerS, epochS, totalS, errorPct, scriptMS float64
	costUSD, energyKWh, memoryGB                           float64
	loaderImagesPerS, priceUSDPerHour                      float64
	epochs, epochsErrorPct, runErrorPct, hostErrorPct      float64
	hostSlowPct                                            float64
	regime, regimeNote                                     string
	hasCost, hasEnergy, hasLoader, toTarget                bool
}

func valuesOf(c *predictor.Curve, p *predictor.Point) pointValues {
	v := pointValues{memoryGB: round(p.MemoryGB, 3)}
	if c.LoaderImagesPerS > 0 {
		v.loaderImagesPerS, v.hasLoader = round(c.LoaderImagesPerS, 1), true
	}
	if c.CostKnown {
		v.priceUSDPerHour = round(c.PriceUSDPerHour, 4)
	}
	if !p.Fits {
		return v
	}
	v.iterMS, v.imagesPerS = round(p.IterMS, 3), round(p.ImagesPerS, 1)
	v.epochS, v.totalS = round(p.EpochS, 1), round(p.TotalS, 1)
	v.errorPct, v.scriptMS, v.hostErrorPct = round(p.ErrorPct, 1), round(p.ScriptMS, 3), round(p.HostErrorPct, 1)
	v.hostSlowPct = round(p.HostSlowPct, 1)
	if c.CostKnown {
		v.costUSD, v.hasCost = round(p.CostUSD, 4), true
	}
	if c.EnergyKnown {
		v.energyKWh, v.hasEnergy = round(p.EnergyKWh, 4), true
	}
	v.epochs = round(p.Epochs, 2)
	if m := c.Recipe; m != nil {
		v.toTarget = true
		v.epochsErrorPct, v.runErrorPct = round(p.EpochsErrorPct, 1), round(p.RunErrorPct(), 1)
		v.regime = p.Regime
		if p.Regime == recipe.Extrapolated {
			v.regimeNote = m.At(p.Batch).Why
		}
	}
	return v
}

func round(x float64, digits int) float64 {
	var s float64
	if digits >= 0 && digits < len(pow10) {
		s = pow10[digits]
	} else {
		s = math.Pow(10, float64(digits))
	}
	return math.Round(x*s) / s
}

// pow10 are the scales round uses (math.Pow's exact powers, without its cost per row).
var pow10 = [...]float64{1, 10, 100, 1e3, 1e4, 1e5, 1e6}

func predictCommands(register func(Command)) {
	cmd := Command{
		Name:    "predict",
		Summary: "predict training time, cost and memory of CNNs on machines at batch sizes",
		Usage:   "predict " + runFlagsUsage + " " + nodesUsage + " [--batch B] [--json|--csv]" + trainFlagsUsage,
		Details: runDataNote + "\n\n" + trainNote,
	}
	cmd.Run = func(env *Env, args []string) error {
		pf, q, eng, err := predictSetup(env, cmd, args, true)
		if err != nil {
			return err
		}
		if len(q.Batches) == 1 {
			return predictOneBatch(env, pf, q, eng)
		}
		switch {
		case env.JSON:
			if err := checkJSONSize(q); err != nil {
				return err
			}
			return streamPredict(env, eng, q, jsonRows{})
		case pf.csv:
			return streamPredict(env, eng, q, predictCSV{})
		}
		return streamPredictTable(env, eng, q)
	}
	register(cmd)
}

// maxJSONBytes bounds what predict --json writes: one JSON array, which a reader takes
// in whole; far more than any reader's memory is a mistake of the flags, found before
// predicting (every zoo model on every catalog machine at 1–65,536 is 300 million rows,
// some 450 GB).
const maxJSONBytes = 16_000_000_000

// jsonRowBytes and csvRowBytes are about what one row of predict --json and --csv takes.
const (
	jsonRowBytes = 1500
	csvRowBytes  = 260
)

// checkJSONSize refuses, with the size it would write, a predict --json of q larger
// than maxJSONBytes.
func checkJSONSize(q app.Query) error {
	if q.Span.Min > 0 { // to a target: each curve stops at the largest batch that fits
		return nil
	}
	rows := int64(len(q.Models)) * int64(len(q.Targets)) * int64(len(q.Batches))
	if rows*jsonRowBytes <= maxJSONBytes {
		return nil
	}
	return Usagef("--json would write about %s (%s rows of about %s), more than %s, which no JSON reader takes in: ask for fewer models, machines or batch sizes, or write --csv (about %s, a row at a time)",
		byteText(rows*jsonRowBytes), groupDigits(rows), byteText(jsonRowBytes), byteText(maxJSONBytes), byteText(rows*csvRowBytes))
}

// byteText writes a size in bytes, kB, MB, GB or TB (powers of 1000, 3 digits).
func byteText(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB"}
	x, u := float64(n), 0
	for x >= 1000 && u < len(units)-1 {
		x, u = x/1000, u+1
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.3g %s", x, units[u])
}

// predictOneBatch predicts q at its one batch size. Every row that fits is written; a
// machine the batch does not fit, or a model the run cannot be predicted for, is a
// warning beside them that says what to try (under the table, or on stderr with
// --json and --csv). When the batch fits nowhere that is the error.
func predictOneBatch(env *Env, pf predictOutput, q app.Query, eng *app.Engine) error {
	var all []predictor.Curve // one point each
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) (predictor.Curve, error) { return *c, nil },
		func(c predictor.Curve) error { all = append(all, c); return nil })
	if err != nil {
		return err
	}
	var (
		curves   []predictor.Curve // those with a point
		rows     []PredictRow
		warnings []string
		misfit   error
		fits     bool
	)
	for i := range all {
		c := &all[i]
		if c.Unavailable != "" {
			warnings = append(warnings, warningLine(c.Model, c.Machine, app.UnavailableWarning(c)))
			continue
		}
		r := rowOf(c, c.Points[0])
		if !r.Fits {
			loader := ""
			if r.LoaderImagesPerS != nil {
				loader = fmt.Sprintf("; its %s loader (%d workers per GPU) would deliver %.0f images/s", r.Loader, r.Workers, *r.LoaderImagesPerS)
			}
			err := fmt.Errorf("batch %d of %s does not fit in %s's GPU memory (%.1f GB needed per GPU%s); try a smaller batch, more GPUs or --precision amp",
				r.Batch, r.Model, r.Machine, r.MemoryGB, loader)
			misfit = cmp.Or(misfit, err)
			warnings = append(warnings, "warning: "+err.Error())
		}
		fits = fits || r.Fits
		curves, rows = append(curves, *c), append(rows, r)
	}
	if !fits {
		return misfit
	}
	for i := range curves {
		if n := app.AnchorNote(&curves[i]); n != "" {
			warnings = append(warnings, measuredLine(curves[i].Model, curves[i].Machine, n))
		}
		for _, w := range app.RunWarnings(&curves[i], curves[i].Points[0].Batch) {
			warnings = append(warnings, warningLine(curves[i].Model, curves[i].Machine, w))
		}
	}
	stderrNotes := func() {
		for _, w := range warnings {
			fmt.Fprintln(env.Stderr, w)
		}
	}
	switch {
	case env.JSON:
		defer stderrNotes()
		return WriteJSON(env.Stdout, rows)
	case pf.csv:
		defer stderrNotes()
		out := predictCSV{}
		text := out.header()
		for i := range curves {
			if text, err = out.curve(text, &curves[i]); err != nil {
				return err
			}
		}
		_, err := env.Stdout.Write(text)
		return writeErr("CSV", err)
	}
	toTarget := q.ToTarget()
	t := app.NewTable(env.Stdout, predictTableHeader(toTarget)...)
	var notes nodeNotes
	for _, r := range rows {
		predictTableRow(t, r, toTarget)
		notes.add(r.Machine, r.Nodes, r.Network, "")
	}
	if err := t.Flush(); err != nil {
		return err
	}
	var recipes []string
	for i := range curves {
		if n := recipeNote(&curves[i]); n != "" && !slices.Contains(recipes, n) {
			recipes = append(recipes, n)
		}
	}
	writeTableNotes(env, rows, &notes, warnings, recipes)
	return nil
}

func fmtOpt(p *float64, format string, unknown string) string {
	if p == nil {
		return unknown
	}
	return fmt.Sprintf(format, *p)
}

// predictTableHeader is predict's table header; training to a target (toTarget) the
// total is the time to the target, with its band, and the rows say their epochs and,
// above the known range, the optimizer regime they assume.
func predictTableHeader(toTarget bool) []string {
	head := []string{"MODEL", "MACHINE", "GPU", "INPUT", "BATCH", "ITER MS", "IMAGES/S", "BOUND", "EPOCH", "TOTAL", "COST", "PRICE", "ENERGY", "MEM GB", "SOURCE"}
	if toTarget {
		head = append(head[:9:9], "EPOCHS", "RECIPE", "TARGET", "TO TARGET", "COST TO TARGET", "PRICE", "ENERGY", "MEM GB", "SOURCE", "REGIME")
	}
	return head
}

// predictTableRow adds r to predict's table (see predictTableHeader).
func predictTableRow(t *app.Table, r PredictRow, toTarget bool) {
	gpu := app.DeviceText(r.deviceID(), r.GPUCount)
	if !r.Fits {
		cells := []string{r.Model, r.Machine, gpu, strconv.Itoa(r.Input), countText(r.Batch),
			"out of memory", "-", "-", "-", "-", "-", priceText(r), "-", fmt.Sprintf("%.1f", r.MemoryGB), "-"}
		if toTarget {
			cells = append(cells[:9:9], "-", r.EpochsSource, targetTop1Text(r.Target), "-", "-", priceText(r), "-", fmt.Sprintf("%.1f", r.MemoryGB), "-", "-")
		}
		t.Row(cells...)
		return
	}
	cells := []string{r.Model, r.Machine, gpu, strconv.Itoa(r.Input), countText(r.Batch),
		iterText(*r.IterMS, *r.ErrorPct), numfmt.Rate(*r.ImagesPerS), boundText(r),
		duration(*r.EpochS), duration(*r.TotalS), usdText(r.CostUSD), priceText(r),
		kwhText(r.EnergyKWh), fmt.Sprintf("%.1f", r.MemoryGB), r.Source}
	if toTarget {
		cells = append(cells[:9:9], fmt.Sprintf("%.1f", *r.Epochs), r.EpochsSource, targetTop1Text(r.Target), fmt.Sprintf("%s ±%.0f%%", duration(*r.TotalS), *r.RunErrorPct),
			usdText(r.CostUSD), priceText(r), kwhText(r.EnergyKWh), fmt.Sprintf("%.1f", r.MemoryGB), r.Source, r.Regime)
	}
	t.Row(cells...)
}

// priceText is a row's price in the table: "$0.918/h spot us-east-1", "OLD" after a
// price older than 90 days, "none" when there is no price for the asked kind or region.
func priceText(r PredictRow) string {
	if r.PriceUSDPerHour == nil {
		return "none"
	}
	s := numfmt.USDPerHour(*r.PriceUSDPerHour) + " " + string(r.PriceKind)
	if r.PriceRegion != "" {
		s += " " + r.PriceRegion
	}
	if r.PriceStale {
		s += " OLD"
	}
	return s
}

// writePriceNotes says under a table which price each machine's cost uses (its date
// and age, OLD when older than 90 days, or why it has none) and where each GPU's
// specifications come from.
func writePriceNotes(env *Env, rows []PredictRow) {
	seen := map[string]bool{}
	for _, r := range rows {
		if seen["m:"+r.Machine] {
			continue
		}
		seen["m:"+r.Machine] = true
		switch {
		case r.PriceNote != "":
			fmt.Fprintf(env.Stdout, "%s: cost unknown: %s\n", r.Machine, r.PriceNote)
		case r.PriceUSDPerHour == nil:
		case r.PriceAgeDays == nil:
			fmt.Fprintf(env.Stdout, "%s: %s price, undated\n", r.Machine, r.PriceKind)
		default:
			old := ""
			if r.PriceStale {
				old = fmt.Sprintf(": OLD, older than %d days; refresh with 'cnntime prices update'", hw.StalePriceDays)
			}
			fmt.Fprintf(env.Stdout, "%s: %s price of %s (%d days old%s)\n", r.Machine, r.PriceKind, r.PriceDate, *r.PriceAgeDays, old)
		}
	}
	for _, r := range rows {
		if r.GPUSource == "" || seen["g:"+r.GPU] {
			continue
		}
		seen["g:"+r.GPU] = true
		fmt.Fprintf(env.Stdout, "%s specifications: %s\n", r.GPU, r.GPUSource)
	}
	writeSoftwareNotes(env, rows)
	writeHostNotes(env, rows)
}

// writeSoftwareNotes names, under a table, the release of the kernel libraries the
// rows are predicted for (every answer names it: a GPU's kernels reach less of its
// peak in releases soon after its architecture launched).
func writeSoftwareNotes(env *Env, rows []PredictRow) {
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Software == "" || seen[r.Software] {
			continue
		}
		seen[r.Software] = true
		sw, err := predictor.ParseSoftware(r.Software)
		if err != nil {
			continue
		}
		current := ""
		if sw.Name == predictor.CurrentSoftware.Name {
			current = ", the current release (--software names another)"
		}
		fmt.Fprintf(env.Stdout, "software: %s, %s%s\n", sw.Name, sw.Note, current)
	}
}

// hostLinesUpTo is how many machines a table may have for the lines under it to name
// every machine's host; past it (best --machine all) only the assumed ones are named.
const hostLinesUpTo = 12

// writeHostNotes says under a table what the machines' loaders run on, where a loader
// reads the images: each machine's CPU and vCPUs (for a table of at most hostLinesUpTo
// machines), and, always, the machines whose CPU (or vCPUs) nobody named, with what
// stands in for it (app.AssumedHostsNote).
func writeHostNotes(env *Env, rows []PredictRow) {
	var machines []string
	hosts := map[string]*host.Host{}
	for _, r := range rows {
		if r.Host == nil || r.LoaderImagesPerS == nil || hosts[r.Machine] != nil {
			continue
		}
		machines, hosts[r.Machine] = append(machines, r.Machine), r.Host
	}
	var assumed []string
	for _, m := range machines {
		h := hosts[m]
		if h.Assumed() {
			assumed = append(assumed, m)
		} else if len(machines) <= hostLinesUpTo {
			fmt.Fprintln(env.Stdout, app.Printable(m+" host: "+h.Text()))
		}
	}
	for _, note := range app.AssumedHostsNotes(assumed, hosts) {
		fmt.Fprintln(env.Stdout, app.Printable(note))
	}
}

// boundText says what sets a row's pace, with the loader's rate when it is the loader
// (app.BoundText: the window's results table says it in the same words).
func boundText(r PredictRow) string {
	rate := 0.0
	if r.LoaderImagesPerS != nil {
		rate = *r.LoaderImagesPerS
	}
	return app.BoundText(r.Bound, pipeline.Loader(r.Loader), rate, r.Host != nil && r.Host.CPUAssumed)
}

// ageText is a price's age in days, "" when undated.
func ageText(days *int) string {
	if days == nil {
		return ""
	}
	return strconv.Itoa(*days)
}

// BestRow is one line of `cnntime best --json`: one CNN on one machine at its fastest
// batch size. Best is null when no batch size fits.
type BestRow struct {
	Model   string `json:"model"`
	Machine string `json:"machine"`
	// Device, GPU and GPUCount are as in PredictRow: "cpu" for a measured CPU, else
	// the GPU and how many.
	Device    string      `json:"device,omitempty"`
	GPU       string      `json:"gpu,omitempty"`
	GPUCount  int         `json:"gpu_count,omitempty"`
	Precision string      `json:"precision"`
	Best      *PredictRow `json:"best"`
	// Unavailable says why the model cannot be predicted on the machine with this run
	// (the other rows are); Best is then null.
	Unavailable string `json:"unavailable,omitempty"`
	// Meets says, with --deadline or --budget, whether the row's best run meets it;
	// the rows then come ranked: those that meet it first, cheapest first under a
	// deadline and fastest first under a budget.
	Meets           *bool   `json:"meets,omitempty"`
	MaxBatch        int     `json:"max_batch"`
	BestPow2        int     `json:"best_pow2"`
	SavingVsPow2Pct float64 `json:"saving_vs_pow2_pct"`
	SweetSpots      []int   `json:"sweet_spots"`
	// Nodes is the node count (chosen by best when --nodes lists several; absent for
	// one) and Network the network assumed between the nodes; NodesNote says when no
	// count met --budget or --deadline.
	Nodes     int         `json:"nodes,omitempty"`
	Network   *hw.Network `json:"network,omitempty"`
	NodesNote string      `json:"nodes_note,omitempty"`
	// Objective says what best minimised: the total time of the fixed epochs, or the
	// time to the target accuracy (--train to-target; on one machine the cost is
	// hours × price, so the fastest batch is also the cheapest). NodeCounts, when
	// --nodes gave several, is each count's best batch with its epochs, time and cost.
	Objective  string       `json:"objective"`
	NodeCounts []NodeChoice `json:"node_counts,omitempty"`
	// RecommendedBatch is the batch to advise beside the single best one (often a
	// point of a flat plateau): within 1% of the best time and cost, the batch nearest
	// the one the CNN's recipe was published with (RecipeBatch), as a per-GPU multiple
	// of 8 where one is within 1% (without a recipe, the smallest such); Recommended is
	// its row and Within1Pct the range of batches within 1% of the best. Warnings say
	// what to know before following either (few steps per epoch at fixed epochs,
	// epochs to a target extrapolated outside the recipe's evidence).
	RecommendedBatch int         `json:"recommended_batch"`
	RecipeBatch      int         `json:"recipe_batch,omitempty"`
	Recommended      *PredictRow `json:"recommended"`
	Within1Pct       *BatchRange `json:"within_1pct"`
	Warnings         []string    `json:"warnings,omitempty"`
	// anchored says what the cache's measured whole steps did to the curve
	// (app.AnchorNote; the rows' anchored_to in JSON).
	anchored string
}

// BatchRange is a range of global batch sizes, both ends included.
type BatchRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// NodeChoice is one node count best considered: its best batch, the epochs that batch
// trains for, the time and cost, and how much faster it is than the first count.
type NodeChoice struct {
	Nodes        int      `json:"nodes"`
	Batch        int      `json:"batch"` // 0: no batch fits
	Epochs       float64  `json:"epochs"`
	EpochsSource string   `json:"epochs_source"`
	Regime       string   `json:"regime,omitempty"`
	TotalS       float64  `json:"total_s"`
	CostUSD      *float64 `json:"cost_usd"`
	Speedup      float64  `json:"speedup_vs_first"` // the first count's time over this one's
}

// The objectives best minimises.
const (
	objectiveFixed    = "least total time at the fixed epochs"
	objectiveToTarget = "least time and cost to the target accuracy"
)

// nodeChoices summarises, for each model × machine, every node count's best batch, in
// the order of the curves (count by count, as bestCurves makes them).
func nodeChoices(curves []predictor.Curve) map[[2]string][]NodeChoice {
	out := map[[2]string][]NodeChoice{}
	for _, c := range curves {
		k := [2]string{c.Model, c.Machine}
		ch := NodeChoice{Nodes: max(c.Nodes, 1), EpochsSource: c.EpochsSource}
		if c.Best >= 0 {
			p := c.Points[c.Best]
			ch.Batch, ch.Epochs, ch.TotalS = p.Batch, round(p.Epochs, 2), round(p.TotalS, 1)
			if p.Regime == recipe.Extrapolated {
				ch.Regime = p.Regime
			}
			if c.CostKnown {
				v := round(p.CostUSD, 4)
				ch.CostUSD = &v
			}
		}
		out[k] = append(out[k], ch)
	}
	for k, list := range out {
		if first := list[0].TotalS; first > 0 {
			for i := range list {
				if list[i].TotalS > 0 {
					list[i].Speedup = round(first/list[i].TotalS, 2)
				}
			}
		}
		out[k] = list
	}
	return out
}

func bestOf(c *predictor.Curve) BestRow {
	r := BestRow{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, Precision: string(c.Precision),
		MaxBatch: c.MaxBatch, BestPow2: c.BestPow2, SavingVsPow2Pct: round(c.SavingVsPow2Pct, 2), SweetSpots: c.SweetSpots,
		Nodes: c.Nodes, Network: c.Network}
	if r.SweetSpots == nil {
		r.SweetSpots = []int{}
	}
	r.Device, r.GPU, r.GPUCount = deviceFields(c)
	r.Unavailable = c.Unavailable
	r.anchored = app.AnchorNote(c)
	if c.Unavailable != "" {
		r.Warnings = app.AdviceWarnings(c)
	}
	if c.Best >= 0 {
		row := rowOf(c, c.Points[c.Best])
		r.Best = &row
		if p, ok := app.RecommendedPoint(c); ok {
			rec := rowOf(c, p)
			r.RecommendedBatch, r.RecipeBatch, r.Recommended = p.Batch, c.RecipeBatch, &rec
			r.Within1Pct = &BatchRange{Min: c.NearMin, Max: c.NearMax}
		}
		r.Warnings = app.AdviceWarnings(c)
	}
	return r
}

// recommendedText is a best row's recommended batch and its 1% range, as the window
// shows it: "64 (16–1,024)".
func recommendedText(r BestRow) string {
	if r.Within1Pct == nil {
		return "-"
	}
	return app.RecommendedText(r.RecommendedBatch, r.Within1Pct.Min, r.Within1Pct.Max)
}

// writeWarnings prints each row's warnings under a table (warningLine), and what
// measured steps did to its curve (measuredLine).
func writeWarnings(env *Env, rows []BestRow) {
	for _, r := range rows {
		if r.anchored != "" {
			fmt.Fprintln(env.Stdout, measuredLine(r.Model, r.Machine, r.anchored))
		}
		for _, w := range r.Warnings {
			fmt.Fprintln(env.Stdout, warningLine(r.Model, r.Machine, w))
		}
	}
}

// measuredLine is app.AnchorNote's note under a table: "measured: model on machine: …".
func measuredLine(model, machine, note string) string {
	return fmt.Sprintf("measured: %s on %s: %s", model, machine, note)
}

// warningLine is a warning under a table: "warning: model on machine: …".
func warningLine(model, machine, w string) string {
	return fmt.Sprintf("warning: %s on %s: %s", model, machine, w)
}

// bestDetails is best's help before the shared run flags'.
const bestDetails = `best predicts each CNN on each machine over the window's batch sizes (every size to 64,
then multiples of 8, 32, 128 and 512 and the powers of two, up to the largest batch that fits;
--batches gives others) and prints the batch with the least total time (to a target: time and
cost to the target) and, as the window does, the batch to recommend: within 1% of the best time
and cost, the batch nearest the one the CNN's training recipe was published with (its default
recipe, or --recipe's), as a multiple of 8 per GPU where one is within 1%, with the range of
batches within 1% (JSON: recommended_batch, recipe_batch, recommended, within_1pct; CSV:
recommended_batch, within_1pct_min, within_1pct_max). A warning line follows the table where a
fixed number of epochs at the batch makes fewer than 50 steps an epoch, where epochs to a target
are extrapolated outside the recipe's evidence, or where the recipe trains at another input size.`

// recommendNote says under best's table what the recommended batch is.
const recommendNote = "RECOMMENDED is the batch to pick: within 1% of the best time and cost, the one nearest the batch the CNN's recipe was published with, as a multiple of 8 per GPU; in brackets every batch from … to … is within 1%."

func bestCommands(register func(Command)) {
	cmd := Command{
		Name:    "best",
		Summary: "the fastest batch size of each CNN on each machine, with its time and cost",
		Usage:   "best " + runFlagsUsage + " [--json|--csv]\n        " + bestNodesUsage + trainFlagsUsage,
		Details: bestDetails + "\n\n" + runDataNote + "\n\n" + trainNote,
	}
	cmd.Run = func(env *Env, args []string) error {
		pf, q, eng, err := predictSetup(env, cmd, args, false)
		if err != nil {
			return err
		}
		curves, err := bestCurves(env, eng, q, pf.nodeCounts)
		if err != nil {
			return err
		}
		var notes []string
		var choices map[[2]string][]NodeChoice
		if len(pf.nodeCounts) > 1 {
			choices = nodeChoices(curves)
			curves, notes = chooseNodes(curves, pf.nodes.budget, pf.nodes.deadline)
		}
		limit := app.RunLimit{BudgetUSD: pf.nodes.budget, Deadline: pf.nodes.deadline}
		toTarget := q.ToTarget()
		rows := make([]BestRow, len(curves))
		for i := range curves {
			rows[i] = bestOf(&curves[i])
			rows[i].Objective = objectiveFixed
			if toTarget {
				rows[i].Objective = objectiveToTarget
			}
			if notes != nil {
				rows[i].Nodes, rows[i].NodesNote = max(curves[i].Nodes, 1), notes[i]
				rows[i].NodeCounts = choices[[2]string{curves[i].Model, curves[i].Machine}]
			}
		}
		var ranking app.LimitRanking
		if limit.Set() {
			ranking, rows, notes = rankByLimit(limit, curves, rows, notes)
		}
		switch {
		case env.JSON:
			return WriteJSON(env.Stdout, rows)
		case pf.csv:
			return writeBestCSV(env, rows)
		case toTarget:
			var recipes []string
			for i := range curves {
				if n := recipeNote(&curves[i]); n != "" && !slices.Contains(recipes, n) {
					recipes = append(recipes, n)
				}
			}
			if err := writeBestToTarget(env, rows, notes, recipes); err != nil {
				return err
			}
			writeAnswer(env, limit, curves, ranking)
			return nil
		}
		t := app.NewTable(env.Stdout, "MODEL", "MACHINE", "GPU", "BEST BATCH", "RECOMMENDED (WITHIN 1%)", "ITER MS", "IMAGES/S", "BOUND", "TOTAL", "COST", "PRICE", "MAX BATCH", "BEST POW2", "SAVING", "SWEET SPOTS", "SOURCE")
		var priced []PredictRow
		for _, r := range rows {
			gpu := app.DeviceText(r.deviceID(), r.GPUCount)
			if r.Best == nil {
				t.Row(r.Model, r.Machine, gpu, noBestText(r), "-", "-", "-", "-", "-", "-", "-", maxBatchText(r.MaxBatch), "-", "-", "-", "-")
				continue
			}
			b := r.Best
			priced = append(priced, *b)
			t.Row(r.Model, r.Machine, gpu, countText(b.Batch), recommendedText(r), iterText(*b.IterMS, *b.ErrorPct),
				numfmt.Rate(*b.ImagesPerS), boundText(*b), duration(*b.TotalS), usdText(b.CostUSD), priceText(*b),
				maxBatchText(r.MaxBatch), countText(r.BestPow2), fmt.Sprintf("%.1f%%", r.SavingVsPow2Pct),
				countsText(r.SweetSpots), b.Source)
		}
		if err := t.Flush(); err != nil {
			return err
		}
		writeWarnings(env, rows)
		fmt.Fprintln(env.Stdout, recommendNote)
		writePriceNotes(env, priced)
		ms, ns, nets := make([]string, len(rows)), make([]int, len(rows)), make([]*hw.Network, len(rows))
		for i, r := range rows {
			ms[i], ns[i], nets[i] = r.Machine, r.Nodes, r.Network
		}
		writeNodeNotes(env, ms, ns, nets, notes)
		writeAnswer(env, limit, curves, ranking)
		return nil
	}
	register(cmd)
}

// writeBestToTarget prints best's rows of a run to a target: the batch with the least
// time (and cost) to the target, its epochs and, above the known range, the optimizer
// regime; each node count considered with its epochs and speed-up; and where the
// epochs come from.
func writeBestToTarget(env *Env, rows []BestRow, notes []string, recipes []string) error {
	t := app.NewTable(env.Stdout, "MODEL", "MACHINE", "GPU", "BEST BATCH", "RECOMMENDED (WITHIN 1%)", "ITER MS", "IMAGES/S", "BOUND", "EPOCHS", "RECIPE", "TARGET", "TO TARGET", "COST TO TARGET", "MAX BATCH", "REGIME", "SOURCE")
	for _, r := range rows {
		gpu := app.DeviceText(r.deviceID(), r.GPUCount)
		if r.Best == nil {
			t.Row(r.Model, r.Machine, gpu, noBestText(r), "-", "-", "-", "-", "-", "-", "-", "-", "-", maxBatchText(r.MaxBatch), "-", "-")
			continue
		}
		b := r.Best
		t.Row(r.Model, r.Machine, gpu, countText(b.Batch), recommendedText(r), iterText(*b.IterMS, *b.ErrorPct),
			numfmt.Rate(*b.ImagesPerS), boundText(*b), fmt.Sprintf("%.1f", *b.Epochs), b.EpochsSource, targetTop1Text(b.Target),
			fmt.Sprintf("%s ±%.0f%%", duration(*b.TotalS), *b.RunErrorPct), usdText(b.CostUSD), maxBatchText(r.MaxBatch), orDash(b.Regime), b.Source)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	writeWarnings(env, rows)
	fmt.Fprintln(env.Stdout, recommendNote)
	var best []PredictRow
	for _, r := range rows {
		if r.Best != nil {
			best = append(best, *r.Best)
		}
	}
	writeHostNotes(env, best)
	for _, r := range rows {
		if len(r.NodeCounts) < 2 {
			continue
		}
		fmt.Fprintf(env.Stdout, "%s on %s, by node count:\n", r.Model, r.Machine)
		for _, c := range r.NodeCounts {
			if c.Batch == 0 {
				fmt.Fprintf(env.Stdout, "  %d × %s: no batch fits\n", c.Nodes, r.Machine)
				continue
			}
			regime := ""
			if c.Regime != "" {
				regime = ", " + c.Regime
			}
			fmt.Fprintf(env.Stdout, "  %d × %s: batch %s, %.1f epochs%s, %s to target, %s, %.2f× the speed of %d\n",
				c.Nodes, r.Machine, countText(c.Batch), c.Epochs, regime, duration(c.TotalS), usdText(c.CostUSD), c.Speedup, r.NodeCounts[0].Nodes)
		}
	}
	ms, ns, nets := make([]string, len(rows)), make([]int, len(rows)), make([]*hw.Network, len(rows))
	for i, r := range rows {
		ms[i], ns[i], nets[i] = r.Machine, r.Nodes, r.Network
	}
	writeNodeNotes(env, ms, ns, nets, notes)
	for _, r := range rows {
		if r.Best != nil && r.Best.RegimeNote != "" {
			fmt.Fprintf(env.Stdout, "%s at batch %s: %s\n", r.Model, countText(r.Best.Batch), r.Best.RegimeNote)
		}
	}
	writeRecipeNotes(env, recipes)
	fmt.Fprintln(env.Stdout, "best picks the batch (and, with several --nodes, the count) with the least time to the target; on one machine the cost is hours × price, so it is the cheapest batch too.")
	return nil
}

// noBestText is a best row's BEST BATCH cell when it has none: the run cannot be
// predicted there (the warning under the table says why), or no batch fits.
func noBestText(r BestRow) string {
	if r.Unavailable != "" {
		return "not predicted"
	}
	return "none fits"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func maxBatchText(b int) string {
	if b < 0 {
		return "unknown"
	}
	return countText(b)
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
		"cost_usd", "energy_kwh", "max_batch", "best_pow2", "saving_vs_pow2_pct", "sweet_spots", "source",
		"price_usd_per_hour", "price_kind", "price_region", "price_date", "price_age_days",
		"epochs", "epochs_source", "run_error_pct", "regime", "objective",
		"recommended_batch", "within_1pct_min", "within_1pct_max", "bound", "warnings", "target"})
	for _, r := range rows {
		t := csvsafe.Cell
		rec := []string{t(r.Model), t(r.Machine), t(r.GPU), strconv.Itoa(r.GPUCount), t(r.Precision), "", "", "", "", "", "",
			strconv.Itoa(r.MaxBatch), strconv.Itoa(r.BestPow2), strconv.FormatFloat(r.SavingVsPow2Pct, 'g', -1, 64),
			strings.ReplaceAll(intsText(r.SweetSpots), "-", ""), "", "", "", "", "", "", "", "", "", "", t(r.Objective),
			"", "", "", "", t(strings.Join(r.Warnings, "; ")), ""}
		if w := r.Within1Pct; w != nil {
			rec[26], rec[27], rec[28] = strconv.Itoa(r.RecommendedBatch), strconv.Itoa(w.Min), strconv.Itoa(w.Max)
		}
		if b := r.Best; b != nil {
			rec[5], rec[6], rec[7], rec[8] = strconv.Itoa(b.Batch), fmtOpt(b.IterMS, "%g", ""), fmtOpt(b.ImagesPerS, "%g", ""), fmtOpt(b.TotalS, "%g", "")
			rec[9], rec[10], rec[15] = fmtOpt(b.CostUSD, "%g", ""), fmtOpt(b.EnergyKWh, "%g", ""), t(b.Source)
			rec[16], rec[17], rec[18], rec[19], rec[20] = fmtOpt(b.PriceUSDPerHour, "%g", ""), t(b.PriceKind), t(b.PriceRegion), t(b.PriceDate), ageText(b.PriceAgeDays)
			rec[21], rec[22], rec[23], rec[24] = fmtOpt(b.Epochs, "%g", ""), t(b.EpochsSource), fmtOpt(b.RunErrorPct, "%g", ""), t(b.Regime)
			rec[29], rec[31] = t(b.Bound), t(b.Target)
		}
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
