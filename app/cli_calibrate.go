package app

import (
	"fmt"
	"os"
	"path/filepath"

	"cnntime/predictor/kernels"
	"cnntime/predictor/kernels/fit"
)

func init() {
	Register(Command{
		Name:    "calibrate",
		Summary: "fit the per-layer model's efficiencies to DeepBench convolution timings",
		Usage:   "calibrate --deepbench PATH [--out PATH] [--evaluations N] [--json]",
		Run:     runCalibrate,
	})
}

// runCalibrate reads DeepBench's per-layer results, fits the calibration (holding out
// each GPU in turn first, for the accuracy report), writes it as JSON to --out (or
// stdout) and prints the leave-one-GPU-out table. The embedded calibration is
// regenerated with
//
//	cnntime calibrate --deepbench assets/calibration/deepbench_conv.csv --out assets/calibration/calibration.json
func runCalibrate(env *Env, args []string) error {
	fs := env.Flags(commands["calibrate"])
	deepbench := fs.String("deepbench", "", "DeepBench per-layer results CSV (deepbench_conv.csv)")
	out := fs.String("out", "", "write the calibration JSON here (default: stdout)")
	evals := fs.Int("evaluations", 20000, "objective evaluations per fit (fewer: faster, rougher)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q", fs.Arg(0))
	case *deepbench == "":
		return Usagef("--deepbench PATH is required (the file is ../shared/data/deepbench_conv.csv or assets/calibration/deepbench_conv.csv)")
	case *evals < 100:
		return Usagef("--evaluations %d is too few: use at least 100", *evals)
	}
	data, err := os.ReadFile(*deepbench)
	if err != nil {
		return fmt.Errorf("read DeepBench results: %w", err)
	}
	rows, err := fit.ParseDeepBench(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *deepbench, err)
	}
	cat, err := LoadCatalog()
	if err != nil {
		return err
	}
	gpus, err := fit.MatchGPUs(cat.GPUs())
	if err != nil {
		return err
	}
	cal, err := fit.Fit(rows, gpus, fit.Options{MaxEvaluations: *evals})
	if err != nil {
		return err
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
	fmt.Fprintf(env.Stdout, "wrote %s (%s)\n\n", *out, cal.FittedOn)
	return printLayerAccuracy(env, cal.Accuracy)
}

// printLayerAccuracy prints the leave-one-GPU-out table of a calibration.
func printLayerAccuracy(env *Env, acc []kernels.GPUAccuracy) error {
	t := NewTable(env.Stdout, "GPU (held out)", "ARITHMETIC", "ROWS", "ESTIMATE MAPE", "TRANSFER MAPE")
	for _, a := range acc {
		transfer := "-"
		if a.TransferRows > 0 {
			transfer = fmt.Sprintf("%.1f%% (%d)", a.TransferMAPE, a.TransferRows)
		}
		t.Row(a.GPU, a.Sheet, fmt.Sprint(a.Rows), fmt.Sprintf("%.1f%%", a.EstimateMAPE), transfer)
	}
	return t.Flush()
}

// writeCalibrationFile writes data to path through a temporary file in the same folder,
// so that a failed write leaves the old file as it was.
func writeCalibrationFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calibration-*.json")
	if err != nil {
		return fmt.Errorf("write calibration %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write calibration %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write calibration %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write calibration %s: %w", path, err)
	}
	return nil
}
