package app

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"cnntime/db/csvsafe"
	"cnntime/predictor"
)

// ExplainCSVHeader is the header of `cnntime explain --csv` and of the window's Why export: one row per layer.
var ExplainCSVHeader = []string{"index", "name", "kind", "shape", "forward_ms", "backward_data_ms", "backward_weight_ms", "total_ms", "source", "error_pct"}

// WriteExplanationCSV writes one row per layer, in the network's order. Text cells that a
// spreadsheet would read as a formula are neutralised and control characters written out (csvsafe.Cell).
func WriteExplanationCSV(out io.Writer, x *predictor.Explanation) error {
	w := csv.NewWriter(out)
	w.Write(ExplainCSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, l := range x.Layers {
		w.Write([]string{strconv.Itoa(l.Index), csvsafe.Cell(l.Name), csvsafe.Cell(l.Kind), csvsafe.Cell(l.Shape),
			num(l.ForwardMS), num(l.BackwardDataMS), num(l.BackwardWeightMS), num(l.MS()), csvsafe.Cell(string(l.Source)), num(l.ErrorPct)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("write CSV: %w", err)
	}
	return nil
}
