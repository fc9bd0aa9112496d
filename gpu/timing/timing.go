package timing

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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

// L2Resident reports whether a phase that touches phaseBytes (the buffers its kernels
// read and write, not everything its layer holds) fits in an L2 of l2Bytes: timed back to
// back, each run would then read what the previous one left in the cache, faster than in
// a training step, where other layers' data pass through the L2 between two runs of a
// layer. Such a phase is timed one run per sample after a flush of the L2 (FlushBytes
// written), as NVBench does. An unknown L2 (0) is never resident.
func L2Resident(phaseBytes, l2Bytes int64) bool {
	return l2Bytes > 0 && phaseBytes > 0 && phaseBytes <= l2Bytes
}

// L2 modes of a sweep: how a phase whose data fit in the L2 finds it before each run.
const (
	// L2Cold flushes the L2 before each run: nothing of the phase is cached.
	L2Cold = "cold"
	// L2ProducerHot flushes the L2, then reads the phase's input (the forward's x, a
	// backward's dy) back into it, as the layer before it in a training step has just
	// written it: what a step's kernel finds.
	L2ProducerHot = "producer-hot"
)

// L2Modes are the modes a sweep may time in.
var L2Modes = []string{L2Cold, L2ProducerHot}

// CheckL2Mode accepts "" (cold), cold or producer-hot.
func CheckL2Mode(mode string) error {
	switch mode {
	case "", L2Cold, L2ProducerHot:
		return nil
	}
	return fmt.Errorf("unknown L2 mode %q: use cold or producer-hot", mode)
}

// L2Decision is how one phase is timed against the L2, and the note its row carries.
type L2Decision struct {
	Flush bool   // flush the L2 before each run, one run per sample
	Touch bool   // then read the phase's input into the L2 (producer-hot)
	Note  string // every row says which: NoteL2Flushed, NoteL2ProducerHot, NoteL2Hot, NoteL2Beyond or NoteL2Unknown
}

