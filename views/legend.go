package views

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// Legend lists the series with their colours; unchecking one hides it in both charts.
type Legend struct {
	box      *fyne.Container
	scroll   *container.Scroll
	OnToggle func(key string, shown bool)
}

// NewLegend makes an empty legend: entries side by side, wrapping into rows under the
// chart, scrolled past three rows so the chart keeps its width and height.
func NewLegend() *Legend {
	l := &Legend{box: container.New(layout.NewRowWrapLayoutWithCustomPadding(theme.Padding(), 0))}
	l.scroll = container.NewVScroll(l.box)
	return l
}

// Content is the legend's widget.
func (l *Legend) Content() fyne.CanvasObject {
	return container.New(&maxHeightLayout{max: 78}, l.scroll)
}

// Set shows one entry per curve, checked unless hidden.
func (l *Legend) Set(curves []predictor.Curve, hidden map[string]bool) {
	objs := make([]fyne.CanvasObject, 0, len(curves))
	for i, c := range curves {
		key := charts.SeriesKey(c)
		swatch := canvas.NewRectangle(charts.SeriesColor(i))
		swatch.SetMinSize(fyne.NewSize(14, 14))
		check := widget.NewCheck(c.Model+" · "+c.Machine, nil)
		check.SetChecked(!hidden[key])
		check.OnChanged = func(on bool) {
			if l.OnToggle != nil {
				l.OnToggle(key, on)
			}
		}
		objs = append(objs, container.NewHBox(container.NewCenter(swatch), check))
	}
	l.box.Objects = objs
	l.box.Refresh()
}

// Entries is the number of entries.
func (l *Legend) Entries() int { return len(l.box.Objects) }
