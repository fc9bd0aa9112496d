package views

import (
	"fmt"
	"image"
	"image/color"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app/charts"
)

// hoverRadius is how near, in screen pixels, the mouse must come to a point to read it.
const hoverRadius = 24

// ChartView shows a chart from app/charts as an image, re-rendered off the UI
// goroutine when the chart, the size or the zoom changes. Moving the mouse over it
// shows a crosshair (when enabled) and a tooltip: for the nearest point, or with
// Column for every series at the hovered batch. Dragging draws a box and zooms into
// it, Shift-dragging pans, a right click or ResetZoom shows all again; tapping a
// point reports it. While the window computes new data the chart dims under a
// spinner (SetBusy), so a stale chart never passes for a fresh one.
type ChartView struct {
	widget.BaseWidget

	// Tooltip returns the text for a hovered mark.
	Tooltip func(charts.Mark) string
	// ColumnTooltip, when set, is used instead of Tooltip: it gets the mark nearest
	// the pointer and, for every series, its mark at the pointer's x (Column).
	ColumnTooltip func(nearest charts.Mark, column []charts.Mark) string
	// OnTapped is called with the tapped mark, or ok=false when the tap hit no point.
	OnTapped func(m charts.Mark, ok bool)
	// OnZoom is called after the view was zoomed, panned or reset (zoomed says which).
	OnZoom func(zoomed bool)
	// Bars makes the mouse find the bar on its row (a breakdown chart) instead of
	// the nearest point; a bar chart does not zoom.
	Bars bool
	// MinHeight, when set, is the least height that keeps the chart's rows apart
	// (a breakdown chart in a scroll); 0 for the usual minimum.
	MinHeight float32

	crosshair    bool
	emptyText    string
	defaultEmpty string // the text it was made with

	image   *canvas.Image
	vLine   *canvas.Line
	hLine   *canvas.Line
	dot     *canvas.Circle
	dots    []*canvas.Circle // the column's points
	box     *canvas.Rectangle
	tipBg   *canvas.Rectangle
	tip     *widget.Label
	empty   *widget.Label
	dim     *canvas.Rectangle
	spinner *slowSpinner
	render  renderState

	drag struct {
		on, pan  bool
		from, to fyne.Position
		shift    bool // Shift was held when the button went down
	}
}

type renderState struct {
	mu    sync.Mutex
	chart *charts.Chart
	view  *charts.Range // the zoomed view; nil for all of the chart
	frame *charts.Frame // of the image shown
	size  fyne.Size     // the widget size the frame was rendered for
	gen   uint64
	done  func() // called on the UI goroutine after each shown render (tests wait on it)
}

// spinnerFrames are a busy chart's spinner, turned spinnerRate times a second: a few
// frames a second say "working" as well as sixty, and a window repainted in software
// (a remote desktop, a virtual X server) on a machine busy with a sweep keeps the CPU
// for the work.
var spinnerFrames = []string{"◐", "◓", "◑", "◒"}

const spinnerRate = 4

// slowSpinner is a busy chart's spinner: a turning glyph over "Computing…".
type slowSpinner struct {
	widget.BaseWidget
	glyph, label *canvas.Text
	stop         chan struct{}
	frame        int
}

func newSlowSpinner() *slowSpinner {
	fg := theme.Color(theme.ColorNameForeground)
	s := &slowSpinner{glyph: canvas.NewText(spinnerFrames[0], fg), label: canvas.NewText("Computing…", fg)}
	s.glyph.TextSize, s.glyph.Alignment = 34, fyne.TextAlignCenter
	s.label.Alignment = fyne.TextAlignCenter
	s.ExtendBaseWidget(s)
	return s
}

// Start turns the spinner until Stop.
func (s *slowSpinner) Start() {
	if s.stop != nil {
		return
	}
	stop := make(chan struct{})
	s.stop = stop
	go func() {
		t := time.NewTicker(time.Second / spinnerRate)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fyne.Do(func() {
					if s.stop != stop {
						return
					}
					s.frame = (s.frame + 1) % len(spinnerFrames)
					s.glyph.Text = spinnerFrames[s.frame]
					s.glyph.Refresh()
				})
			}
		}
	}()
}

// Stop stops the spinner.
func (s *slowSpinner) Stop() {
	if s.stop != nil {
		close(s.stop)
		s.stop = nil
	}
}

// Running reports whether the spinner turns.
func (s *slowSpinner) Running() bool { return s.stop != nil }

func (s *slowSpinner) MinSize() fyne.Size { return fyne.NewSize(120, 64) }

