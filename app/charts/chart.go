package charts

import (
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"cnntime/predictor"
)

// Options say how a chart is drawn.
type Options struct {
	Metric    Metric          // the curves chart's y axis; total time when empty
	LogX      bool            // logarithmic x axis
	LogY      bool            // logarithmic y axis
	Hidden    map[string]bool // series (by SeriesKey) left out
	Highlight string          // a series (by SeriesKey) drawn bold, the others faded; "" for none
	Legend    bool            // draw a legend at the right (exports); a GUI draws its own
	Title     string
	Style     Style // LightStyle when zero
	// NoErrorBands leaves out the expected error: the shaded band around each curve
	// and the whiskers on each scatter point. They are drawn by default.
	NoErrorBands bool
	// Styles gives each machine its colour and each CNN its dash and marker; nil
	// assigns them in the order the curves name them (StylesFor).
	Styles *Styles
	// DeadlineS and BudgetUSD are a run's limit (0: none): the scatter draws each as a
	// dashed line, labelled, and tints the region of the runs that meet them.
	DeadlineS, BudgetUSD float64
}

// SeriesKey names one CNN×machine series: "resnet50 on aws/p3.2xlarge".
func SeriesKey(c predictor.Curve) string { return c.Model + " on " + c.Machine }

// Mark is one point of a chart that the mouse can find: the curve's index in the
// curves the chart was built from, the point's index in that curve, and its data
// coordinates. In a breakdown chart Curve is the bar's index in the bars given, X its
// value and Y its row (see Breakdown).
type Mark struct {
	Curve, Point int
	X, Y         float64
	// XLo–XHi and YLo–YHi are the point's expected error as drawn, in data
	// coordinates: a curve's error band (Y only; see Metric.Range) or a scatter
	// point's whiskers (time across, cost up). Where nothing is drawn (ErrorPct 0,
	// NoErrorBands, an out-of-memory cut, a bar) they equal X and Y.
	XLo, XHi, YLo, YHi float64
}

// markAt is a mark with no error drawn.
func markAt(curve, point int, x, y float64) Mark {
	return Mark{Curve: curve, Point: point, X: x, Y: y, XLo: x, XHi: x, YLo: y, YHi: y}
}

// Chart is a built chart, ready to render at any size. Render it from one goroutine
// at a time; the methods lock.
type Chart struct {
	mu     sync.Mutex
	plot   *plot.Plot
	legend *plot.Legend
	marks  []Mark
	front  []int
	// unpriced is the series a scatter leaves out for want of a price.
	unpriced []string
	scatter  *scatterPlotter // a scatter's plotter, for its looks
	limit    *limitPlotter   // a scatter's deadline and budget, nil without
	logX     bool
	logY     bool
	style    Style
	bars     bool // a breakdown chart: marks are bars, one a row
	// layout, when set, adjusts the plot to the canvas it is about to be drawn on.
	layout func(plotArea draw.Canvas)
	// title is drawn above the plot and its legend, wrapped to the chart's width.
	title string
}

// Marks are the points the mouse can find, in drawing order.
func (c *Chart) Marks() []Mark { return c.marks }

// Axes names what the chart's axes show and how (labels and log scales): two charts
// with the same Axes can share a zoomed view.
func (c *Chart) Axes() string {
	return fmt.Sprintf("%s|%s|%t|%t", c.plot.X.Label.Text, c.plot.Y.Label.Text, c.logX, c.logY)
}

// Empty reports whether the chart shows no data.
func (c *Chart) Empty() bool { return len(c.marks) == 0 }

