package predictor

import (
	"math"
	"testing"
)

func TestEpochSecondsLastStepRunsAtItsOwnBatch(t *testing.T) {
	step := func(b int) float64 { return 10 + float64(b) } // ms
	tests := []struct {
		images, batch int
		want          float64 // seconds
	}{
		{images: 100, batch: 10, want: 10 * 20 / 1000.0},            // 10 full steps
		{images: 105, batch: 10, want: (10*20 + (10 + 5)) / 1000.0}, // and one of 5
		{images: 3, batch: 10, want: 13 / 1000.0},                   // only the partial one
		{images: 1, batch: 1, want: 11 / 1000.0},
	}
	for _, tc := range tests {
		if got := epochSeconds(step(tc.batch), step, tc.images, tc.batch); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("epochSeconds(%d images, batch %d) = %v s, want %v s", tc.images, tc.batch, got, tc.want)
		}
	}
}

func TestPerGPUBatch(t *testing.T) {
	tests := []struct{ B, n, want int }{{8, 8, 1}, {9, 8, 2}, {256, 8, 32}, {257, 4, 65}, {5, 1, 5}}
	for _, tc := range tests {
		if got := perGPUBatch(tc.B, tc.n); got != tc.want {
			t.Errorf("perGPUBatch(%d, %d) = %d, want %d", tc.B, tc.n, got, tc.want)
		}
	}
}

