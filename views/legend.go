package views

import (
	"image/color"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app/charts"
	"cnntime/predictor"
)

// Legend lists the series with their look (the machine's colour, the CNN's dash and
// marker); unchecking one hides it in both charts. Series drawn on top of each other
// (the same CNN on machines with the same GPU) say so, since only their interleaved
// dashes tell them apart on the chart.
//
// A new prediction of the same series (a setting changed) keeps the entries and
// changes only what changed: rebuilding a hundred entries' texts, checks and icons
// would take most of a redraw.
type Legend struct {
	grid     *legendGrid
	box      *fyne.Container
	scroll   *container.Scroll
	OnToggle func(key string, shown bool)
	texts    []string // the entries' whole texts (CNN · machine, and the same curve), in order (tests read them)
	entries  map[string]*legendEntry
	heads    map[string]*widget.Label // a heading per CNN, kept while it is shown
}

// legendEntry is one series' entry, kept while its series is shown.
type legendEntry struct {
	box   fyne.CanvasObject
	icon  *canvas.Image
	check *widget.Check
	label *tapLabel
	look  legendLook // what its icon was drawn for
}

// legendLook is what an entry's icon shows.
type legendLook struct {
	style charts.SeriesStyle
	bg    color.Color
}

// NewLegend makes an empty legend: entries flowing into rows, scrolled when there are
// more than the space given shows.
func NewLegend() *Legend {
	l := &Legend{grid: &legendGrid{}, entries: map[string]*legendEntry{}, heads: map[string]*widget.Label{}}
	l.box = container.New(l.grid)
	l.scroll = container.NewVScroll(l.box)
	return l
}

// Content is the legend's widget.
func (l *Legend) Content() fyne.CanvasObject { return l.scroll }

// legendIcon is the size of an entry's drawing of its series, in pixels.
var legendIcon = fyne.NewSize(30, 14)