// newChart makes a plot with the style's colours and sans-serif text.
func newChart(opt Options, xLabel, yLabel string) *Chart {
	if opt.Style.Background == nil {
		opt.Style = LightStyle
	}
	p := plot.New()
	p.BackgroundColor = opt.Style.Background
	// The title is drawn by draw, across the whole chart and wrapped to its width:
	// gonum centres it over the plot alone, where a long one runs off the left edge
	// and under the legend.
	p.Title.TextStyle.Font = withSize(sans, 13)
	p.Title.TextStyle.Color = opt.Style.Foreground
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = withSize(sans, 11)
		ax.Label.TextStyle.Color = opt.Style.Foreground
		ax.Tick.Label.Font = withSize(sans, 9)
		ax.Tick.Label.Color = opt.Style.Foreground
		ax.Color = opt.Style.Foreground
		ax.Tick.Color = opt.Style.Foreground
	}
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	c := &Chart{plot: p, logX: opt.LogX, logY: opt.LogY, style: opt.Style, title: opt.Title}
	if opt.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if opt.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	if opt.Legend {
		l := plot.NewLegend()
		l.TextStyle.Font = withSize(sans, 9)
		l.TextStyle.Color = opt.Style.Foreground
		l.Top, l.Left = true, true
		l.ThumbnailWidth = 18
		l.Padding = 1.5
		c.legend = &l
	}
	return c
}

func withSize(f font.Font, size vg.Length) font.Font {
	f.Size = size
	return f
}

// setRange sets the axes to the marks' extent, their error bands included, plus a
// margin; a linear axis of non-negative values starts at zero. With no marks it shows
// 1 to 10.
func (c *Chart) setRange(zeroX, zeroY bool) {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, m := range c.marks {
		xmin, xmax = math.Min(xmin, math.Min(m.X, m.XLo)), math.Max(xmax, math.Max(m.X, m.XHi))
		ymin, ymax = math.Min(ymin, math.Min(m.Y, m.YLo)), math.Max(ymax, math.Max(m.Y, m.YHi))
	}
	if len(c.marks) == 0 {
		xmin, xmax, ymin, ymax = 1, 10, 1, 10
	}
	if l := c.limit; l != nil && len(c.marks) > 0 {
		xmin, xmax = l.widen(l.x, xmin, xmax, c.logX)
		ymin, ymax = l.widen(l.y, ymin, ymax, c.logY)
	}
	c.plot.X.Min, c.plot.X.Max = padRange(xmin, xmax, c.logX, zeroX)
	c.plot.Y.Min, c.plot.Y.Max = padRange(ymin, ymax, c.logY, zeroY)
}

func padRange(lo, hi float64, logScale, fromZero bool) (float64, float64) {
	if logScale {
		if lo == hi {
			return lo / 2, hi * 2
		}
		f := math.Pow(hi/lo, 0.05)
		return lo / f, hi * f
	}
	if fromZero && lo >= 0 {
		lo = 0
	}
	if lo == hi {
		if lo == 0 {
			return 0, 1
		}
		return lo - math.Abs(lo)/2, hi + math.Abs(hi)/2
	}
	m := (hi - lo) * 0.05
	if fromZero && lo == 0 {
		return 0, hi + m
	}
	return lo - m, hi + m
}

// Frame says where a chart's data lies in one rendering of it, in pixels from the
// image's top-left corner, so a GUI can map the mouse to data and find marks.
type Frame struct {
	Width, Height int
	// The data area: X0 ≤ x ≤ X1 left to right, Y0 ≤ y ≤ Y1 top to bottom.
	X0, Y0, X1, Y1         float64
	xmin, xmax, ymin, ymax float64
	logX, logY             bool
	bars                   bool
	pixels                 []pixelMark
}

type pixelMark struct {
	Mark
	px, py float64
}

// ToPixel maps data coordinates to pixels.
func (f *Frame) ToPixel(x, y float64) (px, py float64) {
	return f.X0 + norm(x, f.xmin, f.xmax, f.logX)*(f.X1-f.X0),
		f.Y1 - norm(y, f.ymin, f.ymax, f.logY)*(f.Y1-f.Y0)
}

// ToData maps pixels to data coordinates.
func (f *Frame) ToData(px, py float64) (x, y float64) {
	if f.X1 == f.X0 || f.Y1 == f.Y0 {
		return f.xmin, f.ymin
	}
	return denorm((px-f.X0)/(f.X1-f.X0), f.xmin, f.xmax, f.logX),
		denorm((f.Y1-py)/(f.Y1-f.Y0), f.ymin, f.ymax, f.logY)
}

