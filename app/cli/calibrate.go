package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"cnntime/app"
	"cnntime/app/infile"
	"cnntime/app/outfile"
	"cnntime/app/validate"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/convergence"
	"cnntime/predictor/fit"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
)

func calibrateCommands(register func(Command)) {
	register(Command{
		Name:    "calibrate",
		Summary: "fit the per-layer model's efficiencies to DeepBench convolution timings, or the epochs-to-target presets to published figures",
		Usage:   "calibrate --deepbench PATH [--anchors PATH] [--out PATH] [--evaluations N] [--json]\n        calibrate --convergence PATH [--json]",
		Run:     runCalibrate,
	})
}

// maxCalibrationInput bounds each CSV calibrate reads: the project's are a few hundred
// kB; DeepBench's every result on every GPU is a few MB.
const maxCalibrationInput = 64 << 20

// runCalibrate reads DeepBench's per-layer results, fits the calibration (holding out
// each GPU in turn first, for the accuracy report), writes it as JSON to --out (or
// stdout) and prints the leave-one-GPU-out table. With --anchors it then fits the
// whole-network figures (memory efficiency, depthwise and per-family scales) to the
// tuning rows of the published throughputs. The embedded calibration is regenerated with
//
//	cnntime calibrate --deepbench assets/calibration/deepbench_conv.csv \
//	    --anchors assets/validation/modern_anchors.csv --out assets/calibration/calibration.json
func runCalibrate(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["calibrate"])
	deepbench := fs.String("deepbench", "", "DeepBench per-layer results CSV (deepbench_conv.csv)")
	anchorsPath := fs.String("anchors", "", "published whole-network throughputs CSV (modern_anchors.csv) to fit the per-family scales to")
	out := fs.String("out", "", "write the calibration JSON here (default: stdout)")
	evals := wholeFlag(fs, "evaluations", 20000, "objective evaluations per fit (fewer: faster, rougher)")
	convergencePath := fs.String("convergence", "", "published epochs-to-target figures CSV (assets/validation/convergence.csv): fit and print the epochs presets")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q", fs.Arg(0))
	case *convergencePath != "" && (*deepbench != "" || *anchorsPath != "" || *out != ""):
		return Usagef("--convergence fits the epochs presets alone: leave out --deepbench, --anchors and --out")
	case *convergencePath != "":
		return runCalibrateConvergence(env, *convergencePath)
	case *deepbench == "":
		return Usagef("--deepbench PATH is required (the file is ../shared/data/deepbench_conv.csv or assets/calibration/deepbench_conv.csv)")
	case *evals < 100:
		return Usagef("--evaluations %d is too few: use at least 100", *evals)
	}
	if *out != "" {
		if err := outfile.Check(*out); err != nil { // before the minutes of fitting
			return fmt.Errorf("write calibration %s: %w", app.Printable(*out), err)
		}
	}
	data, err := infile.Read(env.Ctx, *deepbench, infile.Spec{What: "DeepBench results CSV", Max: maxCalibrationInput, Start: infile.CSVHeader(fit.DeepBenchColumns...)})
	if err != nil {
		return err
	}
	rows, err := fit.ParseDeepBench(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *deepbench, err)
	}
	cat, err := app.LoadCatalog()
	if err != nil {
		return err
	}
	gpus, err := fit.MatchGPUs(cat.GPUs())
	if err != nil {
		return err
	}
	var anchors []fit.Anchor
	if *anchorsPath != "" {
		data, err := infile.Read(env.Ctx, *anchorsPath, infile.Spec{What: "published throughputs CSV", Max: maxCalibrationInput, Start: infile.CSVHeader(fit.AnchorColumns...)})
		if err != nil {
			return err
		}
		if anchors, err = fit.ParseAnchors(data); err != nil {
			return fmt.Errorf("%s: %w", *anchorsPath, err)
		}
	}
	cal, err := fit.Fit(rows, gpus, fit.Options{MaxEvaluations: *evals})
	if err != nil {
		return err
	}
	if anchors != nil {
		if cal, err = fitNetworks(cal, anchors, cat.GPUs(), *evals, *anchorsPath); err != nil {
			return err
		}
	}
	js, err := cal.MarshalIndent()
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = env.Stdout.Write(js)
		return err
	}
	if err := writeCalibrationFile(*out, js); err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, cal.Accuracy)
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%s)\n\n", app.Printable(*out), cal.FittedOn)
	return printLayerAccuracy(env, cal.Accuracy)
}

