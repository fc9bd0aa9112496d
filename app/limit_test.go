package app

import (
	"strings"
	"testing"
	"time"

	"cnntime/predictor"
)

// limitCurve is a curve whose best run takes totalH hours at cost dollars (0: no
// price); totalH 0 is a curve where no batch fits.
func limitCurve(machine string, totalH, cost float64) predictor.Curve {
	c := predictor.Curve{Model: "resnet50", Machine: machine, GPU: "h100-sxm", GPUCount: 1, Best: -1}
	if totalH > 0 {
		c.Points = []predictor.Point{{Batch: 256, Fits: true, TotalS: totalH * 3600, CostUSD: cost, Epochs: 90, ErrorPct: 8}}
		c.Best, c.CostKnown = 0, cost > 0
	}
	return c
}

func rankedText(curves []predictor.Curve, r LimitRanking) string {
	var b strings.Builder
	for k, i := range r.Order {
		if k > 0 && r.Meets[r.Order[k-1]] && !r.Meets[i] {
			b.WriteString("| ")
		}
		b.WriteString(curves[i].Machine + " ")
	}
	return strings.TrimSpace(b.String())
}

func TestRunLimitRanks(t *testing.T) {
	curves := []predictor.Curve{
		limitCurve("slow-cheap", 30, 5),  // misses 24h
		limitCurve("fast-dear", 2, 90),   // meets both
		limitCurve("mid", 12, 20),        // meets both
		limitCurve("unpriced", 5, 0),     // meets the deadline, cost unknown
		limitCurve("none-fits", 0, 0),    // no run
		limitCurve("mid-twin", 12, 20),   // ties keep their order
		limitCurve("slower-dear", 40, 9), // misses
	}
	for _, tc := range []struct {
		limit RunLimit
		want  string
	}{
		{RunLimit{Deadline: 24 * time.Hour}, "mid mid-twin fast-dear unpriced | slow-cheap slower-dear none-fits"},
		{RunLimit{BudgetUSD: 25}, "mid mid-twin slow-cheap slower-dear | fast-dear unpriced none-fits"},
		{RunLimit{BudgetUSD: 25, Deadline: 24 * time.Hour}, "mid mid-twin | fast-dear unpriced slow-cheap slower-dear none-fits"},
		{RunLimit{Deadline: time.Hour}, "| fast-dear unpriced mid mid-twin slow-cheap slower-dear none-fits"},
	} {
		if got := rankedText(curves, tc.limit.Rank(curves)); strings.TrimPrefix(got, "| ") != strings.TrimPrefix(tc.want, "| ") {
			t.Errorf("%+v: ranked %q, want %q", tc.limit, got, tc.want)
		}
	}
}

// A run whose host CPU nobody named is ranked at the slow end of its range: cheaper at
// the reference core standing in, it still comes after a named host's run that is
// cheaper than its slow end.
func TestRunLimitRanksAnAssumedHostAtItsSlowEnd(t *testing.T) {
	assumed, named := limitCurve("assumed", 10, 20), limitCurve("named", 10.5, 21)
	assumed.Points[0].HostSlowPct = 9 // $21.80 and 10.9 h at its slow end
	for _, limit := range []RunLimit{{Deadline: 24 * time.Hour}, {BudgetUSD: 100}} {
		curves := []predictor.Curve{assumed, named}
		if got := rankedText(curves, limit.Rank(curves)); got != "named assumed" {
			t.Errorf("%+v: ranked %q, want named first", limit, got)
		}
	}
}

