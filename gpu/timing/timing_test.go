package timing

import "testing"

func TestWarm(t *testing.T) {
	for _, c := range []struct {
		runs int
		ms   float64
		want bool
	}{{1, 500, false}, {2, 50, false}, {2, 100, true}, {40, 99, false}, {1000, 1, true}} {
		if got := Warm(c.runs, c.ms); got != c.want {
			t.Errorf("Warm(%d, %g) = %v, want %v", c.runs, c.ms, got, c.want)
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