// Inside reports whether a pixel lies in the data area.
func (f *Frame) Inside(px, py float64) bool {
	return px >= f.X0 && px <= f.X1 && py >= f.Y0 && py <= f.Y1
}

// Nearest finds the mark closest to a pixel, within radius pixels, among those the
// data area shows (a zoomed view leaves some out).
func (f *Frame) Nearest(px, py, radius float64) (Mark, bool) {
	best, bestD := -1, radius*radius
	for i, m := range f.pixels {
		if !f.Inside(m.px, m.py) {
			continue
		}
		dx, dy := m.px-px, m.py-py
		if d := dx*dx + dy*dy; d <= bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return Mark{}, false
	}
	return f.pixels[best].Mark, true
}

// Column is what a vertical crosshair at pixel column px reads: for each series with a
// shown mark within maxDX pixels across, the mark nearest to px, in series order.
func (f *Frame) Column(px, maxDX float64) []Mark {
	best := map[int]int{} // series → index in pixels
	for i, m := range f.pixels {
		if !f.Inside(m.px, m.py) || math.Abs(m.px-px) > maxDX {
			continue
		}
		if j, ok := best[m.Curve]; !ok || math.Abs(m.px-px) < math.Abs(f.pixels[j].px-px) {
			best[m.Curve] = i
		}
	}
	out := make([]Mark, 0, len(best))
	for _, i := range best {
		out = append(out, f.pixels[i].Mark)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Curve < out[b].Curve })
	return out
}

// View is the part of the data a frame shows: its axes' extent.
func (f *Frame) View() Range { return Range{XMin: f.xmin, XMax: f.xmax, YMin: f.ymin, YMax: f.ymax} }

// Range is an extent of a chart's axes, in data units: what a zoomed view shows.
type Range struct{ XMin, XMax, YMin, YMax float64 }

// Valid reports whether r is a view a chart can show: finite, not empty, and
// positive on a logarithmic axis.
func (r Range) Valid(logX, logY bool) bool {
	for _, v := range []float64{r.XMin, r.XMax, r.YMin, r.YMax} {
		if isBad(v) {
			return false
		}
	}
	return r.XMax > r.XMin && r.YMax > r.YMin && (!logX || r.XMin > 0) && (!logY || r.YMin > 0)
}