func TestRunLimitAnswer(t *testing.T) {
	curves := []predictor.Curve{limitCurve("aws/slow", 30, 5), limitCurve("aws/mid", 12, 20), limitCurve("aws/tight", 23, 10)}
	for _, tc := range []struct {
		limit RunLimit
		want  string
	}{
		{RunLimit{}, ""},
		{RunLimit{Deadline: 24 * time.Hour}, "Cheapest within 24.0 h: resnet50 on aws/tight (1×h100-sxm), batch 256, 90.0 epochs, 23.0 h, $10.00. Its band's upper end (24.8 h, +8%) passes the deadline: the next that meets it may be the safer pick. 2 of 3 runs meet it."},
		{RunLimit{Deadline: 13 * time.Hour}, "Cheapest within 13.0 h: resnet50 on aws/mid (1×h100-sxm), batch 256, 90.0 epochs, 12.0 h, $20.00. 1 of 3 runs meet it."},
		{RunLimit{BudgetUSD: 15}, "Fastest within $15.00: resnet50 on aws/tight (1×h100-sxm), batch 256, 90.0 epochs, 23.0 h, $10.00. 2 of 3 runs meet it."},
		{RunLimit{Deadline: time.Hour}, "No machine runs it within 1.0 h; the nearest: resnet50 on aws/mid (1×h100-sxm), batch 256, 90.0 epochs, 12.0 h, $20.00."},
	} {
		if got := tc.limit.Answer(curves, tc.limit.Rank(curves)); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.limit, got, tc.want)
		}
	}
	// The answer names the recommended batch, the one launch writes, when it meets the
	// limit too; else the best batch.
	rec := limitCurve("aws/rec", 20, 30)
	rec.Points = append([]predictor.Point{{Batch: 128, Fits: true, TotalS: 20.1 * 3600, CostUSD: 30.15, Epochs: 88, ErrorPct: 8}}, rec.Points...)
	rec.Best, rec.Recommended = 1, 128
	for _, tc := range []struct {
		limit RunLimit
		want  string
	}{
		{RunLimit{Deadline: 23 * time.Hour}, "Cheapest within 23.0 h: resnet50 on aws/rec (1×h100-sxm), batch 128 (recommended; the best, 256, is 0.5% faster), 88.0 epochs, 20.1 h, $30.15. 1 of 1 run meets it."},
		{RunLimit{Deadline: 20*time.Hour + 3*time.Minute}, "Cheapest within 20.1 h: resnet50 on aws/rec (1×h100-sxm), batch 256, 90.0 epochs, 20.0 h, $30.00. Its band's upper end (21.6 h, +8%) passes the deadline: the next that meets it may be the safer pick. 1 of 1 run meets it."},
		{RunLimit{BudgetUSD: 30.10}, "Fastest within $30.10: resnet50 on aws/rec (1×h100-sxm), batch 256, 90.0 epochs, 20.0 h, $30.00. 1 of 1 run meets it."},
		{RunLimit{Deadline: time.Hour}, "No machine runs it within 1.0 h; the nearest: resnet50 on aws/rec (1×h100-sxm), batch 128 (recommended; the best, 256, is 0.5% faster), 88.0 epochs, 20.1 h, $30.15."},
	} {
		curves := []predictor.Curve{rec}
		if got := tc.limit.Answer(curves, tc.limit.Rank(curves)); got != tc.want {
			t.Errorf("recommended, %+v:\n got %q\nwant %q", tc.limit, got, tc.want)
		}
	}

	none := []predictor.Curve{limitCurve("aws/none", 0, 0)}
	l := RunLimit{BudgetUSD: 10}
	if got, want := l.Answer(none, l.Rank(none)), "No machine runs it within $10.00: none of them fits a batch."; got != want {
		t.Errorf("no run: %q, want %q", got, want)
	}
}