// runCalibrateConvergence fits every epochs-to-target preset to the tuning figures of
// the CSV at path and prints the parameters to write into
// predictor/convergence/presets.go, with the error they are shipped with:
//
//	cnntime calibrate --convergence assets/validation/convergence.csv
func runCalibrateConvergence(env *Env, path string) error {
	data, err := infile.Read(env.Ctx, path, infile.Spec{What: "CSV of epochs-to-target figures", Max: maxCalibrationInput, Start: infile.CSVHeader(convergence.FigureColumns...)})
	if err != nil {
		return err
	}
	figs, err := convergence.ParseFigures(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var fits []validate.ConvergenceFit
	for _, name := range convergence.PresetNames() {
		f, err := validate.FitConvergence(figs, name)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		p, _ := convergence.Preset(name)
		f.EpochsMin, f.NoiseBatch, f.ErrorPct = p.EpochsMin, p.NoiseBatch, p.ErrorPct
		fits = append(fits, f)
	}
	if env.JSON {
		return WriteJSON(env.Stdout, fits)
	}
	t := app.NewTable(env.Stdout, "PRESET", "TUNING", "HELD OUT", "E_MIN", "B_NOISE", "ERROR", "SHIPPED E_MIN", "SHIPPED B_NOISE", "SHIPPED ERROR")
	for _, f := range fits {
		t.Row(f.Dataset, fmt.Sprint(f.TuningFigures), fmt.Sprint(f.HeldOutFigures), fmt.Sprintf("%.2f", f.FitEpochsMin),
			fmt.Sprintf("%.0f", f.FitNoiseBatch), fmt.Sprintf("%.1f%%", f.FitErrorPct),
			fmt.Sprintf("%.2f", f.EpochsMin), fmt.Sprintf("%.0f", f.NoiseBatch), fmt.Sprintf("%.1f%%", f.ErrorPct))
	}
	return t.Flush()
}

// printLayerAccuracy prints the leave-one-GPU-out table of a calibration.
func printLayerAccuracy(env *Env, acc []kernels.GPUAccuracy) error {
	t := app.NewTable(env.Stdout, "GPU (held out)", "ARITHMETIC", "ROWS", "ESTIMATE MAPE", "TRANSFER MAPE")
	for _, a := range acc {
		transfer := "-"
		if a.TransferRows > 0 {
			transfer = fmt.Sprintf("%.1f%% (%d)", a.TransferMAPE, a.TransferRows)
		}
		t.Row(a.GPU, a.Sheet, fmt.Sprint(a.Rows), fmt.Sprintf("%.1f%%", a.EstimateMAPE), transfer)
	}
	return t.Flush()
}

// writeCalibrationFile writes data to path with outfile.Write: a regular file through a
// temporary file renamed into place (a failed write leaves the old file as it was), with
// the user's umask; a pipe or a terminal is written into.
func writeCalibrationFile(path string, data []byte) error {
	err := outfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write calibration %s: %w", app.Printable(path), err)
	}
	return nil
}