func (s *slowSpinner) CreateRenderer() fyne.WidgetRenderer {
	return &spinnerRenderer{s: s}
}

type spinnerRenderer struct{ s *slowSpinner }

func (r *spinnerRenderer) Layout(size fyne.Size) {
	g := r.s.glyph.MinSize()
	r.s.glyph.Move(fyne.NewPos(0, 0))
	r.s.glyph.Resize(fyne.NewSize(size.Width, g.Height))
	r.s.label.Move(fyne.NewPos(0, g.Height))
	r.s.label.Resize(fyne.NewSize(size.Width, r.s.label.MinSize().Height))
}
func (r *spinnerRenderer) MinSize() fyne.Size { return r.s.MinSize() }
func (r *spinnerRenderer) Refresh()           { r.s.glyph.Refresh(); r.s.label.Refresh() }
func (r *spinnerRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.s.glyph, r.s.label}
}
func (r *spinnerRenderer) Destroy() {}

// maxColumnDots is how many series' points a column crosshair marks.
const maxColumnDots = 24

// NewChartView makes an empty chart view; emptyText is shown while it has no data.
func NewChartView(crosshair bool, emptyText string) *ChartView {
	v := &ChartView{crosshair: crosshair, emptyText: emptyText, defaultEmpty: emptyText}
	v.image = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	v.image.FillMode = canvas.ImageFillStretch
	v.image.ScaleMode = canvas.ImageScaleFastest
	lineColor := theme.Color(theme.ColorNameForeground)
	v.vLine, v.hLine = canvas.NewLine(lineColor), canvas.NewLine(lineColor)
	v.vLine.StrokeWidth, v.hLine.StrokeWidth = 1, 1
	v.dot = canvas.NewCircle(color.Transparent)
	v.dot.StrokeColor, v.dot.StrokeWidth = lineColor, 2
	for i := 0; i < maxColumnDots; i++ {
		d := canvas.NewCircle(color.Transparent)
		d.StrokeColor, d.StrokeWidth = lineColor, 1.5
		v.dots = append(v.dots, d)
	}
	v.box = canvas.NewRectangle(withAlpha(theme.Color(theme.ColorNamePrimary), 40))
	v.box.StrokeColor, v.box.StrokeWidth = theme.Color(theme.ColorNamePrimary), 1
	v.tipBg = canvas.NewRectangle(theme.Color(theme.ColorNameOverlayBackground))
	v.tipBg.StrokeColor, v.tipBg.StrokeWidth, v.tipBg.CornerRadius = theme.Color(theme.ColorNameShadow), 1, 4
	v.tip = widget.NewLabel("")
	v.empty = widget.NewLabel(emptyText)
	v.empty.Alignment = fyne.TextAlignCenter
	v.empty.Wrapping = fyne.TextWrapWord
	v.dim = canvas.NewRectangle(withAlpha(theme.Color(theme.ColorNameBackground), 170))
	v.dim.Hide()
	v.spinner = newSlowSpinner()
	v.spinner.Hide()
	v.box.Hide()
	v.hideHover()
	v.ExtendBaseWidget(v)
	return v
}

