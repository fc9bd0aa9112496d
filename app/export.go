package app

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"cnntime/app/charts"
	"cnntime/app/outfile"
	"cnntime/db/csvsafe"
	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/pipeline"
)

// ExportChart writes a chart to path in the format its extension names (.png, .svg or
// .pdf) at w×h pixels, as ExportFile writes a file.
func ExportChart(path string, c *charts.Chart, w, h int) error {
	format, err := charts.FormatOf(path)
	if err != nil {
		return err
	}
	return ExportFile(path, func(out io.Writer) error { return c.Write(out, format, w, h) })
}

// ExportCSV writes a CSV file with write, as ExportFile writes a file.
func ExportCSV(path string, write func(io.Writer) error) error {
	return ExportFile(path, write)
}

// ExportFile writes an export (what write writes) to path with outfile.Write: a
// regular file appears whole or not at all, with the user's umask; a terminal,
// /dev/null, a named pipe or /dev/stdout is written into and keeps its type; a folder,
// a disk, a cache, a read-only file and the missing target of a dangling link are
// refused.
func ExportFile(path string, write func(io.Writer) error) error {
	if err := outfile.Write(path, write); err != nil {
		return fmt.Errorf("export to %s: %w", Printable(path), err)
	}
	return nil
}

// SummaryCSVHeader is the header of the results CSV.
var SummaryCSVHeader = []string{"model", "machine", "gpu", "gpu_count", "best_batch", "iter_ms", "epoch_s", "total_s", "cost_usd", "energy_kwh", "max_batch", "source",
	"input", "bound", "loader_images_per_s", "price_usd_per_hour", "price_kind", "price_region", "price_date", "price_age_days",
	"epochs", "epochs_source", "script", "script_ms", "framework", "software", "cpu", "cpu_assumed",
	"precision", "policy", "dataset", "images", "loader", "memory_format", "nodes", "train_mode", "target",
	"images_per_s", "recommended_batch", "within_1pct_min", "within_1pct_max", "warnings"}

// cpuCells are the CSV cells of the host CPU a prediction scaled its loader by: its
// model and whether the reference CPU stood in for an unknown one.
func cpuCells(h *host.Host) []string {
	if h == nil {
		return []string{"", ""}
	}
	return []string{csvsafe.Cell(h.CPU.Model), strconv.FormatBool(h.CPUAssumed)}
}

