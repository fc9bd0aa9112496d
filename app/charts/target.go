package charts

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cnntime/predictor"
)

// ToTarget reports whether any of the curves counts its run to a target accuracy
// (its epochs from an epochs model): the total time and cost are then the time and
// cost to the target.
func ToTarget(curves []predictor.Curve) bool {
	for _, c := range curves {
		if c.Convergence != nil {
			return true
		}
	}
	return false
}

// targetNames are the axis label and the short name of the metrics that change
// meaning for curves trained to a target: the time and the cost to the target.
var targetNames = map[Metric][2]string{
	MetricTotal: {"time to target accuracy (h)", "Time to target"},
	"":          {"time to target accuracy (h)", "Time to target"},
	MetricCost:  {"cost to target accuracy (USD)", "Cost to target"},
}

// TargetLabel is the axis label of the metric for curves trained to a target.
func (m Metric) TargetLabel() string {
	if n, ok := targetNames[m]; ok {
		return n[0]
	}
	return m.Label()
}

// TargetTitle is the metric's short name for curves trained to a target: "Time to
// target", "Cost to target", else Title.
func (m Metric) TargetTitle() string {
	if n, ok := targetNames[m]; ok {
		return n[1]
	}
	return m.Title()
}

// TitleFor is the metric's short name for these curves: TargetTitle when any is
// trained to a target, else Title.
func (m Metric) TitleFor(curves []predictor.Curve) string {
	if ToTarget(curves) {
		return m.TargetTitle()
	}
	return m.Title()
}

// ScatterTitle is the scatter's title for these curves: "Min total time vs cost", or
// to a target "Min time to target vs cost".
func ScatterTitle(curves []predictor.Curve) string {
	if ToTarget(curves) {
		return "Min time to target vs cost"
	}
	return "Min total time vs cost"
}

// targetMarks draws, behind the curves of runs to a target, where the epochs model
// leaves the regime the usual optimizer is known to hold in (a shaded region from that
// batch on, named by the regime beyond it, e.g. "LARS") and the critical batch
// B_noise (a dashed line), where each is inside the chart's batch range. It implements
// plot.Plotter only: the marks never widen the range.
type targetMarks struct {
	regions  []regimeRegion
	critical []float64
	fg       color.Color
	text     draw.TextStyle
}

// regimeRegion is the batch range beyond the known regime, from From on.
type regimeRegion struct {
	From float64
	Name string
}

// newTargetMarks collects the marks of the visible curves' epochs models.
func newTargetMarks(curves []predictor.Curve, hidden map[string]bool, style Style, p *plot.Plot) *targetMarks {
	tm := &targetMarks{fg: style.Foreground, text: draw.TextStyle{Color: style.Foreground, Font: withSize(sans, 9), Handler: p.TextHandler}}
	seenRegion, seenCritical := map[float64]bool{}, map[float64]bool{}
	for _, c := range curves {
		m := c.Convergence
		if m == nil || hidden[SeriesKey(c)] {
			continue
		}
		if known := m.KnownUpTo(); known > 0 && !seenRegion[float64(known)] {
			seenRegion[float64(known)] = true
			tm.regions = append(tm.regions, regimeRegion{From: float64(known), Name: regimeTitle(m.RegimeAt(known + 1).Name)})
		}
		if !seenCritical[m.NoiseBatch] {
			seenCritical[m.NoiseBatch] = true
			tm.critical = append(tm.critical, m.NoiseBatch)
		}
	}
	if len(tm.regions) == 0 && len(tm.critical) == 0 {
		return nil
	}
	sort.Slice(tm.regions, func(i, j int) bool { return tm.regions[i].From < tm.regions[j].From })
	sort.Float64s(tm.critical)
	return tm
}

// regimeTitle is how a region beyond the known regime is labelled on a chart.
func regimeTitle(name string) string {
	switch name {
	case "lars":
		return "LARS/LAMB"
	case "extrapolated":
		return "extrapolated"
	}
	return name
}

// regionAlpha is the opacity of the region beyond the known regime, of 255.
const regionAlpha = 22

func (tm *targetMarks) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	r, g, b, _ := tm.fg.RGBA()
	shade := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: regionAlpha}
	for i, reg := range tm.regions {
		if reg.From >= p.X.Max {
			continue
		}
		x0 := c.Min.X
		if reg.From > p.X.Min {
			x0 = tx(reg.From)
		}
		x1 := c.Max.X
		if i+1 < len(tm.regions) && tm.regions[i+1].From < p.X.Max {
			x1 = tx(tm.regions[i+1].From)
		}
		c.FillPolygon(shade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		c.FillText(tm.text, vg.Point{X: x0 + 3, Y: c.Max.Y - 12}, reg.Name)
	}
	dashed := draw.LineStyle{Color: tm.fg, Width: 1, Dashes: []vg.Length{4, 3}}
	for _, bn := range tm.critical {
		if bn <= p.X.Min || bn >= p.X.Max {
			continue
		}
		x := tx(bn)
		c.StrokeLine2(dashed, x, c.Min.Y, x, c.Max.Y)
		c.FillText(tm.text, vg.Point{X: x + 3, Y: c.Max.Y - 24}, fmt.Sprintf("critical batch %s", FormatCount(int64(bn+0.5))))
	}
}
