package charts

import (
	"image/color"
	"slices"
	"strings"
	"testing"

	"cnntime/predictor"
	"cnntime/predictor/recipe"
)

// A machine keeps its colour, and a CNN its dash and marker, when other series come
// and go; one that comes back gets its old look again while no one else took it.
func TestColoursStayWhenASeriesGoes(t *testing.T) {
	models := []string{"resnet50", "vgg16"}
	machines := []string{"aws/a", "gcp/b", "azure/c", "lambda/d", "runpod/e"}
	select_ := func(ms []string) []predictor.Curve {
		var out []predictor.Curve
		for _, m := range models {
			for _, id := range ms {
				out = append(out, synthCurve(m, id, 1, 256, 1))
			}
		}
		return out
	}
	s := NewStyles()
	all := select_(machines)
	s.Assign(all)
	before := map[string]SeriesStyle{}
	for _, c := range all {
		before[SeriesKey(c)] = s.Of(c)
	}
	seen := map[[3]uint8]string{}
	for _, id := range machines {
		st := s.Of(predictor.Curve{Model: "resnet50", Machine: id})
		k := [3]uint8{st.Color.R, st.Color.G, st.Color.B}
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share a colour", id, other)
		}
		seen[k] = id
	}
	if a, b := s.Of(all[0]), s.Of(all[len(machines)]); a.Color != b.Color || slices.Equal(a.Dashes, b.Dashes) || a.Shape == b.Shape {
		t.Errorf("one machine, two CNNs: want the same colour and a different dash and marker, got %+v and %+v", a, b)
	}

	// Remove gcp/b, then vgg16: every remaining series keeps its look.
	for _, step := range []struct {
		name     string
		machines []string
		models   []string
	}{
		{"gcp/b removed", []string{"aws/a", "azure/c", "lambda/d", "runpod/e"}, models},
		{"vgg16 removed too", []string{"aws/a", "azure/c", "lambda/d", "runpod/e"}, models[:1]},
	} {
		var curves []predictor.Curve
		for _, c := range select_(step.machines) {
			if slices.Contains(step.models, c.Model) {
				curves = append(curves, c)
			}
		}
		s.Assign(curves)
		for _, c := range curves {
			if got, want := s.Of(c), before[SeriesKey(c)]; got.Color != want.Color || got.ShapeSlot != want.ShapeSlot {
				t.Errorf("%s: %s changed from colour %v marker %d to %v %d", step.name, SeriesKey(c), want.Color, want.ShapeSlot, got.Color, got.ShapeSlot)
			}
		}
		// The chart draws what the styles say, whatever the series' index.
		chart := Scatter(curves, Options{Styles: s})
		for _, m := range chart.Marks() {
			c := curves[m.Curve]
			if chart.plotColor(m) != before[SeriesKey(c)].Color {
				t.Errorf("%s: the scatter draws %s in %v, its colour is %v", step.name, SeriesKey(c), chart.plotColor(m), before[SeriesKey(c)].Color)
			}
		}
	}
	// A new machine takes the free colour no one had, not gcp/b's; gcp/b back gets its own.
	s.Assign(select_([]string{"aws/a", "azure/c", "lambda/d", "runpod/e", "new/f"}))
	if s.Of(predictor.Curve{Machine: "new/f"}).ColorSlot == before["resnet50 on gcp/b"].ColorSlot {
		t.Error("a new machine took the colour of one removed a moment ago")
	}
	s.Assign(select_(append(machines, "new/f")))
	if got := s.Of(predictor.Curve{Model: "resnet50", Machine: "gcp/b"}); got.Color != before["resnet50 on gcp/b"].Color {
		t.Errorf("gcp/b came back in %v, it had %v", got.Color, before["resnet50 on gcp/b"].Color)
	}
}

