package charts

import (
	"image/color"
	"math"
	"strings"
	"testing"

	"cnntime/predictor"
)

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-12
}

func TestMetricRange(t *testing.T) {
	p := predictor.Point{Batch: 128, Fits: true, IterMS: 100, ImagesPerS: 1280, EpochS: 600, TotalS: 54000, CostUSD: 45, ErrorPct: 12}
	big := p
	big.ErrorPct = 150
	exact := p
	exact.ErrorPct = 0
	nan := p
	nan.ErrorPct = math.NaN()
	tests := []struct {
		name   string
		m      Metric
		p      predictor.Point
		lo, hi float64
		ok     bool
	}{
		{"iteration", MetricIter, p, 88, 112, true},
		{"epoch (min)", MetricEpoch, p, 8.8, 11.2, true},
		{"total (h)", MetricTotal, p, 13.2, 16.8, true},
		{"cost", MetricCost, p, 39.6, 50.4, true},
		{"images/s is inverse", MetricThroughput, p, 1142.857142857143, 1454.5454545454545, true},
		{"no error", MetricIter, exact, 100, 100, true},
		{"not a number", MetricCost, nan, 45, 45, true},
		{"150% is capped at 90% below", MetricIter, big, 10, 250, true},
		{"150% images/s", MetricThroughput, big, 512, 12800, true},
		{"out of memory", MetricIter, predictor.Point{Batch: 512, ErrorPct: 12}, 0, 0, false},
	}
	for _, tt := range tests {
		lo, hi, ok := tt.m.Range(tt.p)
		if ok != tt.ok || !near(lo, tt.lo, 1e-12) || !near(hi, tt.hi, 1e-12) {
			t.Errorf("%s: Range = %v, %v, %v; want %v, %v, %v", tt.name, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
}

// markAtBatch is the chart's mark of curve ci at a batch size.
func markAtBatch(t *testing.T, ch *Chart, ci int, batch float64) Mark {
	t.Helper()
	for _, m := range ch.Marks() {
		if m.Curve == ci && m.X == batch {
			return m
		}
	}
	t.Fatalf("no mark of curve %d at batch %v", ci, batch)
	return Mark{}
}

// TestBandBounds checks the band at batch 128 of a curve whose iteration there is
// 78.5536 ms ± 12%, in data coordinates on the marks and in the polygon drawn, on
// linear and logarithmic axes.
func TestBandBounds(t *testing.T) {
	curves := []predictor.Curve{synthCurve("resnet50", "a", 1, 256, 1)}
	tests := []struct {
		name      string
		opt       Options
		y, lo, hi float64
	}{
		{"iteration", Options{Metric: MetricIter}, 78.5536, 69.127168, 87.980032},
		{"iteration, log axes", Options{Metric: MetricIter, LogX: true, LogY: true}, 78.5536, 69.127168, 87.980032},
		{"images/s", Options{Metric: MetricThroughput}, 1629.460648525338, 1454.8755790404803, 1851.6598278697022},
		{"images/s, log y", Options{Metric: MetricThroughput, LogY: true}, 1629.460648525338, 1454.8755790404803, 1851.6598278697022},
		{"cost", Options{Metric: MetricCost}, 19.6580384, 17.299073792, 22.017003008},
	}
	for _, tt := range tests {
		ch := Curves(curves, tt.opt)
		m := markAtBatch(t, ch, 0, 128)
		if !near(m.Y, tt.y, 1e-12) || !near(m.YLo, tt.lo, 1e-12) || !near(m.YHi, tt.hi, 1e-12) || m.XLo != 128 || m.XHi != 128 {
			t.Errorf("%s: mark at 128 is %v (%v to %v), x %v to %v; want %v (%v to %v)", tt.name, m.Y, m.YLo, m.YHi, m.XLo, m.XHi, tt.y, tt.lo, tt.hi)
		}
		paints, f := record(t, ch, 800, 500)
		var bands []paint
		for _, p := range paints {
			if p.op == "fill" && alphaOf(p.color) == bandAlpha {
				bands = append(bands, p)
			}
		}
		if len(bands) != 1 {
			t.Fatalf("%s: %d band polygons, want 1", tt.name, len(bands))
		}
		// The polygon has each batch's top, left to right, then each bottom back.
		var top, bottom []float64
		for _, pt := range bands[0].pts {
			x, y := f.ToData(pt[0], pt[1])
			if near(x, 128, 1e-6) {
				if len(top) == 0 {
					top = append(top, y)
				} else {
					bottom = append(bottom, y)
				}
			}
		}
		if len(top) != 1 || len(bottom) != 1 || !near(top[0], tt.hi, 1e-6) || !near(bottom[0], tt.lo, 1e-6) {
			t.Errorf("%s: band drawn at batch 128 from %v to %v, want %v to %v", tt.name, bottom, top, tt.lo, tt.hi)
		}
		if n := len(bands[0].pts); n != 2*13 {
			t.Errorf("%s: band polygon has %d corners, want two for each of the 13 batches that fit", tt.name, n)
		}
		for _, m := range ch.Marks() {
			if px, py := f.ToPixel(m.X, m.YHi); !f.Inside(px, py) {
				t.Errorf("%s: the band's top at batch %v lies outside the data area", tt.name, m.X)
			}
			if px, py := f.ToPixel(m.X, m.YLo); !f.Inside(px, py) {
				t.Errorf("%s: the band's bottom at batch %v lies outside the data area", tt.name, m.X)
			}
		}
	}
}

// TestBandOnLogAxis checks that a ±12% band has the same height in pixels at every
// batch on a logarithmic y axis, and that a 150% error still draws (its bottom capped
// above zero).
func TestBandOnLogAxis(t *testing.T) {
	c := synthCurve("resnet50", "a", 1, 256, 1)
	c.Points[3].ErrorPct = 150 // batch 8
	ch := Curves([]predictor.Curve{c}, Options{Metric: MetricIter, LogX: true, LogY: true})
	_, f, err := ch.Image(800, 500, 96)
	if err != nil {
		t.Fatal(err)
	}
	_, y1 := f.ToPixel(1, 8.5004)
	_, y1hi := f.ToPixel(1, 8.5004*1.12)
	_, y256 := f.ToPixel(256, 162.2144)
	_, y256hi := f.ToPixel(256, 162.2144*1.12)
	if !near(y1-y1hi, y256-y256hi, 1e-9) || y1-y1hi < 5 {
		t.Errorf("band tops are %v px and %v px above the line at batch 1 and 256; want equal on a log axis", y1-y1hi, y256-y256hi)
	}
	m := markAtBatch(t, ch, 0, 8)
	if want := 12.0256 * 0.1; !near(m.YLo, want, 1e-9) || !near(m.YHi, 12.0256*2.5, 1e-9) {
		t.Errorf("150%% band at batch 8 is %v to %v, want %v to %v", m.YLo, m.YHi, want, 12.0256*2.5)
	}
	if ch.plot.Y.Min <= 0 || ch.plot.Y.Min > m.YLo {
		t.Errorf("log y axis starts at %v, want above 0 and below the band's bottom %v", ch.plot.Y.Min, m.YLo)
	}
}

// TestBandBeneathLines checks the drawing order: every band before any line, so no
// band covers another series' line.
func TestBandBeneathLines(t *testing.T) {
	curves := fleet(2, 3)
	for _, opt := range []Options{{}, {LogX: true, LogY: true, Highlight: "vgg16 on cloud/mb"}} {
		paints, _ := record(t, Curves(curves, opt), 640, 400)
		lastBand, firstLine, bands := -1, -1, 0
		for i, p := range paints {
			if p.op == "fill" && alphaOf(p.color) == bandAlpha {
				lastBand = i
				bands++
			}
			if p.op == "stroke" && alphaOf(p.color) == 255 && (p.width == lineWidth || p.width == highlightWidth) && firstLine < 0 {
				for k := range curves {
					if sameRGB(p.color, SeriesColor(k)) || sameRGB(p.color, faded(SeriesColor(k), LightStyle.Background)) {
						firstLine = i
					}
				}
			}
		}
		if bands != len(curves) {
			t.Errorf("%+v: %d bands drawn, want one per curve (%d)", opt, bands, len(curves))
		}
		if firstLine < 0 || lastBand > firstLine {
			t.Errorf("%+v: the last band is drawing %d, the first line %d: bands must come first", opt, lastBand, firstLine)
		}
	}
}

// TestBandPixels checks the rendered band: inside its bounds the background is
// tinted with the line's colour at the band's opacity, outside it is not.
func TestBandPixels(t *testing.T) {
	c := synthCurve("resnet50", "a", 1, 1024, 1)
	for i := range c.Points {
		c.Points[i].ErrorPct = 30
	}
	for _, opt := range []Options{{Metric: MetricIter}, {Metric: MetricIter, LogY: true}} {
		ch := Curves([]predictor.Curve{c}, opt)
		img, f, err := ch.Image(800, 500, 96)
		if err != nil {
			t.Fatal(err)
		}
		// batch 512: 368.8576 ms, band 258.20 to 479.51 ms
		px, pyHi := f.ToPixel(512, 368.8576*1.3)
		_, pyLo := f.ToPixel(512, 368.8576*0.7)
		tint := blend(StylesFor([]predictor.Curve{c}).Of(c).Color, color.White, bandAlpha)
		for _, probe := range []struct {
			what string
			y    float64
			want color.Color
		}{
			{"just inside the top", pyHi + 3, tint},
			{"just inside the bottom", pyLo - 3, tint},
			{"just above the top", pyHi - 3, color.White},
			{"just below the bottom", pyLo + 3, color.White},
		} {
			got := img.At(int(px), int(probe.y))
			if !closeColor(got, probe.want, 4) {
				t.Errorf("%+v: pixel %s of the band at batch 512 is %v, want %v", opt, probe.what, got, probe.want)
			}
		}
	}
}

func blend(fg color.RGBA, bg color.Color, alpha uint8) color.RGBA {
	r, g, b, _ := bg.RGBA()
	mix := func(f uint8, b uint32) uint8 {
		return uint8((int(f)*int(alpha) + int(b>>8)*(255-int(alpha)) + 127) / 255)
	}
	return color.RGBA{mix(fg.R, r), mix(fg.G, g), mix(fg.B, b), 255}
}

func closeColor(a, b color.Color, tol int) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) bool { return math.Abs(float64(x>>8)-float64(y>>8)) <= float64(tol) }
	return d(ar, br) && d(ag, bg) && d(ab, bb)
}

// TestNoBandWithoutError checks that points with ErrorPct 0 get no band: runs of
// points with an error are bands, a lone one a short bar, and NoErrorBands draws none.
func TestNoBandWithoutError(t *testing.T) {
	c := synthCurve("resnet50", "a", 1, 256, 1)
	// batches 1 2 4 8 16 32 48 64 96 128 160 192 256
	errs := []float64{0, 0, 0, 0, 12, 12, 0, 12, 12, 0, 0, 9, 0}
	for i, e := range errs {
		c.Points[i].ErrorPct = e
	}
	count := func(opt Options) (polys, bars int, ch *Chart) {
		ch = Curves([]predictor.Curve{c}, opt)
		paints, _ := record(t, ch, 640, 400)
		for _, p := range paints {
			if alphaOf(p.color) != bandAlpha {
				continue
			}
			switch {
			case p.op == "fill" && len(p.pts) > 2:
				polys++
			case p.op == "stroke" && p.width == loneBandWidth:
				bars++
			}
		}
		return polys, bars, ch
	}
	polys, bars, ch := count(Options{Metric: MetricIter})
	if polys != 2 || bars != 1 {
		t.Errorf("%d band polygons and %d lone bars, want 2 (16–32, 64–96) and 1 (192)", polys, bars)
	}
	for i, m := range ch.Marks() {
		if i >= len(errs) {
			break
		}
		if (errs[i] == 0) != (m.YLo == m.Y && m.YHi == m.Y) {
			t.Errorf("mark at batch %v with error %v%% has a band %v to %v", m.X, errs[i], m.YLo, m.YHi)
		}
	}
	polys, bars, ch = count(Options{Metric: MetricIter, NoErrorBands: true})
	if polys != 0 || bars != 0 {
		t.Errorf("NoErrorBands drew %d band polygons and %d lone bars", polys, bars)
	}
	for _, m := range ch.Marks() {
		if m.YLo != m.Y || m.YHi != m.Y {
			t.Errorf("NoErrorBands: mark at batch %v has a band %v to %v", m.X, m.YLo, m.YHi)
		}
	}
}

// TestBandsKeepHover checks that the bands add no marks: hovering finds the same
// points, on the lines, with and without them.
func TestBandsKeepHover(t *testing.T) {
	curves := fleet(2, 3)
	with, without := Curves(curves, Options{LogX: true}), Curves(curves, Options{LogX: true, NoErrorBands: true})
	if len(with.Marks()) != len(without.Marks()) {
		t.Fatalf("%d marks with bands, %d without", len(with.Marks()), len(without.Marks()))
	}
	for i, m := range with.Marks() {
		o := without.Marks()[i]
		if m.Curve != o.Curve || m.Point != o.Point || m.X != o.X || m.Y != o.Y {
			t.Errorf("mark %d is %+v with bands, %+v without", i, m, o)
		}
	}
	_, f, err := with.Image(640, 400, 96)
	if err != nil {
		t.Fatal(err)
	}
	m := markAtBatch(t, with, 4, 64)
	px, py := f.ToPixel(m.X, m.Y)
	if got, ok := f.Nearest(px, py, 2); !ok || got.Curve != 4 || got.X != 64 {
		t.Errorf("hover on curve 4 at batch 64 found %+v, %v", got, ok)
	}
	// In the band but away from the line the nearest mark is still a point on a line.
	_, pyHi := f.ToPixel(m.X, m.YHi)
	if got, ok := f.Nearest(px, pyHi, 40); ok && got.YLo > got.Y {
		t.Errorf("hover found a mark below its band: %+v", got)
	}
}

// TestWhiskers checks the scatter's whiskers: the marks' bounds in data coordinates
// and the lines drawn, across and up, for the best batch of a curve.
func TestWhiskers(t *testing.T) {
	c := synthCurve("resnet50", "aws/p3.2xlarge", 1, 256, 3.06)
	for _, opt := range []Options{{}, {LogX: true, LogY: true}} {
		ch := Scatter([]predictor.Curve{c}, opt)
		m := ch.Marks()[0]
		want := [6]float64{19.6580384, 17.299073792, 22.017003008, 60.153597504, 52.93516580352, 67.37202920448}
		got := [6]float64{m.X, m.XLo, m.XHi, m.Y, m.YLo, m.YHi}
		for i := range want {
			if !near(got[i], want[i], 1e-12) {
				t.Errorf("%+v: mark (x, x lo, x hi, y, y lo, y hi) = %v, want %v", opt, got, want)
				break
			}
		}
		paints, f := record(t, ch, 800, 500)
		var across, up []float64 // the whiskers' ends in data coordinates
		for _, p := range paints {
			if p.op != "stroke" || alphaOf(p.color) != whiskerAlpha || len(p.pts) != 2 {
				continue
			}
			x0, y0 := f.ToData(p.pts[0][0], p.pts[0][1])
			x1, y1 := f.ToData(p.pts[1][0], p.pts[1][1])
			switch {
			case near(y0, m.Y, 1e-6) && near(y1, m.Y, 1e-6) && math.Abs(x1-x0) > 1:
				across = append(across, x0, x1)
			case near(x0, m.X, 1e-6) && near(x1, m.X, 1e-6) && math.Abs(y1-y0) > 1:
				up = append(up, y0, y1)
			}
		}
		if len(across) != 2 || !near(across[0], m.XLo, 1e-6) || !near(across[1], m.XHi, 1e-6) {
			t.Errorf("%+v: whisker across drawn from %v, want %v to %v", opt, across, m.XLo, m.XHi)
		}
		if len(up) != 2 || !near(up[0], m.YLo, 1e-6) || !near(up[1], m.YHi, 1e-6) {
			t.Errorf("%+v: whisker up drawn from %v, want %v to %v", opt, up, m.YLo, m.YHi)
		}
		for _, b := range [][2]float64{{m.XLo, m.YLo}, {m.XHi, m.YHi}} {
			if px, py := f.ToPixel(b[0], b[1]); !f.Inside(px, py) {
				t.Errorf("%+v: whisker end %v lies outside the data area", opt, b)
			}
		}
	}
	ch := Scatter([]predictor.Curve{c}, Options{NoErrorBands: true})
	paints, _ := record(t, ch, 800, 500)
	for _, p := range paints {
		if alphaOf(p.color) == whiskerAlpha {
			t.Fatalf("NoErrorBands drew a whisker: %+v", p)
		}
	}
	if m := ch.Marks()[0]; m.XLo != m.X || m.YHi != m.Y {
		t.Errorf("NoErrorBands: mark has bounds %+v", m)
	}
	exact := c
	exact.Points = append([]predictor.Point(nil), c.Points...)
	exact.Points[c.Best].ErrorPct = 0
	if m := Scatter([]predictor.Curve{exact}, Options{}).Marks()[0]; m.XLo != m.X || m.YLo != m.Y {
		t.Errorf("a point with no error has whiskers %+v", m)
	}
}

// TestErrorLegend checks the legend names the band and the whiskers only when drawn.
func TestErrorLegend(t *testing.T) {
	curves := fleet(1, 2)
	for _, tt := range []struct {
		chart *Chart
		want  bool
	}{
		{Curves(curves, Options{Legend: true}), true},
		{Curves(curves, Options{Legend: true, NoErrorBands: true}), false},
		{Scatter(curves, Options{Legend: true}), true},
		{Scatter(curves, Options{Legend: true, NoErrorBands: true}), false},
	} {
		paints, _ := record(t, tt.chart, 640, 400)
		var texts []string
		for _, p := range paints {
			if p.op == "text" {
				texts = append(texts, p.text)
			}
		}
		if got := strings.Contains(strings.Join(texts, "|"), "expected error"); got != tt.want {
			t.Errorf("legend %v lists the expected error: %v, want %v", texts, got, tt.want)
		}
	}
}
