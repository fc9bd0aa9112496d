package charts

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
)

func TestBreakdownOrder(t *testing.T) {
	tests := []struct {
		name    string
		sort    bool
		bars    []int     // indices into sampleBars, top to bottom
		rows    []float64 // their rows (Y)
		heading []float64 // rows of the group headings
	}{
		{"sorted", true, []int{2, 1, 0, 3, 5, 4, 6, 7, 8, 9, 10, 11, 12, 13}, []float64{14, 13, 12, 11, 10, 9, 8, 6, 5, 4, 3, 2, 1, 0}, []float64{15, 7}},
		{"as given", false, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, []float64{14, 13, 12, 11, 10, 9, 8, 6, 5, 4, 3, 2, 1, 0}, []float64{15, 7}},
	}
	bars := sampleBars()
	for _, tt := range tests {
		ch := Breakdown(bars, BreakdownOptions{SortByValue: tt.sort})
		marks := ch.Marks()
		if len(marks) != len(tt.bars) {
			t.Fatalf("%s: %d marks, want %d", tt.name, len(marks), len(tt.bars))
		}
		for k, m := range marks {
			if m.Curve != tt.bars[k] || m.Y != tt.rows[k] || m.X != bars[tt.bars[k]].Value {
				t.Errorf("%s: mark %d is bar %d (%s) at row %v, value %v; want bar %d (%s) at row %v, value %v",
					tt.name, k, m.Curve, bars[m.Curve].Label, m.Y, m.X, tt.bars[k], bars[tt.bars[k]].Label, tt.rows[k], bars[tt.bars[k]].Value)
			}
		}
		if ch.plot.Y.Min != -0.5 || ch.plot.Y.Max != 15.5 {
			t.Errorf("%s: rows span %v to %v, want -0.5 to 15.5 (16 rows)", tt.name, ch.plot.Y.Min, ch.plot.Y.Max)
		}
	}
}

// TestBreakdownDrawn checks what a breakdown draws at the "why" panel's size: each
// bar from 0 to its value, its label on its row left of the bars, its value and
// share just right of the bar's end and inside the image, and the group headings.
func TestBreakdownDrawn(t *testing.T) {
	bars := sampleBars()
	wantValue := map[string]string{
		"backward-weight": "38.9 ms (35.2%)", "backward-data": "36.5 ms (33.1%)", "forward": "31.2 ms (28.3%)",
		"optimizer": "2.40 ms (2.2%)", "host": "1.10 ms (1.0%)", "loader": "0.300 ms (0.3%)", "communication": "0 ms (0.0%)",
		"conv": "82.0 ms (75.4%)", "batch norm": "17.6 ms (16.2%)", "relu": "6.10 ms (5.6%)", "add": "1.90 ms (1.7%)",
		"max pool": "0.800 ms (0.7%)", "linear": "0.250 ms (0.2%)", "loss": "0.0400 ms (<0.1%)",
	}
	for _, style := range []Style{LightStyle, DarkStyle} {
		const w, h = 420, 260
		ch := Breakdown(bars, BreakdownOptions{SortByValue: true, Style: style})
		paints, f := record(t, ch, w, h)
		texts := map[string][2]float64{}
		for _, p := range paints {
			if p.op == "text" {
				texts[p.text] = p.pts[0]
				if !sameRGB(p.color, rgba(style.Foreground)) {
					t.Errorf("text %q drawn in %v, want the style's foreground %v", p.text, p.color, style.Foreground)
				}
			}
		}
		valueStyle := draw.TextStyle{Font: withSize(sans, 9), Handler: plot.DefaultTextHandler}
		for _, m := range ch.Marks() {
			b := bars[m.Curve]
			_, rowY := f.ToPixel(0, m.Y)
			x0, _ := f.ToPixel(0, m.Y)
			x1, _ := f.ToPixel(b.Value, m.Y)
			label, ok := texts[b.Label]
			if !ok {
				t.Errorf("no label %q", b.Label)
				continue
			}
			// Text is placed by its baseline: on its row is within half a row.
			half := (f.Y1 - f.Y0) / 16 / 2
			if math.Abs(label[1]-rowY) > half || label[0] > f.X0 {
				t.Errorf("label %q at %v, want on row y≈%v left of the bars (x ≤ %v)", b.Label, label, rowY, f.X0)
			}
			value, ok := texts[wantValue[b.Label]]
			if !ok {
				t.Errorf("no value %q for %s", wantValue[b.Label], b.Label)
				continue
			}
			gap := float64(barValueGap) * 96 / 72
			if math.Abs(value[0]-(x1+gap)) > 0.01 || math.Abs(value[1]-rowY) > half {
				t.Errorf("value of %s at %v, want %v px right of the bar's end (%v) on row y≈%v", b.Label, value, gap, x1, rowY)
			}
			if end := value[0] + float64(valueStyle.Width(wantValue[b.Label]))*96/72; end > w {
				t.Errorf("value of %s ends at x=%v, past the image's %v px", b.Label, end, w)
			}
			// The bar: a rectangle in its group's colour from 0 to the value.
			found := b.Value == 0
			for _, p := range paints {
				if p.op != "fill" || len(p.pts) != 4 || !sameRGB(p.color, SeriesColor(map[string]int{"phase": 0, "layer kind": 1}[b.Group])) {
					continue
				}
				lx, rx := math.Min(p.pts[0][0], p.pts[1][0]), math.Max(p.pts[0][0], p.pts[1][0])
				ty, by := math.Min(p.pts[0][1], p.pts[2][1]), math.Max(p.pts[0][1], p.pts[2][1])
				if ty < rowY && by > rowY {
					found = true
					if math.Abs(lx-x0) > 1e-6 || math.Abs(rx-x1) > 1e-6 {
						t.Errorf("bar %s drawn from x=%v to %v, want %v to %v", b.Label, lx, rx, x0, x1)
					}
				}
			}
			if !found {
				t.Errorf("no bar drawn for %s", b.Label)
			}
		}
		for heading, row := range map[string]float64{"phase": 15, "layer kind": 7} {
			_, rowY := f.ToPixel(0, row)
			if at, ok := texts[heading]; !ok || math.Abs(at[1]-rowY) > (f.Y1-f.Y0)/32 || math.Abs(at[0]-f.X0) > 1e-6 {
				t.Errorf("heading %q at %v (found %v), want at the bars' left (x %v) on row y≈%v", heading, at, ok, f.X0, rowY)
			}
		}
		// Readable: a row is at least as tall as a line of 9-point text.
		ext := valueStyle.FontExtents()
		if pitch, line := (f.Y1-f.Y0)/16, float64(ext.Ascent+ext.Descent)*96/72; pitch < line {
			t.Errorf("rows are %.1f px apart at %d×%d, less than a line of text (%.1f px)", pitch, w, h, line)
		}
	}
}

