package views

import (
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// tooltipLayer draws tooltips above a window's content. It is a layer of the content,
// not a pop-up: a pop-up is an overlay that takes the pointer, so the row under it
// would lose its hover at once and the tooltip would flicker.
type tooltipLayer struct {
	root *fyne.Container
	bg   *canvas.Rectangle
	text *widget.Label
}

// tooltipLayers maps a canvas to its window's tooltip layer.
var tooltipLayers sync.Map // fyne.Canvas → *tooltipLayer

// withTooltips puts content under a tooltip layer for canvas c.
func withTooltips(c fyne.Canvas, content fyne.CanvasObject) fyne.CanvasObject {
	l := &tooltipLayer{bg: canvas.NewRectangle(theme.Color(theme.ColorNameOverlayBackground)), text: widget.NewLabel("")}
	l.bg.StrokeColor, l.bg.StrokeWidth, l.bg.CornerRadius = theme.Color(theme.ColorNameShadow), 1, 4
	l.bg.Hide()
	l.text.Hide()
	l.root = container.NewWithoutLayout(l.bg, l.text)
	tooltipLayers.Store(c, l)
	return container.NewStack(content, l.root)
}

// tooltipLayerFor finds the tooltip layer of the window that shows o; nil when none.
func tooltipLayerFor(o fyne.CanvasObject) *tooltipLayer {
	c := fyne.CurrentApp().Driver().CanvasForObject(o)
	if c == nil {
		return nil
	}
	if l, ok := tooltipLayers.Load(c); ok {
		return l.(*tooltipLayer)
	}
	return nil
}

// show draws text near the absolute position at, inside the window.
func (l *tooltipLayer) show(text string, at fyne.Position) {
	origin := fyne.CurrentApp().Driver().AbsolutePositionForObject(l.root)
	p := at.Subtract(origin).Add(fyne.NewPos(12, 16))
	l.text.SetText(text)
	size := l.text.MinSize()
	bounds := l.root.Size()
	if p.X+size.Width > bounds.Width {
		p.X = fyne.Max(0, bounds.Width-size.Width)
	}
	if p.Y+size.Height > bounds.Height {
		p.Y = fyne.Max(0, at.Y-origin.Y-size.Height-4)
	}
	for _, o := range []fyne.CanvasObject{l.bg, l.text} {
		o.Move(p)
		o.Resize(size)
		o.Show()
	}
	l.bg.FillColor = theme.Color(theme.ColorNameOverlayBackground)
	l.root.Refresh() // Show alone does not repaint
}

func (l *tooltipLayer) hide() {
	if !l.text.Visible() {
		return
	}
	l.bg.Hide()
	l.text.Hide()
	l.root.Refresh()
}
