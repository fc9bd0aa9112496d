package app

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

// Summary is one row of the results table: a CNN×machine at its best batch size.
type Summary struct {
	Model     string           `json:"model"`
	Machine   string           `json:"machine"`
	GPU       string           `json:"gpu"`
	GPUCount  int              `json:"gpu_count"`
	BestBatch int              `json:"best_batch"` // 0 when no batch size fits
	IterMS    float64          `json:"iter_ms"`
	EpochS    float64          `json:"epoch_s"`
	TotalS    float64          `json:"total_s"`
	CostUSD   float64          `json:"cost_usd"`
	EnergyKWh float64          `json:"energy_kwh"`
	MaxBatch  int              `json:"max_batch"` // the largest batch that fits in memory
	Source    predictor.Source `json:"source"`
	// AnchoredTo is how many measured whole steps of the cache the curve passes through
	// (predictor.Curve.Anchors): Source is then measured or anchored; 0 when none.
	AnchoredTo int `json:"anchored_to,omitempty"`
	// Input is the input size; Bound what sets the best batch's pace ("gpu" or
	// "input"); LoaderImagesPerS the loader's own rate (0 for synthetic data).
	Input            int     `json:"input"`
	Bound            string  `json:"bound,omitempty"`
	LoaderImagesPerS float64 `json:"loader_images_per_s,omitempty"`
	// Backend is, for a measured CPU, whose measurements answered (Curve.Backend).
	Backend string `json:"backend,omitempty"`
	// CostKnown and EnergyKnown are false when the machine has no price or its GPU
	// no published power: the cost or energy is then unknown, not 0.
	CostKnown   bool `json:"cost_known"`
	EnergyKnown bool `json:"energy_known"`
	// PriceUSDPerHour and Price say which price the cost uses (kind, region, date, age;
	// Price.Stale when older than hw.StalePriceDays, Price.Note when there is none).
	PriceUSDPerHour float64       `json:"price_usd_per_hour"`
	Price           hw.PriceBasis `json:"price"`
	// Epochs is how many epochs the best batch's total counts and EpochsSource where
	// they come from: "fixed", a preset's dataset or "custom" (training to a target).
	Epochs       float64 `json:"epochs,omitempty"`
	EpochsSource string  `json:"epochs_source,omitempty"`
	// Script, ScriptMS and Framework are the training script around the step, its cost
	// in the best batch's IterMS, and what runs the step; Host is the machine's host
	// the loader's rate is scaled by (its CPU, vCPUs, and what is assumed of them), and
	// HostErrorPct and HostSlowPct how far its assumed CPU can move the best batch's
	// time (predictor.Point's).
	Script    predictor.Script    `json:"script,omitempty"`
	ScriptMS  float64             `json:"script_ms,omitempty"`
	Framework predictor.Framework `json:"framework,omitempty"`
	// Software is the release of the kernel libraries the step is predicted for.
	Software     string     `json:"software,omitempty"`
	Host         *host.Host `json:"host,omitempty"`
	HostErrorPct float64    `json:"host_error_pct,omitempty"`
	HostSlowPct  float64    `json:"host_slow_pct,omitempty"`
	// ImagesPerS is the best batch's rate; Loader the input pipeline (its rate is
	// LoaderImagesPerS).
	ImagesPerS float64         `json:"images_per_s,omitempty"`
	Loader     pipeline.Loader `json:"loader,omitempty"`
	// RecommendedBatch is the batch to advise and NearMin–NearMax the batches within
	// predictor.NearBestPct of the best total time (Curve.Recommended); Warnings what
	// to know before following the advice (RunWarnings at the best and the
	// recommended batch).
	RecommendedBatch int      `json:"recommended_batch,omitempty"`
	NearMin          int      `json:"near_best_min,omitempty"`
	NearMax          int      `json:"near_best_max,omitempty"`
	Warnings         []string `json:"warnings,omitempty"`
	// The run's settings, so a row can be traced back to them: precision, cuDNN's
	// policy, dataset and its images per epoch, the activations' layout, how many
	// instances train together, and how the run is counted (TrainMode, and to a
	// target which Target).
	Precision    measure.Precision      `json:"precision,omitempty"`
	Policy       measure.Policy         `json:"policy,omitempty"`
	Dataset      string                 `json:"dataset,omitempty"`
	Images       int                    `json:"images,omitempty"`
	MemoryFormat predictor.MemoryFormat `json:"memory_format,omitempty"`
	Nodes        int                    `json:"nodes,omitempty"`
	TrainMode    TrainMode              `json:"train_mode,omitempty"`
	Target       string                 `json:"target,omitempty"`
}

