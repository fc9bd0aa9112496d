package charts

import "testing"

// BenchmarkHover is the work of one mouse move over the curves chart of 10 CNNs × 10
// machines: map the pixel to data and find the nearest point. Goal: well under 16 ms.
func BenchmarkHover(b *testing.B) {
	ch := Curves(fleet(10, 10), Options{LogX: true})
	_, f, err := ch.Image(900, 500, 96)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		px := f.X0 + float64(i%int(f.X1-f.X0))
		f.ToData(px, 200)
		f.Nearest(px, 200, 30)
	}
}

// BenchmarkRedrawBoth is a selection change with 10 CNNs × 10 machines: build and
// render both charts at a typical window size. Goal: ≤ 150 ms.
func BenchmarkRedrawBoth(b *testing.B) {
	curves := fleet(10, 10)
	for b.Loop() {
		if _, _, err := Curves(curves, Options{LogX: true}).Image(800, 450, 96); err != nil {
			b.Fatal(err)
		}
		if _, _, err := Scatter(curves, Options{}).Image(600, 450, 96); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedrawBothNoBands is BenchmarkRedrawBoth with the error bands and
// whiskers turned off, to see what they cost.
func BenchmarkRedrawBothNoBands(b *testing.B) {
	curves := fleet(10, 10)
	for b.Loop() {
		if _, _, err := Curves(curves, Options{LogX: true, NoErrorBands: true}).Image(800, 450, 96); err != nil {
			b.Fatal(err)
		}
		if _, _, err := Scatter(curves, Options{NoErrorBands: true}).Image(600, 450, 96); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBreakdown builds and renders the "why" panel's chart at its size.
func BenchmarkBreakdown(b *testing.B) {
	bars := sampleBars()
	for b.Loop() {
		if _, _, err := Breakdown(bars, BreakdownOptions{SortByValue: true}).Image(420, 260, 96); err != nil {
			b.Fatal(err)
		}
	}
}
