package predictor

import (
	"slices"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// A request for the points only gets the very points of the whole curve, without its
// summary: no best batch (-1), sweet spots or recommendation; the whole curve has them.
func TestPointsOnlyKeepsThePointsAndLeavesOutTheSummary(t *testing.T) {
	e := NewEngine(newLinearTimer(1), noOverheads(), DefaultMemoryModel)
	for _, tc := range []struct {
		name    string
		batches []int
		gpus    int
	}{
		{"one GPU", []int{1, 2, 3, 4, 7, 8, 16, 64}, 1},
		{"four GPUs", []int{4, 5, 8, 12, 16, 64, 256}, 4},
	} {
		req := Request{Network: tinyNet(), Machine: hw.Machine{ID: "m", GPUCount: tc.gpus, PriceUSDPerHour: 3.6},
			GPU: testGPU, Precision: measure.FP32, Batches: tc.batches, Run: Run{Epochs: 2, Images: 1000}}
		whole, err := e.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		req.PointsOnly = true
		points, err := e.Curve(req)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(points.Points, whole.Points) {
			t.Errorf("%s: points only %+v, the whole curve's %+v", tc.name, points.Points, whole.Points)
		}
		if whole.Best < 0 || whole.Recommended == 0 {
			t.Errorf("%s: the whole curve has best %d, recommended %d; want a best batch and a recommendation", tc.name, whole.Best, whole.Recommended)
		}
		if points.Best != -1 || points.Recommended != 0 || points.BestPow2 != 0 || len(points.SweetSpots) != 0 {
			t.Errorf("%s: points only: best %d, recommended %d, best power of two %d, sweet spots %v; want -1, 0, 0, none",
				tc.name, points.Best, points.Recommended, points.BestPow2, points.SweetSpots)
		}
	}
}