// Summarize makes one results row per curve, in the curves' order.
func Summarize(curves []predictor.Curve) []Summary {
	out := make([]Summary, len(curves))
	for i, c := range curves {
		row := Summary{Model: c.Model, Machine: c.Machine, GPU: c.GPU, GPUCount: c.GPUCount, MaxBatch: c.MaxBatch,
			Input: c.Input, LoaderImagesPerS: c.LoaderImagesPerS, Backend: c.Backend, CostKnown: c.CostKnown, EnergyKnown: c.EnergyKnown,
			PriceUSDPerHour: c.PriceUSDPerHour, Price: c.Price, Script: c.Script, Framework: c.Framework, Software: c.Software.Name, Host: c.Host,
			Loader: c.Loader, RecommendedBatch: c.Recommended, NearMin: c.NearMin, NearMax: c.NearMax,
			Precision: c.Precision, Policy: c.Policy, Dataset: c.Dataset, Images: c.Images, MemoryFormat: c.Format, Nodes: max(c.Nodes, 1),
			TrainMode: TrainEpochs, AnchoredTo: len(c.Anchors)}
		if m := c.Recipe; m != nil {
			row.TrainMode, row.Target = TrainToTarget, m.TargetName()
		}
		if c.Best >= 0 && c.Best < len(c.Points) {
			p := c.Points[c.Best]
			row.BestBatch, row.IterMS, row.EpochS, row.TotalS = p.Batch, p.IterMS, p.EpochS, p.TotalS
			row.CostUSD, row.EnergyKWh, row.Source, row.Bound = p.CostUSD, p.EnergyKWh, p.Source, p.Bound
			row.Epochs, row.ScriptMS, row.ImagesPerS = p.Epochs, p.ScriptMS, p.ImagesPerS
			row.HostErrorPct, row.HostSlowPct = p.HostErrorPct, p.HostSlowPct
			row.Warnings = AdviceWarnings(&curves[i])
		}
		if c.Unavailable != "" {
			row.Warnings = AdviceWarnings(&curves[i])
		}
		if c.Unavailable != "" {
			row.Warnings = AdviceWarnings(&curves[i])
		}
		row.EpochsSource = c.EpochsSource
		out[i] = row
	}
	return out
}

// SummaryColumn is a column of the results table, in display order.
type SummaryColumn int

// The results table's columns.
const (
	ColumnCNN SummaryColumn = iota
	ColumnMachine
	ColumnBestBatch
	ColumnRecommended
	ColumnIteration
	ColumnEpoch
	ColumnTotal
	ColumnCost
	ColumnEnergy
	ColumnMaxBatch
	ColumnSource
	ColumnBound
	ColumnPrice
	ColumnEpochs
	ColumnWarnings
	ColumnHost
)

// SummaryColumns are the results table's column titles, indexed by SummaryColumn.
var SummaryColumns = []string{
	ColumnCNN: "CNN", ColumnMachine: "Machine", ColumnBestBatch: "Best batch", ColumnRecommended: "Recommended (within 1%)",
	ColumnIteration: "Iteration", ColumnEpoch: "Epoch", ColumnTotal: "Total time", ColumnCost: "Cost", ColumnEnergy: "Energy",
	ColumnMaxBatch: "Max batch", ColumnSource: "Source", ColumnBound: "Bound", ColumnPrice: "Price",
	ColumnEpochs: "Epochs", ColumnWarnings: "Warnings", ColumnHost: "Host CPU",
}

