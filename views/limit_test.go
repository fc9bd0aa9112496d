package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cnntime/app"
)

// The Run tab's Deadline and Budget rank the results and answer, above the table,
// which run is the cheapest in time (the fastest within the money); what does not read
// is marked and changes nothing; the limit is remembered.
func TestRunTabLimitAnswersAndRefusesBadInput(t *testing.T) {
	mw := newTestWindow(t)
	if err := mw.Session.Update(func(s *app.SessionSettings) {
		s.Models = []string{"resnet50"}
		s.Machines = []string{"aws/p3.2xlarge", "gcp/a2-highgpu-1g", "lambda/gpu_1x_a10"}
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, mw)
	// The fake's machines are ever faster down the list: p3 the slowest and dearest.
	total := map[string]float64{}
	for _, c := range mw.Session.State().Curves {
		total[c.Machine] = c.Points[c.Best].TotalS
	}
	if !(total["aws/p3.2xlarge"] > total["gcp/a2-highgpu-1g"] && total["gcp/a2-highgpu-1g"] > total["lambda/gpu_1x_a10"]) {
		t.Fatalf("fake totals %v: want p3 > a2 > a10", total)
	}
	between := fmt.Sprintf("%ds", int((total["aws/p3.2xlarge"]+total["gcp/a2-highgpu-1g"])/2))
	tooShort := fmt.Sprintf("%ds", int(total["lambda/gpu_1x_a10"]/2))

	type shown struct {
		answer  string
		status  string
		visible bool
		order   []string
		missed  []string
		limit   app.RunLimit
		invalid error
	}
	enter := func(field func() string, text string) shown {
		settleAfter := func() {
			if err := mw.Session.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		var s shown
		ui(func() {
			if field() == "deadline" {
				mw.Selection.Limit.Deadline.SetText(text)
				s.invalid = mw.Selection.Limit.Deadline.Validate()
			} else {
				mw.Selection.Limit.Budget.SetText(text)
				s.invalid = mw.Selection.Limit.Budget.Validate()
			}
		})
		settleAfter()
		onUI(mw, func() {
			s.answer, s.visible, s.status = mw.Results.Answer.Text, mw.Results.Answer.Visible(), mw.status.label.Text
			for _, r := range mw.Results.Rows() {
				s.order = append(s.order, r.Machine)
				if mw.Results.Missed(r) {
					s.missed = append(s.missed, r.Machine)
				}
			}
		})
		s.limit = mw.Session.State().View.Limit
		return s
	}
	deadline := func() string { return "deadline" }
	budget := func() string { return "budget" }

	got := enter(deadline, between)
	want := time.Duration(int((total["aws/p3.2xlarge"]+total["gcp/a2-highgpu-1g"])/2)) * time.Second
	if got.invalid != nil || got.limit.Deadline != want || !got.visible ||
		!strings.HasPrefix(got.answer, "Cheapest within ") || !strings.Contains(got.answer, ": resnet50 on lambda/gpu_1x_a10 (") ||
		!strings.HasSuffix(got.answer, " 2 of 3 runs meet it.") ||
		strings.Join(got.order, " ") != "lambda/gpu_1x_a10 gcp/a2-highgpu-1g aws/p3.2xlarge" || strings.Join(got.missed, " ") != "aws/p3.2xlarge" ||
		!strings.HasPrefix(got.status, got.answer+" ") { // the status line leads with the answer
		t.Errorf("deadline %s: %+v", between, got)
	}

	for _, bad := range []struct{ text, why string }{{"abc", "not a duration: e.g. 24h, 2d"}, {"-2h", "negative: e.g. 24h, or none"}, {"24", "not a duration"}} {
		s := enter(deadline, bad.text)
		if s.invalid == nil || !strings.Contains(s.invalid.Error(), bad.why) || s.limit.Deadline != want || s.answer != got.answer {
			t.Errorf("deadline %q: marked %v, limit %+v, answer %q; want it refused (%s) and nothing changed", bad.text, s.invalid, s.limit, s.answer, bad.why)
		}
	}

	s := enter(deadline, tooShort)
	if !strings.HasPrefix(s.answer, "No machine runs it within ") || !strings.Contains(s.answer, "the nearest: resnet50 on lambda/gpu_1x_a10") || len(s.missed) != 3 {
		t.Errorf("deadline %s: %+v; want no machine, the nearest named", tooShort, s)
	}

	s = enter(deadline, "")
	if s.limit.Set() || s.visible || len(s.missed) != 0 || strings.HasPrefix(s.status, "Cheapest") || strings.HasPrefix(s.status, "No machine") {
		t.Errorf("deadline emptied: %+v; want no limit and no answer", s)
	}

	s = enter(budget, "$ -5")
	if s.invalid == nil || s.limit.Set() {
		t.Errorf("budget -5: marked %v, limit %+v; want it refused", s.invalid, s.limit)
	}
	s = enter(budget, "abc")
	if s.invalid == nil || !strings.Contains(s.invalid.Error(), "not a number: e.g. 100") || s.limit.Set() {
		t.Errorf("budget abc: marked %v, limit %+v; want it refused", s.invalid, s.limit)
	}
	s = enter(budget, "1,000")
	if s.invalid != nil || s.limit.BudgetUSD != 1000 || !strings.HasPrefix(s.answer, "Fastest within $1,000: resnet50 on lambda/gpu_1x_a10 (") {
		t.Errorf("budget 1,000: %+v", s)
	}
	if p := mw.App.Preferences().String(app.PrefBudget); p != "1000" {
		t.Errorf("the budget is remembered as %q, want 1000", p)
	}
}
