package cli

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// appendRounded writes every value round makes exactly as strconv's shortest %g does,
// and any other value too (through strconv).
func TestAppendRoundedIsShortestG(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []float64{0, 1e-4, 9.9999e-5, 0.0001, 0.5, 1, 10, 999999.9, 1e6, 1067480.5, 123.456, 0.30000000000000004, -2.5, math.Copysign(0, -1), math.Inf(1), math.NaN()}
	for range 200000 {
		values = append(values, math.Exp(rng.Float64()*40-20)*float64(1-2*rng.IntN(2)))
	}
	for _, v := range values {
		for digits := 0; digits <= 6; digits++ {
			// A rounded value, and one that is not: either is written as strconv writes it.
			for _, x := range []float64{round(v, digits), v, math.Nextafter(round(v, digits), math.Inf(1))} {
				if got, want := string(appendRounded(nil, x, digits)), strconv.FormatFloat(x, 'g', -1, 64); got != want {
					t.Fatalf("appendRounded(%v, %d) = %q, strconv writes %q", x, digits, got, want)
				}
			}
		}
	}
}