// SummaryTitles are the results table's column titles for these rows: trained to a
// target (any row), the total time and cost are "Time to target" and "Cost to target",
// as the charts say.
func SummaryTitles(rows []Summary) []string {
	for _, r := range rows {
		if r.TrainMode == TrainToTarget {
			titles := slices.Clone(SummaryColumns)
			titles[ColumnTotal], titles[ColumnCost] = charts.MetricTotal.TargetTitle(), charts.MetricCost.TargetTitle()
			return titles
		}
	}
	return SummaryColumns
}

// Cell is a results row's text in column col.
func (r Summary) Cell(col SummaryColumn) string {
	none := r.BestBatch == 0
	switch col {
	case ColumnCNN:
		return r.Model
	case ColumnMachine:
		return r.Machine
	case ColumnBestBatch:
		if none {
			return "does not fit"
		}
		return charts.FormatCount(int64(r.BestBatch))
	case ColumnRecommended:
		return orDash(none, RecommendedText(r.RecommendedBatch, r.NearMin, r.NearMax))
	case ColumnIteration:
		return orDash(none, charts.FormatMS(r.IterMS))
	case ColumnEpoch:
		return orDash(none, charts.FormatSeconds(r.EpochS))
	case ColumnTotal:
		return orDash(none, charts.FormatSeconds(r.TotalS))
	case ColumnCost:
		if !none && !r.CostKnown {
			return "no price"
		}
		return orDash(none, charts.FormatUSD(r.CostUSD))
	case ColumnEnergy:
		if !none && !r.EnergyKnown {
			return "unknown"
		}
		return orDash(none, charts.FormatKWh(r.EnergyKWh))
	case ColumnMaxBatch:
		if r.MaxBatch < 0 {
			return "unknown"
		}
		return charts.FormatCount(int64(r.MaxBatch))
	case ColumnSource:
		if r.Backend != "" && r.Source != "" {
			return string(r.Source) + " (" + r.Backend + ")" // which CPU framework's measurements
		}
		if r.Source == predictor.Anchored && r.AnchoredTo > 0 {
			return "anchored to " + charts.Count(r.AnchoredTo, "measured step", "measured steps")
		}
		return string(r.Source)
	case ColumnBound:
		return orDash(none, BoundText(r.Bound, r.Loader, r.LoaderImagesPerS, r.Host != nil && r.Host.CPUAssumed))
	case ColumnPrice:
		if !r.CostKnown && r.Price.Note != "" {
			return "none: " + shortNote(r.Price.Note) // the whole note is in PriceText, the Why tab and the CSV
		}
		return r.PriceText()
	case ColumnEpochs:
		if r.Target != "" {
			return orDash(none, strconv.FormatFloat(r.Epochs, 'f', 1, 64)+" to "+r.Target+" ("+r.EpochsSource+")")
		}
		return orDash(none, EpochsText(r.Epochs, r.EpochsSource))
	case ColumnWarnings:
		return joinWarnings(r.Warnings)
	case ColumnHost:
		return HostText(r.Host, r.HostErrorPct)
	}
	return ""
}

// RankTotalS is the total time a ranking of machines sorts this row by: at the slow end
// of an assumed host's range (predictor.Point.RankTotalS), so a machine whose CPU
// nobody named never outranks a known one on the reference core standing in for it.
// RankCostUSD is its cost at the same end.
func (r Summary) RankTotalS() float64  { return r.TotalS * (1 + r.HostSlowPct/100) }
func (r Summary) RankCostUSD() float64 { return r.CostUSD * (1 + r.HostSlowPct/100) }