// DecideL2 decides how a phase touching phaseBytes is timed on an L2 of l2Bytes in
// mode, where a flush buffer could be had (canFlush) and the input can be read back
// (canTouch: cnntime's kernels are loaded). A phase larger than the L2 runs back to back
// (each run streams through more than the cache holds).
func DecideL2(phaseBytes, l2Bytes int64, mode string, canFlush, canTouch bool) L2Decision {
	switch {
	case l2Bytes <= 0:
		return L2Decision{Note: NoteL2Unknown}
	case !L2Resident(phaseBytes, l2Bytes):
		return L2Decision{Note: NoteL2Beyond}
	case !canFlush:
		return L2Decision{Note: NoteL2Hot}
	case mode == L2ProducerHot && canTouch:
		return L2Decision{Flush: true, Touch: true, Note: NoteL2ProducerHot}
	}
	return L2Decision{Flush: true, Note: NoteL2Flushed}
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
	// NoteL2ProducerHot: the phase fits in the L2, which was flushed and then given the
	// phase's input, as a step's previous layer leaves it.
	NoteL2ProducerHot = "l2-producer-hot"
	// NoteL2Beyond: the phase touches more than the L2 holds: timed back to back.
	NoteL2Beyond = "l2-beyond"
	// NoteL2Unknown: the GPU did not say its L2's size: timed back to back.
	NoteL2Unknown = "l2-unknown"
	// NoteNCHWKernel: a channels_last sweep's layer that cnntime's kernels index as NCHW
	// (pooling, concat, bf16 batch norm, ...): the traffic is the layer's, the access
	// pattern not PyTorch's NHWC kernels'.
	NoteNCHWKernel = "nchw-kernel"
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

// Hold is what keeps the GPU from starting a sample's runs before the host has queued
// them all: the spin kernel (cnntime's kernels loaded), else a stream wait on a flag in
// host memory that the host sets once it has issued the sample (cuStreamWaitValue32: no
// compiled kernel needed), else nothing.
type Hold string

const (
	HoldSpin   Hold = "spin"
	HoldStream Hold = "stream-wait"
	HoldNone   Hold = ""
)

// ChooseHold is the hold a backend uses: the spin kernel where it is loaded, else the
// stream wait where the driver offers it.
func ChooseHold(spinKernel, streamWait bool) Hold {
	switch {
	case spinKernel:
		return HoldSpin
	case streamWait:
		return HoldStream
	}
	return HoldNone
}

// StreamWaitTimeout is how long a stream wait may hold the GPU before a watchdog
// releases it, should the host block while issuing (a full launch queue): the sample is
// then uncovered and taken again.
const StreamWaitTimeout = 200 * time.Millisecond

// Covered reports whether a sample's runs were all queued before the first started: a
// hold was in place for at least the host's issue time (a stream wait, released by the
// host itself, covers whatever the host took).
func Covered(h Hold, hostMS, spinMS float64) bool {
	switch h {
	case HoldSpin:
		return hostMS <= spinMS
	case HoldStream:
		return hostMS < float64(StreamWaitTimeout)/float64(time.Millisecond)
	}
	return false
}

// MaxRetakes is how many times a sample the hold did not cover is taken again, each
// behind a hold sized from the host time just seen, before it is kept and the row noted
// host-bound (the first H200 run kept 98 such rows' samples as they were).
const MaxRetakes = 3

// Retake says whether a timed sample is taken again: it was not covered, the host's
// issue was long enough to have paced the GPU (HostBound), and retries are left.
func Retake(h Hold, hostMS, spinMS, eventMS float64, retakes int) bool {
	return h != HoldNone && !Covered(h, hostMS, spinMS) && HostBound(hostMS, eventMS) && retakes < MaxRetakes
}

// Clocks accumulates the NVML readings taken while a measurement's samples ran: the SM
// clock, the power and the driver's throttle reasons.
type Clocks struct {
	n       int
	sumMHz  float64
	maxMW   uint
	reasons uint64
}

// NVML's clocks-event (throttle) reasons (nvml.h): the software power cap, a hardware
// slowdown, the software and hardware thermal slowdowns, the hardware power brake.
const (
	ReasonSWPowerCap  = 0x4
	ReasonHWSlowdown  = 0x8
	ReasonSWThermal   = 0x20
	ReasonHWThermal   = 0x40
	ReasonPowerBrake  = 0x80
	reasonsPower      = ReasonSWPowerCap | ReasonPowerBrake
	reasonsThermal    = ReasonHWSlowdown | ReasonSWThermal | ReasonHWThermal
	noteClockPrefix   = "sm-mhz="
	NotePowerCapped   = "power-capped"
	NoteThermal       = "thermal-slowdown"
	clockSampleMillis = 5
)

// ClockSampleEvery is how often NVML is read while samples run.
const ClockSampleEvery = clockSampleMillis * time.Millisecond

// Add takes one reading: the SM clock in MHz, the power in mW and the reasons mask.
func (c *Clocks) Add(mhz, powerMW uint, reasons uint64) {
	if mhz == 0 {
		return
	}
	c.n++
	c.sumMHz += float64(mhz)
	c.maxMW = max(c.maxMW, powerMW)
	c.reasons |= reasons
}

// MeanMHz is the mean SM clock over the readings; 0 with none.
func (c Clocks) MeanMHz() int {
	if c.n == 0 {
		return 0
	}
	return int(c.sumMHz/float64(c.n) + 0.5)
}

// Notes are the measurement's notes of its clocks: the mean SM clock ("sm-mhz=1755"),
// and power-capped or thermal-slowdown when the driver named such a reason while it ran.
func (c Clocks) Notes() []string {
	if c.n == 0 {
		return nil
	}
	out := []string{fmt.Sprintf("%s%d", noteClockPrefix, c.MeanMHz())}
	if c.reasons&reasonsPower != 0 {
		out = append(out, NotePowerCapped)
	}
	if c.reasons&reasonsThermal != 0 {
		out = append(out, NoteThermal)
	}
	return out
}

// ClockOf reads the mean SM clock back from a measurement's notes; 0 when they have none.
func ClockOf(notes string) int {
	for _, n := range strings.Split(notes, ",") {
		if v, ok := strings.CutPrefix(n, noteClockPrefix); ok {
			mhz, err := strconv.Atoi(v)
			if err == nil {
				return mhz
			}
		}
	}
	return 0
}

// BusyUtilPct is the GPU utilisation, with another process on the GPU, at which a sweep
// is refused: that process is computing, and would slow every kernel measured.
const BusyUtilPct = 10

// SharedGPUEnv, set to 1, measures a GPU another process is using all the same.
const SharedGPUEnv = "CNNTIME_SHARED_GPU"

// Busy says what to do about the other processes on the GPU before a sweep: others are
// the compute processes NVML lists that are not this one, utilPct the GPU's utilisation.
// It refuses (an error naming them) when another process computes, warns when one only
// holds memory, and allows a shared GPU when allowShared.
func Busy(others, utilPct int, allowShared bool) (warning string, err error) {
	switch {
	case others == 0:
		return "", nil
	case utilPct >= BusyUtilPct && !allowShared:
		return "", fmt.Errorf("the GPU is busy: %d other process(es) use it and it is %d%% utilised, which would slow every kernel measured; wait for them to finish (nvidia-smi lists them), or set %s=1 to measure it shared anyway", others, utilPct, SharedGPUEnv)
	case utilPct >= BusyUtilPct:
		return fmt.Sprintf("the GPU is shared: %d other process(es) use it (%d%% utilised) and %s=1 measures it anyway: these timings are slower than the GPU alone", others, utilPct, SharedGPUEnv), nil
	}
	return fmt.Sprintf("%d other process(es) hold memory on the GPU without computing now; if one starts, the timings slow down", others), nil
}

// BusyAfter is the warning after a sweep when other processes appeared on the GPU while
// it ran: others seen now that were not at the start.
func BusyAfter(before, after int) string {
	if after <= before {
		return ""
	}
	return fmt.Sprintf("%d other process(es) started on the GPU during the sweep: the measurements taken while they ran may be slower than the GPU alone; measure again when it is free", after-before)
}
