package app

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"cnntime/app/charts"
	"cnntime/db/csvsafe"
	"cnntime/predictor"
	"cnntime/predictor/hw"
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
	"input", "bound", "loader_images_per_s", "price_usd_per_hour", "price_kind", "price_region", "price_date", "price_age_days",
	"epochs", "epochs_source"}

// WriteSummariesCSV writes the results table: one row per CNN×machine at its best
// batch size; the time, cost and energy cells are empty where no batch size fits, and
// the cost and energy cells where the machine has no price or its GPU no published power
// (unknown, not 0). Text
// cells that a spreadsheet would read as a formula (a custom model named =cmd) are
// neutralised (csvsafe.Text); numbers are written as numbers.
func WriteSummariesCSV(w io.Writer, rows []Summary) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(SummaryCSVHeader)
	for _, r := range rows {
		t := csvsafe.Text
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
		if r.BestBatch > 0 {
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
	"epochs", "epochs_source", "run_error_pct", "regime"}

// WriteCurvesCSV writes every point of every curve; time cells are empty where the
// batch does not fit, and best is true on each curve's best batch size. Text cells are
// neutralised as in WriteSummariesCSV.
func WriteCurvesCSV(w io.Writer, curves []predictor.Curve) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(CurvesCSVHeader)
	for _, c := range curves {
		for i, p := range c.Points {
			t := csvsafe.Text
			rec := []string{t(c.Model), t(c.Machine), t(c.GPU), strconv.Itoa(c.GPUCount), t(string(c.Precision)), strconv.Itoa(p.Batch),
				strconv.FormatBool(p.Fits), "", "", "", "", "", "", num(p.MemoryGB), t(string(p.Source)), "", strconv.FormatBool(i == c.Best),
				strconv.Itoa(c.Input), t(string(c.Loader)), strconv.Itoa(c.Workers), "", t(p.Bound), t(string(c.Format))}
			rec = append(rec, priceCells(c.CostKnown, c.PriceUSDPerHour, c.Price)...)
			rec = append(rec, "", t(c.EpochsSource), "", t(p.Regime))
			if c.LoaderImagesPerS > 0 {
				rec[20] = num(c.LoaderImagesPerS)
			}
			if p.Fits {
				rec[7], rec[8], rec[9], rec[10] = num(p.IterMS), num(p.ImagesPerS), num(p.EpochS), num(p.TotalS)
				if c.CostKnown {
					rec[11] = num(p.CostUSD)
				}
				if c.EnergyKnown {
					rec[12] = num(p.EnergyKWh)
				}
				rec[15] = num(p.ErrorPct)
				rec[len(rec)-4], rec[len(rec)-2] = num(p.Epochs), num(p.RunErrorPct()) // epochs and run_error_pct, the last columns but one
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

// ChartTitle is an exported chart's title: what it shows, the CNNs, the dataset and
// its images, the precision, the epochs and the date of the prices the costs use
// (one date, or the range when the machines' prices were read on different dates).
// A chart leaves the window without the window around it, so its title carries
// what the window's settings said.
func ChartTitle(what string, s SessionSettings, priceDates []string) string {
	var parts []string
	if len(s.Models) > 0 {
		models := strings.Join(s.Models, ", ")
		if len(s.Models) > 4 {
			models = strings.Join(s.Models[:4], ", ") + fmt.Sprintf(" and %d more", len(s.Models)-4)
		}
		parts = append(parts, models)
	}
	data := charts.FormatCount(int64(s.Images)) + " images"
	if s.Data.Dataset != "" {
		data = s.Data.Dataset + " (" + data + ")"
	}
	parts = append(parts, data, string(s.Precision), charts.Count(s.Epochs, "epoch", "epochs"))
	var dates []string
	for _, d := range priceDates {
		if d != "" && !slices.Contains(dates, d) {
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
	t := csvsafe.Text
	return []string{price, t(string(p.Kind)), t(p.Region), t(p.Date), age}
}