// RecommendedText is the recommended batch with the range of batches within
// predictor.NearBestPct of the best, "64 (16–1,024)"; the batch alone when the range is
// that batch.
func RecommendedText(batch, lo, hi int) string {
	if batch <= 0 {
		return "–"
	}
	b := charts.FormatCount(int64(batch))
	if lo <= 0 || (lo == batch && hi == batch) {
		return b
	}
	return fmt.Sprintf("%s (%s–%s)", b, charts.FormatCount(int64(lo)), charts.FormatCount(int64(hi)))
}

// EpochsText says how many epochs a run counts and where they come from: "90" for a
// fixed number, "36.2 (imagenet-1k)" to a target.
func EpochsText(epochs float64, source string) string {
	if source == "" || source == "fixed" {
		return strconv.FormatFloat(epochs, 'f', -1, 64)
	}
	return strconv.FormatFloat(epochs, 'f', 1, 64) + " (" + source + ")"
}

// PriceText says which price a row's cost uses: "$0.918/h spot us-east-1, 2026-11-20",
// with "OLD" after a price older than hw.StalePriceDays, or why there is none.
func (r Summary) PriceText() string {
	if !r.CostKnown {
		if r.Price.Note != "" {
			return "none: " + r.Price.Note
		}
		return "none"
	}
	s := "$" + strconv.FormatFloat(r.PriceUSDPerHour, 'g', 4, 64) + "/h" // four digits, as the CLI's price column
	if r.Price.Kind != "" {
		s += " " + string(r.Price.Kind)
	}
	if r.Price.Region != "" {
		s += " " + r.Price.Region
	}
	if r.Price.Date != "" {
		s += ", " + r.Price.Date
	}
	if r.Price.Stale {
		s += " OLD"
	}
	return s
}

// shortNote is a price note's first clause, "no spot price" of "no spot price: the
// shipped snapshot does not list it; …", for a table cell as wide as its neighbours.
func shortNote(note string) string {
	for _, sep := range []string{": ", "; ", " ("} {
		if i := strings.Index(note, sep); i > 0 {
			note = note[:i]
		}
	}
	return note
}

func orDash(none bool, s string) string {
	if none {
		return "–"
	}
	return s
}

// SortSummaries sorts rows by a column, numbers by value; rows where nothing fits, and
// rows whose cost or energy is unknown when sorting by it, go last either way. The sort is stable.
func SortSummaries(rows []Summary, col SummaryColumn, descending bool) {
	key := func(r Summary) (float64, string) {
		switch col {
		case ColumnCNN:
			return 0, r.Model + "\x00" + r.Machine
		case ColumnMachine:
			return 0, r.Machine + "\x00" + r.Model
		case ColumnBestBatch:
			return float64(r.BestBatch), ""
		case ColumnRecommended:
			return float64(r.RecommendedBatch), ""
		case ColumnWarnings:
			return float64(len(r.Warnings)), ""
		case ColumnIteration:
			return r.IterMS, ""
		case ColumnEpoch:
			return r.EpochS, ""
		case ColumnTotal:
			return r.RankTotalS(), ""
		case ColumnCost:
			return r.RankCostUSD(), ""
		case ColumnHost:
			return 0, HostText(r.Host, r.HostErrorPct)
		case ColumnEnergy:
			return r.EnergyKWh, ""
		case ColumnMaxBatch:
			return float64(r.MaxBatch), ""
		case ColumnBound:
			return 0, r.Bound
		case ColumnPrice:
			return r.PriceUSDPerHour, ""
		case ColumnEpochs:
			return r.Epochs, ""
		default:
			return 0, string(r.Source)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		// nothing fits, or the figure is unknown (no price, no power): last either way
		last := func(r Summary) bool {
			return (r.BestBatch == 0 && col != ColumnCNN && col != ColumnMachine) ||
				((col == ColumnCost || col == ColumnPrice) && !r.CostKnown) || (col == ColumnEnergy && !r.EnergyKnown)
		}
		if last(a) != last(b) {
			return last(b)
		}
		an, as := key(a)
		bn, bs := key(b)
		if descending {
			an, as, bn, bs = bn, bs, an, as
		}
		if as != bs {
			return as < bs
		}
		return an < bn
	})
}
