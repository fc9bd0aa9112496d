package charts

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// ToTarget reports whether any of the curves counts its run to a target accuracy
// (its epochs from a recipe's plan): the total time and cost are then the time and
// cost to the target.
func ToTarget(curves []predictor.Curve) bool {
	for _, c := range curves {
		if c.Recipe != nil {
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

// targetMarks draws, behind the curves of runs to a target, where each visible curve's
// recipe leaves the batches its law was shown on (a shaded region, "extrapolated",
// below and above them, over the whole chart for a recipe of another network) and a
// noise-scale law's critical batch B_noise (a dashed line), where each is inside the
// chart's batch range. It implements plot.Plotter only: the marks never widen the
// range.
type targetMarks struct {
	regions  []regimeRegion
	critical []float64
	fg       color.Color
	text     draw.TextStyle
}

// regimeRegion is a batch range outside a recipe's evidence, From to To (0: to the
// chart's end).
type regimeRegion struct {
	From, To float64
	Name     string
}

// newTargetMarks collects the marks of the visible curves' recipe plans.
func newTargetMarks(curves []predictor.Curve, hidden map[string]bool, style Style, p *plot.Plot) *targetMarks {
	tm := &targetMarks{fg: style.Foreground, text: draw.TextStyle{Color: style.Foreground, Font: withSize(sans, 9), Handler: p.TextHandler}}
	seenRegion, seenCritical := map[regimeRegion]bool{}, map[float64]bool{}
	add := func(r regimeRegion) {
		if !seenRegion[r] {
			seenRegion[r] = true
			tm.regions = append(tm.regions, r)
		}
	}
	for _, c := range curves {
		m := c.Recipe
		if m == nil || hidden[SeriesKey(c)] {
			continue
		}
		l := m.Recipe.Law
		switch {
		case !m.OwnNetwork:
			add(regimeRegion{Name: recipe.Extrapolated})
		default:
			if l.MinBatch > 1 {
				add(regimeRegion{To: float64(l.MinBatch), Name: recipe.Extrapolated})
			}
			if l.MaxBatch < recipe.MaxGlobalBatch {
				add(regimeRegion{From: float64(l.MaxBatch), Name: recipe.Extrapolated})
			}
		}
		if l.Kind == recipe.NoiseScale && !seenCritical[l.CriticalBatch] {
			seenCritical[l.CriticalBatch] = true
			tm.critical = append(tm.critical, l.CriticalBatch)
		}
	}
	if len(tm.regions) == 0 && len(tm.critical) == 0 {
		return nil
	}
	sort.Slice(tm.regions, func(i, j int) bool { return tm.regions[i].From < tm.regions[j].From })
	sort.Float64s(tm.critical)
	return tm
}

// regionAlpha is the opacity of the region beyond the known regime, of 255.
const regionAlpha = 22

func (tm *targetMarks) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	r, g, b, _ := tm.fg.RGBA()
	shade := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: regionAlpha}
	for _, reg := range tm.regions {
		if reg.From >= p.X.Max || (reg.To > 0 && reg.To <= p.X.Min) {
			continue
		}
		x0, x1 := c.Min.X, c.Max.X
		if reg.From > p.X.Min {
			x0 = tx(reg.From)
		}
		if reg.To > 0 && reg.To < p.X.Max {
			x1 = tx(reg.To)
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
