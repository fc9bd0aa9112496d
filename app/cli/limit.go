package cli

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/app/numfmt"
)

// runLimit is best's --deadline or --budget: the question "which machine is the
// cheapest that finishes in time", or "the fastest within the money".
type runLimit struct {
	budget   float64       // USD; 0: none
	deadline time.Duration // 0: none
}

func (l runLimit) set() bool { return l.budget > 0 || l.deadline > 0 }

// meets reports whether a row's best run meets the limit: in time for a deadline,
// at a known cost within a budget.
func (l runLimit) meets(r BestRow) bool {
	b := r.Best
	if b == nil || b.TotalS == nil {
		return false
	}
	if l.deadline > 0 && *b.TotalS > l.deadline.Seconds() {
		return false
	}
	if l.budget > 0 && (b.CostUSD == nil || *b.CostUSD > l.budget) {
		return false
	}
	return true
}

// rank marks each row with whether it meets the limit and returns the rows' order:
// those that meet it first (under a deadline the cheapest first, a cost unknown
// last; under a budget the fastest first), then the others fastest first, then those
// with no run at all. Ties keep the rows' order.
func (l runLimit) rank(rows []BestRow) []int {
	order := make([]int, len(rows))
	for i := range rows {
		order[i] = i
		m := l.meets(rows[i])
		rows[i].Meets = &m
	}
	// A machine whose host CPU nobody named is ranked at the slow end of its range
	// (predictor.Point.RankTotalS): it never outranks a named one on the reference core.
	slow := func(r BestRow) float64 {
		if r.Best.HostSlowPct == nil {
			return 1
		}
		return 1 + *r.Best.HostSlowPct/100
	}
	total := func(r BestRow) float64 {
		if r.Best == nil || r.Best.TotalS == nil {
			return math.Inf(1)
		}
		return *r.Best.TotalS * slow(r)
	}
	cost := func(r BestRow) float64 {
		if r.Best == nil || r.Best.CostUSD == nil {
			return math.Inf(1)
		}
		return *r.Best.CostUSD * slow(r)
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := rows[i], rows[j]
		if *a.Meets != *b.Meets {
			if *a.Meets {
				return -1
			}
			return 1
		}
		if *a.Meets && l.deadline > 0 {
			return cmp.Or(cmp.Compare(cost(a), cost(b)), cmp.Compare(total(a), total(b)))
		}
		return cmp.Or(cmp.Compare(total(a), total(b)), cmp.Compare(cost(a), cost(b)))
	})
	return order
}

// permute is xs in order (nil stays nil).
func permute[T any](xs []T, order []int) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(order))
	for i, j := range order {
		out[i] = xs[j]
	}
	return out
}

// what is the limit in words: "within 24h", "within $100".
func (l runLimit) what() string {
	var parts []string
	if l.deadline > 0 {
		parts = append(parts, "within "+duration(l.deadline.Seconds()))
	}
	if l.budget > 0 {
		parts = append(parts, "within "+numfmt.USD(l.budget))
	}
	return strings.Join(parts, " and ")
}

// writeAnswer prints the answer to the limit's question under best's table, from the
// ranked rows: the first that meets it, with what it assumed, and how sure the
// deadline is (the upper end of the run's band); or that none meets it.
func (l runLimit) writeAnswer(env *Env, rows []BestRow) {
	if !l.set() || len(rows) == 0 {
		return
	}
	kind := "Cheapest"
	if l.deadline == 0 {
		kind = "Fastest"
	}
	top := rows[0]
	if top.Meets == nil || !*top.Meets {
		if top.Best == nil {
			fmt.Fprintf(env.Stdout, "No machine runs it %s: none of them fits a batch.\n", l.what())
			return
		}
		fmt.Fprintf(env.Stdout, "No machine runs it %s; the nearest: %s.\n", l.what(), answerRun(top))
		return
	}
	line := fmt.Sprintf("%s %s: %s.", kind, l.what(), answerRun(top))
	b := top.Best
	if l.deadline > 0 && b.RunErrorPct != nil || l.deadline > 0 && b.ErrorPct != nil {
		band := *b.ErrorPct
		if b.RunErrorPct != nil {
			band = *b.RunErrorPct
		}
		if upper := *b.TotalS * (1 + band/100); upper > l.deadline.Seconds() {
			line += fmt.Sprintf(" Its band's upper end (%s, +%.0f%%) passes the deadline: the next that meets it may be the safer pick.", duration(upper), band)
		}
	}
	n := 0
	for _, r := range rows {
		if r.Meets != nil && *r.Meets {
			n++
		}
	}
	line += fmt.Sprintf(" %d of %d %s meet it.", n, len(rows), map[bool]string{true: "runs", false: "run"}[len(rows) != 1])
	fmt.Fprintln(env.Stdout, line)
}

// answerRun is a best row's run in one line: what, where, the batch and epochs, the
// time and cost, and the host the loader's pace assumed.
func answerRun(r BestRow) string {
	b := r.Best
	s := fmt.Sprintf("%s on %s (%s), batch %s", r.Model, r.Machine, app.DeviceText(r.deviceID(), r.GPUCount), countText(b.Batch))
	if b.Epochs != nil {
		s += fmt.Sprintf(", %.1f epochs", *b.Epochs)
	}
	s += ", " + duration(*b.TotalS)
	if b.CostUSD != nil {
		s += ", " + numfmt.USD(*b.CostUSD)
	}
	if b.Host != nil {
		s += ", host " + b.Host.Text()
	}
	return s
}
