package views

import (
	"math"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// flowLayout places its objects left to right at their minimum sizes and starts a new
// row where the next would not fit. Its minimum width is its widest object's, so a
// row of chips or legend entries never sets a window's least width (Fyne's row-wrap
// layout keeps the width it was once laid out at as its minimum); its minimum height
// is what its rows took at the width it was last given.
type flowLayout struct {
	hPad, vPad float32
	width      float32 // the width of the last layout; 0 before the first
}

func newFlowLayout(hPad, vPad float32) *flowLayout { return &flowLayout{hPad: hPad, vPad: vPad} }

// flowEntryWidth is the least width a text field takes in a flow: its own least
// width is a couple of letters.
const flowEntryWidth = 96

// flowSize is an object's size in a flow.
func flowSize(o fyne.CanvasObject) fyne.Size {
	s := o.MinSize()
	if _, ok := o.(*widget.Entry); ok {
		s.Width = fyne.Max(s.Width, flowEntryWidth)
	}
	return s
}

func (l *flowLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var widest float32
	for _, o := range objs {
		if o.Visible() {
			widest = fyne.Max(widest, flowSize(o).Width)
		}
	}
	width := l.width
	if width <= 0 {
		width = widest
	}
	return fyne.NewSize(widest, l.place(objs, width, false))
}

func (l *flowLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	l.width = size.Width
	l.place(objs, size.Width, true)
}

// place lays the objects out in rows of width (moving them when move is set) and
// returns the height the rows take.
func (l *flowLayout) place(objs []fyne.CanvasObject, width float32, move bool) float32 {
	var x, y, rowH float32
	first := true
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		s := flowSize(o)
		if !first && x+s.Width > width {
			x, y = 0, y+rowH+l.vPad
			rowH = 0
		}
		if move {
			o.Move(fyne.NewPos(x, y))
			o.Resize(fyne.NewSize(fyne.Min(s.Width, fyne.Max(width, 1)), s.Height))
		}
		x += s.Width + l.hPad
		rowH = fyne.Max(rowH, s.Height)
		first = false
	}
	if first {
		return 0
	}
	return y + rowH
}

// maxHeightLayout gives its one child its minimum height up to max, and the rest
// to scrolling inside it; a fixed one is max high whatever its child needs, so what is
// below it stays where it is when the child grows or shrinks.
type maxHeightLayout struct {
	max   float32
	fixed bool
}

func (l *maxHeightLayout) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		m := o.MinSize()
		if c, ok := o.(*container.Scroll); ok {
			m = c.Content.MinSize()
		}
		s = s.Max(fyne.NewSize(m.Width, fyne.Min(m.Height, l.max)))
	}
	if l.fixed {
		s.Height = l.max
	}
	return s
}

func (l *maxHeightLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Resize(size)
		o.Move(fyne.NewPos(0, 0))
	}
}

// sideOrBelow puts a panel beside its main object when the space is wide enough and
// below it otherwise: the curves chart's legend goes to the right on a wide screen
// (a column the height of the chart) and under the chart on a narrow one.
type sideOrBelow struct {
	wideFrom  float32 // the width from which the panel goes to the side
	sideWidth float32 // its least width there; it grows with the space to 1.5 times that
	maxBelow  float32 // the share of the height it may take below (0–1)
}

// objects: [main, panel]
func (l *sideOrBelow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	main := objs[0].MinSize()
	if len(objs) < 2 || !objs[1].Visible() {
		return main
	}
	panel := objs[1].MinSize()
	return fyne.NewSize(fyne.Max(main.Width, panel.Width), main.Height+fyne.Min(panel.Height, 60))
}

func (l *sideOrBelow) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	main := objs[0]
	if len(objs) < 2 || !objs[1].Visible() {
		main.Move(fyne.NewPos(0, 0))
		main.Resize(size)
		return
	}
	panel := objs[1]
	if size.Width >= l.wideFrom {
		w := fyne.Min(fyne.Max(l.sideWidth, size.Width*0.3), 2.4*l.sideWidth) // wider on a wider window
		main.Move(fyne.NewPos(0, 0))
		main.Resize(fyne.NewSize(size.Width-w, size.Height))
		panel.Move(fyne.NewPos(size.Width-w, 0))
		panel.Resize(fyne.NewSize(w, size.Height))
		return
	}
	want := panelHeightFor(panel, size.Width)
	h := fyne.Min(want, size.Height*l.maxBelow)
	h = fyne.Max(h, fyne.Min(want, 60))
	main.Move(fyne.NewPos(0, 0))
	main.Resize(fyne.NewSize(size.Width, size.Height-h))
	panel.Move(fyne.NewPos(0, size.Height-h))
	panel.Resize(fyne.NewSize(size.Width, h))
}

