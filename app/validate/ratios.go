package validate

import (
	"fmt"
	"io"
	"sort"

	"cnntime/app"
)

// RatioAccuracy is table 9 of `cnntime validate`: how the published throughput of one
// GPU relates to another's, one model, precision and stack at a time, against the
// predicted ratio (table 4's rows). A ratio tests what a ranking of machines rests on
// (how generations relate) apart from the absolute level, which a source's software
// and script move for every GPU alike.
type RatioAccuracy struct {
	Sets []RatioGroup `json:"sets"` // per set (tuning, held out)
	// Pairs sums the rows per GPU pair and set.
	Pairs []RatioGroup `json:"pairs"`
	Rows  []RatioRow   `json:"rows"`
}

// RatioRow is one published ratio: GPU's per-GPU throughput over Reference's, both
// from Source (or, for a stack that no one source ran on both, from the two sources
// joined by "+"), for one model, precision and stack.
type RatioRow struct {
	Set       string  `json:"set"` // tuning only when both rows are tuning rows
	Source    string  `json:"source"`
	Model     string  `json:"model"`
	Precision string  `json:"precision"`
	Stack     string  `json:"stack"`
	GPU       string  `json:"gpu"`
	Reference string  `json:"reference"`
	Published float64 `json:"published"`
	Predicted float64 `json:"predicted"`
	ErrorPct  float64 `json:"error_pct"` // (predicted − published) / published
}

// RatioGroup is the accuracy over a group of ratios.
type RatioGroup struct {
	Set       string  `json:"set"`
	GPU       string  `json:"gpu,omitempty"`
	Reference string  `json:"reference,omitempty"`
	Rows      int     `json:"rows"`
	MAPEPct   float64 `json:"mape_pct"`
	BiasPct   float64 `json:"bias_pct"`
}

// RatioPairs are the GPU pairs the table compares, newer first: each generation against
// the one before it and against the parts users weigh it against.
var RatioPairs = [][2]string{
	{"h100-sxm", "a100-sxm4-80gb"}, {"h100-sxm", "a100-sxm4-40gb"}, {"h100-pcie", "a100-sxm4-80gb"},
	{"h100-pcie", "a100-pcie-80gb"}, {"h100-pcie", "h100-sxm"}, {"h200", "h100-sxm"}, {"gh200", "h100-sxm"},
	{"l40s", "a100-sxm4-80gb"}, {"l4", "a100-sxm4-80gb"}, {"rtx-4090", "rtx-3090"}, {"rtx-4090", "a100-sxm4-80gb"},
	{"a100-sxm4-80gb", "v100-sxm2-16gb"}, {"a100-sxm4-40gb", "v100-sxm2-32gb"}, {"h100-sxm", "v100-sxm2-16gb"},
	{"rtx-a6000", "rtx-3090"}, {"a10", "rtx-3090"}, {"rtx-3090", "v100-sxm2-16gb"}, {"rtx-2080-ti", "v100-sxm2-32gb"},
}

// Ratios builds table 9 from table 4's rows: for every pair of RatioPairs, the rows of
// one source with the same model, precision and stack on both GPUs (several rows of a
// GPU in a group, at several batch sizes, are each paired with the reference's row of
// the nearest batch); where no one source ran a stack on both GPUs (NVIDIA's
// optimised implementations are published per GPU by different pages), the rows of
// two sources with the same model, precision and stack.
func Ratios(m *ModernAccuracy) *RatioAccuracy {
	if m == nil {
		return nil
	}
	type groupKey struct{ source, model, precision, stack string }
	groups := map[groupKey]map[string][]ModernComparison{}
	for _, r := range m.Rows {
		k := groupKey{r.Source, r.Model, r.Precision, r.Stack}
		if groups[k] == nil {
			groups[k] = map[string][]ModernComparison{}
		}
		groups[k][r.GPU] = append(groups[k][r.GPU], r)
	}
	acc := &RatioAccuracy{}
	paired := map[string]bool{} // model/precision/stack/gpu/reference with a same-source pair
	var keys []groupKey
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
	for _, k := range keys {
		g := groups[k]
		for _, p := range RatioPairs {
			for _, r := range g[p[0]] {
				ref, ok := nearestBatch(g[p[1]], r.Batch)
				if !ok {
					continue
				}
				acc.Rows = append(acc.Rows, ratioRow(k.source, r, ref))
				paired[k.model+"/"+k.precision+"/"+k.stack+"/"+p[0]+"/"+p[1]] = true
			}
		}
	}
	// Across two sources where none ran both GPUs, for the stacks that only exist
	// per GPU in different publications.
	for _, p := range RatioPairs {
		for _, k := range keys {
			if k.stack != "optimized" || paired[k.model+"/"+k.precision+"/"+k.stack+"/"+p[0]+"/"+p[1]] {
				continue
			}
			for _, r := range groups[k][p[0]] {
				for _, k2 := range keys {
					if k2.source == k.source || k2.model != k.model || k2.precision != k.precision || k2.stack != k.stack {
						continue
					}
					if ref, ok := nearestBatch(groups[k2][p[1]], r.Batch); ok {
						acc.Rows = append(acc.Rows, ratioRow(k.source+"+"+k2.source, r, ref))
					}
				}
			}
		}
	}
	acc.Sets = groupRatios(acc.Rows, func(r RatioRow) RatioGroup { return RatioGroup{Set: r.Set} })
	acc.Pairs = groupRatios(acc.Rows, func(r RatioRow) RatioGroup { return RatioGroup{Set: r.Set, GPU: r.GPU, Reference: r.Reference} })
	return acc
}