// WriteSummariesCSV writes the results table: one row per CNN×machine at its best
// batch size; the time, cost and energy cells are empty where no batch size fits, and
// the cost and energy cells where the machine has no price or its GPU no published power
// (unknown, not 0). Text
// cells that a spreadsheet would read as a formula (a custom model named =cmd) are
// neutralised and control characters written out (csvsafe.Cell); numbers are written as numbers.
func WriteSummariesCSV(w io.Writer, rows []Summary) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(SummaryCSVHeader)
	for _, r := range rows {
		t := csvsafe.Cell
		rec := []string{t(r.Model), t(r.Machine), t(r.GPU), strconv.Itoa(r.GPUCount), "", "", "", "", "", "", strconv.Itoa(r.MaxBatch), t(string(r.Source)),
			strconv.Itoa(r.Input), t(r.Bound), ""}
		rec = append(rec, priceCells(r.CostKnown, r.PriceUSDPerHour, r.Price)...)
		rec = append(rec, "", t(r.EpochsSource))
		if r.LoaderImagesPerS > 0 {
			rec[14] = num(r.LoaderImagesPerS)
		}
		if r.BestBatch > 0 {
			rec[len(rec)-2] = num(r.Epochs) // the epochs column, before epochs_source
		}
		scriptMS := ""
		if r.BestBatch > 0 {
			scriptMS = num(r.ScriptMS)
		}
		rec = append(rec, t(string(r.Script)), scriptMS, t(string(r.Framework)), t(r.Software))
		rec = append(rec, cpuCells(r.Host)...)
		rec = append(rec, t(string(r.Precision)), t(string(r.Policy)), t(r.Dataset), intCell(r.Images), t(string(r.Loader)),
			t(string(r.MemoryFormat)), intCell(r.Nodes), t(string(r.TrainMode)), t(r.Target),
			"", intCell(r.RecommendedBatch), intCell(r.NearMin), intCell(r.NearMax), t(joinWarnings(r.Warnings)))
		if r.BestBatch > 0 {
			rec[len(rec)-5] = num(r.ImagesPerS)
			rec[4], rec[5], rec[6], rec[7] = strconv.Itoa(r.BestBatch), num(r.IterMS), num(r.EpochS), num(r.TotalS)
			if r.CostKnown {
				rec[8] = num(r.CostUSD)
			}
			if r.EnergyKnown {
				rec[9] = num(r.EnergyKWh)
			}
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
	"input", "loader", "workers", "loader_images_per_s", "bound", "memory_format",
	"price_usd_per_hour", "price_kind", "price_region", "price_date", "price_age_days",
	"epochs", "epochs_source", "run_error_pct", "regime", "script", "script_ms", "framework", "software", "cpu", "cpu_assumed",
	"policy", "dataset", "images", "nodes", "train_mode", "target", "recommended", "within_1pct"}

// WriteCurvesCSV writes every point of every curve; time cells are empty where the
// batch does not fit, and best is true on each curve's best batch size. Text cells are
// neutralised as in WriteSummariesCSV.
func WriteCurvesCSV(w io.Writer, curves []predictor.Curve) error {
	b := appendCSVRecord(nil, CurvesCSVHeader)
	for i := range curves {
		b = appendCurveCSV(b, &curves[i])
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write curves CSV: %w", err)
	}
	return nil
}

// StreamCurvesCSV writes the curves CSV of q as WriteCurvesCSV does, predicting it a
// curve at a time (StreamCurves), so memory does not grow with its size.
func StreamCurvesCSV(ctx context.Context, w io.Writer, e *Engine, q Query) error {
	if _, err := w.Write(appendCSVRecord(nil, CurvesCSVHeader)); err != nil {
		return fmt.Errorf("write curves CSV: %w", err)
	}
	return StreamCurves(ctx, e, q, func(c *predictor.Curve) ([]byte, error) {
		return appendCurveCSV(nil, c), nil
	}, func(b []byte) error {
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("write curves CSV: %w", err)
		}
		return nil
	})
}

// StreamSummariesCSV writes the results CSV of q as WriteSummariesCSV does, predicting
// it a curve at a time and keeping only each curve's summary.
func StreamSummariesCSV(ctx context.Context, w io.Writer, e *Engine, q Query) error {
	var rows []Summary
	err := StreamCurves(ctx, e, q, func(c *predictor.Curve) (Summary, error) {
		return Summarize([]predictor.Curve{*c})[0], nil
	}, func(s Summary) error { rows = append(rows, s); return nil })
	if err != nil {
		return err
	}
	return WriteSummariesCSV(w, rows)
}

