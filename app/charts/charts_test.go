package charts

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"cnntime/predictor"
)

const imagenet = 1281167

// synthCurve makes a curve whose iteration time is scale·(8 + 0.5·B + 0.0004·B²) ms, so
// the total time over 90 epochs is least near B = 141; batches above maxBatch do not fit.
func synthCurve(model, machine string, scale float64, maxBatch int, pricePerHour float64) predictor.Curve {
	c := predictor.Curve{Model: model, Machine: machine, GPU: "test-gpu", GPUCount: 1, Precision: "fp32", Best: -1,
		PriceUSDPerHour: pricePerHour, CostKnown: pricePerHour > 0}
	batches := []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1024}
	for _, b := range batches {
		p := predictor.Point{Batch: b, Fits: b <= maxBatch, Source: predictor.Estimated, ErrorPct: 12}
		if p.Fits {
			fb := float64(b)
			p.IterMS = scale * (8 + 0.5*fb + 0.0004*fb*fb)
			p.ImagesPerS = fb / p.IterMS * 1000
			iters := math.Ceil(float64(imagenet) / fb)
			p.EpochS = iters * p.IterMS / 1000
			p.TotalS = 90 * p.EpochS
			p.CostUSD = p.TotalS / 3600 * pricePerHour
			p.EnergyKWh = p.TotalS / 3600 * 0.3
			p.MemoryGB = 0.02 * fb
			c.MaxBatch = b
			if c.Best < 0 || p.TotalS < c.Points[c.Best].TotalS {
				c.Best = len(c.Points)
			}
		}
		c.Points = append(c.Points, p)
	}
	// The advice beside the best, as the predictor gives it but over a range of 8%
	// rather than 1%, so the charts show its marks: the batches in it, and the smallest
	// multiple of 8 among them.
	if c.Best >= 0 {
		for _, p := range c.Points {
			if p.Fits && p.TotalS <= c.Points[c.Best].TotalS*1.08 {
				if c.NearMin == 0 {
					c.NearMin = p.Batch
				}
				c.NearMax = p.Batch
				if c.Recommended == 0 && p.Batch%8 == 0 {
					c.Recommended = p.Batch
				}
			}
		}
	}
	return c
}

// fleet is nm models × nk machines with different speeds, memory and prices.
func fleet(nm, nk int) []predictor.Curve {
	models := []string{"resnet50", "vgg16", "mobilenet_v2", "densenet121", "alexnet", "resnet18", "resnet101", "efficientnet_b0", "convnext_tiny", "regnet_y_400mf"}
	var out []predictor.Curve
	for i := 0; i < nm; i++ {
		for k := 0; k < nk; k++ {
			machine := "cloud/m" + string(rune('a'+k))
			scale := (1 + 0.35*float64(i)) / (1 + 0.6*float64(k))
			out = append(out, synthCurve(models[i%len(models)], machine, scale, 256<<(k%3)>>(i%2), 0.9+1.7*float64(k)))
		}
	}
	return out
}