// panelHeightFor is the height a scrolled flow or grid of entries takes at a width.
func panelHeightFor(panel fyne.CanvasObject, width float32) float32 {
	if s, ok := panel.(*container.Scroll); ok {
		if c, ok := s.Content.(*fyne.Container); ok {
			switch l := c.Layout.(type) {
			case *flowLayout:
				return l.place(c.Objects, width, false)
			case *legendGrid:
				if len(c.Objects) == 0 {
					return 0
				}
				cols, _ := l.columns(c.Objects, width)
				return float32((len(c.Objects)+cols-1)/cols) * l.rowHeight(c.Objects)
			}
		}
		return s.Content.MinSize().Height
	}
	return panel.MinSize().Height
}

// stretchColumns lays out one table at the size given and widens its columns in
// proportion when that size is wider than their sum, so a wide window shows whole
// cells instead of cut ones beside empty space; a narrow one keeps the widths and
// scrolls.
type stretchColumns struct {
	table  *widget.Table
	least  []float32 // the widths the table was made with
	base   []float32 // the columns' least widths
	widths []float32 // the widths set at the last layout
	width  float32   // the width last laid out
}

func newStretchTable(t *widget.Table, widths []float32) (fyne.CanvasObject, *stretchColumns) {
	for i, w := range widths {
		t.SetColumnWidth(i, w)
	}
	l := &stretchColumns{table: t, least: widths, base: widths, widths: append([]float32(nil), widths...)}
	return container.New(l, t), l
}

// columnLeft is where column col starts, from the table's left edge.
func (l *stretchColumns) columnLeft(col int) float32 {
	var x float32
	for i := 0; i < col && i < len(l.widths); i++ {
		x += l.widths[i] + theme.Padding()
	}
	return x
}

// widthOf is column col's width at the last layout (0 before the first).
func (l *stretchColumns) widthOf(col int) float32 {
	if col < 0 || col >= len(l.widths) || l.width == 0 {
		return 0
	}
	return l.widths[col]
}

func (l *stretchColumns) MinSize(objs []fyne.CanvasObject) fyne.Size { return objs[0].MinSize() }

// setBase sets the columns' least widths (fitWidths), laid out again at once when
// they changed.
func (l *stretchColumns) setBase(widths []float32) {
	if slices.Equal(widths, l.base) {
		return
	}
	l.base = widths
	if l.width > 0 {
		w := l.width
		l.width = 0
		l.Layout([]fyne.CanvasObject{l.table}, fyne.NewSize(w, l.table.Size().Height))
	}
}

// fitWidths is each column's width to show its title (with a sort arrow) and its
// cells whole: at least least[col], at most most, measured in the theme's text.
func fitWidths(least []float32, titles []string, rows int, cell func(row, col int) string, most float32) []float32 {
	out := append([]float32(nil), least...)
	size, pad := theme.TextSize(), 4*theme.Padding()
	measure := func(s string) float32 { return fyne.MeasureText(s, size, fyne.TextStyle{}).Width + pad }
	for col := range out {
		w := out[col]
		if col < len(titles) {
			w = fyne.Max(w, measure(titles[col]+" ▼"))
		}
		for row := 0; row < rows; row++ {
			w = fyne.Max(w, measure(cell(row, col)))
		}
		w = float32(math.Ceil(float64(w)/widthStep)) * widthStep // a few pixels more or less: the same width, no relayout
		out[col] = fyne.Min(fyne.Max(w, least[col]), fyne.Max(most, least[col]))
	}
	return out
}

// widthStep is what fitWidths rounds a column's width up to.
const widthStep = 20

func (l *stretchColumns) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Move(fyne.NewPos(0, 0))
	objs[0].Resize(size)
	if size.Width == l.width {
		return
	}
	l.width = size.Width
	var sum float32
	for _, w := range l.base {
		sum += w
	}
	scale := float32(1)
	// Leave room for the vertical scroll bar and the cells' dividers.
	if avail := size.Width - theme.ScrollBarSize() - float32(len(l.base))*theme.Padding(); sum > 0 && avail > sum {
		scale = avail / sum
	}
	for i, w := range l.base {
		l.widths[i] = float32(int(w * scale))
		l.table.SetColumnWidth(i, l.widths[i])
	}
}
