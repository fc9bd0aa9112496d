package charts

import (
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cnntime/predictor"
)

// ScatterXLabel and ScatterYLabel are the scatter's axis labels.
const (
	ScatterXLabel = "min total training time (h)"
	ScatterYLabel = "training cost (USD)"
)

// Scatter builds the min-time vs cost chart: one point per CNN×machine at its best
// batch size (total time in hours across, cost in dollars up), colour by series as in
// the curves chart and shape by CNN. The Pareto front (no other point is both faster
// and cheaper) is joined by a dashed line and its points ringed; the highlighted
// series gets a bold ring. Unless opt.NoErrorBands, whiskers across and up show each
// point's expected error: time and cost both scale with the iteration time, so both
// span ±ErrorPct (the lower side capped as in Metric.Range).
func Scatter(curves []predictor.Curve, opt Options) *Chart {
	xl, yl := ScatterXLabel, ScatterYLabel
	if ToTarget(curves) {
		xl, yl = "min time to target accuracy (h)", "cost to target accuracy (USD)"
	}
	c := newChart(opt, xl, yl)
	grid := gridOf(c.style)
	c.plot.Add(grid)

	styles := stylesOf(opt, curves)
	sp := &scatterPlotter{ring: c.style.Foreground, front: c.style.Front, highlight: -1}
	for i, cv := range curves {
		key := SeriesKey(cv)
		if opt.Hidden[key] || cv.Best < 0 || cv.Best >= len(cv.Points) {
			continue
		}
		p := cv.Points[cv.Best]
		if !cv.CostKnown { // an unknown price is no price: never at $0, never on the front
			c.unpriced = append(c.unpriced, key)
			continue
		}
		x, y := p.TotalS/3600, p.CostUSD
		if !p.Fits || isBad(x) || isBad(y) || x <= 0 || y < 0 || (opt.LogX && x <= 0) || (opt.LogY && y <= 0) {
			continue
		}
		st := styles.Of(cv)
		clr := st.Color
		if opt.Highlight != "" && opt.Highlight != key {
			clr = faded(clr, c.style.Background)
		}
		if opt.Highlight == key {
			sp.highlight = len(c.marks)
		}
		glyph := draw.GlyphStyle{Color: clr, Radius: 4, Shape: st.Shape}
		sp.glyphs = append(sp.glyphs, glyph)
		m := markAt(i, cv.Best, x, y)
		if lo, hi, _ := MetricTotal.Range(p); !opt.NoErrorBands && hi > lo {
			// Cost is the total time times the price: the same relative range.
			m.XLo, m.XHi = lo, hi
			m.YLo, m.YHi = y*lo/x, y*hi/x
			sp.whiskers = true
		}
		c.marks = append(c.marks, m)
		if c.legend != nil && len(sp.glyphs) <= maxLegendEntries {
			c.legend.Add(key, glyphThumb{glyph})
		}
	}
	if c.legend != nil && len(sp.glyphs) > maxLegendEntries {
		c.legend.Add(FormatCount(int64(len(sp.glyphs)-maxLegendEntries)) + " more not listed")
	}
	if c.legend != nil && len(c.unpriced) > 0 {
		c.legend.Add(Count(len(c.unpriced), "series", "series") + " not shown: price unknown")
	}
	sp.marks = c.marks
	c.scatter = sp
	sp.frontIdx = ParetoFront(c.marks)
	if c.legend != nil && len(sp.frontIdx) > 0 {
		c.legend.Add("Pareto front", lineThumb{color: c.style.Front, width: 1, dashes: []vg.Length{4, 3}})
	}
	if c.legend != nil && sp.whiskers {
		c.legend.Add("expected error", whiskerThumb{color: c.style.Foreground})
	}
	c.front = sp.frontIdx
	if lp := newLimitPlotter(opt, c.style, c.plot); lp != nil && len(c.marks) > 0 {
		c.limit = lp
		c.plot.Add(lp) // beneath the points
		if c.legend != nil {
			c.legend.Add(lp.words(), lineThumb{color: lp.color, width: 1, dashes: limitDashes})
		}
	}
	c.plot.Add(sp)
	c.setRange(!opt.LogX, !opt.LogY)
	timeAxis(&c.plot.X, 3600, timeUnits, opt.LogX)
	return c
}

// Front is the Pareto front of a scatter: indices into Marks, fastest first. It is
// empty for a curves chart.
func (c *Chart) Front() []int { return c.front }

// plotColor is the colour a scatter draws a mark in (tests check the looks).
func (c *Chart) plotColor(m Mark) color.RGBA {
	if c.scatter == nil {
		return color.RGBA{}
	}
	for i, mk := range c.scatter.marks {
		if mk == m {
			r, g, b, a := c.scatter.glyphs[i].Color.RGBA()
			return color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(a >> 8)}
		}
	}
	return color.RGBA{}
}

