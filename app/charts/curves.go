package charts

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cnntime/predictor"
)

// maxLegendEntries bounds an exported legend; the rest are summed up in one line.
const maxLegendEntries = 40

// curveSeries is one curve as drawn: its lines (split where a batch size does not
// fit), the best batch and where memory runs out.
type curveSeries struct {
	color    color.RGBA
	width    vg.Length
	segments [][]plotter.XY
	best     *plotter.XY
	cutFrom  *plotter.XY // the last batch size that fits ...
	cutAt    *plotter.XY // ... and the first that does not, drawn at the same height
}

// Curves builds the chart of a metric against batch size, one line per CNN×machine
// (in the curves' order; colours by index). The best batch is a filled dot; where the
// batch no longer fits in memory the line stops and a dotted tail ends in a cross.
func Curves(curves []predictor.Curve, opt Options) *Chart {
	metric := opt.Metric
	if metric == "" {
		metric = MetricTotal
	}
	c := newChart(opt, "batch size", metric.Label())
	if opt.LogX {
		c.plot.X.Tick.Marker = pow2Ticks{}
	}
	c.plot.Add(gridOf(c.style))

	var drawn, highlighted []curveSeries
	for i, cv := range curves {
		key := SeriesKey(cv)
		if opt.Hidden[key] {
			continue
		}
		s := curveSeries{color: SeriesColor(i), width: lineWidth}
		switch {
		case opt.Highlight == key:
			s.width = highlightWidth
		case opt.Highlight != "":
			s.color = faded(s.color, c.style.Background)
		}
		var seg []plotter.XY
		var last *plotter.XY // the last point drawn
		lastIdx := -1
		for j, p := range cv.Points {
			v, ok := metric.Value(p)
			if !ok || p.Batch <= 0 {
				if !p.Fits && len(seg) > 0 {
					s.segments = append(s.segments, seg)
					seg = nil
				}
				continue
			}
			pt := plotter.XY{X: float64(p.Batch), Y: v}
			seg = append(seg, pt)
			last, lastIdx = &pt, j
			c.marks = append(c.marks, Mark{Curve: i, Point: j, X: pt.X, Y: pt.Y})
			if j == cv.Best {
				s.best = &pt
			}
		}
		if len(seg) > 0 {
			s.segments = append(s.segments, seg)
		}
		if last != nil {
			for j := lastIdx + 1; j < len(cv.Points); j++ {
				if p := cv.Points[j]; !p.Fits && float64(p.Batch) > last.X {
					s.cutFrom, s.cutAt = last, &plotter.XY{X: float64(p.Batch), Y: last.Y}
					c.marks = append(c.marks, Mark{Curve: i, Point: j, X: s.cutAt.X, Y: s.cutAt.Y})
					break
				}
			}
		}
		if opt.Highlight == key {
			highlighted = append(highlighted, s)
		} else {
			drawn = append(drawn, s)
		}
		if c.legend != nil && len(drawn)+len(highlighted) <= maxLegendEntries {
			c.legend.Add(key, lineThumb{color: s.color, width: s.width})
		}
	}
	if n := len(drawn) + len(highlighted); c.legend != nil && n > maxLegendEntries {
		c.legend.Add(FormatCount(int64(n-maxLegendEntries)) + " more not listed")
	}
	if c.legend != nil && n(drawn, highlighted) > 0 {
		c.legend.Add("best batch size", glyphThumb{draw.GlyphStyle{Color: c.style.Foreground, Radius: 3.5, Shape: draw.CircleGlyph{}}})
		c.legend.Add("out of memory", glyphThumb{draw.GlyphStyle{Color: c.style.Foreground, Radius: 3.5, Shape: draw.CrossGlyph{}}})
	}
	c.plot.Add(&curvesPlotter{series: append(drawn, highlighted...), ring: c.style.Foreground})
	c.setRange(false, !opt.LogY)
	return c
}

func n(a, b []curveSeries) int { return len(a) + len(b) }

func newGrid() *plotter.Grid { return plotter.NewGrid() }

// curvesPlotter draws the series (a gonum/plot Plotter).
type curvesPlotter struct {
	series []curveSeries
	ring   color.Color
}

func (cp *curvesPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, s := range cp.series {
		line := draw.LineStyle{Color: s.color, Width: s.width}
		for _, seg := range s.segments {
			pts := make([]vg.Point, len(seg))
			for k, xy := range seg {
				pts[k] = vg.Point{X: tx(xy.X), Y: ty(xy.Y)}
			}
			if len(pts) == 1 {
				c.DrawGlyph(draw.GlyphStyle{Color: s.color, Radius: s.width, Shape: draw.CircleGlyph{}}, pts[0])
				continue
			}
			c.StrokeLines(line, c.ClipLinesXY(pts)...)
		}
		if s.cutAt != nil {
			from := vg.Point{X: tx(s.cutFrom.X), Y: ty(s.cutFrom.Y)}
			at := vg.Point{X: tx(s.cutAt.X), Y: ty(s.cutAt.Y)}
			dotted := draw.LineStyle{Color: s.color, Width: 1, Dashes: []vg.Length{1.5, 2}}
			c.StrokeLines(dotted, c.ClipLinesXY([]vg.Point{from, at})...)
			c.DrawGlyph(draw.GlyphStyle{Color: s.color, Radius: 3.5, Shape: draw.CrossGlyph{}}, at)
		}
		if s.best != nil {
			pt := vg.Point{X: tx(s.best.X), Y: ty(s.best.Y)}
			c.DrawGlyph(draw.GlyphStyle{Color: s.color, Radius: 3.5, Shape: draw.CircleGlyph{}}, pt)
			c.DrawGlyph(draw.GlyphStyle{Color: cp.ring, Radius: 4, Shape: draw.RingGlyph{}}, pt)
		}
	}
}

// lineThumb is a legend entry's line.
type lineThumb struct {
	color color.Color
	width vg.Length
}

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle{Color: t.color, Width: t.width}, c.Min.X, y, c.Max.X, y)
}

// glyphThumb is a legend entry's glyph.
type glyphThumb struct{ style draw.GlyphStyle }

func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyphNoClip(t.style, c.Center()) }
