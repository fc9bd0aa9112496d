package timing

import (
	"encoding/json"
	"os"
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

// TestDecideL2: the decision rests on the bytes the phase touches; every outcome has
// its note.
func TestDecideL2(t *testing.T) {
	const l2 = 50 << 20
	for _, c := range []struct {
		name               string
		bytes, l2          int64
		mode               string
		canFlush, canTouch bool
		flush, touch       bool
		note               string
	}{
		{"fits: flushed", 32 << 20, l2, L2Cold, true, true, true, false, NoteL2Flushed},
		{"fits, producer-hot", 32 << 20, l2, L2ProducerHot, true, true, true, true, NoteL2ProducerHot},
		{"producer-hot without the kernels to read the input", 32 << 20, l2, L2ProducerHot, true, false, true, false, NoteL2Flushed},
		{"fits, no flush buffer", 32 << 20, l2, L2Cold, false, true, false, false, NoteL2Hot},
		{"beyond the L2", 64 << 20, l2, L2Cold, true, true, false, false, NoteL2Beyond},
		{"unknown L2", 1 << 20, 0, L2Cold, true, true, false, false, NoteL2Unknown},
	} {
		d := DecideL2(c.bytes, c.l2, c.mode, c.canFlush, c.canTouch)
		if d.Flush != c.flush || d.Touch != c.touch || d.Note != c.note {
			t.Errorf("%s: %+v, want flush %v, touch %v, note %q", c.name, d, c.flush, c.touch, c.note)
		}
	}
	if CheckL2Mode("warm") == nil || CheckL2Mode("") != nil || CheckL2Mode(L2ProducerHot) != nil {
		t.Error("CheckL2Mode accepts what it should not, or refuses cold or producer-hot")
	}
}

// TestClocks: the mean SM clock over the readings taken while samples ran, and the
// reasons the driver named, become the row's notes and read back.
func TestClocks(t *testing.T) {
	var c Clocks
	if c.Notes() != nil || c.MeanMHz() != 0 {
		t.Fatal("no readings gave notes")
	}
	c.Add(1980, 500000, 0)
	c.Add(1755, 700000, ReasonSWPowerCap)
	c.Add(0, 0, ReasonHWThermal) // a failed reading counts for nothing
	notes := strings.Join(c.Notes(), ",")
	if notes != "sm-mhz=1868,power-capped" || ClockOf(notes+",l2-flushed") != 1868 {
		t.Errorf("notes %q (clock read back %d), want sm-mhz=1868,power-capped", notes, ClockOf(notes))
	}
	c.Add(1500, 0, ReasonHWSlowdown)
	if n := strings.Join(c.Notes(), ","); !strings.Contains(n, NoteThermal) {
		t.Errorf("a hardware slowdown is not noted: %q", n)
	}
	if ClockOf("l2-flushed,host-bound") != 0 {
		t.Error("a clock read from notes without one")
	}
}

// TestBusy: another process computing on the GPU refuses a sweep (unless the user says
// to measure it shared), one holding memory only warns, and processes that start while
// a sweep runs are named after it.
func TestBusy(t *testing.T) {
	for _, c := range []struct {
		others, util int
		shared       bool
		refused      bool
		warn         string
	}{
		{0, 90, false, false, ""},
		{1, 85, false, true, ""},
		{1, 85, true, false, "the GPU is shared"},
		{2, 0, false, false, "hold memory"},
	} {
		w, err := Busy(c.others, c.util, c.shared)
		if (err != nil) != c.refused || (c.refused && !strings.Contains(err.Error(), SharedGPUEnv)) || !strings.Contains(w, c.warn) || (c.warn == "" && w != "") {
			t.Errorf("Busy(%d, %d%%, %v) = %q, %v", c.others, c.util, c.shared, w, err)
		}
	}
	if BusyAfter(1, 1) != "" || !strings.Contains(BusyAfter(0, 2), "2 other process") {
		t.Error("BusyAfter named no new process, or named one that was there at the start")
	}
}

// TestH200UncoveredSamplesAreTakenAgain is built from the first real run: 98 of its
// rows kept samples whose runs the host had not finished issuing when the spin kernel
// ended (noted host-bound). For each such row of the report, a sample of K runs (the
// count the row's time gives) that the host issued in as long as the GPU ran it is now
// taken again behind a spin sized from that issue time, which covers it.
func TestH200UncoveredSamplesAreTakenAgain(t *testing.T) {
	raw, err := os.ReadFile("../../app/firstrun/testdata/h200-first-run.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Layers []struct {
			Config   string  `json:"config"`
			WorkerMS float64 `json:"worker_ms"`
			Notes    string  `json:"notes"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, r := range rep.Layers {
		if !strings.Contains(r.Notes, NoteHostBound) {
			continue
		}
		rows++
		k := RunsPerSample(r.WorkerMS)
		eventMS := float64(k) * r.WorkerMS
		hostMS := eventMS // the host paced the GPU: it issued as slowly as the GPU ran
		lastSpin := Spin(hostMS / 4)
		if !Retake(HoldSpin, hostMS, lastSpin, eventMS, 0) {
			t.Errorf("%s: a sample the spin of %.3f ms did not cover (host %.3f ms) is kept", r.Config, lastSpin, hostMS)
			continue
		}
		if again := Spin(hostMS); !Covered(HoldSpin, hostMS, again) {
			t.Errorf("%s: the retaken sample's spin of %.3f ms does not cover a host issue of %.3f ms", r.Config, again, hostMS)
		}
		if Retake(HoldSpin, hostMS, lastSpin, eventMS, MaxRetakes) {
			t.Errorf("%s: taken again past %d retakes", r.Config, MaxRetakes)
		}
	}
	if rows < 20 {
		t.Errorf("%d host-bound rows in the report: it should hold dozens", rows)
	}
	if ChooseHold(false, true) != HoldStream || ChooseHold(true, true) != HoldSpin || ChooseHold(false, false) != HoldNone {
		t.Error("the hold is not the spin kernel where loaded, else the stream wait")
	}
	if !Covered(HoldStream, 40, 0) || Covered(HoldNone, 0.01, 10) {
		t.Error("a stream wait does not cover what the host issued before releasing it, or no hold covers")
	}
}