// Curves drawn on top of each other are found, hidden ones left out.
func TestOverlaps(t *testing.T) {
	a := synthCurve("resnet50", "aws/g4dn.xlarge", 1, 256, 0.5)
	b := synthCurve("resnet50", "gcp/n1-t4", 1, 256, 0.4)      // the same times, another price
	c := synthCurve("resnet50", "azure/nc4as-t4", 1, 256, 0.5) // the same times
	d := synthCurve("resnet50", "aws/p3.2xlarge", 0.5, 256, 3)
	curves := []predictor.Curve{a, d, b, c}
	if got := Overlaps(curves, MetricTotal, nil); len(got) != 1 || !slices.Equal(got[0], []int{0, 2, 3}) {
		t.Errorf("total time: overlaps %v, want [[0 2 3]]", got)
	}
	if got := Overlaps(curves, MetricCost, nil); len(got) != 1 || !slices.Equal(got[0], []int{0, 3}) {
		t.Errorf("cost: overlaps %v, want [[0 3]] (the cheaper T4 is its own curve)", got)
	}
	if got := Overlaps(curves, MetricTotal, map[string]bool{SeriesKey(b): true, SeriesKey(c): true}); len(got) != 0 {
		t.Errorf("with two of them hidden: overlaps %v, want none", got)
	}
}

// An unknown price is no price: a series without one is never drawn on the scatter's
// cost axis (not at $0) nor on its Pareto front, and the chart says which it left out.
func TestUnknownPricesNeverOnTheScatter(t *testing.T) {
	priced := fleet(2, 3)
	unpriced := synthCurve("resnet50", "local/cpu", 4, 64, 0)
	unpriced2 := synthCurve("vgg16", "local/cpu", 4, 64, 0)
	if unpriced.CostKnown {
		t.Fatal("the local CPU should have no price")
	}
	curves := append([]predictor.Curve{unpriced}, priced...)
	curves = append(curves, unpriced2)
	for _, opt := range []Options{{}, {LogX: true, LogY: true}, {NoErrorBands: true}} {
		c := Scatter(curves, opt)
		if len(c.Marks()) != len(priced) {
			t.Errorf("%+v: %d points, want the %d priced ones", opt, len(c.Marks()), len(priced))
		}
		for i, m := range c.Marks() {
			if !curves[m.Curve].CostKnown || m.Y <= 0 {
				t.Errorf("%+v: point %d is %s at $%v", opt, i, SeriesKey(curves[m.Curve]), m.Y)
			}
		}
		for _, i := range c.Front() {
			if !curves[c.Marks()[i].Curve].CostKnown {
				t.Errorf("%+v: the Pareto front holds %s, which has no price", opt, SeriesKey(curves[c.Marks()[i].Curve]))
			}
		}
		if got := c.Unpriced(); !slices.Equal(got, []string{SeriesKey(unpriced), SeriesKey(unpriced2)}) {
			t.Errorf("%+v: left out %v", opt, got)
		}
		// The cost axis covers the priced points only: its top is theirs, not moved by a $0.
		top := 0.0
		for _, m := range c.Marks() {
			top = max(top, m.Y, m.YHi)
		}
		if c.plot.Y.Max > top*1.2 {
			t.Errorf("%+v: the cost axis runs to %v for points up to %v", opt, c.plot.Y.Max, top)
		}
	}
	// Only unpriced series: nothing to draw, and the chart says why.
	if c := Scatter([]predictor.Curve{unpriced}, Options{}); !c.Empty() || len(c.Unpriced()) != 1 {
		t.Errorf("an unpriced series alone: %d marks, left out %v", len(c.Marks()), c.Unpriced())
	}
	// Its curve's tooltip says the cost is unknown rather than $0.00.
	if tip := Tooltip(unpriced, unpriced.Points[unpriced.Best]); !strings.Contains(tip, "cost unknown") || strings.Contains(tip, "$0.00") {
		t.Errorf("tooltip of an unpriced point: %q", tip)
	}
}