func TestRingAllReduce(t *testing.T) {
	tests := []struct {
		name    string
		bytes   float64
		n       int
		gbps    float64
		latency float64
		want    float64 // ms
	}{
		{"one GPU needs none", 1e9, 1, 100, 10, 0},
		// 2 GPUs: 2·1/2 of 1 GB over 100 GB/s = 10 ms, plus 2 steps × 10 µs.
		{"two GPUs", 1e9, 2, 100, 10, 10.02},
		// 8 GPUs: 2·7/8 × 100 MB / 50 GB/s = 3.5 ms, plus 14 × 5 µs.
		{"eight GPUs", 1e8, 8, 50, 5, 3.57},
	}
	for _, tc := range tests {
		if got := ringAllReduceMS(tc.bytes, tc.n, tc.gbps, tc.latency); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: ringAllReduceMS = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// curveOf builds fitting points from per-batch step times with a fixed total = iter × images/batch.
func curveOf(iter map[int]float64, batches []int) Curve {
	c := Curve{}
	for _, b := range batches {
		ms, ok := iter[b]
		c.Points = append(c.Points, Point{Batch: b, IterMS: ms, Fits: ok, TotalS: ms / float64(b)})
	}
	return c
}

func TestSummariseFindsBestPow2AndSweetSpots(t *testing.T) {
	// Per-image time falls until 16, jumps by 50% at 17 (a new wave), falls again.
	iter := map[int]float64{}
	batches := []int{}
	for b := 8; b <= 32; b++ {
		batches = append(batches, b)
		waves := 1.0
		if b > 16 {
			waves = 1.5
		}
		iter[b] = float64(b) * waves * (1 + 1/float64(b)) // per image: waves·(1+1/b)
	}
	c := curveOf(iter, batches)
	summarise(&c, 5, 3)
	if got := c.Points[c.Best].Batch; got != 16 {
		t.Errorf("best batch = %d, want 16", got)
	}
	if c.BestPow2 != 16 || c.SavingVsPow2Pct != 0 {
		t.Errorf("best power of two = %d saving %.2f%%, want 16 saving 0%%", c.BestPow2, c.SavingVsPow2Pct)
	}
	if len(c.SweetSpots) != 1 || c.SweetSpots[0] != 16 {
		t.Errorf("sweet spots = %v, want [16]", c.SweetSpots)
	}
}

func TestSummariseSavingOverPow2(t *testing.T) {
	iter := map[int]float64{8: 80, 12: 60, 16: 200} // totals 10, 5, 12.5
	c := curveOf(iter, []int{8, 12, 16, 32})        // 32 does not fit
	summarise(&c, 5, 3)
	if got := c.Points[c.Best].Batch; got != 12 {
		t.Fatalf("best batch = %d, want 12", got)
	}
	if c.BestPow2 != 8 {
		t.Errorf("best power of two = %d, want 8", c.BestPow2)
	}
	if want := 50.0; math.Abs(c.SavingVsPow2Pct-want) > 1e-9 {
		t.Errorf("saving over the best power of two = %v%%, want %v%%", c.SavingVsPow2Pct, want)
	}
	// 12 → 16: per-image time rises from 5 to 12.5 ms, a jump; 16 → 32 does not fit.
	if len(c.SweetSpots) != 1 || c.SweetSpots[0] != 12 {
		t.Errorf("sweet spots = %v, want [12]", c.SweetSpots)
	}
}

func TestSummariseNothingFits(t *testing.T) {
	c := curveOf(map[int]float64{}, []int{1, 2, 4})
	summarise(&c, 5, 3)
	if c.Best != -1 || c.BestPow2 != 0 || len(c.SweetSpots) != 0 {
		t.Errorf("no point fits: best %d, pow2 %d, sweet spots %v; want -1, 0, none", c.Best, c.BestPow2, c.SweetSpots)
	}
}

func TestSweetSpotsKeepsDeepestInBatchOrder(t *testing.T) {
	// Per-image times: 1.0 1.1 (10%) 1.0 1.5 (50%) 1.4 1.47 (5%) 1.0
	per := []float64{1.0, 1.1, 1.0, 1.5, 1.4, 1.47, 1.0}
	var points []Point
	for i, p := range per {
		b := i + 1
		points = append(points, Point{Batch: b, IterMS: p * float64(b), Fits: true})
	}
	got := sweetSpots(points, 2, 3)
	want := []int{1, 3} // the 50% and 10% jumps; the 5% one is dropped
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("sweetSpots = %v, want %v", got, want)
	}
}

// TestRecommend checks the advice beside the best batch: the range of batches within
// NearBestPct of the best total time and, in it, the smallest per-GPU multiple of 8, or
// the power of two above it where that is in the range too.
func TestRecommend(t *testing.T) {
	plateau := func(best int, flatFrom, flatTo int) map[int]float64 { // total time per batch: 100 s on the plateau
		totals := map[int]float64{}
		for b := 1; b <= 64; b++ {
			switch {
			case b == best:
				totals[b] = 99.5
			case b >= flatFrom && b <= flatTo:
				totals[b] = 100
			default:
				totals[b] = 130
			}
		}
		return totals
	}
	for _, tc := range []struct {
		name                 string
		totals               map[int]float64
		gpus                 int
		batches              []int
		recipe               int
		want, wantLo, wantHi int
	}{
		// Every batch from 5 to 40 is within 1% of the best (17): 8 is a power of two.
		{name: "plateau from 5", totals: plateau(17, 5, 40), want: 8, wantLo: 5, wantHi: 40},
		// From 20 the first multiple of 8 is 24; 32, a power of two, is in the range too.
		{name: "plateau from 20", totals: plateau(20, 20, 40), want: 32, wantLo: 20, wantHi: 40},
		// From 20 to 30: 24, and no power of two in range.
		{name: "plateau to 30", totals: plateau(25, 20, 30), want: 24, wantLo: 20, wantHi: 30},
		// 3 to 6: no multiple of 8 in range, the smallest batch.
		{name: "no multiple of 8", totals: plateau(4, 3, 6), want: 3, wantLo: 3, wantHi: 6},
		// A lone best: itself.
		{name: "sharp best", totals: plateau(13, 0, 0), want: 13, wantLo: 13, wantHi: 13},
		// Four GPUs: per-GPU 8 is global 32; global 16 (4 per GPU) is not aligned.
		{name: "four GPUs", totals: plateau(48, 16, 64), gpus: 4, batches: []int{4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64}, want: 32, wantLo: 16, wantHi: 64},
		// A recipe published at 32: on the plateau from 5 its own batch, not 8.
		{name: "recipe inside the plateau", totals: plateau(17, 5, 40), recipe: 32, want: 32, wantLo: 5, wantHi: 40},
		// Published at 256, beyond the plateau (memory, or more than 1% slower): the
		// aligned batch nearest it, 40.
		{name: "recipe beyond the plateau", totals: plateau(17, 5, 40), recipe: 256, want: 40, wantLo: 5, wantHi: 40},
		// Published at 12, between 8 and 16: 16 (12/8 = 1.5 > 16/12).
		{name: "recipe between aligned batches", totals: plateau(17, 5, 40), recipe: 12, want: 16, wantLo: 5, wantHi: 40},
		// Published at 2 with no multiple of 8 in the range (3 to 6): the nearest, 3.
		{name: "recipe, no multiple of 8", totals: plateau(4, 3, 6), recipe: 2, want: 3, wantLo: 3, wantHi: 6},
		// Four GPUs, published at 48 (12 per GPU): 64 and 32 are aligned; 48/32 = 1.5 > 64/48.
		{name: "recipe on four GPUs", totals: plateau(48, 16, 64), gpus: 4, batches: []int{4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64}, recipe: 48, want: 64, wantLo: 16, wantHi: 64},
	} {
		batches := tc.batches
		if batches == nil {
			for b := 1; b <= 64; b++ {
				batches = append(batches, b)
			}
		}
		c := Curve{GPUCount: max(tc.gpus, 1), RecipeBatch: tc.recipe}
		for _, b := range batches {
			c.Points = append(c.Points, Point{Batch: b, Fits: true, IterMS: 1, TotalS: tc.totals[b]})
		}
		summarise(&c, 5, 3)
		if c.Recommended != tc.want || c.NearMin != tc.wantLo || c.NearMax != tc.wantHi {
			t.Errorf("%s: recommended %d within %d–%d, want %d within %d–%d", tc.name, c.Recommended, c.NearMin, c.NearMax, tc.want, tc.wantLo, tc.wantHi)
		}
	}
	none := curveOf(map[int]float64{}, []int{1, 2, 4})
	summarise(&none, 5, 3)
	if none.Recommended != 0 || none.NearMin != 0 || none.NearMax != 0 {
		t.Errorf("nothing fits: recommended %d within %d–%d, want zeros", none.Recommended, none.NearMin, none.NearMax)
	}
}

// LimitBest moves the best batch, its power of two and the recommendation to the best
// the filter keeps, and remembers the fastest batch it set aside.
func TestLimitBestSetsAsideTheFastest(t *testing.T) {
	// Total time per image falls with the batch: the fastest is the largest.
	iter := map[int]float64{8: 16, 16: 24, 24: 30, 32: 36, 48: 50, 64: 64}
	tests := []struct {
		name                       string
		limit                      int // largest batch kept; 0: no limit
		moved                      bool
		best, pow2, fastest, recom int
	}{
		{"no limit needed", 64, false, 64, 64, 0, 64},
		{"limited to 32", 32, true, 32, 32, 64, 32},
		{"limited to 24", 24, true, 24, 16, 64, 24},
		{"nothing kept", 4, false, 64, 64, 0, 64},
	}
	for _, tc := range tests {
		c := curveOf(iter, []int{8, 16, 24, 32, 48, 64})
		c.GPUCount = 1
		summarise(&c, 5, 3)
		moved := c.LimitBest(func(p Point) bool { return p.Batch <= tc.limit })
		if moved != tc.moved || c.Points[c.Best].Batch != tc.best || c.BestPow2 != tc.pow2 || c.FastestBatch != tc.fastest || c.Recommended != tc.recom ||
			(tc.moved && c.NearMax > tc.limit) {
			t.Errorf("%s: moved %v, best %d, pow2 %d, fastest set aside %d, recommended %d (range %d–%d); want %v, %d, %d, %d, %d within %d",
				tc.name, moved, c.Points[c.Best].Batch, c.BestPow2, c.FastestBatch, c.Recommended, c.NearMin, c.NearMax, tc.moved, tc.best, tc.pow2, tc.fastest, tc.recom, tc.limit)
		}
	}
	// The best kept, the range within 1% of it is cut to what is kept.
	c := curveOf(map[int]float64{8: 16, 16: 16, 32: 32.16, 64: 64.512}, []int{8, 16, 32, 64}) // totals 2, 1, 1.005, 1.008
	c.GPUCount = 1
	summarise(&c, 5, 3)
	if c.NearMax != 64 {
		t.Fatalf("range %d–%d before the limit, want it to 64", c.NearMin, c.NearMax)
	}
	if moved := c.LimitBest(func(p Point) bool { return p.Batch <= 32 }); !moved || c.Points[c.Best].Batch != 16 || c.FastestBatch != 0 || c.NearMin != 16 || c.NearMax != 32 {
		t.Errorf("range cut: changed %v, best %d, set aside %d, range %d–%d; want true, 16, 0, 16–32", moved, c.Points[c.Best].Batch, c.FastestBatch, c.NearMin, c.NearMax)
	}
}
