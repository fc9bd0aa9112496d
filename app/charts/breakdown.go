package charts

import (
	"cmp"
	"image/color"
	"math"
	"slices"
	"unicode/utf8"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bar is one bar of a breakdown chart: a part of a training step, in milliseconds.
type Bar struct {
	Label string  // what the part is: "forward", "backward-data", "conv", "batch norm"
	Value float64 // milliseconds; a bar that is not a number or negative is left out
	// Group is the whole the bar is a part of ("phase", "layer kind"): the bars of a
	// group are drawn together under its name, in one colour (SeriesColor of the
	// group's place, 0 for the first), each with its share of the group's sum.
	// Groups come in the order they first appear; "" is a group with no heading.
	Group string
	// ShareOf, when positive, is the whole the bar's share is of (the step's time,
	// say), instead of its group's sum.
	ShareOf float64
}

// BreakdownOptions say how a breakdown chart is drawn.
type BreakdownOptions struct {
	Title string
	Style Style // LightStyle when zero
	// SortByValue puts each group's bars largest first; otherwise they keep the
	// order given.
	SortByValue bool
}

// maxBarLabel is the longest bar label drawn, in characters; longer ones are cut.
const maxBarLabel = 24

// barThickness is a bar's height as a fraction of its row.
const barThickness = 0.62

// Breakdown builds a horizontal bar chart of how a step splits into parts, for a
// "why this number?" panel: one row a bar, labelled on the left, its value in
// milliseconds and its share (of Bar.ShareOf, else of its group) at the bar's end, and each group under a
// heading of its name. It renders and exports like the other charts and is readable
// at about 420×260 pixels with two groups of seven or eight bars.
//
// Its marks are the bars drawn, top to bottom: Curve is the bar's index in bars, X
// its value and Y its row (the top row has the largest Y). Frame.BarAt finds the bar
// under the mouse.
func Breakdown(bars []Bar, opt BreakdownOptions) *Chart {
	c := newChart(Options{Title: opt.Title, Style: opt.Style}, "", "")
	c.bars = true
	p := c.plot
	p.HideX()
	p.Y.Width, p.Y.Tick.Width, p.Y.Tick.Length = 0, 0, 0

	// The groups in order of first appearance, each with its bars.
	type group struct {
		name string
		idx  []int // into bars
		sum  float64
	}
	var groups []*group
	byName := map[string]*group{}
	for i, b := range bars {
		if isBad(b.Value) || b.Value < 0 {
			continue
		}
		g := byName[b.Group]
		if g == nil {
			g = &group{name: b.Group}
			byName[b.Group] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
		g.sum += b.Value
	}
	rows := 0
	for _, g := range groups {
		if opt.SortByValue {
			slices.SortStableFunc(g.idx, func(a, b int) int { return cmp.Compare(bars[b].Value, bars[a].Value) })
		}
		if g.name != "" {
			rows++
		}
		rows += len(g.idx)
	}

	bp := &barsPlotter{
		value: draw.TextStyle{Color: c.style.Foreground, Font: withSize(sans, 9), YAlign: draw.YCenter, Handler: p.TextHandler},
		// Not bold: vgpdf registers a font without its weight and fails on bold text.
		head: draw.TextStyle{Color: c.style.Foreground, Font: withSize(sans, 10), YAlign: draw.YCenter, Handler: p.TextHandler},
		rule: draw.LineStyle{Color: c.style.Grid, Width: 1},
	}
	var ticks []plot.Tick
	maxValue := 0.0
	row := 0
	y := func() float64 { return float64(rows - 1 - row) } // the current row, top down
	for gi, g := range groups {
		clr := SeriesColor(gi)
		if g.name != "" {
			bp.heads = append(bp.heads, barHead{y: y(), text: g.name})
			row++
		}
		for _, i := range g.idx {
			b := bars[i]
			value := FormatMS(b.Value)
			switch {
			case b.ShareOf > 0:
				value += " (" + FormatShare(b.Value, b.ShareOf) + ")"
			case len(g.idx) > 1 && g.sum > 0:
				value += " (" + FormatShare(b.Value, g.sum) + ")"
			}
			bp.bars = append(bp.bars, barRow{y: y(), value: b.Value, text: value, color: clr})
			ticks = append(ticks, plot.Tick{Value: y(), Label: shorten(b.Label, maxBarLabel)})
			c.marks = append(c.marks, markAt(i, 0, b.Value, y()))
			maxValue = math.Max(maxValue, b.Value)
			row++
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min, p.Y.Max = -0.5, math.Max(float64(rows)-0.5, 0.5)
	if maxValue <= 0 {
		maxValue = 1
	}
	p.X.Min, p.X.Max = 0, maxValue
	p.Add(bp)
	// Leave room right of each bar for its value: at X.Max = M a bar of value v
	// ends v/M of the width w across, and its text of width l fits if v·w/M + l ≤ w.
	c.layout = func(plotArea draw.Canvas) {
		da := p.DataCanvas(plotArea) // does not depend on X.Max: the x axis is hidden
		w := float64(da.Max.X - da.Min.X)
		m := maxValue
		for _, b := range bp.bars {
			l := float64(bp.value.Width(b.text) + barValueGap)
			if l > w*3/4 { // too narrow for the text: keep a quarter for the bars
				l = w * 3 / 4
			}
			m = math.Max(m, b.value*w/(w-l))
		}
		p.X.Max = m
	}
	return c
}

// barValueGap is the space between a bar's end and its value.
const barValueGap = vg.Length(3)

// shorten cuts a label to n characters, ending it in "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

type barRow struct {
	y, value float64
	text     string
	color    color.RGBA
}

type barHead struct {
	y    float64
	text string
}

// barsPlotter draws the bars, their values and the group headings (a gonum/plot Plotter).
type barsPlotter struct {
	bars        []barRow
	heads       []barHead
	value, head draw.TextStyle
	rule        draw.LineStyle // after a heading, across the chart
}

func (bp *barsPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	for _, h := range bp.heads {
		y := ty(h.y)
		c.FillText(bp.head, vg.Point{X: c.Min.X, Y: y}, h.text)
		if x := c.Min.X + bp.head.Width(h.text) + barValueGap; x < c.Max.X {
			c.StrokeLine2(bp.rule, x, y, c.Max.X, y)
		}
	}
	for _, b := range bp.bars {
		x0, x1 := tx(0), tx(b.value)
		y0, y1 := ty(b.y-barThickness/2), ty(b.y+barThickness/2)
		if x1 > x0 {
			c.FillPolygon(b.color, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		}
		c.FillText(bp.value, vg.Point{X: x1 + barValueGap, Y: ty(b.y)}, b.text)
	}
}