// untunedFloors lists the band floors of the families no tuning row covers, "none"
// when there are none.
func untunedFloors(b *fit.NetworkBands) string {
	var out []string
	for f, v := range b.UntunedFloor {
		out = append(out, fmt.Sprintf("%s ±%.0f%%", f, 100*v))
	}
	if len(out) == 0 {
		return "none"
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// fitNetworks fits the whole-network figures of cal to the tuning rows of anchors and
// records what it did in the calibration.
func fitNetworks(cal *kernels.Calibration, anchors []fit.Anchor, gpus []hw.GPU, evals int, path string) (*kernels.Calibration, error) {
	cases, err := fit.Resolve(anchors, gpus, map[string]*cnn.Network{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	nf, err := fit.FitNetworks(cal, predictor.DefaultOverheads, predictor.DefaultMemoryModel, cases, fit.Options{MaxEvaluations: evals})
	if err != nil {
		return nil, err
	}
	out := nf.Calibration
	bands, err := fit.FitNetworkBands(out, predictor.DefaultOverheads, predictor.DefaultMemoryModel, cases)
	if err != nil {
		return nil, err
	}
	if err := bands.Apply(out); err != nil {
		return nil, fmt.Errorf("the whole-network error bands: %w", err)
	}
	out.NetworkFit = fmt.Sprintf("Nelder–Mead on the mean squared log error of predicted images/s over the %d tuning rows of %s (held-out rows not read; "+
		"each row weighed 1/√(its source's rows on its GPU family)), with a prior pulling each factor to 1, %.0f× stronger for a family whose rows come from fewer than %d sources (%s): "+
		"memory efficiency %.3f on every GPU; SMs stream at most %.1f bytes per cycle each (a streaming kernel runs at the lower of that and the memory's rate); cuDNN's NCHW batch norm (eager NCHW under amp) at most %.1f bytes per SM cycle; power-capped clocks follow the power per SM to the %.3f; "+
		"depthwise efficiency ×%.2f; compute scale = family factor × arithmetic factor: families %s; arithmetics %s; cuDNN 8's split-K (up to %d ways); "+
		"kernel libraries released a months after their GPU's architecture launched reach 1 − %.3f × exp(−a ÷ %.0f) of the mature efficiency and add %.0f µs × the same exp(−a ÷ τ) to each convolution (the time and that cost fitted on the published batch series, validate table 10), the deficit fitted first on the %d pairs of tuning rows of one GPU on two releases (%s; their ratios' MAPE %.1f%% without the term, %.1f%% with it; the tuning rows by software age: %s). "+
		"Tuning MAPE %.1f%% before, %.1f%% after. "+
		"Error bands of estimated steps (network_rel_err): each family and arithmetic's MAPE over its tuning rows (%d rows in all, held-out rows not read), mixed with the held-out MAPE (%.1f%%) as %.0f more rows; "+
		"%.0f× the held-out MAPE where no tuning row exists; a family predicted from its neighbour's scales at least the largest error of its own held-out rows (%s); transferred times: the held-out MAPE",
		nf.TuningRows, filepath.Base(path), fit.SingleSourcePrior, fit.MinScaleSources, strings.Join(nf.SingleSource, ", "),
		out.MemoryEfficiency, out.StreamBytesPerSMCycle, out.NCHWNormBytesPerSMCycle, out.PowerClockExponent, nf.DepthwiseScale, familyFactors(nf), arithFactors(nf), out.SplitKMax,
		out.MaturityDeficit, out.MaturityMonths, out.MaturityLaunchUS, nf.Maturity.Pairs, strings.Join(nf.Maturity.GPUs, ", "), nf.Maturity.BeforeMAPE, nf.Maturity.AfterMAPE, softwareAgeCounts(nf),
		nf.BeforeMAPE, nf.AfterMAPE, nf.TuningRows, 100*bands.HeldOut, fit.BandPriorRows, fit.BandOtherFactor, untunedFloors(bands))
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// softwareAgeCounts lists the tuning rows per software-age band, "under 6 months 4,
// 6–12 months 2, …".
func softwareAgeCounts(nf *fit.NetworkFit) string {
	var parts []string
	lo := 0
	for i, n := range nf.SoftwareAges {
		switch {
		case i < len(fit.AgeBands) && lo == 0:
			parts = append(parts, fmt.Sprintf("under %d months %d", fit.AgeBands[i], n))
		case i < len(fit.AgeBands):
			parts = append(parts, fmt.Sprintf("%d–%d months %d", lo, fit.AgeBands[i], n))
		default:
			parts = append(parts, fmt.Sprintf("%d months or more %d", lo, n))
		}
		if i < len(fit.AgeBands) {
			lo = fit.AgeBands[i]
		}
	}
	return strings.Join(parts, ", ")
}

// familyFactors lists the fitted family factors with their rows and sources.
func familyFactors(nf *fit.NetworkFit) string {
	names := make([]string, 0, len(nf.Families))
	for f := range nf.Families {
		names = append(names, f)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, f := range names {
		e := nf.Families[f]
		parts[i] = fmt.Sprintf("%s ×%.2f (%d rows: %s)", f, e.Factor, e.Rows, strings.Join(e.Sources, ", "))
	}
	return strings.Join(parts, "; ")
}

// arithFactors lists the arithmetic factors.
func arithFactors(nf *fit.NetworkFit) string {
	names := make([]string, 0, len(nf.Arithmetics))
	for a := range nf.Arithmetics {
		names = append(names, a)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, a := range names {
		parts[i] = fmt.Sprintf("%s ×%.2f", a, nf.Arithmetics[a])
	}
	return strings.Join(parts, ", ")
}
