package charts

import (
	"image/color"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/recorder"
)

// sizedRecorder records what a chart draws, at a size.
type sizedRecorder struct {
	recorder.Canvas
	w, h vg.Length
}

func (r *sizedRecorder) Size() (vg.Length, vg.Length) { return r.w, r.h }

// paint is one thing a chart drew, with the colour and line width it was drawn in;
// points are in pixels from the top-left corner of a rendering at 96 dpi.
type paint struct {
	op    string // "fill", "stroke" or "text"
	color color.Color
	width vg.Length
	pts   [][2]float64
	text  string
}

// record draws a chart at w×h pixels (96 dpi) on a recorder and returns what it
// drew, in order, and the frame of the same rendering as an image.
func record(t *testing.T, ch *Chart, w, h int) ([]paint, *Frame) {
	t.Helper()
	_, f, err := ch.Image(w, h, 96)
	if err != nil {
		t.Fatal(err)
	}
	rec := &sizedRecorder{w: vg.Length(w) * vg.Inch / 96, h: vg.Length(h) * vg.Inch / 96}
	ch.mu.Lock()
	ch.draw(rec)
	ch.mu.Unlock()

	toPx := func(p vg.Point) [2]float64 {
		return [2]float64{float64(p.X) * 96 / 72, float64(h) - float64(p.Y)*96/72}
	}
	type state struct {
		color color.Color
		width vg.Length
	}
	st := state{color.Black, 1}
	var stack []state
	var out []paint
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			st.color = a.Color
		case *recorder.SetLineWidth:
			st.width = a.Width
		case *recorder.Push:
			stack = append(stack, st)
		case *recorder.Pop:
			st, stack = stack[len(stack)-1], stack[:len(stack)-1]
		case *recorder.Fill, *recorder.Stroke:
			var path vg.Path
			op := "fill"
			if s, ok := a.(*recorder.Stroke); ok {
				path, op = s.Path, "stroke"
			} else {
				path = a.(*recorder.Fill).Path
			}
			var pts [][2]float64
			for _, c := range path {
				if c.Type == vg.MoveComp || c.Type == vg.LineComp {
					pts = append(pts, toPx(c.Pos))
				}
			}
			out = append(out, paint{op: op, color: st.color, width: st.width, pts: pts})
		case *recorder.FillString:
			out = append(out, paint{op: "text", color: st.color, pts: [][2]float64{toPx(a.Point)}, text: a.String})
		}
	}
	return out, f
}

// alphaOf is a colour's alpha, 0 to 255.
func alphaOf(c color.Color) uint8 {
	_, _, _, a := c.RGBA()
	return uint8(a >> 8)
}

// sameRGB reports whether two colours have the same red, green and blue, ignoring alpha.
func sameRGB(a color.Color, b color.RGBA) bool {
	n := color.NRGBAModel.Convert(a).(color.NRGBA)
	return n.R == b.R && n.G == b.G && n.B == b.B
}
