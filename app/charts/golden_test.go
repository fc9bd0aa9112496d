package charts

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cnntime/predictor"
)

var update = flag.Bool("update", false, "rewrite the golden chart images in testdata/")

// TestGolden renders the charts and compares them with testdata/*.png: at most 0.5% of
// the pixels may differ by more than 48 in a channel (font rasterisation may shift by
// a pixel between platforms). Run with -update to accept a deliberate change.
func TestGolden(t *testing.T) {
	curves := fleet(2, 3)
	// A deadline and a budget between the scatter's runs: the median run's time and
	// cost, so that some runs meet them and some do not.
	marks := Scatter(curves, Options{}).Marks()
	xs, ys := make([]float64, len(marks)), make([]float64, len(marks))
	for i, m := range marks {
		xs[i], ys[i] = m.X, m.Y
	}
	slices.Sort(xs)
	slices.Sort(ys)
	deadlineS, budget := xs[len(xs)/2]*3600, ys[len(ys)/2]
	tests := []struct {
		name  string
		chart *Chart
		w, h  int // 640×400 when zero
	}{
		{name: "curves_total", chart: Curves(curves, Options{Legend: true, Title: "Total training time, 90 epochs"})},
		{name: "curves_iter_log", chart: Curves(curves, Options{Metric: MetricIter, LogX: true, LogY: true, Highlight: "vgg16 on cloud/mb"})},
		{name: "curves_bands_throughput", chart: Curves(mixedErrors(), Options{Metric: MetricThroughput, LogX: true, Legend: true})},
		{name: "scatter", chart: Scatter(curves, Options{Legend: true})},
		{name: "scatter_dark_highlight", chart: Scatter(curves, Options{Style: DarkStyle, Highlight: "resnet50 on cloud/mc"})},
		{name: "scatter_limit", chart: Scatter(curves, Options{Legend: true, DeadlineS: deadlineS, BudgetUSD: budget})},
		{name: "scatter_dark_deadline", chart: Scatter(curves, Options{Style: DarkStyle, DeadlineS: deadlineS})},
		{name: "breakdown", chart: Breakdown(sampleBars(), BreakdownOptions{SortByValue: true}), w: 420, h: 260},
		{name: "breakdown_dark", chart: Breakdown(sampleBars(), BreakdownOptions{Style: DarkStyle, Title: "resnet50, batch 128"}), w: 420, h: 260},
	}
	for _, tt := range tests {
		if tt.w == 0 {
			tt.w, tt.h = 640, 400
		}
		var buf bytes.Buffer
		if err := tt.chart.Write(&buf, PNG, tt.w, tt.h); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tt.name+".png")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data := bytes.Clone(buf.Bytes()) // png.Decode drains buf: keep this run's image to show
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		want, err := readPNG(path)
		if err != nil {
			t.Fatalf("%v (run go test ./app/charts -run Golden -update to create it)", err)
		}
		if frac, err := differingFraction(got, want, 48); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		} else if frac > 0.005 {
			got := filepath.Join(os.TempDir(), "cnntime-golden-"+tt.name+".png")
			_ = os.WriteFile(got, data, 0o644)
			t.Errorf("%s: %.2f%% of pixels differ from %s (this run's image: %s); look at it and run with -update if the change is meant", tt.name, 100*frac, path, got)
		}
	}
}

// mixedErrors are two curves whose points have different expected errors: measured
// ones (0%, no band), runs of estimated ones, a lone one, and a large error.
func mixedErrors() []predictor.Curve {
	a := synthCurve("resnet50", "cloud/ma", 1, 512, 1)
	b := synthCurve("vgg16", "cloud/mb", 1.8, 192, 2)
	// batches 1 2 4 8 16 32 48 64 96 128 160 192 256 384 512
	for i, e := range []float64{0, 0, 0, 0, 6, 8, 0, 0, 0, 15, 20, 25, 30, 40, 60} {
		a.Points[i].ErrorPct = e
	}
	for i, e := range []float64{10, 10, 10, 0, 0, 12, 0, 0, 0, 0, 0, 0} {
		b.Points[i].ErrorPct = e
	}
	return []predictor.Curve{a, b}
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

func differingFraction(a, b image.Image, tol uint32) (float64, error) {
	if a.Bounds() != b.Bounds() {
		return 0, &sizeError{a.Bounds(), b.Bounds()}
	}
	r := a.Bounds()
	diff := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			if absDiff(ar, br)>>8 > tol || absDiff(ag, bg)>>8 > tol || absDiff(ab, bb)>>8 > tol {
				diff++
			}
		}
	}
	return float64(diff) / float64(r.Dx()*r.Dy()), nil
}

type sizeError struct{ got, want image.Rectangle }

func (e *sizeError) Error() string {
	return "image is " + e.got.String() + ", golden is " + e.want.String()
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestDifferingFraction(t *testing.T) {
	a := image.NewRGBA(image.Rect(0, 0, 10, 10))
	b := image.NewRGBA(image.Rect(0, 0, 10, 10))
	b.Pix[0] = 200 // one pixel's red channel
	b.Pix[4] = 20  // another pixel, within tolerance
	tests := []struct {
		a, b image.Image
		want float64
	}{
		{a, a, 0},
		{a, b, 0.01},
	}
	for _, tt := range tests {
		got, err := differingFraction(tt.a, tt.b, 48)
		if err != nil || got != tt.want {
			t.Errorf("differingFraction = %v, %v; want %v", got, err, tt.want)
		}
	}
	if _, err := differingFraction(a, image.NewRGBA(image.Rect(0, 0, 5, 5)), 48); err == nil {
		t.Error("images of different sizes compared equal")
	}
}
