package charts

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden chart images in testdata/")

// TestGolden renders the charts and compares them with testdata/*.png: at most 0.5% of
// the pixels may differ by more than 48 in a channel (font rasterisation may shift by
// a pixel between platforms). Run with -update to accept a deliberate change.
func TestGolden(t *testing.T) {
	curves := fleet(2, 3)
	tests := []struct {
		name  string
		chart *Chart
	}{
		{"curves_total", Curves(curves, Options{Legend: true, Title: "Total training time, 90 epochs"})},
		{"curves_iter_log", Curves(curves, Options{Metric: MetricIter, LogX: true, LogY: true, Highlight: "vgg16 on cloud/mb"})},
		{"scatter", Scatter(curves, Options{Legend: true})},
		{"scatter_dark_highlight", Scatter(curves, Options{Style: DarkStyle, Highlight: "resnet50 on cloud/mc"})},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := tt.chart.Write(&buf, PNG, 640, 400); err != nil {
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
			t.Errorf("%s: %.2f%% of pixels differ from %s; look at it and run with -update if the change is meant", tt.name, 100*frac, path)
			_ = os.WriteFile(filepath.Join(t.TempDir(), tt.name+".png"), buf.Bytes(), 0o644)
		}
	}
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
