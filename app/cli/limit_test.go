package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func bestRowOf(machine string, totalH, cost float64) BestRow {
	r := BestRow{Model: "resnet50", Machine: machine, GPU: "x", GPUCount: 1}
	if totalH > 0 {
		s := totalH * 3600
		row := PredictRow{TotalS: &s, Batch: 64}
		if cost > 0 {
			row.CostUSD = &cost
		}
		r.Best = &row
	}
	return r
}

func TestRunLimitRanks(t *testing.T) {
	rows := []BestRow{
		bestRowOf("slow-cheap", 30, 5),  // misses 24h
		bestRowOf("fast-dear", 2, 90),   // meets both
		bestRowOf("mid", 12, 20),        // meets both
		bestRowOf("unpriced", 5, 0),     // meets the deadline, cost unknown
		bestRowOf("none-fits", 0, 0),    // no run
		bestRowOf("mid-twin", 12, 20),   // ties keep their order
		bestRowOf("slower-dear", 40, 9), // misses
	}
	for _, tc := range []struct {
		limit runLimit
		want  string
	}{
		{runLimit{deadline: 24 * time.Hour}, "mid mid-twin fast-dear unpriced | slow-cheap slower-dear none-fits"},
		{runLimit{budget: 25}, "mid mid-twin slow-cheap slower-dear | fast-dear unpriced none-fits"},
		{runLimit{budget: 25, deadline: 24 * time.Hour}, "mid mid-twin | fast-dear unpriced slow-cheap slower-dear none-fits"},
	} {
		rs := append([]BestRow(nil), rows...)
		ranked := permute(rs, tc.limit.rank(rs))
		var b strings.Builder
		for i, r := range ranked {
			if i > 0 && *ranked[i-1].Meets && !*r.Meets {
				b.WriteString("| ")
			}
			b.WriteString(r.Machine + " ")
		}
		if got := strings.TrimSpace(b.String()); got != tc.want {
			t.Errorf("%+v: ranked %q, want %q", tc.limit, got, tc.want)
		}
	}
}

// TestBestAnswersTheDeadlineQuestion: "the cheapest machine that trains ResNet-50 to
// its target within 24 h" is one command, over every machine, and its JSON rows come
// ranked; a provider and gpu:ID select machines too.
func TestBestAnswersTheDeadlineQuestion(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "best", "--model", "resnet50", "--machine", "all", "--train", "to-target", "--deadline", "24h", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []BestRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) < 50 {
		t.Fatalf("best --machine all: %v, %d rows", err, len(rows))
	}
	meeting, lastCost := 0, 0.0
	for i, r := range rows {
		if r.Meets == nil {
			t.Fatalf("row %d (%s) has no meets", i, r.Machine)
		}
		if !*r.Meets {
			continue
		}
		if i != meeting {
			t.Errorf("row %d (%s) meets the deadline after one that does not", i, r.Machine)
		}
		meeting++
		if *r.Best.TotalS > 24*3600 {
			t.Errorf("%s meets 24h in %.0f s", r.Machine, *r.Best.TotalS)
		}
		if r.Best.CostUSD != nil {
			cost := *r.Best.CostUSD // ranked at the slow end of an assumed host's range
			if r.Best.HostSlowPct != nil {
				cost *= 1 + *r.Best.HostSlowPct/100
			}
			if cost < lastCost {
				t.Errorf("%s ($%.2f at its slow end) after a dearer row ($%.2f)", r.Machine, cost, lastCost)
			}
			lastCost = cost
		}
	}
	if meeting == 0 || meeting == len(rows) {
		t.Errorf("%d of %d rows meet 24h: want some, not all", meeting, len(rows))
	}
	code, out, errOut = runPredictCLI(t, "best", "--model", "resnet50", "--machine", "all", "--train", "to-target", "--deadline", "24h")
	if code != 0 || !strings.Contains(out, "Cheapest within 24.0 h: resnet50 on "+rows[0].Machine) {
		t.Errorf("best --deadline's answer line: exit %d\n%s%s", code, out, errOut)
	}

	for _, tc := range []struct {
		selector string
		want     func(BestRow) bool
	}{
		{"lambda", func(r BestRow) bool { return strings.HasPrefix(r.Machine, "lambda/") }},
		{"provider:aws", func(r BestRow) bool { return strings.HasPrefix(r.Machine, "aws/") }},
		{"gpu:h100-sxm", func(r BestRow) bool { return r.GPU == "h100-sxm" }},
	} {
		code, out, errOut := runPredictCLI(t, "best", "--model", "resnet18", "--machine", tc.selector, "--batches", "64", "--json")
		var rows []BestRow
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) < 2 {
			t.Errorf("--machine %s: exit %d, %d rows: %s", tc.selector, code, len(rows), errOut)
			continue
		}
		for _, r := range rows {
			if !tc.want(r) {
				t.Errorf("--machine %s selected %s (%s)", tc.selector, r.Machine, r.GPU)
			}
		}
	}
	for _, bad := range []string{"gpu:h900", "provider:acme"} {
		if code, _, errOut := runPredictCLI(t, "best", "--model", "resnet18", "--machine", bad); code != 2 || !strings.Contains(errOut, "--machine") {
			t.Errorf("--machine %s: exit %d, %s; want a usage error", bad, code, errOut)
		}
	}
}

// A run whose host CPU nobody named is ranked at the slow end of its range: cheaper at
// the reference core standing in, it still comes after a named host's run that is
// cheaper than its slow end.
func TestRunLimitRanksAnAssumedHostAtItsSlowEnd(t *testing.T) {
	assumed, named := bestRowOf("assumed", 10, 20), bestRowOf("named", 10.5, 21)
	slow := 9.0
	assumed.Best.HostSlowPct = &slow // $21.80 and 10.9 h at its slow end
	for _, tc := range []struct {
		limit runLimit
		want  string
	}{
		{runLimit{deadline: 24 * time.Hour}, "named assumed"},
		{runLimit{budget: 100}, "named assumed"},
	} {
		rows := []BestRow{assumed, named}
		ranked := permute(rows, tc.limit.rank(rows))
		if got := ranked[0].Machine + " " + ranked[1].Machine; got != tc.want {
			t.Errorf("%+v: ranked %q, want %q", tc.limit, got, tc.want)
		}
	}
}