// Zoomed is the view of the pixel rectangle (x0, y0)–(x1, y1) of a frame, in any
// corner order; ok is false when it is too small to mean a zoom (under 6 pixels a
// side) or not a valid view.
func (f *Frame) Zoomed(x0, y0, x1, y1 float64) (Range, bool) {
	if math.Abs(x1-x0) < 6 || math.Abs(y1-y0) < 6 {
		return Range{}, false
	}
	clamp := func(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
	x0, x1 = clamp(x0, f.X0, f.X1), clamp(x1, f.X0, f.X1)
	y0, y1 = clamp(y0, f.Y0, f.Y1), clamp(y1, f.Y0, f.Y1)
	ax, ay := f.ToData(math.Min(x0, x1), math.Max(y0, y1))
	bx, by := f.ToData(math.Max(x0, x1), math.Min(y0, y1))
	r := Range{XMin: ax, XMax: bx, YMin: ay, YMax: by}
	return r, r.Valid(f.logX, f.logY)
}

// Panned is the frame's view moved by (dx, dy) pixels, as a drag of the data moves it.
func (f *Frame) Panned(dx, dy float64) Range {
	ax, ay := f.ToData(f.X0-dx, f.Y1-dy)
	bx, by := f.ToData(f.X1-dx, f.Y0-dy)
	return Range{XMin: ax, XMax: bx, YMin: ay, YMax: by}
}

// BarAt finds the bar of a breakdown chart on the pixel's row (the bar, its label or
// its value), for a hover or a tap anywhere across the data area. Other charts have
// no bars.
func (f *Frame) BarAt(px, py float64) (Mark, bool) {
	if !f.bars || px < 0 || px > float64(f.Width) || py < f.Y0 || py > f.Y1 {
		return Mark{}, false
	}
	_, y := f.ToData(px, py)
	for _, m := range f.pixels {
		if math.Abs(m.Y-y) <= 0.5 {
			return m.Mark, true
		}
	}
	return Mark{}, false
}

func norm(v, lo, hi float64, logScale bool) float64 {
	if logScale {
		return (math.Log(v) - math.Log(lo)) / (math.Log(hi) - math.Log(lo))
	}
	return (v - lo) / (hi - lo)
}

func denorm(t, lo, hi float64, logScale bool) float64 {
	if logScale {
		return math.Exp(math.Log(lo) + t*(math.Log(hi)-math.Log(lo)))
	}
	return lo + t*(hi-lo)
}

// draw draws the chart on a canvas of the given size in points and returns where
// the data went, with y measured from the bottom in points.
func (c *Chart) draw(cv vg.CanvasSizer) (data vg.Rectangle) {
	dc := c.drawTitle(draw.New(cv))
	// A margin keeps the last tick labels off the edge.
	plotArea := draw.Crop(dc, 4, -14, 4, -10)
	if c.layout != nil {
		c.layout(plotArea)
	}
	fitBatchLabels := func(area draw.Canvas) {
		if pt, ok := c.plot.X.Tick.Marker.(pow2Ticks); ok {
			pt.maxLabels = max(3, int((area.Max.X-area.Min.X)/pow2LabelWidth))
			c.plot.X.Tick.Marker = pt
		}
	}
	if c.legend != nil {
		w := legendWidth(c.legend)
		plotArea = draw.Crop(plotArea, 0, -w, 0, 0)
		fitBatchLabels(plotArea)
		c.plot.Draw(plotArea)
		legendArea := draw.Crop(dc, dc.Max.X-dc.Min.X-w+6, -4, 0, -6)
		c.legend.Draw(legendArea)
	} else {
		fitBatchLabels(plotArea)
		c.plot.Draw(plotArea)
	}
	return c.plot.DataCanvas(plotArea).Rectangle
}

// drawTitle draws the chart's title at the top of dc, left-aligned and wrapped at
// word boundaries to dc's width (never cut), and returns the canvas below it.
func (c *Chart) drawTitle(dc draw.Canvas) draw.Canvas {
	if strings.TrimSpace(c.title) == "" {
		return dc
	}
	sty := c.plot.Title.TextStyle
	sty.Handler = c.plot.TextHandler
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	const margin = 6
	lines := wrapText(c.title, dc.Max.X-dc.Min.X-2*margin, sty.Width)
	y := dc.Max.Y - margin
	for _, line := range lines {
		dc.FillText(sty, vg.Point{X: dc.Min.X + margin, Y: y}, line)
		y -= sty.Height(line) * 1.1
	}
	return draw.Crop(dc, 0, 0, 0, -(dc.Max.Y-y)-2)
}

// wrapText breaks text into lines no wider than width (as measured by widthOf) at
// spaces; a word wider than width gets a line of its own.
func wrapText(text string, width vg.Length, widthOf func(string) vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line == "" {
			line = word
			continue
		}
		if widthOf(line+" "+word) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		line += " " + word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func legendWidth(l *plot.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X + 14
}

func (c *Chart) frame(data vg.Rectangle, wpt, hpt vg.Length, wpx, hpx int) *Frame {
	sx, sy := float64(wpx)/float64(wpt), float64(hpx)/float64(hpt)
	f := &Frame{
		Width: wpx, Height: hpx,
		X0: float64(data.Min.X) * sx, X1: float64(data.Max.X) * sx,
		Y0: float64(hpt-data.Max.Y) * sy, Y1: float64(hpt-data.Min.Y) * sy,
		xmin: c.plot.X.Min, xmax: c.plot.X.Max, ymin: c.plot.Y.Min, ymax: c.plot.Y.Max,
		logX: c.logX, logY: c.logY, bars: c.bars,
	}
	f.pixels = make([]pixelMark, len(c.marks))
	for i, m := range c.marks {
		px, py := f.ToPixel(m.X, m.Y)
		f.pixels[i] = pixelMark{Mark: m, px: px, py: py}
	}
	return f
}

// Image renders the chart as a w×h pixel image at dpi dots per inch (96 is a
// normal screen; more makes text and lines larger) and returns where the data lies in it.
func (c *Chart) Image(w, h int, dpi int) (*image.RGBA, *Frame, error) {
	return c.ImageIn(w, h, dpi, nil)
}

// ImageIn renders the chart as Image does, showing only view of its data (a zoom or a
// pan); nil or an invalid view shows all of it.
func (c *Chart) ImageIn(w, h int, dpi int, view *Range) (*image.RGBA, *Frame, error) {
	if w < 16 || h < 16 {
		return nil, nil, fmt.Errorf("chart size %d×%d pixels is too small: use at least 16×16", w, h)
	}
	if dpi <= 0 {
		dpi = vgimg.DefaultDPI
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if view != nil && view.Valid(c.logX, c.logY) {
		x, y := c.plot.X, c.plot.Y
		defer func() { c.plot.X.Min, c.plot.X.Max, c.plot.Y.Min, c.plot.Y.Max = x.Min, x.Max, y.Min, y.Max }()
		c.plot.X.Min, c.plot.X.Max, c.plot.Y.Min, c.plot.Y.Max = view.XMin, view.XMax, view.YMin, view.YMax
	}
	wpt, hpt := vg.Length(w)*vg.Inch/vg.Length(dpi), vg.Length(h)*vg.Inch/vg.Length(dpi)
	cv := vgimg.NewWith(vgimg.UseWH(wpt, hpt), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(c.style.Background))
	data := c.draw(cv)
	img, ok := cv.Image().(*image.RGBA)
	if !ok { // vgimg draws into an RGBA; convert defensively should that ever change
		b := cv.Image().Bounds()
		img = image.NewRGBA(b)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				img.Set(x, y, cv.Image().At(x, y))
			}
		}
	}
	b := img.Bounds()
	return img, c.frame(data, wpt, hpt, b.Dx(), b.Dy()), nil
}

// Format is a file format a chart can be written in.
type Format string

// The formats.
const (
	PNG Format = "png"
	SVG Format = "svg"
	PDF Format = "pdf"
)

// FormatOf returns the format a file name's extension asks for.
func FormatOf(path string) (Format, error) {
	switch ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")); ext {
	case "png", "svg", "pdf":
		return Format(ext), nil
	case "":
		return "", fmt.Errorf("%s has no extension: end the file name in .png, .svg or .pdf", path)
	default:
		return "", fmt.Errorf("cannot write a chart as .%s (%s): use .png, .svg or .pdf", ext, path)
	}
}

