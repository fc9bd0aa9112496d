package app

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"cnntime/app/numfmt"
	"cnntime/predictor"
)

// RunLimit is a deadline or a budget on a run, and the question it asks of a
// prediction: which machine is the cheapest that finishes in time, or the fastest
// within the money. best's --deadline and --budget and the window's Deadline and
// Budget (Run tab) both ask it here, so both give the same answer.
type RunLimit struct {
	Deadline  time.Duration // 0: none
	BudgetUSD float64       // 0: none
}

// Set reports whether the limit asks anything.
func (l RunLimit) Set() bool { return l.BudgetUSD > 0 || l.Deadline > 0 }

// Limits on a limit: a year and a billion dollars are beyond any training run, and
// far short of where a duration or a float stops being exact.
const (
	MaxDeadline  = 366 * 24 * time.Hour
	MaxBudgetUSD = 1e9
)

// LimitError is a deadline or budget refused: What names it ("deadline", "budget"),
// Text is what was given and Why what is wrong with it and what to give instead, short
// enough for the line under the window's field.
type LimitError struct{ What, Text, Why string }

func (e *LimitError) Error() string { return fmt.Sprintf("%s %q is %s", e.What, e.Text, e.Why) }

// The reasons a LimitError gives.
const (
	notADuration = "not a duration: e.g. 24h, 2d"
	notANumber   = "not a number: e.g. 100"
)

// Check says what is wrong with a limit and how to fix it (a *LimitError).
func (l RunLimit) Check() error {
	deadline := func(why string) error { return &LimitError{"deadline", DeadlineWords(l.Deadline), why} }
	budget := func(why string) error {
		return &LimitError{"budget", strconv.FormatFloat(l.BudgetUSD, 'f', -1, 64), why}
	}
	switch {
	case l.Deadline < 0:
		return deadline("negative: e.g. 24h, or none")
	case l.Deadline > MaxDeadline:
		return deadline("over a year: e.g. 24h")
	case math.IsNaN(l.BudgetUSD) || math.IsInf(l.BudgetUSD, 0):
		return budget(notANumber)
	case l.BudgetUSD < 0:
		return budget("negative: e.g. 100, or none")
	case l.BudgetUSD > MaxBudgetUSD:
		return budget("over a billion dollars")
	}
	return nil
}

// DeadlineWords is a duration as a person writes it: "24h", "-2h", "36h30m", "90s".
func DeadlineWords(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParseDeadline reads a deadline as a person types it: a Go duration ("24h", "36h30m",
// "90m") or a number of days ("2d", "1.5d"); "" is none (0).
func ParseDeadline(text string) (time.Duration, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || !decimalText(days) {
			return 0, &LimitError{"deadline", text, notADuration}
		}
		d = time.Duration(n * float64(24*time.Hour))
		if n > float64(MaxDeadline/(24*time.Hour)) {
			d = MaxDeadline + 1
		}
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, &LimitError{"deadline", text, notADuration}
		}
	}
	if err := (RunLimit{Deadline: d}).Check(); err != nil {
		return 0, err
	}
	return d, nil
}

// ParseBudget reads a budget in US dollars as a person types it: "100", "$1,250.50";
// "" is none (0).
func ParseBudget(text string) (float64, error) {
	s := strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(text), "$"), ",", "")
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !decimalText(s) {
		return 0, &LimitError{"budget", text, notANumber}
	}
	if err := (RunLimit{BudgetUSD: v}).Check(); err != nil {
		return 0, err
	}
	return v, nil
}