func rgba(c interface{ RGBA() (r, g, b, a uint32) }) (out struct{ R, G, B, A uint8 }) {
	r, g, b, a := c.RGBA()
	out.R, out.G, out.B, out.A = uint8(r>>8), uint8(g>>8), uint8(b>>8), uint8(a>>8)
	return out
}

func TestBreakdownEdges(t *testing.T) {
	if ch := Breakdown(nil, BreakdownOptions{}); !ch.Empty() {
		t.Error("a breakdown of no bars is not empty")
	} else if _, _, err := ch.Image(420, 260, 96); err != nil {
		t.Errorf("empty breakdown: %v", err)
	}
	bars := []Bar{
		{Label: "conv", Value: 3},
		{Label: "nan", Value: math.NaN()},
		{Label: "negative", Value: -1},
		{Label: "a very long layer kind name indeed", Value: 1},
	}
	ch := Breakdown(bars, BreakdownOptions{})
	if got := len(ch.Marks()); got != 2 {
		t.Fatalf("%d bars drawn, want 2 (NaN and negative left out)", got)
	}
	paints, _ := record(t, ch, 420, 260)
	var texts []string
	for _, p := range paints {
		if p.op == "text" {
			texts = append(texts, p.text)
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"conv", "a very long layer kind …", "3.00 ms (75.0%)", "1.00 ms (25.0%)"} {
		if !strings.Contains(all, want) {
			t.Errorf("texts %q lack %q", texts, want)
		}
	}
	if strings.Contains(all, "nan") || strings.Contains(all, "negative") {
		t.Errorf("texts %q show a left-out bar", texts)
	}
	// One bar in its group: no share.
	one := Breakdown([]Bar{{Label: "host", Value: 1.5, Group: "phase"}}, BreakdownOptions{})
	paints, _ = record(t, one, 420, 260)
	for _, p := range paints {
		if p.op == "text" && strings.Contains(p.text, "%") {
			t.Errorf("a lone bar shows a share: %q", p.text)
		}
	}
}

func TestBarAt(t *testing.T) {
	bars := sampleBars()
	ch := Breakdown(bars, BreakdownOptions{SortByValue: true})
	_, f, err := ch.Image(420, 260, 96)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		what   string
		x, row float64 // x in pixels, row in data
		want   int     // bar index, -1 for none
	}{
		{"on conv's bar", f.X0 + 5, 6, 7},
		{"right of forward's bar", f.X1 - 2, 12, 0},
		{"on loss's label", 5, 0, 13},
		{"a quarter row above conv", f.X0 + 5, 6.25, 7},
		{"on a heading", f.X0 + 5, 7, -1},
	} {
		_, py := f.ToPixel(0, tt.row)
		m, ok := f.BarAt(tt.x, py)
		if (tt.want < 0) == ok || (ok && m.Curve != tt.want) {
			t.Errorf("%s: BarAt = %+v, %v; want bar %d", tt.what, m, ok, tt.want)
		}
	}
	if _, ok := f.BarAt(f.X0+5, f.Y1+20); ok {
		t.Error("found a bar below the chart")
	}
	_, cf, _ := Curves(fleet(1, 1), Options{}).Image(420, 260, 96)
	if _, ok := cf.BarAt(cf.X0+5, cf.Y0+5); ok {
		t.Error("found a bar in a curves chart")
	}
}

func TestBreakdownExport(t *testing.T) {
	ch := Breakdown(sampleBars(), BreakdownOptions{Title: "resnet50, batch 128"})
	for _, format := range []Format{PNG, SVG, PDF} {
		var buf bytes.Buffer
		if err := ch.Write(&buf, format, 420, 260); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		switch format {
		case PNG:
			if !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG")) {
				t.Error("PNG export is not a PNG")
			}
		case SVG:
			for _, want := range []string{"<svg", "backward-weight", "38.9 ms (35.2%)", "layer kind", "resnet50, batch 128"} {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("SVG export lacks %q", want)
				}
			}
		case PDF:
			if !bytes.HasPrefix(buf.Bytes(), []byte("%PDF")) || !bytes.Contains(buf.Bytes(), []byte("%%EOF")) {
				t.Error("PDF export is not a whole PDF")
			}
		}
	}
}
