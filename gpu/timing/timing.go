package timing

import (
	"fmt"
	"math"
	"time"
)

// Warm-up and batching targets.
const (
	WarmupMS   = 100.0 // run the kernel for at least this much GPU time before timing it
	MinWarmup  = 2     // in at least this many samples
	MaxWarmup  = 20000 // samples at most: a kernel that never adds up to the target (it cannot: a sample is ≥ 1 run)
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

// Warm reports whether warm-up is over after samples samples (each RunsPerSample runs
// back to back, as the timed ones) taking elapsedMS of GPU time in all, for a target
// from WarmupTarget. The target is GPU time, whatever the kernel's size: a kernel of a
// few microseconds warms up over tens of thousands of runs, so the clocks have risen
// by the time it is timed (run by run, a thousand runs were milliseconds of work).
func Warm(samples int, elapsedMS, targetMS float64) bool {
	return samples >= MaxWarmup || (samples >= MinWarmup && elapsedMS >= targetMS)
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

// HostBoundShare is the share of a sample's GPU time at which the host's issuing of its
// runs may be what the sample measured: the GPU ran out of queued work and waited.
const HostBoundShare = 0.8

// HostBound reports whether a sample whose k runs the host took hostMS to issue, and
// the GPU eventMS to run (between its events), may read the host's issue rate rather
// than the kernel's time: the host took at least HostBoundShare of the GPU's time.
func HostBound(hostMS, eventMS float64) bool {
	return eventMS > 0 && hostMS >= HostBoundShare*eventMS
}

// Spin is how long the spin kernel queued before a sample's start event keeps the GPU
// busy, so that the host has issued every run of the sample before the first one
// starts and the GPU runs them back to back (NVBench's method): the host's issue time
// of a sample hostMS with a margin, at least MinSpinMS (the launch itself), at most
// MaxSpinMS.
func Spin(hostMS float64) float64 {
	return min(max(1.5*hostMS+MinSpinMS, MinSpinMS), MaxSpinMS)
}

// Bounds of the spin.
const (
	MinSpinMS = 0.05
	MaxSpinMS = 50.0
)

// SpinCycles is Spin in clock cycles of an SM clocked at mhz (its boost clock: the
// spin then lasts at least as long at a lower clock).
func SpinCycles(hostMS float64, mhz int) int64 {
	return int64(math.Ceil(Spin(hostMS) * 1e3 * float64(max(mhz, 1))))
}

// L2Resident reports whether a kernel whose buffers total bufferBytes fits in an L2 of
// l2Bytes: timed back to back, each run would then read what the previous one left in
// the cache, faster than in a training step, where other layers' data pass through the
// L2 between two runs of a layer. Such a kernel is timed one run per sample after a
// flush of the L2 (FlushBytes written), as NVBench does. An unknown L2 (0) is never
// resident.
func L2Resident(bufferBytes, l2Bytes int64) bool {
	return l2Bytes > 0 && bufferBytes > 0 && bufferBytes <= l2Bytes
}

// FlushBytes is what to write to evict an L2 of l2Bytes: twice its size.
func FlushBytes(l2Bytes int64) int64 { return 2 * l2Bytes }

// Notes on a measurement, which say how to read its time.
const (
	// NoteHostBound: the host issued the runs in at least HostBoundShare of their GPU
	// time, and no spin kernel held them back: the time may be the launch rate's.
	NoteHostBound = "host-bound"
	// NoteL2Flushed: the kernel's buffers fit in the L2, which was flushed before each run.
	NoteL2Flushed = "l2-flushed"
	// NoteL2Hot: the kernel's buffers fit in the L2 and it could not be flushed: the
	// time is of a warm cache, faster than in a step.
	NoteL2Hot = "l2-hot"
)

// HostNote is the note for a measurement whose slowest-issued sample took hostMS to
// issue and eventMS on the GPU, with or without a spin kernel before it: "" when the
// time is the GPU's. With a spin the runs were all queued before the first started, so
// the time is the GPU's whatever the host's rate.
func HostNote(hostMS, eventMS float64, spun bool) string {
	if !spun && HostBound(hostMS, eventMS) {
		return NoteHostBound
	}
	return ""
}

// Throttle watches the SM clock during a sweep and says when the GPU starts or stops
// throttling for power or heat, once the change has lasted: layers that hit the power
// cap (tensor-core convolutions) alternate with memory-bound ones that do not, and a
// warning at every flip would say nothing. A change lasts when it is seen in Lasting
// observations in a row spanning at least LastingFor.
type Throttle struct {
	Lasting    int           // observations in a row; 0: 3
	LastingFor time.Duration // and at least this long; 0: 2 s
	peak       uint
	throttled  bool
	since      time.Time // when the current run of contrary observations began
	streak     int
}

// Observe takes one reading at now: the SM clock in MHz and whether the driver names a
// power or thermal slowdown. It returns a warning when the state changed and the change
// has lasted; "" otherwise.
func (t *Throttle) Observe(now time.Time, mhz uint, slowdown bool) string {
	t.peak = max(t.peak, mhz)
	low := slowdown && float64(mhz) < 0.9*float64(t.peak)
	if low == t.throttled {
		t.streak = 0
		return ""
	}
	if t.streak == 0 {
		t.since = now
	}
	t.streak++
	lasting, lastingFor := t.Lasting, t.LastingFor
	if lasting <= 0 {
		lasting = 3
	}
	if lastingFor <= 0 {
		lastingFor = 2 * time.Second
	}
	if t.streak < lasting || now.Sub(t.since) < lastingFor {
		return ""
	}
	t.throttled, t.streak = low, 0
	if low {
		return fmt.Sprintf("the GPU is throttling: its SM clock has stayed below %d MHz (now %d MHz) for %s with a power or thermal slowdown; measurements taken now are slower than its best",
			t.peak*9/10, mhz, now.Sub(t.since).Round(time.Second))
	}
	return fmt.Sprintf("the GPU's SM clock is back at %d MHz", mhz)
}