func withAlpha(c color.Color, a uint8) color.NRGBA {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// SetChart shows a new chart (nil for none); it renders in the background. A zoom
// stays when the new chart's axes are the same as the old one's.
func (v *ChartView) SetChart(c *charts.Chart) {
	v.render.mu.Lock()
	if old := v.render.chart; old == nil || c == nil || old.Axes() != c.Axes() {
		v.render.view = nil
	}
	v.render.chart = c
	v.render.frame = nil // until the new chart is drawn, the mouse finds nothing
	v.render.mu.Unlock()
	v.hideHover()
	v.rerender(v.Size())
}

// SetEmptyText sets what the view says while it has no data to draw ("" for the text
// it was made with): why, when a prediction failed.
func (v *ChartView) SetEmptyText(text string) {
	if text == "" {
		text = v.defaultEmpty
	}
	if text == v.emptyText {
		return
	}
	v.emptyText = text
	if v.empty.Visible() {
		v.empty.SetText(text)
	}
}

// SetBusy dims the chart under a spinner while new data is computed, or shows it
// plainly again.
func (v *ChartView) SetBusy(on bool) {
	if on == v.dim.Visible() {
		return
	}
	if on {
		v.dim.Show()
		v.spinner.Show()
		v.spinner.Start()
	} else {
		v.dim.Hide()
		v.spinner.Stop()
		v.spinner.Hide()
	}
	v.Refresh()
}

// Busy reports whether the chart is dimmed for a computation under way.
func (v *ChartView) Busy() bool { return v.dim.Visible() }

// Zoomed reports whether the view shows part of the chart.
func (v *ChartView) Zoomed() bool {
	v.render.mu.Lock()
	defer v.render.mu.Unlock()
	return v.render.view != nil
}

// SetView shows part of the chart's data (nil: all of it).
func (v *ChartView) SetView(r *charts.Range) {
	v.render.mu.Lock()
	v.render.view = r
	v.render.frame = nil // until the new view is drawn, the mouse finds nothing
	v.render.mu.Unlock()
	v.hideHover()
	v.rerender(v.Size())
	if v.OnZoom != nil {
		v.OnZoom(r != nil)
	}
}

// ResetZoom shows the whole chart again.
func (v *ChartView) ResetZoom() { v.SetView(nil) }

// Chart is the chart shown.
func (v *ChartView) Chart() *charts.Chart {
	v.render.mu.Lock()
	defer v.render.mu.Unlock()
	return v.render.chart
}

// Frame is where the data lies in the image shown, or nil before the first render.
func (v *ChartView) Frame() *charts.Frame {
	v.render.mu.Lock()
	defer v.render.mu.Unlock()
	return v.render.frame
}

// rerender draws the chart at the given size on another goroutine and shows it,
// unless a newer render was asked for meanwhile.
func (v *ChartView) rerender(size fyne.Size) {
	v.render.mu.Lock()
	v.render.gen++
	gen, chart, view := v.render.gen, v.render.chart, v.render.view
	v.render.mu.Unlock()
	if chart == nil || chart.Empty() {
		v.empty.SetText(v.emptyText)
		v.empty.Show()
		v.image.Hide()
		v.render.mu.Lock()
		v.render.frame = nil
		done := v.render.done
		v.render.mu.Unlock()
		if done != nil {
			done()
		}
		return
	}
	if size.Width < 16 || size.Height < 16 {
		return // drawn by the layout once the view has a size
	}
	scale := float32(1)
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		scale = c.Scale()
	}
	go func() {
		img, frame, err := chart.ImageIn(int(size.Width*scale), int(size.Height*scale), int(96*scale+0.5), view)
		fyne.Do(func() {
			v.render.mu.Lock()
			if gen != v.render.gen {
				v.render.mu.Unlock()
				return
			}
			if err == nil {
				v.render.frame, v.render.size = frame, size
			}
			done := v.render.done
			v.render.mu.Unlock()
			if err != nil {
				v.empty.SetText("Cannot draw the chart: " + err.Error())
				v.empty.Show()
				v.image.Hide()
			} else {
				v.empty.Hide()
				v.image.Image = img
				v.image.Show()
				v.image.Refresh()
			}
			if done != nil {
				done()
			}
		})
	}()
}

// toFrame maps a position in the widget to pixels of the rendered image.
func (v *ChartView) toFrame(pos fyne.Position) (*charts.Frame, float64, float64) {
	v.render.mu.Lock()
	f, size := v.render.frame, v.render.size
	v.render.mu.Unlock()
	if f == nil || size.Width == 0 || size.Height == 0 {
		return nil, 0, 0
	}
	return f, float64(pos.X) * float64(f.Width) / float64(size.Width), float64(pos.Y) * float64(f.Height) / float64(size.Height)
}

func (v *ChartView) fromFrame(f *charts.Frame, px, py float64) fyne.Position {
	v.render.mu.Lock()
	size := v.render.size
	v.render.mu.Unlock()
	return fyne.NewPos(float32(px*float64(size.Width)/float64(f.Width)), float32(py*float64(size.Height)/float64(f.Height)))
}

