package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"cnntime/app/validate"
)

func TestValidateComparesPublishedRows(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "validate", "--skip-cpu", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep validate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not the JSON report: %v", err)
	}
	if rep.CPU != nil {
		t.Errorf("--skip-cpu should leave the CPU table out")
	}
	if len(rep.Layers) == 0 {
		t.Errorf("no per-layer accuracy rows")
	}
	if len(rep.Public) < 3 || len(rep.Rows) < 50 {
		t.Fatalf("%d sources and %d rows compared; want the three modelled sources and at least 50 rows", len(rep.Public), len(rep.Rows))
	}
	perSource := map[string][]float64{}
	for _, r := range rep.Rows {
		if r.PredictedMS <= 0 || r.MeasuredMS <= 0 {
			t.Errorf("row %+v: times must be positive", r)
		}
		if want := 100 * (r.PredictedMS - r.MeasuredMS) / r.MeasuredMS; math.Abs(r.ErrorPct-want) > 1e-9 {
			t.Errorf("row %+v: error %v%%, want %v%%", r, r.ErrorPct, want)
		}
		perSource[r.Source] = append(perSource[r.Source], math.Abs(r.ErrorPct))
	}
	for _, s := range rep.Public {
		sum := 0.0
		for _, e := range perSource[s.Source] {
			sum += e
		}
		if n := len(perSource[s.Source]); n != s.Rows || math.Abs(sum/float64(n)-s.MAPEPct) > 1e-9 {
			t.Errorf("%s: %d rows MAPE %.3f%%, but its rows give %d and %.3f%%", s.Source, s.Rows, s.MAPEPct, n, sum/float64(n))
		}
	}
	// Table 10 names the batch curve's three costs as shipped, with table 8's tuning
	// MAPE beside its own, and their joint refit on the tuning rows.
	if rep.Gains == nil || rep.StepBatch == nil {
		t.Fatalf("the report lacks table 8 or 10")
	}
	for _, g := range rep.StepBatch.Sets {
		if g.Set == "tuning" && math.Abs(rep.Gains.Shipped.TuningStepMAPEPct-g.MAPEPct) > 1e-9 {
			t.Errorf("table 10's shipped costs give table 8 %.3f%% on its tuning rows; table 8 says %.3f%%", rep.Gains.Shipped.TuningStepMAPEPct, g.MAPEPct)
		}
	}
	if sh, re := rep.Gains.Shipped, rep.Gains.Refit; sh.EagerOpUS != rep.StepBatch.Shipped.EagerOpUS || sh.HandoffMS != rep.StepBatch.Shipped.HandoffMS ||
		!(re.LaunchUS > 0) || !(re.EagerOpUS > 0) || !(re.TuningMAPEPct > 0) || !(re.TuningStepMAPEPct > 0) {
		t.Errorf("table 10's costs: shipped %+v (table 8 charges %+v), refit %+v", sh, rep.StepBatch.Shipped, re)
	}
}

// TestValidateConvergenceTable checks `validate --table convergence`: tuning and
// held-out rows for every preset with their MAPE, and the JSON report carries them.
func TestValidateConvergenceTable(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "validate", "--table", "convergence")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Epochs to a target accuracy", "imagenet-1k tuning", "imagenet-1k held out", "cifar-10 held out", "MAPE", "mlperf-rcp-google"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runPredictCLI(t, "validate", "--table", "convergence", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var acc validate.ConvergenceAccuracy
	if err := json.Unmarshal([]byte(out), &acc); err != nil {
		t.Fatalf("not the JSON table: %v", err)
	}
	held := 0
	for _, r := range acc.Rows {
		if r.Set == "held out" {
			held++
		}
		if want := 100 * (r.Predicted - r.Epochs) / r.Epochs; math.Abs(r.ErrorPct-want) > 1e-9 {
			t.Errorf("%s at %d: error %v%%, want %v%%", r.Source, r.Batch, r.ErrorPct, want)
		}
	}
	if held == 0 || held == len(acc.Rows) {
		t.Errorf("%d of %d rows held out", held, len(acc.Rows))
	}
}
