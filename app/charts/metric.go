package charts

import (
	"fmt"
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
