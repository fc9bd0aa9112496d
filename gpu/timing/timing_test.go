package timing

import (
	"testing"
	"time"
)

func TestWarm(t *testing.T) {
	for _, c := range []struct {
		runs         int
		ms, targetMS float64
		want         bool
	}{{1, 500, 100, false}, {2, 50, 100, false}, {2, 100, 100, true}, {40, 99, 100, false}, {1000, 1, 100, true}, {2, 10, 10, true}} {
		if got := Warm(c.runs, c.ms, c.targetMS); got != c.want {
			t.Errorf("Warm(%d, %g, %g) = %v, want %v", c.runs, c.ms, c.targetMS, got, c.want)
		}
	}
	for idle, want := range map[time.Duration]float64{0: BusyWarmupMS, 300 * time.Millisecond: BusyWarmupMS, 2 * time.Second: WarmupMS, time.Hour: WarmupMS, -1: WarmupMS} {
		if got := WarmupTarget(idle); got != want {
			t.Errorf("WarmupTarget(%v) = %g, want %g", idle, got, want)
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
