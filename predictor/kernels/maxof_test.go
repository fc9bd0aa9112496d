package kernels

import (
	"math"
	"testing"
)

// maxOf gives the builtin max's bits for every pair of ordinary, signed-zero,
// infinite, subnormal and NaN values.
func TestMaxOfIsTheBuiltinMax(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, 1e-300, 5e-324, -5e-324, 0.1 + 0.2, 0.3,
		math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, x := range values {
		for _, y := range values {
			want, got := max(x, y), maxOf(x, y)
			if math.IsNaN(want) != math.IsNaN(got) || !math.IsNaN(want) && math.Float64bits(want) != math.Float64bits(got) {
				t.Errorf("maxOf(%v, %v) = %v (%#x), max gives %v (%#x)", x, y, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
}