func TestParseMetric(t *testing.T) {
	tests := []struct {
		in      string
		want    Metric
		wantErr bool
	}{
		{"total", MetricTotal, false},
		{" Iter ", MetricIter, false},
		{"epoch", MetricEpoch, false},
		{"throughput", MetricThroughput, false},
		{"COST", MetricCost, false},
		{"speed", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMetric(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMetric(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "throughput") {
			t.Errorf("ParseMetric(%q) error %q does not list the metrics", tt.in, err)
		}
	}
}

func TestMetricValue(t *testing.T) {
	p := predictor.Point{Batch: 64, Fits: true, IterMS: 120, ImagesPerS: 533.3, EpochS: 2400, TotalS: 7200, CostUSD: 6.12}
	tests := []struct {
		m      Metric
		p      predictor.Point
		want   float64
		wantOK bool
	}{
		{MetricTotal, p, 2, true},
		{MetricIter, p, 120, true},
		{MetricEpoch, p, 40, true},
		{MetricThroughput, p, 533.3, true},
		{MetricCost, p, 6.12, true},
		{"", p, 2, true},
		{MetricTotal, predictor.Point{Batch: 64, Fits: false, TotalS: 7200}, 0, false},
		{MetricCost, predictor.Point{Batch: 64, Fits: true, TotalS: 7200}, 0, false},
		{MetricIter, predictor.Point{Batch: 64, Fits: true, IterMS: math.NaN()}, 0, false},
	}
	for _, tt := range tests {
		got, ok := tt.m.Value(tt.p)
		if ok != tt.wantOK || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%q.Value(%+v) = %v, %v; want %v, %v", tt.m, tt.p, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatSeconds(0.85), "850 ms"},
		{FormatSeconds(12.34), "12.3 s"},
		{FormatSeconds(870), "14.5 min"},
		{FormatSeconds(5.2 * 3600), "5.2 h"},
		{FormatSeconds(3.1 * 86400), "3.1 days"},
		{FormatSeconds(math.NaN()), "–"},
		{FormatMS(0.8421), "0.842 ms"},
		{FormatMS(84.21), "84.2 ms"},
		{FormatMS(1234.4), "1,234 ms"},
		{FormatUSD(0.424), "$0.42"},
		{FormatUSD(12.345), "$12.35"},
		{FormatUSD(1234.4), "$1,234"},
		{FormatUSD(-3), "-$3.00"},
		// Under a cent: two significant digits, never "$0.00" (a CIFAR run's cost).
		{FormatUSD(0.00421), "$0.0042"},
		{FormatUSD(0), "$0.00"},
		{FormatKWh(6.72), "6.7 kWh"},
		{FormatKWh(0.01234), "0.012 kWh"},
		{FormatKWh(0), "0.0 kWh"},
		{FormatShare(42.34, 100), "42.3%"},
		{FormatShare(0.01, 100), "<0.1%"},
		{FormatShare(0, 100), "0.0%"},
		{FormatShare(-1e-12, 100), "0.0%"},
		{FormatShare(3, 0), "–"},
		{FormatCount(1281167), "1,281,167"},
		{FormatCount(999), "999"},
		{FormatCount(-1000), "-1,000"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func TestTooltip(t *testing.T) {
	c := synthCurve("resnet50", "aws/p3.2xlarge", 1, 256, 3.06)
	best := c.Points[c.Best]
	got := Tooltip(c, best)
	for _, want := range []string{"resnet50 on aws/p3.2xlarge", "batch size 128", "iteration ", "epoch ", "total ", "images/s", "cost $", "source: estimated (±12%)"} {
		if !strings.Contains(got, want) {
			t.Errorf("tooltip %q lacks %q", got, want)
		}
	}
	oom := Tooltip(c, c.Points[len(c.Points)-1])
	if !strings.Contains(oom, "batch size 1024: out of memory") || strings.Contains(oom, "cost") {
		t.Errorf("out-of-memory tooltip = %q", oom)
	}
}

func TestParetoFront(t *testing.T) {
	tests := []struct {
		name string
		xy   [][2]float64
		want []int
	}{
		{"empty", nil, nil},
		{"one", [][2]float64{{1, 1}}, []int{0}},
		{"dominated", [][2]float64{{2, 2}, {1, 1}, {3, 0.5}, {4, 0.6}}, []int{1, 2}},
		{"trade-off", [][2]float64{{5, 1}, {1, 5}, {3, 3}, {3, 4}}, []int{1, 2, 0}},
		{"ties keep the first", [][2]float64{{1, 1}, {1, 1}, {1, 2}}, []int{0}},
		{"same time, cheaper wins", [][2]float64{{2, 3}, {2, 1}}, []int{1}},
	}
	for _, tt := range tests {
		marks := make([]Mark, len(tt.xy))
		for i, p := range tt.xy {
			marks[i] = Mark{Curve: i, X: p[0], Y: p[1]}
		}
		got := ParetoFront(marks)
		if !equalInts(got, tt.want) {
			t.Errorf("%s: ParetoFront = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCurvesMarks(t *testing.T) {
	curves := []predictor.Curve{
		synthCurve("resnet50", "a", 1, 256, 1),
		synthCurve("vgg16", "a", 2, 64, 1),
	}
	tests := []struct {
		name      string
		opt       Options
		wantMarks int
		wantCut   []float64 // x of each out-of-memory mark
	}{
		// 13 fitting points + 1 cut for the first, 8 + 1 for the second.
		{"all", Options{}, 23, []float64{384, 96}},
		{"hidden", Options{Hidden: map[string]bool{"vgg16 on a": true}}, 14, []float64{384}},
		{"log", Options{LogX: true, LogY: true, Metric: MetricCost}, 23, []float64{384, 96}},
	}
	for _, tt := range tests {
		ch := Curves(curves, tt.opt)
		if got := len(ch.Marks()); got != tt.wantMarks {
			t.Errorf("%s: %d marks, want %d", tt.name, got, tt.wantMarks)
		}
		var cuts []float64
		for _, m := range ch.Marks() {
			if !curves[m.Curve].Points[m.Point].Fits {
				cuts = append(cuts, m.X)
				last := curves[m.Curve].Points[m.Point-1]
				want, _ := tt.opt.Metric.Value(last)
				if m.Y != want {
					t.Errorf("%s: cut of curve %d drawn at y=%v, want the last fitting value %v", tt.name, m.Curve, m.Y, want)
				}
			}
		}
		if len(cuts) != len(tt.wantCut) {
			t.Fatalf("%s: cuts at %v, want %v", tt.name, cuts, tt.wantCut)
		}
		for i := range cuts {
			if cuts[i] != tt.wantCut[i] {
				t.Errorf("%s: cut %d at batch %v, want %v", tt.name, i, cuts[i], tt.wantCut[i])
			}
		}
	}
}

func TestScatterMarksAndFront(t *testing.T) {
	curves := fleet(2, 3)
	ch := Scatter(curves, Options{})
	if len(ch.Marks()) != len(curves) {
		t.Fatalf("%d scatter marks, want one per curve (%d)", len(ch.Marks()), len(curves))
	}
	for _, m := range ch.Marks() {
		best := curves[m.Curve].Points[curves[m.Curve].Best]
		if m.Point != curves[m.Curve].Best || m.X != best.TotalS/3600 || m.Y != best.CostUSD {
			t.Errorf("mark %+v is not curve %d's best point (%v h, $%v)", m, m.Curve, best.TotalS/3600, best.CostUSD)
		}
	}
	front := ch.Front()
	if len(front) == 0 {
		t.Fatal("no Pareto front")
	}
	for _, i := range front {
		for j, o := range ch.Marks() {
			m := ch.Marks()[i]
			if j != i && o.X <= m.X && o.Y <= m.Y && (o.X < m.X || o.Y < m.Y) {
				t.Errorf("front mark %d (%v, %v) is dominated by mark %d (%v, %v)", i, m.X, m.Y, j, o.X, o.Y)
			}
		}
	}
	noBest := synthCurve("vgg16", "tiny", 1, 0, 1)
	if got := len(Scatter([]predictor.Curve{noBest}, Options{}).Marks()); got != 0 {
		t.Errorf("a curve where nothing fits gave %d scatter marks, want 0", got)
	}
}

func TestFrameMapping(t *testing.T) {
	curves := fleet(2, 2)
	for _, opt := range []Options{{}, {LogX: true, LogY: true}, {Legend: true, Metric: MetricThroughput}} {
		for _, build := range []func([]predictor.Curve, Options) *Chart{Curves, Scatter} {
			ch := build(curves, opt)
			_, f, err := ch.Image(640, 400, 96)
			if err != nil {
				t.Fatal(err)
			}
			if f.Width != 640 || f.Height != 400 {
				t.Errorf("frame is %d×%d, want 640×400", f.Width, f.Height)
			}
			if !(f.X0 > 20 && f.X1 < 640 && f.Y0 >= 0 && f.Y1 < 390 && f.X1-f.X0 > 300 && f.Y1-f.Y0 > 250) {
				t.Errorf("data area (%v,%v)-(%v,%v) is not a plausible part of 640×400", f.X0, f.Y0, f.X1, f.Y1)
			}
			for _, m := range ch.Marks() {
				px, py := f.ToPixel(m.X, m.Y)
				if !f.Inside(px, py) {
					t.Errorf("%+v: mark %+v maps outside the data area to (%v, %v)", opt, m, px, py)
				}
				x, y := f.ToData(px, py)
				if math.Abs(x-m.X) > 1e-6*math.Abs(m.X)+1e-9 || math.Abs(y-m.Y) > 1e-6*math.Abs(m.Y)+1e-9 {
					t.Errorf("%+v: round trip of (%v, %v) gave (%v, %v)", opt, m.X, m.Y, x, y)
				}
				got, ok := f.Nearest(px+1, py-1, 8)
				if !ok {
					t.Errorf("%+v: nothing found next to mark %+v", opt, m)
					continue
				}
				gx, gy := f.ToPixel(got.X, got.Y)
				if math.Hypot(gx-px-1, gy-py+1) > math.Hypot(1, 1)+1e-9 {
					t.Errorf("%+v: Nearest returned %+v farther than the mark %+v", opt, got, m)
				}
			}
			if _, ok := f.Nearest(-100, -100, 10); ok {
				t.Errorf("%+v: found a mark far outside the chart", opt)
			}
		}
	}
}

func TestImageSizeErrors(t *testing.T) {
	ch := Curves(fleet(1, 1), Options{})
	if _, _, err := ch.Image(10, 400, 96); err == nil {
		t.Error("a 10-pixel-wide image was accepted")
	}
	for _, size := range [][2]int{{50, 400}, {400, 20000}} {
		if err := ch.Write(io.Discard, PNG, size[0], size[1]); err == nil {
			t.Errorf("export at %v was accepted", size)
		}
	}
	if err := ch.Write(io.Discard, "gif", 400, 300); err == nil || !strings.Contains(err.Error(), "png, svg or pdf") {
		t.Errorf("gif export error = %v", err)
	}
}

func TestFormatOf(t *testing.T) {
	tests := []struct {
		path    string
		want    Format
		wantErr string
	}{
		{"out/curves.png", PNG, ""},
		{"scatter.SVG", SVG, ""},
		{"a.b.pdf", PDF, ""},
		{"chart", "", "no extension"},
		{"chart.jpg", "", "cannot write a chart as .jpg"},
	}
	for _, tt := range tests {
		got, err := FormatOf(tt.path)
		if got != tt.want || (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("FormatOf(%q) = %q, %v; want %q, error containing %q", tt.path, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestExportRoundTrip(t *testing.T) {
	curves := fleet(2, 3)
	for _, build := range []struct {
		name string
		fn   func([]predictor.Curve, Options) *Chart
	}{{"curves", Curves}, {"scatter", Scatter}} {
		ch := build.fn(curves, Options{Legend: true, Title: "test " + build.name})
		var buf bytes.Buffer
		if err := ch.Write(&buf, PNG, 800, 500); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s PNG does not decode: %v", build.name, err)
		}
		if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 500 {
			t.Errorf("%s PNG is %v, want 800×500", build.name, b)
		}

		buf.Reset()
		if err := ch.Write(&buf, SVG, 800, 500); err != nil {
			t.Fatal(err)
		}
		svg := buf.String()
		dec := xml.NewDecoder(strings.NewReader(svg))
		var root string
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s SVG is not XML: %v", build.name, err)
			}
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		if root != "svg" || !strings.Contains(svg, "test "+build.name) {
			t.Errorf("%s SVG root element %q; title present: %v", build.name, root, strings.Contains(svg, "test "+build.name))
		}

		buf.Reset()
		if err := ch.Write(&buf, PDF, 800, 500); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF")) || !bytes.Contains(buf.Bytes(), []byte("%%EOF")) {
			t.Errorf("%s PDF does not start with %%PDF and end with %%%%EOF", build.name)
		}
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"pow2 1..1024", labelsOf(pow2Ticks{}.Ticks(0.9, 1100)), []string{"1", "4", "16", "64", "256", "1,024"}},
		// A narrow chart (the window's at 1280×800) takes fewer labels: no "4,096" runs into "16,384".
		{"pow2 1..65536 in six labels", labelsOf(pow2Ticks{maxLabels: 6}.Ticks(1, 65536)), []string{"1", "8", "64", "512", "4,096", "32,768"}},
		{"pow2 8..256", labelsOf(pow2Ticks{}.Ticks(7, 300)), []string{"8", "16", "32", "64", "128", "256"}},
		{"log 0.5..2000", labelsOf(logTicks{}.Ticks(0.5, 2000)), []string{"1", "10", "100", "1,000"}},
		// One style on every axis: never "1e+06" beside "100000" (issue 43).
		{"log 1e5..3e7", labelsOf(logTicks{}.Ticks(1e5, 3e7)), []string{"100,000", "1,000,000", "10,000,000"}},
		{"log 0.001..0.02", labelsOf(logTicks{}.Ticks(0.001, 0.02)), []string{"0.001", "0.002", "0.005", "0.01", "0.02"}},
		// A log time axis (hours) at durations people name, each with its unit.
		{"hours 8 s..2 days", labelsOf(durationTicks{3600}.Ticks(8.0/3600, 48)), []string{"10 s", "1 min", "10 min", "1 h", "10 h", "1 day"}},
		{"ms 3..300", labelsOf(durationTicks{0.001}.Ticks(3, 300)), []string{"10 ms", "100 ms", "5 ms", "20 ms", "50 ms", "200 ms"}},
		{"seconds within one step", labelsOf(durationTicks{3600}.Ticks(7.0/3600, 18.0/3600)), nil},
		{"log dense 3..40", labelsOf(logTicks{}.Ticks(3, 40)), []string{"5", "10", "20"}},
		{"log invalid", labelsOf(logTicks{}.Ticks(0, 10)), nil},
		{"linear 0..1100", labelsOf(linearTicks{}.Ticks(0, 1100)), []string{"0", "200", "400", "600", "800", "1,000"}},
		{"linear 0..0.9", labelsOf(linearTicks{}.Ticks(0, 0.9)), []string{"0", "0.2", "0.4", "0.6", "0.8"}},
		{"linear -3..3", labelsOf(linearTicks{}.Ticks(-3, 3)), []string{"-3", "-2", "-1", "0", "1", "2", "3"}},
		{"linear 12.5..13.7", labelsOf(linearTicks{}.Ticks(12.5, 13.7)), []string{"12.6", "12.8", "13", "13.2", "13.4", "13.6"}},
		{"linear empty", labelsOf(linearTicks{}.Ticks(5, 5)), nil},
	}
	for _, tt := range tests {
		if strings.Join(tt.got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: labels %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// TestTimeAxesReadInTheirUnit: a CIFAR-10 run of seconds is not drawn on an axis of
// "0.002" to "0.005" hours (issue 43). A linear time axis takes the unit its largest
// value reads best in; a logarithmic one is labelled at named durations.
func TestTimeAxesReadInTheirUnit(t *testing.T) {
	fast := synthCurve("resnet18", "m/fast", 0.0001, 1024, 3) // 90 epochs in about 10 s
	slow := synthCurve("resnet50", "m/slow", 0.5, 1024, 3)    // about 7 h
	tests := []struct {
		name  string
		chart *Chart
		axis  func(*Chart) *plot.Axis
		label string
		ticks []string // some labels the axis must have
	}{
		{"scatter of seconds, linear", Scatter([]predictor.Curve{fast}, Options{}), func(c *Chart) *plot.Axis { return &c.plot.X }, "min total training time (s)", nil},
		{"scatter of hours, linear", Scatter([]predictor.Curve{slow}, Options{}), func(c *Chart) *plot.Axis { return &c.plot.X }, "min total training time (h)", nil},
		{"curves of seconds to hours, log", Curves([]predictor.Curve{fast, slow}, Options{LogX: true, LogY: true}), func(c *Chart) *plot.Axis { return &c.plot.Y }, "total training time", []string{"10 s", "1 min", "1 h"}},
		{"epoch times, linear", Curves([]predictor.Curve{fast}, Options{Metric: MetricEpoch}), func(c *Chart) *plot.Axis { return &c.plot.Y }, "time per epoch (s)", nil},
		{"iterations, log", Curves([]predictor.Curve{slow}, Options{Metric: MetricIter, LogY: true}), func(c *Chart) *plot.Axis { return &c.plot.Y }, "time per iteration", []string{"10 ms", "100 ms"}},
	}
	for _, tc := range tests {
		ax := tc.axis(tc.chart)
		if ax.Label.Text != tc.label {
			t.Errorf("%s: label %q, want %q", tc.name, ax.Label.Text, tc.label)
		}
		labels := strings.Join(labelsOf(ax.Tick.Marker.Ticks(ax.Min, ax.Max)), "|")
		for _, w := range tc.ticks {
			if !strings.Contains("|"+labels+"|", "|"+w+"|") {
				t.Errorf("%s: ticks %q lack %q", tc.name, labels, w)
			}
		}
	}
}

func labelsOf(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// sampleBars is a resnet50-like step on one GPU, split by phase and by layer kind.
func sampleBars() []Bar {
	return []Bar{
		{"forward", 31.2, "phase", 0},
		{"backward-data", 36.5, "phase", 0},
		{"backward-weight", 38.9, "phase", 0},
		{"optimizer", 2.4, "phase", 0},
		{"loader", 0.3, "phase", 0},
		{"host", 1.1, "phase", 0},
		{"communication", 0, "phase", 0},
		{"conv", 82.0, "layer kind", 0},
		{"batch norm", 17.6, "layer kind", 0},
		{"relu", 6.1, "layer kind", 0},
		{"add", 1.9, "layer kind", 0},
		{"max pool", 0.8, "layer kind", 0},
		{"linear", 0.25, "layer kind", 0},
		{"loss", 0.04, "layer kind", 0},
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, "0 curves"},
		{1, "1 curve"},
		{2, "2 curves"},
		{-1, "-1 curve"},
		{1281167, "1,281,167 curves"},
	}
	for _, tt := range tests {
		if got := Count(tt.n, "curve", "curves"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := Count(1, "batch size", "batch sizes"); got != "1 batch size" {
		t.Errorf("Count(1, batch size) = %q", got)
	}
}

func TestScatterTooltip(t *testing.T) {
	c := synthCurve("resnet50", "aws/p3.2xlarge", 1, 256, 3.06)
	got := ScatterTooltip(c, c.Points[c.Best])
	// best batch 128: 19.658 h (17.299 to 22.017 h), $60.15 ($52.94 to $67.37), ±12%
	want := "resnet50 on aws/p3.2xlarge\nbest batch size 128\ntotal time 19.7 h (17.3 h to 22.0 h)\ncost $60.15 ($52.94 to $67.37)\nsource: estimated (±12%)\nrecommended batch 64 (within 1%: 64 to 256)"
	if got != want {
		t.Errorf("ScatterTooltip =\n%s\nwant\n%s", got, want)
	}
	exact := c.Points[c.Best]
	exact.ErrorPct, exact.Source = 0, predictor.Measured
	got = ScatterTooltip(c, exact)
	want = "resnet50 on aws/p3.2xlarge\nbest batch size 128\ntotal time 19.7 h\ncost $60.15\nsource: measured\nrecommended batch 64 (within 1%: 64 to 256)"
	if got != want {
		t.Errorf("ScatterTooltip with no error =\n%s\nwant\n%s", got, want)
	}
	if got := ScatterTooltip(c, c.Points[len(c.Points)-1]); got != "resnet50 on aws/p3.2xlarge\nbest batch size 1024: out of memory" {
		t.Errorf("out-of-memory scatter tooltip = %q", got)
	}
}

// TestChartTextsPlurals renders every chart with one of each thing and looks for a
// number followed by a plural where one is meant ("1 curves").
func TestChartTextsPlurals(t *testing.T) {
	one := fleet(1, 1)
	var many []predictor.Curve // 41: one more than the legend lists
	for i := range 41 {
		c := synthCurve("resnet50", "cloud/m"+strconv.Itoa(i), 1, 256, 1)
		many = append(many, c)
	}
	charts := map[string]*Chart{
		"curves":          Curves(one, Options{Legend: true}),
		"scatter":         Scatter(one, Options{Legend: true}),
		"curves, 41":      Curves(many, Options{Legend: true}),
		"scatter, 41":     Scatter(many, Options{Legend: true}),
		"breakdown, 1":    Breakdown([]Bar{{Label: "forward", Value: 1, Group: "phase"}}, BreakdownOptions{}),
		"breakdown, many": Breakdown(sampleBars(), BreakdownOptions{}),
	}
	plural := regexp.MustCompile(`(^|[^0-9.,])1 ([a-z]+s)\b`)
	if !plural.MatchString("Predicted 1 curves") || plural.MatchString("Predicted 11 curves") || plural.MatchString("1 curve") {
		t.Fatal("the plural check is broken")
	}
	for name, ch := range charts {
		paints, _ := record(t, ch, 900, 700)
		for _, p := range paints {
			if p.op == "text" && plural.MatchString(p.text) {
				t.Errorf("%s: %q", name, p.text)
			}
		}
	}
	for _, text := range []string{Tooltip(one[0], one[0].Points[0]), ScatterTooltip(one[0], one[0].Points[one[0].Best])} {
		for _, line := range strings.Split(text, "\n") {
			if plural.MatchString(line) {
				t.Errorf("tooltip line %q", line)
			}
		}
	}
}
