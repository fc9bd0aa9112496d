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
	dashes   []vg.Length
	dashOffs vg.Length
	shape    draw.GlyphDrawer
	segments [][]plotter.XY
	bands    [][]bandPoint // runs of neighbouring points with an expected error
	best     *plotter.XY
	rec      *plotter.XY  // the recommended batch, when it is not the best
	near     []plotter.XY // the curve from NearMin to NearMax: within 1% of the best
	cutFrom  *plotter.XY  // the last batch size that fits ...
	cutAt    *plotter.XY  // ... and the first that does not, drawn at the same height
}

// bandPoint is one batch size of an error band: the range the value may lie in.
type bandPoint struct{ x, lo, hi float64 }

// bandAlpha is the opacity of an error band, of 255: light enough that the bands of
// several curves overlap without hiding the lines, which are drawn over them.
const bandAlpha = 56

// Curves builds the chart of a metric against batch size, one line per CNN×machine
// (in the curves' order), in its machine's colour and its CNN's dash (opt.Styles, or
// by order of appearance). The best batch is the CNN's marker, ringed; where the
// batch no longer fits in memory the line stops and a dotted tail ends in a cross.
// Unless opt.NoErrorBands, each point's expected error (Metric.Range) is a shaded
// band in the line's colour beneath all the lines; points with no error (ErrorPct 0)
// get none.
func Curves(curves []predictor.Curve, opt Options) *Chart {
	metric := opt.Metric
	if metric == "" {
		metric = MetricTotal
	}
	label := metric.Label()
	toTarget := ToTarget(curves)
	if toTarget {
		label = metric.TargetLabel()
	}
	c := newChart(opt, "batch size", label)
	if opt.LogX {
		c.plot.X.Tick.Marker = pow2Ticks{}
	}
	c.plot.Add(gridOf(c.style))
	if tm := newTargetMarks(curves, opt.Hidden, c.style, c.plot); toTarget && tm != nil {
		c.plot.Add(tm)
	}
	styles := stylesOf(opt, curves)
	// Series drawn on top of each other share the line: each draws every n-th dash,
	// so all their colours show along it.
	interleave := map[int][2]int{} // curve → (its place in its group, the group's size)
	for _, g := range Overlaps(curves, metric, opt.Hidden) {
		for k, i := range g {
			interleave[i] = [2]int{k, len(g)}
		}
	}

	var drawn, highlighted []curveSeries
	banded := false // some series has an error band
	for i, cv := range curves {
		key := SeriesKey(cv)
		if opt.Hidden[key] || cv.Unavailable != "" { // not predicted: the results say why
			continue
		}
		st := styles.Of(cv)
		s := curveSeries{color: st.Color, width: lineWidth, dashes: st.Dashes, shape: st.Shape}
		if il, ok := interleave[i]; ok && opt.Highlight == "" {
			s.dashes, s.dashOffs = []vg.Length{overlapDash, overlapDash * vg.Length(il[1]-1)}, overlapDash*vg.Length(il[0])
		}
		switch {
		case opt.Highlight == key:
			s.width = highlightWidth
		case opt.Highlight != "":
			s.color = faded(s.color, c.style.Background)
		}
		var seg []plotter.XY
		var band []bandPoint
		endBand := func() {
			if len(band) > 0 {
				s.bands = append(s.bands, band)
				band = nil
			}
		}
		var last *plotter.XY // the last point drawn
		lastIdx := -1
		for j, p := range cv.Points {
			v, ok := metric.Value(p)
			if !ok || p.Batch <= 0 {
				if !p.Fits && len(seg) > 0 {
					s.segments = append(s.segments, seg)
					seg = nil
					endBand()
				}
				continue
			}
			pt := plotter.XY{X: float64(p.Batch), Y: v}
			seg = append(seg, pt)
			last, lastIdx = &pt, j
			m := markAt(i, j, pt.X, pt.Y)
			if lo, hi, _ := metric.Range(p); !opt.NoErrorBands && hi > lo && (!opt.LogY || lo > 0) {
				m.YLo, m.YHi = lo, hi
				band = append(band, bandPoint{x: pt.X, lo: lo, hi: hi})
			} else {
				endBand()
			}
			c.marks = append(c.marks, m)
			if j == cv.Best {
				s.best = &pt
			}
			if p.Batch == cv.Recommended && j != cv.Best {
				s.rec = &pt
			}
			if cv.NearMin > 0 && cv.NearMax > cv.NearMin && p.Batch >= cv.NearMin && p.Batch <= cv.NearMax {
				s.near = append(s.near, pt)
			}
		}
		if len(seg) > 0 {
			s.segments = append(s.segments, seg)
		}
		endBand()
		if len(s.bands) > 0 {
			banded = true
		}
		if last != nil {
			for j := lastIdx + 1; j < len(cv.Points); j++ {
				if p := cv.Points[j]; !p.Fits && float64(p.Batch) > last.X {
					s.cutFrom, s.cutAt = last, &plotter.XY{X: float64(p.Batch), Y: last.Y}
					c.marks = append(c.marks, markAt(i, j, s.cutAt.X, s.cutAt.Y))
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
			c.legend.Add(key, lineThumb{color: s.color, width: s.width, dashes: st.Dashes, shape: st.Shape})
		}
	}
	if n := len(drawn) + len(highlighted); c.legend != nil && n > maxLegendEntries {
		c.legend.Add(FormatCount(int64(n-maxLegendEntries)) + " more not listed")
	}
	if c.legend != nil && n(drawn, highlighted) > 0 {
		c.legend.Add("best batch size (ringed)", glyphThumb{draw.GlyphStyle{Color: c.style.Foreground, Radius: 4, Shape: draw.RingGlyph{}}})
		c.legend.Add("recommended batch (boxed)", glyphThumb{draw.GlyphStyle{Color: c.style.Foreground, Radius: 4, Shape: draw.SquareGlyph{}}})
		c.legend.Add("within 1% of the best", lineThumb{color: nearColor(c.style.Foreground), width: nearWidth})
		c.legend.Add("out of memory", glyphThumb{draw.GlyphStyle{Color: c.style.Foreground, Radius: 3.5, Shape: draw.CrossGlyph{}}})
		if banded {
			c.legend.Add("expected error", bandThumb{color: bandColor(c.style.Foreground)})
		}
		if toTarget {
			c.legend.Add("to target: time includes the epochs each batch needs")
		}
	}
	c.plot.Add(&curvesPlotter{series: append(drawn, highlighted...), ring: c.style.Foreground})
	c.setRange(false, !opt.LogY)
	if per, units := metric.secondsPer(); per > 0 {
		timeAxis(&c.plot.Y, per, units, opt.LogY)
	}
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
	// Every band first, so that no band covers another series' line.
	for _, s := range cp.series {
		fill := bandColor(s.color)
		for _, band := range s.bands {
			if len(band) == 1 { // a lone point: a short bar across its range
				b := band[0]
				bar := []vg.Point{{X: tx(b.x), Y: ty(b.lo)}, {X: tx(b.x), Y: ty(b.hi)}}
				c.StrokeLines(draw.LineStyle{Color: fill, Width: loneBandWidth}, c.ClipLinesXY(bar)...)
				continue
			}
			poly := make([]vg.Point, 0, 2*len(band))
			for _, b := range band {
				poly = append(poly, vg.Point{X: tx(b.x), Y: ty(b.hi)})
			}
			for k := len(band) - 1; k >= 0; k-- {
				poly = append(poly, vg.Point{X: tx(band[k].x), Y: ty(band[k].lo)})
			}
			c.FillPolygon(fill, c.ClipPolygonXY(poly))
		}
	}
	// The batches within 1% of the best: a broad stroke under each line.
	for _, s := range cp.series {
		if len(s.near) < 2 {
			continue
		}
		pts := make([]vg.Point, len(s.near))
		for k, xy := range s.near {
			pts[k] = vg.Point{X: tx(xy.X), Y: ty(xy.Y)}
		}
		c.StrokeLines(draw.LineStyle{Color: nearColor(s.color), Width: nearWidth}, c.ClipLinesXY(pts)...)
	}
	for _, s := range cp.series {
		line := draw.LineStyle{Color: s.color, Width: s.width, Dashes: s.dashes, DashOffs: s.dashOffs}
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
		if s.rec != nil {
			pt := vg.Point{X: tx(s.rec.X), Y: ty(s.rec.Y)}
			c.DrawGlyph(draw.GlyphStyle{Color: cp.ring, Radius: 5, Shape: draw.SquareGlyph{}}, pt)
		}
		if s.best != nil {
			pt := vg.Point{X: tx(s.best.X), Y: ty(s.best.Y)}
			c.DrawGlyph(draw.GlyphStyle{Color: s.color, Radius: 3.5, Shape: s.shape}, pt)
			c.DrawGlyph(draw.GlyphStyle{Color: cp.ring, Radius: 5.5, Shape: draw.RingGlyph{}}, pt)
		}
	}
}

// nearWidth is the width of the stroke that marks the batches within 1% of the best.
const nearWidth = vg.Length(7)

// nearAlpha is that stroke's opacity, of 255.
const nearAlpha = 80

// nearColor is a series colour made translucent for its within-1% stroke.
func nearColor(c color.Color) color.NRGBA {
	n := bandColor(c)
	n.A = nearAlpha
	return n
}

// overlapDash is the dash length of series drawn on top of each other.
const overlapDash = vg.Length(5)

// lineThumb is a legend entry's line, in the series' dash, with its marker.
type lineThumb struct {
	color  color.Color
	width  vg.Length
	dashes []vg.Length
	shape  draw.GlyphDrawer // nil: none
}

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle{Color: t.color, Width: t.width, Dashes: t.dashes}, c.Min.X, y, c.Max.X, y)
	if t.shape != nil {
		c.DrawGlyphNoClip(draw.GlyphStyle{Color: t.color, Radius: 3, Shape: t.shape}, c.Center())
	}
}

// glyphThumb is a legend entry's glyph.
type glyphThumb struct{ style draw.GlyphStyle }

func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyphNoClip(t.style, c.Center()) }

// loneBandWidth is the width of the band of a point with no banded neighbour.
const loneBandWidth = vg.Length(4)

// bandColor is a series colour made translucent for its error band.
func bandColor(c color.Color) color.NRGBA {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: bandAlpha}
}

// bandThumb is a legend entry's shaded band.
type bandThumb struct{ color color.Color }

func (t bandThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	h := (c.Max.Y - c.Min.Y) / 3
	c.FillPolygon(t.color, []vg.Point{{X: c.Min.X, Y: y - h}, {X: c.Max.X, Y: y - h}, {X: c.Max.X, Y: y + h}, {X: c.Min.X, Y: y + h}})
}
