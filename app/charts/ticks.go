package charts

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// logTicks labels a logarithmic axis at the powers of ten, and at 2× and 5× them where
// the range spans less than two decades; the other integer multiples are minor ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	dense := math.Log10(hi/lo) < 2
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		base := math.Pow10(e)
		for i := 1; i < 10; i++ {
			v := base * float64(i)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if i == 1 || (dense && (i == 2 || i == 5)) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// pow2Ticks labels a logarithmic batch-size axis at the powers of two, every other
// one where there would be more than ten labels.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	first, last := int(math.Ceil(math.Log2(lo))), int(math.Floor(math.Log2(hi)))
	step := 1
	if last-first+1 > 10 {
		step = 2
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		t := plot.Tick{Value: math.Ldexp(1, e)}
		if (e-first)%step == 0 {
			t.Label = tickLabel(t.Value)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func tickLabel(v float64) string {
	if v >= 1e6 || (v < 1e-3 && v > 0) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// linearTicks labels a linear axis at 1, 2 or 5 × a power of ten, about six labels
// across the range, with a minor tick between labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo >= hi || isBad(lo) || isBad(hi) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for k := math.Ceil(lo/step*2) / 2; k*step <= hi+step*1e-9; k += 0.5 {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		t := plot.Tick{Value: v}
		if k == math.Trunc(k) {
			t.Label = tickLabel(roundTo(v, step))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// roundTo removes floating-point noise below a tenth of the step (0.30000000000000004 → 0.3).
func roundTo(v, step float64) float64 {
	digits := max(0, 1-int(math.Floor(math.Log10(step))))
	p := math.Pow10(digits)
	return math.Round(v*p) / p
}
