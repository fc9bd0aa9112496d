package charts

import (
	"fmt"
	"math"
	"strings"

	"cnntime/predictor"
)

// Metric is what the curves chart puts on its y axis.
type Metric string

// The metrics, in the order a menu offers them.
const (
	MetricTotal      Metric = "total"      // total training time, hours
	MetricIter       Metric = "iter"       // time per iteration, milliseconds
	MetricEpoch      Metric = "epoch"      // time per epoch, minutes
	MetricThroughput Metric = "throughput" // images per second
	MetricCost       Metric = "cost"       // training cost, US dollars
)

// Metrics lists every metric in menu order.
func Metrics() []Metric {
	return []Metric{MetricTotal, MetricIter, MetricEpoch, MetricThroughput, MetricCost}
}

// ParseMetric accepts a metric's name ("total", "iter", "epoch", "throughput", "cost").
func ParseMetric(s string) (Metric, error) {
	for _, m := range Metrics() {
		if string(m) == strings.ToLower(strings.TrimSpace(s)) {
			return m, nil
		}
	}
	names := make([]string, 0, len(Metrics()))
	for _, m := range Metrics() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("unknown metric %q: use one of %s", s, strings.Join(names, ", "))
}

// Label is the axis label, with the unit.
func (m Metric) Label() string {
	switch m {
	case MetricIter:
		return "time per iteration (ms)"
	case MetricEpoch:
		return "time per epoch (min)"
	case MetricThroughput:
		return "throughput (images/s)"
	case MetricCost:
		return "training cost (USD)"
	default:
		return "total training time (h)"
	}
}

// Title is the metric's short name for menus.
func (m Metric) Title() string {
	switch m {
	case MetricIter:
		return "Time per iteration"
	case MetricEpoch:
		return "Epoch time"
	case MetricThroughput:
		return "Images per second"
	case MetricCost:
		return "Cost"
	default:
		return "Total time"
	}
}

// Value is the point's value of the metric in the unit of Label, and whether it is
// known: points that do not fit in memory, or whose value was not predicted, have none.
func (m Metric) Value(p predictor.Point) (float64, bool) {
	if !p.Fits {
		return 0, false
	}
	var v float64
	switch m {
	case MetricIter:
		v = p.IterMS
	case MetricEpoch:
		v = p.EpochS / 60
	case MetricThroughput:
		v = p.ImagesPerS
	case MetricCost:
		v = p.CostUSD
	default:
		v = p.TotalS / 3600
	}
	return v, v > 0 && !isBad(v)
}

// maxLowError caps the relative error on the side where it would reach zero time (or
// infinite throughput): an error of 90% or more is drawn as 90% on that side, which
// keeps the band drawable on a logarithmic axis. The other side is not capped.
const maxLowError = 0.9

// Range is where the point's value of the metric may lie given its expected error
// (ErrorPct, ± percent of the iteration time; for the total time and cost of a run to
// a target, RunErrorPct, which adds the epochs' error), in the unit of Label. Times and cost
// scale with the iteration time, v·(1−e) to v·(1+e); images per second scale with
// its inverse, v/(1+e) to v/(1−e). Where ErrorPct is 0 (or not a number) lo and hi
// equal the value; ok is false where the value itself is not known.
func (m Metric) Range(p predictor.Point) (lo, hi float64, ok bool) {
	v, ok := m.Value(p)
	if !ok {
		return 0, 0, false
	}
	e := p.ErrorPct / 100
	if m == MetricTotal || m == MetricCost || m == "" {
		e = p.RunErrorPct() / 100 // to a target, the epochs' error too
	}
	if !(e > 0) || isBad(e) {
		return v, v, true
	}
	low := math.Min(e, maxLowError)
	if m == MetricThroughput {
		return v / (1 + e), v / (1 - low), true
	}
	return v * (1 - low), v * (1 + e), true
}
