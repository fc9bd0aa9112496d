package app

import (
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// TestResultsHeadersFollowTheMode: trained to a target, the results table's total time
// and cost are the time and cost to the target, and its headers say so (issue 43: it
// said "Total time"); its batches are written with thousands separators, as the
// recommended batch beside them ("2,816" beside "1,664 (1,664–3,712)").
func TestResultsHeadersFollowTheMode(t *testing.T) {
	fixed := predictor.Curve{Model: "resnet50", Machine: "aws/p4d.24xlarge", Best: 0, MaxBatch: 3720,
		Points: []predictor.Point{{Batch: 2816, Fits: true, TotalS: 1}}, Recommended: 1664, NearMin: 1664, NearMax: 3712}
	toTarget := fixed
	toTarget.Recipe = &recipe.Plan{Network: "resnet50"}
	if got := SummaryTitles(Summarize([]predictor.Curve{fixed})); got[ColumnTotal] != "Total time" || got[ColumnCost] != "Cost" {
		t.Errorf("fixed epochs: %q, %q", got[ColumnTotal], got[ColumnCost])
	}
	rows := Summarize([]predictor.Curve{fixed, toTarget})
	if got := SummaryTitles(rows); got[ColumnTotal] != "Time to target" || got[ColumnCost] != "Cost to target" {
		t.Errorf("to a target: %q, %q", got[ColumnTotal], got[ColumnCost])
	}
	if SummaryColumns[ColumnTotal] != "Total time" {
		t.Error("SummaryTitles changed SummaryColumns")
	}
	if got := [3]string{rows[0].Cell(ColumnBestBatch), rows[0].Cell(ColumnRecommended), rows[0].Cell(ColumnMaxBatch)}; got != [3]string{"2,816", "1,664 (1,664–3,712)", "3,720"} {
		t.Errorf("batches %q", got)
	}
}
