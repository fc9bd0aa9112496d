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
// series gets a bold ring.
func Scatter(curves []predictor.Curve, opt Options) *Chart {
	c := newChart(opt, ScatterXLabel, ScatterYLabel)
	grid := gridOf(c.style)
	c.plot.Add(grid)

	shapeOf := map[string]draw.GlyphDrawer{}
	for _, cv := range curves {
		if _, ok := shapeOf[cv.Model]; !ok {
			shapeOf[cv.Model] = shapes[len(shapeOf)%len(shapes)]
		}
	}
	sp := &scatterPlotter{ring: c.style.Foreground, front: c.style.Front, highlight: -1}
	for i, cv := range curves {
		key := SeriesKey(cv)
		if opt.Hidden[key] || cv.Best < 0 || cv.Best >= len(cv.Points) {
			continue
		}
		p := cv.Points[cv.Best]
		x, y := p.TotalS/3600, p.CostUSD
		if !p.Fits || isBad(x) || isBad(y) || x <= 0 || y < 0 || (opt.LogX && x <= 0) || (opt.LogY && y <= 0) {
			continue
		}
		clr := SeriesColor(i)
		if opt.Highlight != "" && opt.Highlight != key {
			clr = faded(clr, c.style.Background)
		}
		if opt.Highlight == key {
			sp.highlight = len(c.marks)
		}
		glyph := draw.GlyphStyle{Color: clr, Radius: 4, Shape: shapeOf[cv.Model]}
		sp.glyphs = append(sp.glyphs, glyph)
		c.marks = append(c.marks, Mark{Curve: i, Point: cv.Best, X: x, Y: y})
		if c.legend != nil && len(sp.glyphs) <= maxLegendEntries {
			c.legend.Add(key, glyphThumb{glyph})
		}
	}
	if c.legend != nil && len(sp.glyphs) > maxLegendEntries {
		c.legend.Add(FormatCount(int64(len(sp.glyphs)-maxLegendEntries)) + " more not listed")
	}
	sp.marks = c.marks
	sp.frontIdx = ParetoFront(c.marks)
	if c.legend != nil && len(sp.frontIdx) > 0 {
		c.legend.Add("Pareto front", lineThumb{color: c.style.Front, width: 1})
	}
	c.front = sp.frontIdx
	c.plot.Add(sp)
	c.setRange(!opt.LogX, !opt.LogY)
	return c
}

// Front is the Pareto front of a scatter: indices into Marks, fastest first. It is
// empty for a curves chart.
func (c *Chart) Front() []int { return c.front }

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
	highlight int // index in marks, -1 for none
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
