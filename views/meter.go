package views

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// meter is a progress bar whose empty track is grey and whose done part is the theme's
// primary colour, with the percentage over it: Fyne's own ProgressBar draws the track
// in the primary colour at half opacity, which on a dark theme looks full at 0%.
type meter struct {
	widget.BaseWidget
	Value float64 // 0 to 1
}

func newMeter() *meter {
	m := &meter{}
	m.ExtendBaseWidget(m)
	return m
}

// SetValue shows a fraction done, 0 to 1.
func (m *meter) SetValue(v float64) {
	v = max(0, min(v, 1))
	if v == m.Value {
		return
	}
	m.Value = v
	m.Refresh()
}

func (m *meter) CreateRenderer() fyne.WidgetRenderer {
	r := &meterRenderer{m: m, track: canvas.NewRectangle(color.Transparent), bar: canvas.NewRectangle(color.Transparent),
		label: canvas.NewText("", color.Transparent)}
	r.label.Alignment = fyne.TextAlignCenter
	r.Refresh()
	return r
}

type meterRenderer struct {
	m          *meter
	track, bar *canvas.Rectangle
	label      *canvas.Text
}

func (r *meterRenderer) Layout(size fyne.Size) {
	r.track.Resize(size)
	r.bar.Resize(fyne.NewSize(size.Width*float32(r.m.Value), size.Height))
	r.label.Resize(size)
}

func (r *meterRenderer) MinSize() fyne.Size {
	text := fyne.MeasureText("100%", theme.TextSize(), fyne.TextStyle{})
	return fyne.NewSize(text.Width+4*theme.Padding(), text.Height+2*theme.InnerPadding())
}

func (r *meterRenderer) Refresh() {
	radius := theme.InputRadiusSize()
	r.track.FillColor, r.track.CornerRadius = theme.Color(theme.ColorNameInputBackground), radius
	r.track.StrokeColor, r.track.StrokeWidth = theme.Color(theme.ColorNameInputBorder), 1
	r.bar.FillColor, r.bar.CornerRadius = theme.Color(theme.ColorNamePrimary), radius
	r.label.Text = fmt.Sprintf("%.0f%%", 100*r.m.Value)
	r.label.Color = theme.Color(theme.ColorNameForeground)
	r.label.TextSize = theme.TextSize()
	r.Layout(r.m.Size())
	canvas.Refresh(r.m)
}

func (r *meterRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.track, r.bar, r.label}
}

func (r *meterRenderer) Destroy() {}