// decimalText reports whether s is a plain decimal number ("12", "-1.5"): what
// strconv.ParseFloat reads beyond that ("inf", "0x1p3", "1e3", "1_0") nobody means.
func decimalText(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	digits, dot := 0, false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// Meets reports whether a curve's best run meets the limit: in time for a deadline, at
// a known cost within a budget. A curve with no run meets nothing.
func (l RunLimit) Meets(c *predictor.Curve) bool {
	p, ok := bestPoint(c)
	return ok && l.pointMeets(c, p)
}

// pointMeets reports whether the run at p, one of c's points, meets the limit.
func (l RunLimit) pointMeets(c *predictor.Curve, p predictor.Point) bool {
	if l.Deadline > 0 && p.TotalS > l.Deadline.Seconds() {
		return false
	}
	if l.BudgetUSD > 0 && (!c.CostKnown || p.CostUSD > l.BudgetUSD) {
		return false
	}
	return true
}

// answerPoint is the run an answer names: the recommended batch's (the batch launch
// writes without --batch, within 1% of the best) when it meets the limit as the best
// does, else the best batch's.
func (l RunLimit) answerPoint(c *predictor.Curve) (predictor.Point, bool) {
	best, ok := bestPoint(c)
	if !ok {
		return best, false
	}
	if rec, ok := RecommendedPoint(c); ok && rec.Batch != best.Batch && (!l.pointMeets(c, best) || l.pointMeets(c, rec)) {
		return rec, true
	}
	return best, true
}

// bestPoint is a curve's best run, if it has one.
func bestPoint(c *predictor.Curve) (predictor.Point, bool) {
	if c.Best < 0 || c.Best >= len(c.Points) || !c.Points[c.Best].Fits {
		return predictor.Point{}, false
	}
	return c.Points[c.Best], true
}

// LimitRanking is a prediction's curves ranked by a limit: Order lists the curves'
// indices, best answer first; Meets[i] says whether curve i meets the limit.
type LimitRanking struct {
	Order []int
	Meets []bool
}

// Rank orders the curves by the limit: those that meet it first (under a deadline the
// cheapest first, a cost unknown last; under a budget alone the fastest first), then
// the others fastest first, then those with no run at all. A machine whose host CPU
// nobody named is ranked at the slow end of its range (predictor.Point.RankTotalS), so
// it never outranks a named one on the reference core standing in for its CPU. Ties
// keep the curves' order.
func (l RunLimit) Rank(curves []predictor.Curve) LimitRanking {
	r := LimitRanking{Order: make([]int, len(curves)), Meets: make([]bool, len(curves))}
	total, cost := make([]float64, len(curves)), make([]float64, len(curves))
	for i := range curves {
		c := &curves[i]
		r.Order[i], r.Meets[i] = i, l.Meets(c)
		total[i], cost[i] = math.Inf(1), math.Inf(1)
		if p, ok := bestPoint(c); ok {
			slow := 1 + p.HostSlowPct/100
			total[i] = p.TotalS * slow
			if c.CostKnown {
				cost[i] = p.CostUSD * slow
			}
		}
	}
	slices.SortStableFunc(r.Order, func(i, j int) int {
		if r.Meets[i] != r.Meets[j] {
			if r.Meets[i] {
				return -1
			}
			return 1
		}
		if r.Meets[i] && l.Deadline > 0 {
			return cmp.Or(cmp.Compare(cost[i], cost[j]), cmp.Compare(total[i], total[j]))
		}
		return cmp.Or(cmp.Compare(total[i], total[j]), cmp.Compare(cost[i], cost[j]))
	})
	return r
}

// Permute is xs in the ranking's order (nil stays nil): the rows made one per curve
// (best's, the results table's), ranked.
func Permute[T any](xs []T, order []int) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(order))
	for i, j := range order {
		out[i] = xs[j]
	}
	return out
}

// What is the limit in words: "within 24.0 h", "within $100".
func (l RunLimit) What() string {
	var parts []string
	if l.Deadline > 0 {
		parts = append(parts, "within "+numfmt.Seconds(l.Deadline.Seconds()))
	}
	if l.BudgetUSD > 0 {
		parts = append(parts, "within "+numfmt.USD(l.BudgetUSD))
	}
	return strings.Join(parts, " and ")
}