// Hover shows the crosshair and the tooltip for a position in the widget; it is what
// a mouse move does, and returns the mark found.
func (v *ChartView) Hover(pos fyne.Position) (charts.Mark, bool) {
	defer canvas.Refresh(v) // repaint the overlay
	f, px, py := v.toFrame(pos)
	if f == nil || !f.Inside(px, py) || v.dim.Visible() {
		v.hideHover()
		return charts.Mark{}, false
	}
	m, ok := v.find(f, px, py)
	if v.crosshair {
		x0 := v.fromFrame(f, f.X0, f.Y0)
		x1 := v.fromFrame(f, f.X1, f.Y1)
		v.vLine.Position1, v.vLine.Position2 = fyne.NewPos(pos.X, x0.Y), fyne.NewPos(pos.X, x1.Y)
		v.hLine.Position1, v.hLine.Position2 = fyne.NewPos(x0.X, pos.Y), fyne.NewPos(x1.X, pos.Y)
		v.vLine.Show()
		v.hLine.Show()
		v.vLine.Refresh()
		v.hLine.Refresh()
	}
	var column []charts.Mark
	if v.ColumnTooltip != nil && !v.Bars {
		scale := float64(f.Width) / float64(max(v.Size().Width, 1))
		column = f.Column(px, hoverRadius*scale)
		if !ok && len(column) > 0 { // the pointer is off every line: read the column anyway
			m, ok = column[0], true
			for _, c := range column {
				_, cy := f.ToPixel(c.X, c.Y)
				_, my := f.ToPixel(m.X, m.Y)
				if abs(cy-py) < abs(my-py) {
					m = c
				}
			}
		}
	}
	for i, d := range v.dots {
		if i >= len(column) {
			d.Hide()
			continue
		}
		cx, cy := f.ToPixel(column[i].X, column[i].Y)
		at := v.fromFrame(f, cx, cy)
		d.Move(fyne.NewPos(at.X-4, at.Y-4))
		d.Resize(fyne.NewSize(8, 8))
		d.Show()
		d.Refresh()
	}
	if !ok {
		v.dot.Hide()
		v.tip.Hide()
		v.tipBg.Hide()
		return m, false
	}
	mx, my := f.ToPixel(m.X, m.Y)
	at := v.fromFrame(f, mx, my)
	const r = 6
	v.dot.Move(fyne.NewPos(at.X-r, at.Y-r))
	v.dot.Resize(fyne.NewSize(2*r, 2*r))
	v.dot.Show()
	text := ""
	switch {
	case v.ColumnTooltip != nil && !v.Bars:
		text = v.ColumnTooltip(m, column)
	case v.Tooltip != nil:
		text = v.Tooltip(m)
	}
	v.tip.SetText(text)
	tipSize := v.tip.MinSize()
	if lines := strings.Split(text, "\n"); tipSize.Height > v.Size().Height && len(lines) > 2 {
		// Taller than the chart (a column of many series): the lines that fit, and how
		// many more, so the tip never runs over the legend or the tabs below.
		per := tipSize.Height / float32(len(lines))
		keep := max(int(v.Size().Height/per)-1, 1)
		v.tip.SetText(strings.Join(lines[:keep], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-keep))
		tipSize = v.tip.MinSize()
	}
	tx, ty := at.X+14, at.Y+14
	if tx+tipSize.Width > v.Size().Width {
		tx = max(at.X-14-tipSize.Width, 0)
	}
	if ty+tipSize.Height > v.Size().Height {
		ty = max(at.Y-14-tipSize.Height, 0)
	}
	v.tip.Move(fyne.NewPos(tx, ty))
	v.tip.Resize(tipSize)
	v.tipBg.Move(fyne.NewPos(tx, ty))
	v.tipBg.Resize(tipSize)
	v.tipBg.Show()
	v.tip.Show()
	v.dot.Refresh()
	v.tipBg.Refresh()
	return m, true
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TooltipText is the tooltip shown, "" when none.
func (v *ChartView) TooltipText() string {
	if !v.tip.Visible() {
		return ""
	}
	return v.tip.Text
}

func (v *ChartView) hideHover() {
	defer canvas.Refresh(v)
	v.vLine.Hide()
	v.hLine.Hide()
	v.dot.Hide()
	for _, d := range v.dots {
		d.Hide()
	}
	v.tip.Hide()
	v.tipBg.Hide()
}

// MouseIn is part of desktop.Hoverable.
func (v *ChartView) MouseIn(ev *desktop.MouseEvent) { v.Hover(ev.Position) }

// MouseMoved is part of desktop.Hoverable.
func (v *ChartView) MouseMoved(ev *desktop.MouseEvent) {
	if !v.drag.on {
		v.Hover(ev.Position)
	}
}

// MouseOut is part of desktop.Hoverable.
func (v *ChartView) MouseOut() { v.hideHover() }

// MouseDown is part of desktop.Mouseable: it notes whether Shift is held, which makes
// a drag pan instead of zoom.
func (v *ChartView) MouseDown(ev *desktop.MouseEvent) {
	v.drag.shift = ev.Modifier&fyne.KeyModifierShift != 0
}

// MouseUp is part of desktop.Mouseable.
func (v *ChartView) MouseUp(*desktop.MouseEvent) {}

// Dragged is part of fyne.Draggable: a drag draws the zoom box (or pans with Shift).
func (v *ChartView) Dragged(ev *fyne.DragEvent) {
	if v.Bars || v.Frame() == nil {
		return
	}
	if !v.drag.on {
		v.drag.on, v.drag.pan = true, v.drag.shift
		v.drag.from = ev.Position.Subtract(ev.Dragged)
		v.hideHover()
	}
	v.drag.to = ev.Position
	if v.drag.pan {
		return // the view moves when the drag ends: one render, not one per pixel
	}
	x0, y0 := fyne.Min(v.drag.from.X, v.drag.to.X), fyne.Min(v.drag.from.Y, v.drag.to.Y)
	v.box.Move(fyne.NewPos(x0, y0))
	v.box.Resize(fyne.NewSize(abs32(v.drag.to.X-v.drag.from.X), abs32(v.drag.to.Y-v.drag.from.Y)))
	v.box.Show()
	v.box.Refresh()
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// DragEnd is part of fyne.Draggable: it zooms into the box drawn, or pans.
func (v *ChartView) DragEnd() {
	if !v.drag.on {
		return
	}
	v.drag.on = false
	v.box.Hide()
	v.box.Refresh()
	f, x0, y0 := v.toFrame(v.drag.from)
	_, x1, y1 := v.toFrame(v.drag.to)
	if f == nil {
		return
	}
	if v.drag.pan {
		r := f.Panned(x1-x0, y1-y0)
		v.SetView(&r)
		return
	}
	if r, ok := f.Zoomed(x0, y0, x1, y1); ok {
		v.SetView(&r)
	}
}

// Tapped is part of fyne.Tappable: it reports the point under the tap.
func (v *ChartView) Tapped(ev *fyne.PointEvent) {
	f, px, py := v.toFrame(ev.Position)
	if v.OnTapped == nil || f == nil || v.dim.Visible() {
		return
	}
	m, ok := v.find(f, px, py)
	v.OnTapped(m, ok)
}

// TappedSecondary is part of fyne.SecondaryTappable: a right click shows all again.
func (v *ChartView) TappedSecondary(*fyne.PointEvent) {
	if v.Zoomed() {
		v.ResetZoom()
	}
}

// find is the mark under the mouse at frame pixel (px, py).
func (v *ChartView) find(f *charts.Frame, px, py float64) (charts.Mark, bool) {
	if v.Bars {
		return f.BarAt(px, py)
	}
	scale := float64(f.Width) / float64(max(v.Size().Width, 1))
	return f.Nearest(px, py, hoverRadius*scale)
}

// chartMinSize keeps a chart readable: a splitter or a small window cannot shrink
// the plot away, only the space around it.
var chartMinSize = fyne.NewSize(220, 170)

// MinSize is what a chart needs to stay readable; it takes what the layout gives beyond.
func (v *ChartView) MinSize() fyne.Size {
	return fyne.NewSize(chartMinSize.Width, fyne.Max(chartMinSize.Height, v.MinHeight))
}

// CreateRenderer is part of fyne.Widget.
func (v *ChartView) CreateRenderer() fyne.WidgetRenderer {
	objs := []fyne.CanvasObject{v.image, v.empty, v.vLine, v.hLine, v.box}
	for _, d := range v.dots {
		objs = append(objs, d)
	}
	objs = append(objs, v.dot, v.dim, v.spinner, v.tipBg, v.tip)
	return &chartRenderer{v: v, objects: objs}
}

type chartRenderer struct {
	v       *ChartView
	objects []fyne.CanvasObject
	last    fyne.Size
}

func (r *chartRenderer) Layout(size fyne.Size) {
	r.v.image.Move(fyne.NewPos(0, 0))
	r.v.image.Resize(size)
	r.v.empty.Move(fyne.NewPos(0, size.Height/2-r.v.empty.MinSize().Height/2))
	r.v.empty.Resize(fyne.NewSize(size.Width, r.v.empty.MinSize().Height))
	r.v.dim.Move(fyne.NewPos(0, 0))
	r.v.dim.Resize(size)
	s := r.v.spinner.MinSize()
	r.v.spinner.Move(fyne.NewPos((size.Width-s.Width)/2, (size.Height-s.Height)/2))
	r.v.spinner.Resize(s)
	if size != r.last {
		r.last = size
		r.v.hideHover()
		r.v.rerender(size)
	}
}

func (r *chartRenderer) MinSize() fyne.Size           { return r.v.MinSize() }
func (r *chartRenderer) Refresh()                     { canvas.Refresh(r.v) }
func (r *chartRenderer) Objects() []fyne.CanvasObject { return r.objects }
func (r *chartRenderer) Destroy()                     {}
