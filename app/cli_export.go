package app

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// ExportChart writes a chart to path in the format its extension names (.png, .svg or
// .pdf) at w×h pixels. The file appears whole or not at all.
func ExportChart(path string, c *charts.Chart, w, h int) error {
	format, err := charts.FormatOf(path)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, func(out io.Writer) error { return c.Write(out, format, w, h) })
}

// ExportCSV writes a CSV file with write; the file appears whole or not at all.
func ExportCSV(path string, write func(io.Writer) error) error {
	return writeFileAtomic(path, write)
}

func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("export to %s: %w (is the folder there and writable?)", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("export to %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("export to %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("export to %s: %w", path, err)
	}
	return nil
}

// SummaryCSVHeader is the header of the results CSV.
var SummaryCSVHeader = []string{"model", "machine", "gpu", "gpu_count", "best_batch", "iter_ms", "epoch_s", "total_s", "cost_usd", "energy_kwh", "max_batch", "source",
	"input", "bound", "loader_images_per_s"}

// WriteSummariesCSV writes the results table: one row per CNN×machine at its best
// batch size; the time, cost and energy cells are empty where no batch size fits.
func WriteSummariesCSV(w io.Writer, rows []Summary) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(SummaryCSVHeader)
	for _, r := range rows {
		rec := []string{r.Model, r.Machine, r.GPU, strconv.Itoa(r.GPUCount), "", "", "", "", "", "", strconv.Itoa(r.MaxBatch), string(r.Source),
			strconv.Itoa(r.Input), r.Bound, ""}
		if r.LoaderImagesPerS > 0 {
			rec[14] = num(r.LoaderImagesPerS)
		}
		if r.BestBatch > 0 {
			rec[4], rec[5], rec[6], rec[7] = strconv.Itoa(r.BestBatch), num(r.IterMS), num(r.EpochS), num(r.TotalS)
			rec[8], rec[9] = num(r.CostUSD), num(r.EnergyKWh)
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write results CSV: %w", err)
	}
	return nil
}

// CurvesCSVHeader is the header of the curves CSV.
var CurvesCSVHeader = []string{"model", "machine", "gpu", "gpu_count", "precision", "batch", "fits", "iter_ms", "images_per_s", "epoch_s", "total_s", "cost_usd", "energy_kwh", "memory_gb", "source", "error_pct", "best",
	"input", "loader", "workers", "loader_images_per_s", "bound", "memory_format"}

