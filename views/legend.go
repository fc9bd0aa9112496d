package views

import (
	"fmt"
	"image/color"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// Legend lists the series with their look (the machine's colour, the CNN's dash and
// marker); unchecking one hides it in both charts. Series drawn on top of each other
// (the same CNN on machines with the same GPU) say so, since only their interleaved
// dashes tell them apart on the chart.
type Legend struct {
	box      *fyne.Container
	scroll   *container.Scroll
	OnToggle func(key string, shown bool)
	texts    []string // the entries' texts, in order (tests read them)
}

// NewLegend makes an empty legend: entries flowing into rows, scrolled when there are
// more than the space given shows.
func NewLegend() *Legend {
	l := &Legend{box: container.New(newFlowLayout(theme.Padding()*2, 0))}
	l.scroll = container.NewVScroll(l.box)
	return l
}

// Content is the legend's widget.
func (l *Legend) Content() fyne.CanvasObject { return l.scroll }

// legendIcon is the size of an entry's drawing of its series, in pixels.
var legendIcon = fyne.NewSize(30, 14)

// Set shows one entry per curve, checked unless hidden, drawn in styles on a chart
// background bg.
func (l *Legend) Set(curves []predictor.Curve, hidden map[string]bool, styles *charts.Styles, metric charts.Metric, bg color.Color) {
	same := map[int][]string{} // curve → the machines drawn on top of it
	for _, g := range charts.Overlaps(curves, metric, hidden) {
		for _, i := range g {
			for _, j := range g {
				if j != i {
					same[i] = append(same[i], curves[j].Machine)
				}
			}
		}
	}
	objs := make([]fyne.CanvasObject, 0, len(curves))
	l.texts = l.texts[:0]
	for i, c := range curves {
		key := charts.SeriesKey(c)
		icon := canvas.NewImageFromImage(charts.SeriesIcon(styles.Of(c), int(legendIcon.Width), int(legendIcon.Height), bg))
		icon.FillMode = canvas.ImageFillOriginal
		icon.SetMinSize(legendIcon)
		text := c.Model + " · " + c.Machine
		if others := same[i]; len(others) > 0 {
			text += fmt.Sprintf(" (≡ %s: the same curve)", strings.Join(others, ", "))
		}
		l.texts = append(l.texts, text)
		check := widget.NewCheck(text, nil)
		check.SetChecked(!hidden[key])
		check.OnChanged = func(on bool) {
			if l.OnToggle != nil {
				l.OnToggle(key, on)
			}
		}
		objs = append(objs, container.NewHBox(container.NewCenter(icon), check))
	}
	l.box.Objects = objs
	l.box.Refresh()
	l.scroll.Refresh()
}

// Entries is the number of entries.
func (l *Legend) Entries() int { return len(l.box.Objects) }

// Texts are the entries' texts, in order.
func (l *Legend) Texts() []string { return append([]string(nil), l.texts...) }
