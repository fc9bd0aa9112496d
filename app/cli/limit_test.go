package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/app"
)

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

// The window asks the deadline and budget questions through app.RunLimit as best does:
// for the same settings (every machine, ResNet-50 to its recipe's target, the window's
// defaults otherwise) the session's curves give the answer line best prints.
func TestWindowLimitAnswersAsBest(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	b, err := app.OpenEngineBackend(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	machines, err := b.MachineChoices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := app.DefaultSessionSettings()
	s.Models, s.Train.Mode = []string{"resnet50"}, app.TrainToTarget
	for _, m := range machines {
		s.Machines = append(s.Machines, m.ID)
	}
	curves, err := b.PredictCurves(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		limit app.RunLimit
	}{
		{[]string{"--deadline", "24h"}, app.RunLimit{Deadline: 24 * time.Hour}},
		{[]string{"--deadline", "2h"}, app.RunLimit{Deadline: 2 * time.Hour}},
		{[]string{"--budget", "40"}, app.RunLimit{BudgetUSD: 40}},
		{[]string{"--budget", "0.5"}, app.RunLimit{BudgetUSD: 0.5}},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"--db", dbPath, "best", "--model", "resnet50", "--machine", "all", "--train", "to-target"}, tc.flags...)
		if code := RunCLI(ctx, args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("best %v: exit %d: %s", tc.flags, code, errOut.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		bestSays := lines[len(lines)-1]
		windowSays := tc.limit.Answer(curves, tc.limit.Rank(curves))
		if windowSays != bestSays || !strings.Contains(windowSays, "resnet50 on ") {
			t.Errorf("%v:\nbest:   %s\nwindow: %s", tc.flags, bestSays, windowSays)
		}
	}
}
