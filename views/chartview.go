package views

import (
	"image"
	"image/color"
	"sync"

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
// goroutine when the chart or the size changes. Moving the mouse over it shows a
// crosshair (when enabled) and a tooltip for the nearest point; tapping a point
// reports it.
type ChartView struct {
	widget.BaseWidget

	// Tooltip returns the text for a hovered mark.
	Tooltip func(charts.Mark) string
	// OnTapped is called with the tapped mark, or ok=false when the tap hit no point.
	OnTapped func(m charts.Mark, ok bool)
	// Bars makes the mouse find the bar on its row (a breakdown chart) instead of
	// the nearest point.
	Bars bool

	crosshair bool
	emptyText string

	image  *canvas.Image
	vLine  *canvas.Line
	hLine  *canvas.Line
	dot    *canvas.Circle
	tipBg  *canvas.Rectangle
	tip    *widget.Label
	empty  *widget.Label
	render renderState
}

type renderState struct {
	mu    sync.Mutex
	chart *charts.Chart
	frame *charts.Frame // of the image shown
	size  fyne.Size     // the widget size the frame was rendered for
	gen   uint64
	done  func() // called on the UI goroutine after each shown render (tests wait on it)
}

// NewChartView makes an empty chart view; emptyText is shown while it has no data.
func NewChartView(crosshair bool, emptyText string) *ChartView {
	v := &ChartView{crosshair: crosshair, emptyText: emptyText}
	v.image = canvas.NewImageFromImage(image.NewRGBA(image.Rect(0, 0, 1, 1)))
	v.image.FillMode = canvas.ImageFillStretch
	v.image.ScaleMode = canvas.ImageScaleFastest
	lineColor := theme.Color(theme.ColorNameForeground)
	v.vLine, v.hLine = canvas.NewLine(lineColor), canvas.NewLine(lineColor)
	v.vLine.StrokeWidth, v.hLine.StrokeWidth = 1, 1
	v.dot = canvas.NewCircle(color.Transparent)
	v.dot.StrokeColor, v.dot.StrokeWidth = lineColor, 2
	v.tipBg = canvas.NewRectangle(theme.Color(theme.ColorNameOverlayBackground))
	v.tipBg.StrokeColor, v.tipBg.StrokeWidth, v.tipBg.CornerRadius = theme.Color(theme.ColorNameShadow), 1, 4
	v.tip = widget.NewLabel("")
	v.empty = widget.NewLabel(emptyText)
	v.empty.Alignment = fyne.TextAlignCenter
	v.empty.Wrapping = fyne.TextWrapWord
	v.hideHover()
	v.ExtendBaseWidget(v)
	return v
}

// SetChart shows a new chart (nil for none); it renders in the background.
func (v *ChartView) SetChart(c *charts.Chart) {
	v.render.mu.Lock()
	v.render.chart = c
	v.render.frame = nil // until the new chart is drawn, the mouse finds nothing
	v.render.mu.Unlock()
	v.hideHover()
	v.rerender(v.Size())
}

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
	gen, chart := v.render.gen, v.render.chart
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
		return
	}
	scale := float32(1)
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		scale = c.Scale()
	}
	go func() {
		img, frame, err := chart.Image(int(size.Width*scale), int(size.Height*scale), int(96*scale+0.5))
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
	if f == nil || !f.Inside(px, py) {
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
	if v.Tooltip != nil {
		text = v.Tooltip(m)
	}
	v.tip.SetText(text)
	tipSize := v.tip.MinSize()
	tx, ty := at.X+14, at.Y+14
	if tx+tipSize.Width > v.Size().Width {
		tx = at.X - 14 - tipSize.Width
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
	v.tip.Hide()
	v.tipBg.Hide()
}

// MouseIn is part of desktop.Hoverable.
func (v *ChartView) MouseIn(ev *desktop.MouseEvent) { v.Hover(ev.Position) }

// MouseMoved is part of desktop.Hoverable.
func (v *ChartView) MouseMoved(ev *desktop.MouseEvent) { v.Hover(ev.Position) }

// MouseOut is part of desktop.Hoverable.
func (v *ChartView) MouseOut() { v.hideHover() }

// Tapped is part of fyne.Tappable: it reports the point under the tap.
func (v *ChartView) Tapped(ev *fyne.PointEvent) {
	f, px, py := v.toFrame(ev.Position)
	if v.OnTapped == nil || f == nil {
		return
	}
	m, ok := v.find(f, px, py)
	v.OnTapped(m, ok)
}

// find is the mark under the mouse at frame pixel (px, py).
func (v *ChartView) find(f *charts.Frame, px, py float64) (charts.Mark, bool) {
	if v.Bars {
		return f.BarAt(px, py)
	}
	scale := float64(f.Width) / float64(max(v.Size().Width, 1))
	return f.Nearest(px, py, hoverRadius*scale)
}

// MinSize is small: the chart takes what the layout gives it.
func (v *ChartView) MinSize() fyne.Size { return fyne.NewSize(160, 120) }

// CreateRenderer is part of fyne.Widget.
func (v *ChartView) CreateRenderer() fyne.WidgetRenderer {
	return &chartRenderer{v: v, objects: []fyne.CanvasObject{v.image, v.empty, v.vLine, v.hLine, v.dot, v.tipBg, v.tip}}
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
