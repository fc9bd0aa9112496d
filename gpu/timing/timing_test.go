package timing

import (
	"strings"
	"testing"
	"time"
)

func TestWarm(t *testing.T) {
	for _, c := range []struct {
		samples      int
		ms, targetMS float64
		want         bool
	}{{1, 500, 100, false}, {2, 50, 100, false}, {2, 100, 100, true}, {40, 99, 100, false}, {1000, 1, 100, false}, {MaxWarmup, 1, 100, true}, {2, 10, 10, true}} {
		if got := Warm(c.samples, c.ms, c.targetMS); got != c.want {
			t.Errorf("Warm(%d, %g, %g) = %v, want %v", c.samples, c.ms, c.targetMS, got, c.want)
		}
	}
	for idle, want := range map[time.Duration]float64{0: BusyWarmupMS, 300 * time.Millisecond: BusyWarmupMS, 2 * time.Second: WarmupMS, time.Hour: WarmupMS, -1: WarmupMS} {
		if got := WarmupTarget(idle); got != want {
			t.Errorf("WarmupTarget(%v) = %g, want %g", idle, got, want)
		}
	}
}

// TestWarmupReachesItsGPUTimeForTinyKernels runs the worker's warm-up loop on kernels
// of 2 µs to 20 ms: each warms up for at least the target of GPU time (the clocks
// need it), where a cap of a thousand single runs gave a 2 µs kernel 2 ms.
func TestWarmupReachesItsGPUTimeForTinyKernels(t *testing.T) {
	for _, runMS := range []float64{0.002, 0.01, 0.3, 20} {
		k := RunsPerSample(runMS)
		samples, elapsed := 0, 0.0
		for !Warm(samples, elapsed, WarmupMS) {
			samples++
			elapsed += float64(k) * runMS
		}
		if elapsed < WarmupMS {
			t.Errorf("a %g ms kernel warmed up for %g ms of GPU time (%d samples of %d runs), want at least %g", runMS, elapsed, samples, k, WarmupMS)
		}
	}
}

func TestRunsPerSample(t *testing.T) {
	for _, c := range []struct {
		ms   float64
		want int
	}{{0.005, 200}, {0.01, 200}, {0.05, 40}, {0.3, 7}, {2, 1}, {50, 1}, {0, 200}} {
		if got := RunsPerSample(c.ms); got != c.want {
			t.Errorf("RunsPerSample(%g) = %d, want %d", c.ms, got, c.want)
		}
	}
}

// TestHostBound: a sample whose runs the host issued in 80% or more of their GPU time
// may have measured the host's launch rate; behind a spin kernel it did not.
func TestHostBound(t *testing.T) {
	for _, c := range []struct {
		hostMS, eventMS float64
		spun            bool
		want            string
	}{
		{0.5, 2, false, ""},            // the GPU ran ahead of nothing: its own time
		{1.59, 2, false, ""},           // 79.5%
		{1.6, 2, false, NoteHostBound}, // 80%
		{3, 2, false, NoteHostBound},   // the GPU waited for the host
		{3, 2, true, ""},               // queued behind a spin: the GPU's time
		{1, 0, false, ""},              // no time
	} {
		if got := HostNote(c.hostMS, c.eventMS, c.spun); got != c.want {
			t.Errorf("HostNote(%g, %g, spun %v) = %q, want %q", c.hostMS, c.eventMS, c.spun, got, c.want)
		}
	}
	if Spin(0) != MinSpinMS || Spin(1000) != MaxSpinMS || !(Spin(1) >= 1.5) {
		t.Errorf("Spin: %g %g %g", Spin(0), Spin(1000), Spin(1))
	}
	if got := SpinCycles(1, 1980); got < 1980*1500 {
		t.Errorf("SpinCycles(1 ms at 1980 MHz) = %d cycles: shorter than 1.5 ms", got)
	}
}

// TestL2Resident: on an H100 (50 MB of L2) a layer of a few MB is timed cold after a
// flush; one of hundreds of MB streams through the L2 anyway.
func TestL2Resident(t *testing.T) {
	const h100L2 = 50 << 20
	for _, c := range []struct {
		bytes, l2 int64
		want      bool
	}{{4 << 20, h100L2, true}, {50 << 20, h100L2, true}, {51 << 20, h100L2, false}, {800 << 20, h100L2, false}, {1 << 20, 0, false}, {0, h100L2, false}} {
		if got := L2Resident(c.bytes, c.l2); got != c.want {
			t.Errorf("L2Resident(%d, %d) = %v, want %v", c.bytes, c.l2, got, c.want)
		}
	}
	if FlushBytes(h100L2) != 100<<20 {
		t.Errorf("FlushBytes(50 MB) = %d", FlushBytes(h100L2))
	}
}

// TestThrottleWarnsOnlyOnAChangeThatLasts: tensor-core layers at the power cap
// alternating with memory-bound ones give no warning; a clock that stays low does, once,
// and its recovery once.
func TestThrottleWarnsOnlyOnAChangeThatLasts(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var th Throttle
	at := func(i int) time.Time { return start.Add(time.Duration(i) * 500 * time.Millisecond) }
	var warnings []string
	observe := func(i int, mhz uint, slow bool) {
		if w := th.Observe(at(i), mhz, slow); w != "" {
			warnings = append(warnings, w)
		}
	}
	i := 0
	for ; i < 40; i++ { // alternating: a power-capped convolution, then a ReLU at full clock
		if i%2 == 0 {
			observe(i, 1980, false)
		} else {
			observe(i, 1600, true)
		}
	}
	if len(warnings) != 0 {
		t.Fatalf("alternating layers gave warnings %q", warnings)
	}
	for ; i < 50; i++ { // a lasting slowdown
		observe(i, 1500, true)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "throttling") {
		t.Fatalf("a lasting slowdown gave %q, want one throttling warning", warnings)
	}
	for ; i < 60; i++ {
		observe(i, 1980, false)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[1], "back at 1980 MHz") {
		t.Fatalf("the recovery gave %q, want one back-at warning", warnings)
	}
	// Three readings in a row within a second are not yet lasting.
	var quick Throttle
	quick.Observe(start, 1980, false)
	for j := 1; j <= 3; j++ {
		if w := quick.Observe(start.Add(time.Duration(j)*100*time.Millisecond), 1500, true); w != "" {
			t.Errorf("a slowdown of %d readings over %v warned: %q", j, time.Duration(j)*100*time.Millisecond, w)
		}
	}
}