func TestParseLimit(t *testing.T) {
	for _, tc := range []struct {
		text string
		want time.Duration
		err  string
	}{
		{"", 0, ""},
		{" 24h ", 24 * time.Hour, ""},
		{"36h30m", 36*time.Hour + 30*time.Minute, ""},
		{"1.5d", 36 * time.Hour, ""},
		{"abc", 0, `deadline "abc" is not a duration`},
		{"24", 0, `deadline "24" is not a duration`},
		{"-2h", 0, "is negative"},
		{"-1d", 0, "is negative"},
		{"400d", 0, "over a year"},
		{"1000000000d", 0, "over a year"},
		{"infd", 0, "not a duration"},
	} {
		got, err := ParseDeadline(tc.text)
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseDeadline(%q) = %v, %v; want %v, %q", tc.text, got, err, tc.want, tc.err)
		}
	}
	for _, tc := range []struct {
		text string
		want float64
		err  string
	}{
		{"", 0, ""},
		{"100", 100, ""},
		{"$1,250.50", 1250.5, ""},
		{"abc", 0, `budget "abc" is not a number`},
		{"inf", 0, "not a number"},
		{"1e3", 0, "not a number"},
		{"-5", 0, "is negative"},
		{"2000000000", 0, "over a billion dollars"},
	} {
		got, err := ParseBudget(tc.text)
		if tc.err == "" && (err != nil || got != tc.want) || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseBudget(%q) = %v, %v; want %v, %q", tc.text, got, err, tc.want, tc.err)
		}
	}
}

// The window's limit is the view's: it is remembered like the other choices, a bad one
// changes nothing, and the state answers it as RunLimit does.
func TestSessionLimitIsRememberedAndAnswered(t *testing.T) {
	prefs := &mapPrefs{}
	s := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	if err := s.Update(func(st *SessionSettings) {
		st.Models, st.Machines, st.BatchMin, st.BatchMax = []string{"resnet50"}, []string{"aws/a", "aws/b"}, 8, 64
	}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s)
	if _, _, ok := s.State().LimitAnswer(); ok {
		t.Error("an answer without a limit")
	}
	if err := s.UpdateView(func(v *ChartSettings) { v.Limit = RunLimit{Deadline: 36 * time.Hour} }); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []RunLimit{{Deadline: -time.Hour}, {BudgetUSD: -5}} {
		if err := s.UpdateView(func(v *ChartSettings) { v.Limit = bad }); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("limit %+v: %v, want it refused as negative", bad, err)
		}
	}
	waitIdle(t, s)
	st := s.State()
	if st.View.Limit != (RunLimit{Deadline: 36 * time.Hour}) {
		t.Errorf("limit after refused changes = %+v", st.View.Limit)
	}
	r, answer, ok := st.LimitAnswer()
	// The fake's best batch is 64 on both machines, unpriced: 90 epochs × 1000/64 s = 23.4 min.
	want := "Cheapest within 36.0 h: resnet50 on aws/a (1×), batch 64, 0.0 epochs, 23.4 min. 2 of 2 runs meet it."
	if !ok || answer != want || len(r.Order) != 2 || !r.Meets[0] || !r.Meets[1] {
		t.Errorf("answer %v %q %+v,\nwant %q", ok, answer, r, want)
	}
	s.Close()

	again := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	defer again.Close()
	if got := again.State().View.Limit; got != (RunLimit{Deadline: 36 * time.Hour}) {
		t.Errorf("remembered limit = %+v", got)
	}
	prefs.SetString(PrefBudget, "abc")
	third := NewSession(&fakeBackend{}, prefs, time.Millisecond)
	defer third.Close()
	if got := third.State().View.Limit; got != (RunLimit{Deadline: 36 * time.Hour}) {
		t.Errorf("a budget that does not read gave %+v", got)
	}
}

func TestDeadlineWords(t *testing.T) {
	for d, want := range map[time.Duration]string{24 * time.Hour: "24h", -2 * time.Hour: "-2h", 36*time.Hour + 30*time.Minute: "36h30m",
		30 * time.Minute: "30m", 90 * time.Second: "1m30s", time.Hour + 10*time.Minute: "1h10m"} {
		if got := DeadlineWords(d); got != want {
			t.Errorf("DeadlineWords(%v) = %q, want %q", d, got, want)
		}
		if back, err := ParseDeadline(DeadlineWords(d)); d > 0 && (err != nil || back != d) {
			t.Errorf("ParseDeadline(%q) = %v, %v; want %v", DeadlineWords(d), back, err, d)
		}
	}
}