// A crosshair reads every series at the hovered batch size: Frame.Column finds each
// series' mark nearest the pointer's column, and ColumnTooltip lists them all, the
// ones hidden under another line included.
func TestCrosshairReadsEverySeries(t *testing.T) {
	a := synthCurve("resnet50", "aws/g4dn.xlarge", 1, 256, 0.5)
	b := synthCurve("resnet50", "gcp/n1-t4", 1, 256, 0.4) // on top of a
	c := synthCurve("resnet50", "aws/p3.2xlarge", 0.5, 512, 3)
	curves := []predictor.Curve{a, b, c}
	chart := Curves(curves, Options{})
	_, f, err := chart.Image(800, 500, 96)
	if err != nil {
		t.Fatal(err)
	}
	// The column at batch 64.
	px, _ := f.ToPixel(64, 1)
	col := f.Column(px, 3)
	if len(col) != 3 {
		t.Fatalf("the column at batch 64 holds %d marks, want one per series: %+v", len(col), col)
	}
	for i, m := range col {
		if m.Curve != i || m.X != 64 {
			t.Errorf("mark %d: %+v, want series %d at batch 64", i, m, i)
		}
	}
	tip := ColumnTooltip(curves, MetricTotal, col[2], col)
	for _, want := range []string{"resnet50 on aws/p3.2xlarge\nbatch size 64", "Total time at batch 64, every series:",
		"resnet50 · aws/g4dn.xlarge: ", "resnet50 · gcp/n1-t4: ", "resnet50 · aws/p3.2xlarge: "} {
		if !strings.Contains(tip, want) {
			t.Errorf("the crosshair's tooltip lacks %q:\n%s", want, tip)
		}
	}
	// Far from every point, the column is empty.
	if got := f.Column(f.X0-50, 3); len(got) != 0 {
		t.Errorf("left of the data: %d marks", len(got))
	}
	// The column found the hovered series at another batch (its mark nearest the
	// pointer's x is not the point nearest the pointer): the list reads the hovered
	// point, as the lines above it do, never "(batch 48)" for the series read out.
	other := append([]Mark(nil), col...)
	other[2].Point, other[2].X = other[2].Point-1, 48
	tip = ColumnTooltip(curves, MetricTotal, col[2], other)
	for _, line := range strings.Split(tip, "\n") {
		if strings.Contains(line, "aws/p3.2xlarge: ") && strings.Contains(line, "(batch") {
			t.Errorf("the hovered series is listed at another batch: %q", line)
		}
	}
	// To a target, the list is of the time to the target, not the total time.
	plan := recipe.Plan{Recipe: recipe.Recipe{Name: "r", Dataset: "imagenet-1k", Epochs: 90, GlobalBatch: 256, Top1: 76,
		Law: recipe.Law{Kind: recipe.Published, MinBatch: 256, MaxBatch: 256}}, OwnNetwork: true, Target: 76, TargetFactor: 1}
	for i := range curves {
		curves[i].Recipe = &plan
	}
	if tip := ColumnTooltip(curves, MetricTotal, col[2], col); !strings.Contains(tip, "Time to target at batch 64, every series:") || strings.Contains(tip, "Total time") {
		t.Errorf("to a target the crosshair says:\n%s", tip)
	}
}