// Answer is the answer to the limit's question, from the ranked curves: the first that
// meets it, with the recipe, epochs and host it assumed, and how sure a deadline is
// (the upper end of the run's band); or that none meets it. "" without a limit or curves.
func (l RunLimit) Answer(curves []predictor.Curve, r LimitRanking) string {
	if !l.Set() || len(r.Order) == 0 {
		return ""
	}
	kind := "Cheapest"
	if l.Deadline == 0 {
		kind = "Fastest"
	}
	top := &curves[r.Order[0]]
	p, ok := l.answerPoint(top)
	if !r.Meets[r.Order[0]] {
		if !ok {
			return fmt.Sprintf("No machine runs it %s: none of them fits a batch.", l.What())
		}
		return fmt.Sprintf("No machine runs it %s; the nearest: %s.", l.What(), AnswerRun(top, p))
	}
	line := fmt.Sprintf("%s %s: %s.", kind, l.What(), AnswerRun(top, p))
	if l.Deadline > 0 {
		band := p.ErrorPct
		if top.Recipe != nil {
			band = p.RunErrorPct()
		}
		if upper := p.TotalS * (1 + band/100); upper > l.Deadline.Seconds() {
			line += fmt.Sprintf(" Its band's upper end (%s, +%.0f%%) passes the deadline: the next that meets it may be the safer pick.", numfmt.Seconds(upper), band)
		}
	}
	n := 0
	for _, m := range r.Meets {
		if m {
			n++
		}
	}
	runs := "runs meet"
	if len(r.Meets) == 1 {
		runs = "run meets"
	}
	return line + fmt.Sprintf(" %d of %d %s it.", n, len(r.Meets), runs)
}

// AnswerRun is the run at p, one of c's points, in one line: what, where, the batch
// (and, when it is the recommended batch rather than the best, how much faster the best
// is) and epochs (to a target, which and by which recipe), the time and cost, and the
// host the loader's pace assumed.
func AnswerRun(c *predictor.Curve, p predictor.Point) string {
	s := fmt.Sprintf("%s on %s (%s), batch %s", c.Model, c.Machine, DeviceText(c.GPU, c.GPUCount), numfmt.Count(int64(p.Batch)))
	if best, ok := bestPoint(c); ok && best.Batch != p.Batch && p.Batch == c.Recommended {
		s += fmt.Sprintf(" (recommended; the best, %s, is %s faster)", numfmt.Count(int64(best.Batch)), fasterText(p.TotalS, best.TotalS))
	}
	s += fmt.Sprintf(", %.1f epochs", p.Epochs)
	if m := c.Recipe; m != nil {
		s += fmt.Sprintf(" to %s (recipe %s)", m.TargetName(), m.Recipe.Name)
	}
	s += ", " + numfmt.Seconds(p.TotalS)
	if c.CostKnown {
		s += ", " + numfmt.USD(p.CostUSD)
	}
	if c.Host != nil {
		s += ", host " + c.Host.Text()
	}
	return s
}

// loadLimit is the remembered deadline and budget; one that does not read is none.
func loadLimit(p Preferences) RunLimit {
	var l RunLimit
	if d, err := ParseDeadline(p.String(PrefDeadline)); err == nil {
		l.Deadline = d
	}
	if b, err := ParseBudget(p.String(PrefBudget)); err == nil {
		l.BudgetUSD = b
	}
	return l
}

// saveLimit remembers the deadline and budget ("" for none).
func saveLimit(p Preferences, l RunLimit) {
	d, b := "", ""
	if l.Deadline > 0 {
		d = DeadlineWords(l.Deadline)
	}
	if l.BudgetUSD > 0 {
		b = strconv.FormatFloat(l.BudgetUSD, 'f', -1, 64)
	}
	p.SetString(PrefDeadline, d)
	p.SetString(PrefBudget, b)
}

// LimitAnswer is the state's curves ranked by its view's limit, with the answer to the
// limit's question (RunLimit.Answer): what the window's Results tab shows. ok is false
// without a limit, or with no curves to rank.
func (st SessionState) LimitAnswer() (r LimitRanking, answer string, ok bool) {
	l := st.View.Limit
	if !l.Set() || len(st.Curves) == 0 {
		return LimitRanking{}, "", false
	}
	r = l.Rank(st.Curves)
	return r, l.Answer(st.Curves, r), true
}

// fasterText is how much less than s the time t is, in words: "0.4%", or "less than
// 0.1%".
func fasterText(s, t float64) string {
	pct := 100 * (s - t) / s
	if pct < 0.05 {
		return "less than 0.1%"
	}
	return fmt.Sprintf("%.1f%%", pct)
}
