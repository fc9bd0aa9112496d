package validate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/predictor/kernels"
)

// Report is what `cnntime validate --json` prints: the predictor's accuracy, one
// table after another.
type Report struct {
	CPU     *CPUAccuracy           `json:"cpu"`    // table 1; null with --skip-cpu
	Layers  []kernels.GPUAccuracy  `json:"layers"` // table 2
	Public  []PublicSourceAccuracy `json:"public"` // table 3, per source
	Rows    []PublicComparison     `json:"public_rows"`
	Modern  *ModernAccuracy        `json:"modern"`  // table 4: modern.go
	Scaling *ScalingAccuracy       `json:"scaling"` // table 5: scaling.go
	// Convergence is table 6: the epochs-to-target model against published figures
	// (convergence.go).
	Convergence *ConvergenceAccuracy `json:"convergence"`
	Loader      *LoaderAccuracy      `json:"loader"` // table 7: loader.go
	// StepBatch is table 8: one-GPU steps of real scripts against batch, the step's
	// intercept (smallbatch.go).
	StepBatch *StepBatchAccuracy `json:"step_batch"`
	// Ratios is table 9: cross-GPU throughput ratios from table 4's rows (ratios.go).
	Ratios *RatioAccuracy `json:"ratios"`
	// Gains is table 10: each published series' throughput gain from its smallest to
	// its largest batch, from tables 3, 4 and 8's rows (gains.go).
	Gains *GainAccuracy `json:"gains"`
}

// WriteReport prints the report's tables as text.
func WriteReport(w io.Writer, rep *Report) error {
	if rep.CPU != nil {
		if err := WriteCPUTable(w, rep.CPU); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(w, "1. Whole training step on the CPU: skipped (--skip-cpu)")
	}
	fmt.Fprintln(w, "\n2. Per-layer times across GPUs, leave one GPU out (DeepBench convolutions; efficiencies fitted on the other GPUs)")
	fmt.Fprintln(w)
	t := app.NewTable(w, "GPU", "ARITHMETIC", "ROWS", "ESTIMATE MAPE", "TRANSFER MAPE", "TRANSFER ROWS")
	for _, a := range rep.Layers {
		tr := "-"
		if a.TransferRows > 0 {
			tr = fmt.Sprintf("%.1f%%", a.TransferMAPE)
		}
		t.Row(a.GPU, a.Sheet, strconv.Itoa(a.Rows), fmt.Sprintf("%.1f%%", a.EstimateMAPE), tr, strconv.Itoa(a.TransferRows))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n3. Whole networks vs published forward+backward times (rows on catalog GPUs and zoo CNNs)")
	fmt.Fprintln(w)
	t = app.NewTable(w, "SOURCE", "SET", "ROWS", "MAPE", "BIAS", "CAVEATS")
	for _, s := range rep.Public {
		t.Row(s.Source, s.Set, strconv.Itoa(s.Rows), fmt.Sprintf("%.1f%%", s.MAPEPct), fmt.Sprintf("%+.1f%%", s.BiasPct), s.Caveats)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if err := WriteModernTable(w, rep.Modern); err != nil {
		return err
	}
	if err := WriteScalingTable(w, rep.Scaling); err != nil {
		return err
	}
	if err := WriteConvergenceTable(w, rep.Convergence, 6); err != nil {
		return err
	}
	if err := WriteLoaderTable(w, rep.Loader); err != nil {
		return err
	}
	if err := WriteStepBatchTable(w, rep.StepBatch, 8); err != nil {
		return err
	}
	if err := WriteRatioTable(w, rep.Ratios); err != nil {
		return err
	}
	return WriteGainTable(w, rep.Gains, 10)
}

// errorStat is the accuracy over a group of rows: how many, the mean absolute and the
// mean signed error (percent), and the mean of one more figure of the rows (a band).
type errorStat struct {
	rows              int
	mape, bias, extra float64
}

// meanErrors groups rows by key, in the order each key first appears, and averages
// each group's errors (and extra figures) that of gives.
func meanErrors[R any, K comparable](rows []R, key func(R) K, of func(R) (errPct, extra float64)) ([]K, []errorStat) {
	idx := map[K]int{}
	var keys []K
	var stats []errorStat
	for _, r := range rows {
		k := key(r)
		i, ok := idx[k]
		if !ok {
			i = len(keys)
			idx[k] = i
			keys = append(keys, k)
			stats = append(stats, errorStat{})
		}
		e, x := of(r)
		stats[i].rows++
		stats[i].mape += math.Abs(e)
		stats[i].bias += e
		stats[i].extra += x
	}
	for i := range stats {
		n := float64(stats[i].rows)
		stats[i].mape, stats[i].bias, stats[i].extra = stats[i].mape/n, stats[i].bias/n, stats[i].extra/n
	}
	return keys, stats
}

// errorGroup is one line of a table's summary: a set, or a group of a set (a source,
// a GPU pair), how many comparisons it holds, and their mean absolute and mean signed
// errors.
type errorGroup struct {
	set, name        string
	n                int
	mapePct, biasPct float64
}

// summaryOf is each group of gs as an errorGroup.
func summaryOf[G any](gs []G, line func(G) errorGroup) []errorGroup {
	out := make([]errorGroup, len(gs))
	for i, g := range gs {
		out[i] = line(g)
	}
	return out
}

// writeErrorGroups prints a table's summary: a line a set ("tuning: 14 series, MAPE
// 12.1%, bias -3.0%"), then the groups in a table whose group column is titled group
// and whose count column is noun's.
func writeErrorGroups(w io.Writer, noun, group string, sets, groups []errorGroup) error {
	for _, s := range sets {
		fmt.Fprintf(w, "%s: %d %s, MAPE %.1f%%, bias %+.1f%%\n", s.set, s.n, noun, s.mapePct, s.biasPct)
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", group, strings.ToUpper(noun), "MAPE", "BIAS")
	for _, g := range groups {
		t.Row(g.set, g.name, strconv.Itoa(g.n), fmt.Sprintf("%.1f%%", g.mapePct), fmt.Sprintf("%+.1f%%", g.biasPct))
	}
	return t.Flush()
}