// Set shows one entry per curve, checked unless hidden, drawn in styles on a chart
// background bg. The entries come under a heading per CNN and name their machine
// (the icon has the CNN's dash and marker in the machine's colour); series drawn on
// top of each other (the same CNN on machines of the same GPU) come together, the
// later ones marked "=", and a hover over a cut name shows it whole.
func (l *Legend) Set(curves []predictor.Curve, hidden map[string]bool, styles *charts.Styles, metric charts.Metric, bg color.Color) {
	leader := map[int]int{} // curve → the first curve of its overlap group
	for _, g := range charts.Overlaps(curves, metric, hidden) {
		for _, i := range g[1:] {
			leader[i] = g[0]
		}
	}
	// The order shown: by CNN as they come, each group's members right after its first.
	var models []string
	byModel := map[string][]int{}
	for i, c := range curves {
		if _, ok := byModel[c.Model]; !ok {
			models = append(models, c.Model)
		}
		if _, follows := leader[i]; !follows {
			byModel[c.Model] = append(byModel[c.Model], i)
		}
	}
	followers := map[int][]int{}
	for i := range curves {
		if f, ok := leader[i]; ok {
			followers[f] = append(followers[f], i)
		}
	}
	objs := make([]fyne.CanvasObject, 0, len(curves)+len(models))
	kept := make(map[string]*legendEntry, len(curves))
	keptHeads := make(map[string]*widget.Label, len(models))
	l.texts = l.texts[:0]
	natural := float32(0)
	add := func(i int) {
		c := curves[i]
		key := charts.SeriesKey(c)
		text, tip := c.Machine, c.Model+" · "+c.Machine
		if f, ok := leader[i]; ok {
			text = "= " + c.Machine
			tip += " (= " + curves[f].Machine + ": the same curve)"
		} else if fs := followers[i]; len(fs) > 0 {
			var same []string
			for _, j := range fs {
				same = append(same, curves[j].Machine)
			}
			tip += " (= " + strings.Join(same, ", ") + ": the same curve)"
		}
		l.texts = append(l.texts, tip)
		e := l.entries[key]
		if e == nil {
			e = l.newEntry(key, text)
		}
		kept[key] = e
		if look := (legendLook{styles.Of(c), bg}); !sameLook(look, e.look) {
			e.look = look
			e.icon.Image = charts.SeriesIcon(look.style, int(legendIcon.Width), int(legendIcon.Height), bg)
			e.icon.Refresh()
		}
		if e.label.Text != text {
			e.label.SetText(text)
		}
		e.label.tip = tip
		if shown := !hidden[key]; e.check.Checked != shown {
			on := e.check.OnChanged
			e.check.OnChanged = nil // the view already says so: no toggle back
			e.check.SetChecked(shown)
			e.check.OnChanged = on
		}
		objs = append(objs, e.box)
		natural = fyne.Max(natural, legendIcon.Width+e.check.MinSize().Width+fyne.MeasureText(text, theme.TextSize(), fyne.TextStyle{}).Width+4*theme.Padding())
	}
	for _, m := range models {
		h := l.heads[m]
		if h == nil {
			h = widget.NewLabelWithStyle(m, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			h.Truncation = fyne.TextTruncateEllipsis
		}
		keptHeads[m] = h
		objs = append(objs, h)
		for _, i := range byModel[m] {
			add(i)
			for _, j := range followers[i] {
				add(j)
			}
		}
	}
	l.entries, l.heads = kept, keptHeads
	l.grid.natural = natural
	if !slices.Equal(l.box.Objects, objs) { // the same entries in the same order: nothing to lay out
		l.box.Objects = objs
		l.box.Refresh()
		l.scroll.Refresh()
	}
}

// newEntry makes the entry of a series.
func (l *Legend) newEntry(key, text string) *legendEntry {
	icon := canvas.NewImageFromImage(nil)
	icon.FillMode = canvas.ImageFillOriginal
	icon.SetMinSize(legendIcon)
	check := widget.NewCheck("", nil)
	check.SetChecked(true)
	check.OnChanged = func(on bool) {
		if l.OnToggle != nil {
			l.OnToggle(key, on)
		}
	}
	label := newTapLabel(text, func() { check.SetChecked(!check.Checked) })
	box := newQuietRow(container.NewBorder(nil, nil, container.NewHBox(container.NewCenter(icon), check), nil, label))
	return &legendEntry{box: box, icon: icon, check: check, label: label}
}

// quietRow holds a legend entry's parts and passes a refresh of the legend on to them
// only when the theme changed: each part refreshes itself when it changes (a text, a
// check), and a hundred labels cut to fit again on every prediction would take most of
// a redraw.
type quietRow struct {
	widget.BaseWidget
	content fyne.CanvasObject
}

func newQuietRow(content fyne.CanvasObject) *quietRow {
	r := &quietRow{content: content}
	r.ExtendBaseWidget(r)
	return r
}

func (r *quietRow) CreateRenderer() fyne.WidgetRenderer { return &quietRenderer{content: r.content} }

type quietRenderer struct {
	content fyne.CanvasObject
	theme   fyne.Theme
	variant fyne.ThemeVariant
}

func (q *quietRenderer) Layout(size fyne.Size) { q.content.Resize(size) }
func (q *quietRenderer) MinSize() fyne.Size    { return q.content.MinSize() }
func (q *quietRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{q.content}
}
func (q *quietRenderer) Destroy() {}

// Refresh refreshes the parts when the theme or its variant changed since the last.
func (q *quietRenderer) Refresh() {
	s := fyne.CurrentApp().Settings()
	if th, v := s.Theme(), s.ThemeVariant(); th != q.theme || v != q.variant {
		q.theme, q.variant = th, v
		q.content.Refresh()
	}
}

// sameLook reports whether two icons would be drawn alike.
func sameLook(a, b legendLook) bool {
	if a.bg == nil || b.bg == nil {
		return false
	}
	ar, ag, ab, aa := a.bg.RGBA()
	br, bg, bb, ba := b.bg.RGBA()
	return ar == br && ag == bg && ab == bb && aa == ba && a.style.Color == b.style.Color && a.style.Shape == b.style.Shape &&
		slices.Equal(a.style.Dashes, b.style.Dashes)
}

// legendGrid lays the entries out in columns as wide as the widest entry needs (at
// most legendColumnMax), as many as the width holds, and cuts texts to fit: one
// column beside the chart, several under it. Its least width is an entry's icon,
// check and a few letters, so the legend never sets the window's least width.
type legendGrid struct {
	width   float32
	natural float32 // the widest entry's width with its text whole
}

// legendColumnMax is the widest a legend column grows.
const legendColumnMax = 380

func (g *legendGrid) columns(objs []fyne.CanvasObject, width float32) (cols int, colWidth float32) {
	natural := fyne.Min(g.natural, legendColumnMax)
	cols = 1
	if natural > 0 {
		cols = max(1, int(width/natural))
	}
	cols = min(cols, max(len(objs), 1))
	return cols, width / float32(cols)
}

func (g *legendGrid) rowHeight(objs []fyne.CanvasObject) float32 {
	var h float32
	for _, o := range objs {
		h = fyne.Max(h, o.MinSize().Height)
	}
	return h
}

func (g *legendGrid) MinSize(objs []fyne.CanvasObject) fyne.Size {
	if len(objs) == 0 {
		return fyne.Size{}
	}
	width := g.width
	if width <= 0 {
		width = legendColumnMax
	}
	cols, _ := g.columns(objs, width)
	rows := (len(objs) + cols - 1) / cols
	return fyne.NewSize(legendIcon.Width+80, float32(rows)*g.rowHeight(objs))
}

func (g *legendGrid) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	g.width = size.Width
	cols, w := g.columns(objs, size.Width)
	h := g.rowHeight(objs)
	for i, o := range objs {
		o.Move(fyne.NewPos(float32(i%cols)*w, float32(i/cols)*h))
		o.Resize(fyne.NewSize(w, h))
	}
}

// tapLabel is a legend entry's text: cut to fit, its whole text (tip) shown on hover
// when it is cut, and a tap on it ticks the entry's check as a tap on the check does.
type tapLabel struct {
	widget.Label
	onTap func()
	tip   string // the entry's whole text: CNN · machine, and which it is the same curve as
}

// MouseIn shows the whole text of an entry cut to fit, or that says more than it shows.
func (l *tapLabel) MouseIn(e *desktop.MouseEvent) { l.MouseMoved(e) }

// MouseMoved keeps the tip by the pointer.
func (l *tapLabel) MouseMoved(e *desktop.MouseEvent) {
	if t := tooltipLayerFor(l); t != nil && l.tip != "" {
		t.show(l.tip, e.AbsolutePosition)
	}
}

// MouseOut hides the tip.
func (l *tapLabel) MouseOut() {
	if t := tooltipLayerFor(l); t != nil {
		t.hide()
	}
}

func newTapLabel(text string, onTap func()) *tapLabel {
	l := &tapLabel{onTap: onTap}
	l.Text, l.Truncation = text, fyne.TextTruncateEllipsis
	l.ExtendBaseWidget(l)
	return l
}

// Tapped is part of fyne.Tappable.
func (l *tapLabel) Tapped(*fyne.PointEvent) {
	if l.onTap != nil {
		l.onTap()
	}
}

// Entries is the number of series entries (not counting the CNNs' headings).
func (l *Legend) Entries() int { return len(l.entries) }

// Texts are the entries' texts, in order.
func (l *Legend) Texts() []string { return append([]string(nil), l.texts...) }
