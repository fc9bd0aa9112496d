package timing

import (
	"math"
	"time"
)

// Warm-up and batching targets.
const (
	WarmupMS   = 100.0 // run the kernel for at least this long before timing it
	MinWarmup  = 2     // and at least this many times
	MaxWarmup  = 1000  // but never more
	BatchMS    = 2.0   // each timed sample spans at least this much GPU time
	MaxPerTime = 200   // runs between one pair of events at most
)

// BusyWarmupMS is the warm-up when the GPU was busy a moment ago (the previous item of
// a sweep): its clocks are up already, the kernel only needs its caches and code loaded.
const BusyWarmupMS = 10.0

// WarmupTarget is how long to warm up given how long the GPU has been idle: the full
// WarmupMS after a pause (or at the start), which lets the clocks climb back.
func WarmupTarget(idle time.Duration) float64 {
	if idle >= 0 && idle < time.Second {
		return BusyWarmupMS
	}
	return WarmupMS
}

// Warm reports whether warm-up is over after runs runs taking elapsedMS in all, for a
// target from WarmupTarget.
func Warm(runs int, elapsedMS, targetMS float64) bool {
	return runs >= MaxWarmup || (runs >= MinWarmup && elapsedMS >= targetMS)
}

// RunsPerSample is K: how many runs to put between the events of one sample given one
// run's estimated time, so each sample spans BatchMS of GPU time (at least 1).
func RunsPerSample(estimateMS float64) int {
	if !(estimateMS > 0) || math.IsInf(estimateMS, 0) {
		return MaxPerTime
	}
	k := int(math.Ceil(BatchMS / estimateMS))
	return max(1, min(k, MaxPerTime))
}
