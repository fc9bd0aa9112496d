package cli

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"cnntime/app/validate"
)

func TestValidateReportsModernAnchors(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "validate", "--skip-cpu", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep validate.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not the JSON report: %v", err)
	}
	m := rep.Modern
	if m == nil || len(m.Rows) < 40 || len(m.Sets) != 2 {
		t.Fatalf("modern table: %+v; want ≥ 40 rows in a tuning and a held-out set", m)
	}
	gpus := map[string]bool{}
	for _, r := range m.Rows {
		gpus[r.GPU] = true
		want := 100 * (r.PredictedIPS - r.MeasuredIPS) / r.MeasuredIPS
		if !(r.PredictedIPS > 0) || math.Abs(r.ErrorPct-want) > 1e-9 {
			t.Errorf("%s %s on %s: predicted %v, error %v (want %v)", r.Source, r.Model, r.GPU, r.PredictedIPS, r.ErrorPct, want)
		}
		if !(r.BandPct > 3) || r.BandPct > 100 {
			t.Errorf("%s %s on %s: error band ±%.1f%%, want a whole-network band in (3%%, 100%%]", r.Source, r.Model, r.GPU, r.BandPct)
		}
	}
	if len(gpus) < 5 {
		t.Errorf("anchors cover %d GPUs, want ≥ 5", len(gpus))
	}
	var rows int
	for _, s := range m.Sets {
		rows += s.Rows
		if s.MAPEPct <= 0 || s.MAPEPct > 40 {
			t.Errorf("%s MAPE %.1f%%: outside (0, 40]", s.Set, s.MAPEPct)
		}
	}
	if rows != len(m.Rows) {
		t.Errorf("sets hold %d rows, the table %d", rows, len(m.Rows))
	}
	code, text, _ := runPredictCLI(t, "validate", "--skip-cpu")
	if code != 0 || !strings.Contains(text, "4. Whole networks vs published training throughput") || !strings.Contains(text, "held out") {
		t.Errorf("the text report lacks table 4:\n%s", text)
	}
}