// nearestBatch is the row of rows whose batch is nearest to b (the smaller on a tie).
func nearestBatch(rows []ModernComparison, b int) (ModernComparison, bool) {
	best, found := ModernComparison{}, false
	for _, r := range rows {
		if !found || abs(r.Batch-b) < abs(best.Batch-b) || (abs(r.Batch-b) == abs(best.Batch-b) && r.Batch < best.Batch) {
			best, found = r, true
		}
	}
	return best, found
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ratioRow compares row r with its reference row ref, per GPU (the rows' images/s are
// over all their GPUs).
func ratioRow(source string, r, ref ModernComparison) RatioRow {
	per := func(ips float64, gpus int) float64 { return ips / float64(max(gpus, 1)) }
	pub := per(r.MeasuredIPS, r.GPUs) / per(ref.MeasuredIPS, ref.GPUs)
	pred := per(r.PredictedIPS, r.GPUs) / per(ref.PredictedIPS, ref.GPUs)
	set := "held out"
	if r.Set == "tuning" && ref.Set == "tuning" {
		set = "tuning"
	}
	return RatioRow{Set: set, Source: source, Model: r.Model, Precision: r.Precision, Stack: r.Stack, GPU: r.GPU, Reference: ref.GPU,
		Published: pub, Predicted: pred, ErrorPct: 100 * (pred - pub) / pub}
}

// groupRatios sums rows into groups keyed by what key keeps of a row, tuning first.
func groupRatios(rows []RatioRow, key func(RatioRow) RatioGroup) []RatioGroup {
	keys, stats := meanErrors(rows, key, func(r RatioRow) (float64, float64) { return r.ErrorPct, 0 })
	out := make([]RatioGroup, len(keys))
	for i, k := range keys {
		k.Rows, k.MAPEPct, k.BiasPct = stats[i].rows, stats[i].mape, stats[i].bias
		out[i] = k
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Set != out[j].Set && out[i].Set == "tuning" })
	return out
}

// WriteRatioTable prints table 9.
func WriteRatioTable(w io.Writer, acc *RatioAccuracy) error {
	if acc == nil {
		return nil
	}
	fmt.Fprintln(w, "\n9. Cross-GPU throughput ratios (per GPU, same source, model, precision and stack; table 4's rows) vs published")
	fmt.Fprintln(w)
	line := func(g RatioGroup) errorGroup {
		return errorGroup{g.Set, g.GPU + " / " + g.Reference, g.Rows, g.MAPEPct, g.BiasPct}
	}
	if err := writeErrorGroups(w, "ratios", "GPU / REFERENCE", summaryOf(acc.Sets, line), summaryOf(acc.Pairs, line)); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "SET", "SOURCE", "MODEL", "PRECISION", "STACK", "GPU / REFERENCE", "PUBLISHED", "PREDICTED", "ERROR")
	for _, r := range acc.Rows {
		t.Row(r.Set, r.Source, r.Model, r.Precision, r.Stack, r.GPU+" / "+r.Reference, fmt.Sprintf("%.3f", r.Published),
			fmt.Sprintf("%.3f", r.Predicted), fmt.Sprintf("%+.1f%%", r.ErrorPct))
	}
	return t.Flush()
}