// appendCurveCSV appends the curves CSV rows of c to b.
func appendCurveCSV(b []byte, c *predictor.Curve) []byte {
	text := func(b []byte, s string) []byte { return AppendCSVField(b, csvsafe.Cell(s)) }
	number := func(b []byte, v float64, known bool) []byte {
		if !known {
			return b
		}
		return strconv.AppendFloat(b, v, 'g', 6, 64) // num's form
	}
	// The cells the same on every row, written once: model … precision; input …
	// loader_images_per_s; memory_format and the price; epochs_source; script;
	// framework and the CPU.
	var head, mid, prices, epochsSource []byte
	for _, s := range []string{c.Model, c.Machine, c.GPU} {
		head = append(text(head, s), ',')
	}
	head = strconv.AppendInt(head, int64(c.GPUCount), 10)
	head = append(text(append(head, ','), string(c.Precision)), ',')
	mid = strconv.AppendInt(append(mid, ','), int64(c.Input), 10)
	mid = text(append(mid, ','), string(c.Loader))
	mid = strconv.AppendInt(append(mid, ','), int64(c.Workers), 10)
	mid = append(number(append(mid, ','), c.LoaderImagesPerS, c.LoaderImagesPerS > 0), ',')
	prices = text(append(prices, ','), string(c.Format))
	for _, cell := range priceCells(c.CostKnown, c.PriceUSDPerHour, c.Price) {
		prices = AppendCSVField(append(prices, ','), cell)
	}
	epochsSource = append(text(append(epochsSource, ','), c.EpochsSource), ',')
	var script, machine []byte // script; framework and the CPU
	script = append(text(append(script, ','), string(c.Script)), ',')
	machine = text(append(machine, ','), string(c.Framework))
	machine = text(append(machine, ','), c.Software.Name)
	for _, cell := range cpuCells(c.Host) {
		machine = AppendCSVField(append(machine, ','), cell)
	}
	// The run's other settings, the same on every row.
	mode, target := TrainEpochs, ""
	if c.Recipe != nil {
		mode, target = TrainToTarget, c.Recipe.TargetName()
	}
	for _, cell := range []string{csvsafe.Cell(string(c.Policy)), csvsafe.Cell(c.Dataset), intCell(c.Images), intCell(max(c.Nodes, 1)),
		string(mode), csvsafe.Cell(target)} {
		machine = AppendCSVField(append(machine, ','), cell)
	}
	sources := map[string][]byte{} // the few texts the rows repeat, quoted once
	repeated := func(b []byte, s string) []byte {
		cell, ok := sources[s]
		if !ok {
			cell = text(nil, s)
			sources[s] = cell
		}
		return append(b, cell...)
	}
	b = slices.Grow(b, len(c.Points)*160)
	for i := range c.Points {
		p := &c.Points[i]
		b = append(b, head...)
		b = strconv.AppendInt(b, int64(p.Batch), 10)
		b = strconv.AppendBool(append(b, ','), p.Fits)
		b = number(append(b, ','), p.IterMS, p.Fits)
		b = number(append(b, ','), p.ImagesPerS, p.Fits)
		b = number(append(b, ','), p.EpochS, p.Fits)
		b = number(append(b, ','), p.TotalS, p.Fits)
		b = number(append(b, ','), p.CostUSD, p.Fits && c.CostKnown)
		b = number(append(b, ','), p.EnergyKWh, p.Fits && c.EnergyKnown)
		b = number(append(b, ','), p.MemoryGB, true)
		b = repeated(append(b, ','), string(p.Source))
		b = number(append(b, ','), p.ErrorPct, p.Fits)
		b = strconv.AppendBool(append(b, ','), i == c.Best)
		b = append(b, mid...)
		b = repeated(b, p.Bound)
		b = append(b, prices...)
		b = number(append(b, ','), p.Epochs, p.Fits)
		b = append(b, epochsSource...)
		b = number(b, p.RunErrorPct(), p.Fits)
		b = repeated(append(b, ','), p.Regime)
		b = append(b, script...)
		b = number(b, p.ScriptMS, p.Fits)
		b = append(b, machine...)
		b = strconv.AppendBool(append(b, ','), p.Batch == c.Recommended && p.Fits)
		b = strconv.AppendBool(append(b, ','), p.Fits && c.NearMin > 0 && p.Batch >= c.NearMin && p.Batch <= c.NearMax && p.TotalS <= c.Points[c.Best].TotalS*(1+predictor.NearBestPct/100))
		b = append(b, '\n')
	}
	return b
}

// appendCSVRecord appends one CSV line of fields to b, each quoted where encoding/csv
// quotes it: when it holds a comma, a quote or a line break, starts with a space, or
// is `\.`.
func appendCSVRecord(b []byte, fields []string) []byte {
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendCSVField(b, f)
	}
	return append(b, '\n')
}