// Unpriced is the series (by SeriesKey) a scatter leaves out because their machine
// has no known price: a cost axis has no place for them.
func (c *Chart) Unpriced() []string { return c.unpriced }

// ParetoFront returns the marks that no other mark beats in both X and Y (less is
// better in both), as indices into marks sorted by X. Of equal marks only the first counts.
func ParetoFront(marks []Mark) []int {
	idx := make([]int, len(marks))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ma, mb := marks[idx[a]], marks[idx[b]]
		if ma.X != mb.X {
			return ma.X < mb.X
		}
		return ma.Y < mb.Y
	})
	var front []int
	for _, i := range idx {
		if len(front) == 0 || marks[i].Y < marks[front[len(front)-1]].Y {
			front = append(front, i)
		}
	}
	return front
}

func gridOf(s Style) plot.Plotter {
	g := newGrid()
	g.Vertical.Color, g.Horizontal.Color = s.Grid, s.Grid
	return g
}

// scatterPlotter draws the points, the front and the highlight (a gonum/plot Plotter).
type scatterPlotter struct {
	marks     []Mark
	glyphs    []draw.GlyphStyle
	frontIdx  []int
	highlight int  // index in marks, -1 for none
	whiskers  bool // some mark has an error range
	ring      color.Color
	front     color.Color
}

func (sp *scatterPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	at := func(m Mark) vg.Point { return vg.Point{X: tx(m.X), Y: ty(m.Y)} }
	if len(sp.frontIdx) > 1 {
		line := make([]vg.Point, len(sp.frontIdx))
		for k, i := range sp.frontIdx {
			line[k] = at(sp.marks[i])
		}
		c.StrokeLines(draw.LineStyle{Color: sp.front, Width: 1, Dashes: []vg.Length{4, 3}}, c.ClipLinesXY(line)...)
	}
	// The whiskers beneath everything else, so that no whisker hides a point.
	for i, m := range sp.marks {
		style := draw.LineStyle{Color: whiskerColor(sp.glyphs[i].Color), Width: whiskerWidth}
		if m.XLo < m.XHi {
			drawWhisker(&c, style, vg.Point{X: tx(m.XLo), Y: ty(m.Y)}, vg.Point{X: tx(m.XHi), Y: ty(m.Y)})
		}
		if m.YLo < m.YHi {
			drawWhisker(&c, style, vg.Point{X: tx(m.X), Y: ty(m.YLo)}, vg.Point{X: tx(m.X), Y: ty(m.YHi)})
		}
	}
	for _, i := range sp.frontIdx {
		c.DrawGlyph(draw.GlyphStyle{Color: sp.front, Radius: 6.5, Shape: draw.RingGlyph{}}, at(sp.marks[i]))
	}
	for i, m := range sp.marks {
		if i != sp.highlight {
			c.DrawGlyph(sp.glyphs[i], at(m))
		}
	}
	if sp.highlight >= 0 {
		m := sp.marks[sp.highlight]
		g := sp.glyphs[sp.highlight]
		g.Radius = 5.5
		c.DrawGlyph(g, at(m))
		c.DrawGlyph(draw.GlyphStyle{Color: sp.ring, Radius: 9, Shape: thickRing{}}, at(m))
	}
}

// thickRing is a ring drawn with a 2-point line.
type thickRing struct{}

func (thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: 2})
	var path vg.Path
	path.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	path.Arc(pt, sty.Radius, 0, 2*3.141592653589793)
	path.Close()
	c.Stroke(path)
}

const (
	whiskerWidth = vg.Length(1)
	whiskerCap   = vg.Length(2.5) // half the length of a whisker's end bar
	whiskerAlpha = 150            // of 255: lighter than the points they belong to
)

// whiskerColor is a point's colour, partly transparent for its whiskers.
func whiskerColor(c color.Color) color.NRGBA {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: whiskerAlpha}
}

// drawWhisker draws an error bar from a to b (horizontal or vertical) with a short
// bar across each end.
func drawWhisker(c *draw.Canvas, style draw.LineStyle, a, b vg.Point) {
	c.StrokeLines(style, c.ClipLinesXY([]vg.Point{a, b})...)
	dx, dy := vg.Length(0), whiskerCap // a horizontal whisker has vertical end bars
	if a.X == b.X {
		dx, dy = whiskerCap, 0
	}
	for _, end := range []vg.Point{a, b} {
		if c.Contains(end) {
			c.StrokeLine2(style, end.X-dx, end.Y-dy, end.X+dx, end.Y+dy)
		}
	}
}

// whiskerThumb is a legend entry's error bar.
type whiskerThumb struct{ color color.Color }

func (t whiskerThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	style := draw.LineStyle{Color: whiskerColor(t.color), Width: whiskerWidth}
	drawWhisker(c, style, vg.Point{X: c.Min.X + 2, Y: y}, vg.Point{X: c.Max.X - 2, Y: y})
}
