package cli

import (
	"math"
	"math/rand/v2"
	"slices"
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

// appendRound(v) writes exactly what appendRounded(round(v)) writes, which the CSV
// wrote before: at the edges of %g's exponent-free range (1e-4 and 1e6 after rounding),
// at halves, for negatives, -0, infinities and NaN, and for values of every size.
func TestAppendRoundIsAppendRoundedOfRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []float64{0, math.Copysign(0, -1), 1e-4, 9.9999e-5, 0.00005, 0.000049999, 0.00015, 0.5, 1.5, 2.5, -2.5, 0.05, 0.25,
		999999.9, 999999.95, 999999.9999, 999999.99995, 1e6, -1e6, 1067480.5, 123.4565, 0.30000000000000004, 1e12, 1e13, -1e300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	for range 300000 {
		values = append(values, math.Exp(rng.Float64()*40-20)*float64(1-2*rng.IntN(2)))
	}
	for _, v := range slices.Clone(values) {
		for _, d := range []int{0, 1, 2, 3, 4, 5, 6} { // ties and their neighbours at each precision
			tie := (math.Floor(v*pow10[d]) + 0.5) / pow10[d]
			values = append(values, tie, math.Nextafter(tie, 0), math.Nextafter(tie, math.Inf(1)))
		}
		if len(values) > 600000 {
			break
		}
	}
	for _, v := range values {
		for digits := -1; digits <= 7; digits++ {
			if got, want := string(appendRound(nil, v, digits)), string(appendRounded(nil, round(v, digits), digits)); got != want {
				t.Fatalf("appendRound(%v, %d) = %q, appendRounded(round) writes %q", v, digits, got, want)
			}
		}
	}
}

// A row's rounded cell that copies the row before's text where the column's value
// repeats (csvRow.round) writes the same bytes as rounding each value afresh: runs of repeated
// values of every length of text (1 to 20 bytes, longer than the eight-byte copy), -0
// beside 0, NaN, unknown values between known ones, columns side by side, a cell at
// the very end of the text (no eight bytes after it) and buffers of every spare room.
func TestCSVRowRoundIsAppendRoundIf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pool := []float64{0, math.Copysign(0, -1), 1, 1.5, 90, 0.33, 21.7, 1234567.891, 123456.7891, -98765.4321, 6.559,
		1e-5, 99999.99999, math.NaN(), math.Inf(1), 1e300}
	for range 200 {
		pool = append(pool, math.Exp(rng.Float64()*30-15))
	}
	type cell struct {
		v     float64
		known bool
	}
	const columns = 3
	for trial := range 3000 {
		var digits [columns]int // a column's, as predictCSVColumns fixes them
		for col := range digits {
			digits[col] = rng.IntN(5)
		}
		var rows [][columns]cell
		for range 1 + rng.IntN(12) {
			var row [columns]cell
			for col := range row {
				if len(rows) > 0 && rng.IntN(2) == 0 {
					row[col] = rows[len(rows)-1][col] // a repeat
				} else {
					row[col] = cell{pool[rng.IntN(len(pool))], rng.IntN(6) > 0}
				}
			}
			rows = append(rows, row)
		}
		r := csvRow{rounds: make([]lastRound, columns)}
		got := make([]byte, 0, rng.IntN(64)) // room to spare or none
		var want []byte
		for _, row := range rows {
			for col, c := range row {
				if col > 0 {
					got, want = append(got, ','), append(want, ',')
				}
				r.col = col
				got = r.round(got, c.v, digits[col], c.known)
				want = appendRoundIf(want, c.v, digits[col], c.known)
			}
			if trial%2 == 0 { // else the last cell ends the text
				got, want = append(got, '\n'), append(want, '\n')
			}
		}
		if string(got) != string(want) {
			t.Fatalf("rows %v written with repeats copied:\n%s\nwritten afresh:\n%s", rows, got, want)
		}
	}
}