// MaxPixels is the largest side of an exported chart.
const MaxPixels = 10000

// Write renders the chart in a format at w×h pixels (at 96 dpi; SVG and PDF get the
// same size in points × 4/3) to out.
func (c *Chart) Write(out io.Writer, format Format, w, h int) error {
	if w < 100 || h < 100 || w > MaxPixels || h > MaxPixels {
		return fmt.Errorf("chart size %d×%d is out of range: use 100 to %d pixels a side", w, h, MaxPixels)
	}
	if format == PNG {
		img, _, err := c.Image(w, h, vgimg.DefaultDPI)
		if err != nil {
			return err
		}
		if err := png.Encode(out, img); err != nil {
			return fmt.Errorf("write png chart: %w", err)
		}
		return nil
	}
	wpt, hpt := vg.Length(w)*vg.Inch/vgimg.DefaultDPI, vg.Length(h)*vg.Inch/vgimg.DefaultDPI
	var cv vg.CanvasWriterTo
	switch format {
	case SVG:
		cv = vgsvg.New(wpt, hpt)
	case PDF:
		cv = newPDFCanvas(wpt, hpt)
	default:
		return fmt.Errorf("unknown chart format %q: use png, svg or pdf", format)
	}
	c.mu.Lock()
	c.draw(cv)
	c.mu.Unlock()
	if _, err := cv.WriteTo(out); err != nil {
		return fmt.Errorf("write %s chart: %w", format, err)
	}
	return nil
}