// AppendCSVField appends s to b as one field of a comma-separated line, quoted as
// encoding/csv's Writer quotes it.
func AppendCSVField(b []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// csvNeedsQuotes is encoding/csv's rule for a comma-separated field.
func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r', '"', ',':
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// intCell is a count's CSV cell: empty for none (0).
func intCell(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// ChartTitle is an exported chart's title: what it shows, then the run it shows — the
// CNNs and the machines, how the run is counted (its epochs, or to which target and on
// what the epochs rest: EpochsBasis, as the window and the CLI say it), the dataset
// and its images, the precision, the framework, the loader, and the date of the
// prices the costs use (one date, or the range when the machines' prices were read on
// different dates). A chart leaves the window without the window around it, so its
// title carries what the window's settings said; the chart wraps it to its width.
func ChartTitle(what string, s SessionSettings, curves []predictor.Curve) string {
	var parts []string
	if on := listText(s.Models, 4); on != "" {
		if ms := listText(s.Machines, 3); ms != "" {
			on = fmt.Sprintf("%s × %s: %s on %s", charts.Count(len(s.Models), "CNN", "CNNs"), charts.Count(len(s.Machines), "machine", "machines"), on, ms)
		}
		parts = append(parts, on)
	}
	parts = append(parts, runBasis(s, curves))
	data := charts.FormatCount(int64(s.Images)) + " images"
	if s.Data.Dataset != "" {
		data = s.Data.Dataset + " (" + data + ")"
	}
	framework := string(s.Data.framework()) + " on " + s.Data.software().Name
	loader := s.Data.Loader
	if loader == "" {
		loader = string(pipeline.Synthetic)
	}
	parts = append(parts, data, string(s.Precision), framework, loader+" loader")
	var dates []string
	for _, c := range curves {
		if d := c.Price.Date; d != "" && !slices.Contains(dates, d) {
			dates = append(dates, d)
		}
	}
	slices.Sort(dates)
	switch len(dates) {
	case 0:
		parts = append(parts, "prices undated")
	case 1:
		parts = append(parts, "prices of "+dates[0])
	default:
		parts = append(parts, "prices of "+dates[0]+" to "+dates[len(dates)-1])
	}
	return what + " — " + strings.Join(parts, " · ")
}

// runBasis is how the run is counted, from its curves (EpochsBasis: the words every
// other place uses; each recipe's once, the first three and how many more), else from
// the settings.
func runBasis(s SessionSettings, curves []predictor.Curve) string {
	var bases []string
	for i := range curves {
		if curves[i].Best >= 0 {
			if b := EpochsBasis(&curves[i]); !slices.Contains(bases, b) {
				bases = append(bases, b)
			}
		}
	}
	if len(bases) > 4 {
		bases = append(bases[:3], fmt.Sprintf("and %d more", len(bases)-3))
	}
	if len(bases) > 0 {
		return strings.Join(bases, "; ")
	}
	if s.Train.Mode == TrainToTarget {
		return "to target: " + s.Train.RecipeLabel()
	}
	return charts.Count(s.Epochs, "epoch", "epochs")
}

// listText is a list of names, the first n and how many more.
func listText(names []string, n int) string {
	if len(names) > n+1 {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.Join(names, ", ")
}

// QuerySettings are the settings a query predicts, as the window would hold them: what
// an exported chart's title says of a run the command line predicted.
func QuerySettings(q Query) SessionSettings {
	s := SessionSettings{Models: q.Models, Epochs: q.Run.Epochs, Images: q.Run.Images, Precision: q.Precision, Policy: q.Policy,
		BatchMin: q.Span.Min, BatchMax: q.Span.Cap, Data: q.Data, Nodes: q.Nodes, Price: q.Price}
	for _, t := range q.Targets {
		s.Machines = append(s.Machines, t.Machine.ID)
	}
	if q.ToTarget() {
		s.Train = q.Train
		s.Train.Mode = TrainToTarget
	}
	return s
}

// priceCells are the price columns of a CSV row: the price per hour (empty when
// unknown), its kind, region, date and age in days (empty when undated).
func priceCells(known bool, usd float64, p hw.PriceBasis) []string {
	price, age := "", ""
	if known {
		price = num(usd)
	}
	if p.AgeDays != nil {
		age = strconv.Itoa(*p.AgeDays)
	}
	t := csvsafe.Cell
	return []string{price, t(string(p.Kind)), t(p.Region), t(p.Date), age}
}