// WriteCurvesCSV writes every point of every curve; time cells are empty where the
// batch does not fit, and best is true on each curve's best batch size.
func WriteCurvesCSV(w io.Writer, curves []predictor.Curve) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(CurvesCSVHeader)
	for _, c := range curves {
		for i, p := range c.Points {
			rec := []string{c.Model, c.Machine, c.GPU, strconv.Itoa(c.GPUCount), string(c.Precision), strconv.Itoa(p.Batch),
				strconv.FormatBool(p.Fits), "", "", "", "", "", "", num(p.MemoryGB), string(p.Source), "", strconv.FormatBool(i == c.Best),
				strconv.Itoa(c.Input), string(c.Loader), strconv.Itoa(c.Workers), "", p.Bound, string(c.Format)}
			if c.LoaderImagesPerS > 0 {
				rec[20] = num(c.LoaderImagesPerS)
			}
			if p.Fits {
				rec[7], rec[8], rec[9], rec[10], rec[11], rec[12] = num(p.IterMS), num(p.ImagesPerS), num(p.EpochS), num(p.TotalS), num(p.CostUSD), num(p.EnergyKWh)
				rec[15] = num(p.ErrorPct)
			}
			_ = cw.Write(rec)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write curves CSV: %w", err)
	}
	return nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// ExportWritten is one file `cnntime export --json` wrote.
type ExportWritten struct {
	Path   string `json:"path"`
	What   string `json:"what"`   // "curves chart", "scatter chart", "results CSV" or "curves CSV"
	Format string `json:"format"` // png, svg, pdf or csv
	Bytes  int64  `json:"bytes"`
}

func init() {
	cmd := Command{
		Name:    "export",
		Summary: "write a chart (PNG, SVG, PDF) or the results or curves as CSV",
		Usage:   "export --models M[,M…] --machines ID[,ID…] [--chart curves|scatter --out FILE.{png,svg,pdf}] [--csv FILE] [flags]",
		Details: RunDataUsage,
	}
	cmd.Run = func(env *Env, args []string) error { return runExport(env, cmd, args) }
	Register(cmd)
}

func runExport(env *Env, cmd Command, args []string) error {
	fs := env.Flags(cmd)
	var pf predictFlags
	for _, name := range []string{"models", "model"} {
		fs.StringVar(&pf.models, name, "", "CNNs, comma-separated: zoo names or custom model files (e.g. resnet50,my_net.json)")
	}
	for _, name := range []string{"machines", "machine"} {
		fs.StringVar(&pf.machines, name, "", "machines, comma-separated catalog or user ids (e.g. aws/p3.2xlarge)")
	}
	fs.StringVar(&pf.gpus, "gpus", "", "bare GPUs, comma-separated catalog ids: a one-GPU machine with no price")
	fs.StringVar(&pf.batches, "batches", "", "batch sizes: a range 1-1024, a list 32,64 or both (default: the app's grid from 1 to 1024)")
	fs.StringVar(&pf.precision, "precision", "fp32", "fp32, fp32-strict or amp")
	fs.StringVar(&pf.policy, "policy", "heuristic", "cuDNN algorithm choice: heuristic or fastest")
	fs.IntVar(&pf.epochs, "epochs", 90, "training epochs")
	fs.IntVar(&pf.images, "images", 0, "training images per epoch (default: the dataset's)")
	pf.data.register(fs)
	chart := fs.String("chart", "", "curves or scatter (default curves when --out is given)")
	out := fs.String("out", "", "the chart file; its extension picks the format: .png, .svg or .pdf")
	csvPath := fs.String("csv", "", "a CSV file to write")
	table := fs.String("table", "results", "what the CSV holds: results (best batch per CNN×machine) or curves (every batch size)")
	metric := fs.String("metric", "total", "the curves chart's y axis: total, iter, epoch, throughput or cost")
	logX := fs.Bool("logx", false, "logarithmic x axis")
	logY := fs.Bool("logy", false, "logarithmic y axis")
	width := fs.Int("width", 1200, "chart width in pixels (SVG and PDF: ×0.75 points)")
	height := fs.Int("height", 750, "chart height in pixels")
	title := fs.String("title", "", "chart title")
	if err := fs.Parse(args); err != nil {
		return err
	}

	// Check every flag before predicting or writing anything.
	if *chart != "" && *out == "" {
		return Usagef("--chart %s needs --out FILE.png, .svg or .pdf", *chart)
	}
	if *out == "" && *csvPath == "" {
		return Usagef("nothing to write: give --chart and --out FILE, or --csv FILE")
	}
	var format charts.Format
	if *out != "" {
		if *chart == "" {
			*chart = "curves"
		}
		if *chart != "curves" && *chart != "scatter" {
			return Usagef("--chart %q: use curves or scatter", *chart)
		}
		f, err := charts.FormatOf(*out)
		if err != nil {
			return Usagef("--out: %v", err)
		}
		format = f
	}
	if *table != "results" && *table != "curves" {
		return Usagef("--table %q: use results or curves", *table)
	}
	m, err := charts.ParseMetric(*metric)
	if err != nil {
		return Usagef("--metric: %v", err)
	}
	if *width < 100 || *height < 100 || *width > charts.MaxPixels || *height > charts.MaxPixels {
		return Usagef("--width %d --height %d: use 100 to %d pixels a side", *width, *height, charts.MaxPixels)
	}
	userBatches := pf.batches != ""
	if !userBatches {
		pf.batches = "1-1024"
	}

	eng, closeDB, err := openEngine(env)
	if err != nil {
		return err
	}
	defer closeDB()
	q, err := pf.query(eng, fs)
	if err != nil {
		return err
	}
	if !userBatches {
		q.Batches = BatchGrid(1, 1024)
	}
	curves, err := eng.Curves(env.Ctx, q)
	if err != nil {
		return err
	}

	var written []ExportWritten
	record := func(path, what, format string) error {
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("check %s: %w", path, err)
		}
		written = append(written, ExportWritten{Path: path, What: what, Format: format, Bytes: st.Size()})
		return nil
	}
	if *out != "" {
		opt := charts.Options{Metric: m, LogX: *logX, LogY: *logY, Legend: true, Title: *title}
		c := charts.Curves(curves, opt)
		if *chart == "scatter" {
			c = charts.Scatter(curves, opt)
		}
		if err := ExportChart(*out, c, *width, *height); err != nil {
			return err
		}
		if err := record(*out, *chart+" chart", string(format)); err != nil {
			return err
		}
	}
	if *csvPath != "" {
		write := func(w io.Writer) error { return WriteSummariesCSV(w, Summarize(curves)) }
		if *table == "curves" {
			write = func(w io.Writer) error { return WriteCurvesCSV(w, curves) }
		}
		if err := ExportCSV(*csvPath, write); err != nil {
			return err
		}
		if err := record(*csvPath, *table+" CSV", "csv"); err != nil {
			return err
		}
	}
	if env.JSON {
		return WriteJSON(env.Stdout, map[string]any{"written": written})
	}
	for _, w := range written {
		fmt.Fprintf(env.Stdout, "wrote %s (%s, %d bytes)\n", w.Path, w.What, w.Bytes)
	}
	return nil
}
