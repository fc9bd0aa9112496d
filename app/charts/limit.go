package charts

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cnntime/app/numfmt"
)

// limitReach is how far beyond its runs an axis widens to show a deadline or a budget:
// up to 4× the largest (on a logarithmic axis also down to a quarter of the smallest).
// A limit further out would crowd every run into a corner; it is left off the axis and
// said in the legend, where there is one.
const limitReach = 4

// limitTint is the opacity, of 255, of the region of the runs that meet the limit.
const limitTint = 20

var limitDashes = []vg.Length{6, 3}

// limitPlotter draws a run's limit on the scatter (a gonum/plot Plotter): the deadline
// as a dashed vertical line at its time, the budget as a dashed horizontal line at its
// cost, each labelled, and a light tint over the region of the runs that meet both.
type limitPlotter struct {
	x, y  float64 // the deadline in hours and the budget in USD; 0: none
	color color.Color
	style draw.TextStyle
}

// newLimitPlotter is the limit of opt, nil without one.
func newLimitPlotter(opt Options, st Style, p *plot.Plot) *limitPlotter {
	l := &limitPlotter{x: positive(opt.DeadlineS / 3600), y: positive(opt.BudgetUSD), color: st.Limit}
	if l.x == 0 && l.y == 0 {
		return nil
	}
	if l.color == nil {
		l.color = st.Foreground
	}
	l.style = draw.TextStyle{Color: l.color, Font: withSize(sans, 9), Handler: p.TextHandler}
	return l
}

// positive is v, or 0 when v is not a positive number.
func positive(v float64) float64 {
	if isBad(v) || v <= 0 {
		return 0
	}
	return v
}

// words names the limit: "deadline 24.0 h", "budget $100.00", or both.
func (l *limitPlotter) words() string {
	var s string
	if l.x > 0 {
		s = "deadline " + numfmt.Seconds(l.x*3600)
	}
	if l.y > 0 {
		if s != "" {
			s += ", "
		}
		s += "budget " + numfmt.USD(l.y)
	}
	return s
}

// widen is an axis's extent lo–hi widened to show a limit at v (0: none), when v lies
// within limitReach of it.
func (l *limitPlotter) widen(v, lo, hi float64, logScale bool) (float64, float64) {
	if v <= 0 || v > hi*limitReach || (logScale && v < lo/limitReach) {
		return lo, hi
	}
	return math.Min(lo, v), math.Max(hi, v)
}

func (l *limitPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	x0, y0 := c.Min.X, c.Min.Y
	x1, y1 := c.Max.X, c.Max.Y
	xIn := l.x > 0 && l.x > p.X.Min && l.x < p.X.Max
	yIn := l.y > 0 && l.y > p.Y.Min && l.y < p.Y.Max
	// The region of the runs that meet the limit, up to each line drawn; a limit beyond
	// its axis's end leaves the whole of that axis in the region.
	rx, ry := x1, y1
	if xIn {
		rx = tx(l.x)
	} else if l.x > 0 && l.x <= p.X.Min {
		rx = x0
	}
	if yIn {
		ry = ty(l.y)
	} else if l.y > 0 && l.y <= p.Y.Min {
		ry = y0
	}
	if rx > x0 && ry > y0 {
		r, g, b, _ := l.color.RGBA()
		tint := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: limitTint}
		c.FillPolygon(tint, []vg.Point{{X: x0, Y: y0}, {X: rx, Y: y0}, {X: rx, Y: ry}, {X: x0, Y: ry}})
	}
	line := draw.LineStyle{Color: l.color, Width: 1, Dashes: limitDashes}
	if xIn {
		c.StrokeLine2(line, rx, y0, rx, y1)
		label := l.style
		label.YAlign = draw.YTop
		at := vg.Point{X: rx + 3, Y: y1 - 3}
		text := "deadline " + numfmt.Seconds(l.x*3600)
		if at.X+label.Width(text) > x1 { // no room at its right: at its left
			label.XAlign, at.X = draw.XRight, rx-3
		}
		c.FillText(label, at, text)
	}
	if yIn {
		c.StrokeLine2(line, x0, ry, x1, ry)
		label := l.style
		label.XAlign = draw.XRight
		c.FillText(label, vg.Point{X: x1 - 3, Y: ry + 3}, "budget "+numfmt.USD(l.y))
	}
}
