package timing

import "math"

// Warm-up and batching targets.
const (
	WarmupMS   = 100.0 // run the kernel for at least this long before timing it
	MinWarmup  = 2     // and at least this many times
	MaxWarmup  = 1000  // but never more
	BatchMS    = 2.0   // each timed sample spans at least this much GPU time
	MaxPerTime = 200   // runs between one pair of events at most
)

// Warm reports whether warm-up is over after runs runs taking elapsedMS in all.
func Warm(runs int, elapsedMS float64) bool {
	return runs >= MaxWarmup || (runs >= MinWarmup && elapsedMS >= WarmupMS)
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