// A box drawn on a frame zooms into it, a drag pans, and the zoomed view shows only
// the marks inside it; an invalid or tiny box changes nothing.
func TestZoomAndPan(t *testing.T) {
	curves := fleet(2, 3)
	for _, opt := range []Options{{}, {LogX: true, LogY: true}} {
		chart := Curves(curves, opt)
		_, f, err := chart.Image(800, 500, 96)
		if err != nil {
			t.Fatal(err)
		}
		all := f.View()
		// The box from batch 16 to 128 across, the middle half of the y range up.
		x0, _ := f.ToPixel(16, all.YMin)
		x1, _ := f.ToPixel(128, all.YMin)
		y0, y1 := f.Y0+(f.Y1-f.Y0)/4, f.Y1-(f.Y1-f.Y0)/4
		r, ok := f.Zoomed(x1, y1, x0, y0) // any corner order
		if !ok || !near(r.XMin, 16, 1e-6) || !near(r.XMax, 128, 1e-6) || r.YMin <= all.YMin || r.YMax >= all.YMax {
			t.Fatalf("%+v: zoom to batches 16–128: %+v, %v (all %+v)", opt, r, ok, all)
		}
		if _, ok := f.Zoomed(x0, y0, x0+3, y0+3); ok {
			t.Errorf("%+v: a 3-pixel box zoomed", opt)
		}
		_, zf, err := chart.ImageIn(800, 500, 96, &r)
		if err != nil {
			t.Fatal(err)
		}
		if v := zf.View(); v != r {
			t.Errorf("%+v: the zoomed frame shows %+v, want %+v", opt, v, r)
		}
		// A mark outside the view is not found there.
		px, py := zf.ToPixel(1024, all.YMax)
		if m, ok := zf.Nearest(px, py, 1e6); ok && (m.X < r.XMin*(1-1e-9) || m.X > r.XMax*(1+1e-9)) {
			t.Errorf("%+v: the zoomed view found a mark outside it: %+v", opt, m)
		}
		// A pan of a tenth of the width to the right shows data further left.
		p := zf.Panned((zf.X1-zf.X0)/10, 0)
		if !(p.XMin < r.XMin && p.XMax < r.XMax) || !near(p.YMin, r.YMin, 1e-9) {
			t.Errorf("%+v: pan right: %+v from %+v", opt, p, r)
		}
		// The whole chart is drawn again after the zoomed render: the zoom is the view's.
		if _, f2, _ := chart.Image(800, 500, 96); f2.View() != all {
			t.Errorf("%+v: after a zoomed render the chart shows %+v, want %+v", opt, f2.View(), all)
		}
	}
}

// A machine's colour comes from its id, not from the order machines were selected in:
// the same selection in another order (a relaunch) colours every machine alike, and
// the colours of the machines shown stay apart (no two blues).
func TestMachineColoursDoNotDependOnOrder(t *testing.T) {
	ids := []string{"aws/g6.xlarge", "gcp/a2-highgpu-1g", "azure/Standard_NC40ads_H100_v5", "lambda/gpu_1x_h100_sxm5", "aws/p4d.24xlarge"}
	curvesOf := func(order []string) []predictor.Curve {
		var out []predictor.Curve
		for _, m := range order {
			out = append(out, synthCurve("resnet50", m, 1, 64, 1))
		}
		return out
	}
	colours := func(order []string) map[string]color.RGBA {
		cs := curvesOf(order)
		s := StylesFor(cs)
		out := map[string]color.RGBA{}
		for _, c := range cs {
			out[c.Machine] = s.Of(c).Color
		}
		return out
	}
	first := colours(ids)
	reversed := make([]string, len(ids))
	for i, id := range ids {
		reversed[len(ids)-1-i] = id
	}
	again := colours(reversed)
	for _, id := range ids {
		if first[id] != again[id] {
			t.Errorf("%s: %v selected first, %v selected last", id, first[id], again[id])
		}
		for _, other := range ids {
			if other != id && alikeColours(slotOf(first[id]), slotOf(first[other])) {
				t.Errorf("%s and %s are drawn in look-alike colours %v and %v", id, other, first[id], first[other])
			}
		}
	}
	// Adding a machine recolours none of the others.
	more := colours(append(append([]string(nil), ids...), "runpod/l40s-secure-cloud"))
	for _, id := range ids {
		if more[id] != first[id] {
			t.Errorf("adding a machine recoloured %s", id)
		}
	}
}

// slotOf is a palette colour's index.
func slotOf(c color.RGBA) int {
	for i, p := range palette {
		if p == c {
			return i
		}
	}
	return -1
}
