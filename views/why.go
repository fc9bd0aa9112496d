package views

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
)

// WhyPanel answers "why this number?" for one CNN on one machine at one batch size:
// what bounds the step, where the number comes from and how sure it is, the step split
// by phase and by kind of layer as a chart, and the layers (the ten slowest or every
// one) as a table. A results row, a scatter point or a curve point fills it.
type WhyPanel struct {
	widget.BaseWidget

	Header *widget.Label
	Chart  *ChartView
	Which  *widget.Select // which layers the table lists
	Export *widget.Button
	table  *widget.Table

	x    *predictor.Explanation
	bars []charts.Bar // the chart's, of x
	rows []predictor.LayerTime

	content fyne.CanvasObject
}

// Which layers the table shows.
const (
	whySlowest = "Ten slowest layers"
	whyEvery   = "Every layer, in order"
	whyPhases  = "The step by phase"
	whyKinds   = "The step by kind of layer"
)

// whyRowHeight is the height a bar of the Why chart needs for its label to stay clear
// of the next (9-point text).
const whyRowHeight = 17

var whyColumns = []string{"Layer", "Kind", "Shape", "Forward", "Bwd data", "Bwd weight", "Total", "Source"}
var whyWidths = []float32{170, 130, 250, 85, 85, 95, 85, 95}

const whyEmpty = "Click a row of the Results tab, a point of the scatter or a point of a curve to see why its time is what it is: what bounds the step, where the number comes from and how sure it is, and which layers take the time."

// NewWhyPanel makes an empty panel; export is called by its Export button.
func NewWhyPanel(export func()) *WhyPanel {
	p := &WhyPanel{}
	p.Header = widget.NewLabel(whyEmpty)
	p.Header.Wrapping = fyne.TextWrapWord
	p.Chart = NewChartView(false, "")
	p.Chart.Bars = true
	p.Chart.Tooltip = p.barTooltip
	p.Which = widget.NewSelect([]string{whySlowest, whyEvery, whyPhases, whyKinds}, nil)
	p.Which.SetSelected(whySlowest)
	p.Export = widget.NewButton("Export CSV…", export)
	p.Export.Disable()
	defer func() { p.Which.OnChanged = func(string) { p.refreshRows() } }()
	p.table = widget.NewTable(
		func() (int, int) { return p.tableSize() },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) { o.(*widget.Label).SetText(p.Cell(id.Row, id.Col)) })
	p.table.ShowHeaderRow = true
	p.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		o.(*widget.Label).SetText(p.columnTitle(id.Col))
	}
	for i, w := range whyWidths {
		p.table.SetColumnWidth(i, w)
	}
	tools := container.NewBorder(nil, nil, nil, p.Export, p.Which)
	right := container.NewBorder(tools, nil, nil, nil, p.table)
	// The chart keeps a row's height per bar and scrolls, rather than squeeze its
	// labels on top of each other in a short window.
	split := container.NewHSplit(container.NewVScroll(p.Chart), right)
	split.Offset = 0.4
	p.content = container.NewBorder(p.Header, nil, nil, nil, split)
	p.ExtendBaseWidget(p)
	return p
}

// CreateRenderer is part of fyne.Widget.
func (p *WhyPanel) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(p.content) }

// Explanation is the explanation shown; nil when none.
func (p *WhyPanel) Explanation() *predictor.Explanation { return p.x }

// Set shows an explanation of a point of curve c (nil when not at hand: no epochs'
// basis and no warnings are said) in a chart style.
func (p *WhyPanel) Set(x predictor.Explanation, c *predictor.Curve, style charts.Style) {
	p.x, p.bars = &x, breakdownBars(&x)
	groups := map[string]bool{}
	for _, b := range p.bars {
		groups[b.Group] = true
	}
	p.Chart.MinHeight = float32(len(p.bars)+len(groups))*whyRowHeight + 48 // the rows, their headings and the title
	p.Chart.Refresh()
	p.Header.SetText(app.WhyText(&x, c))
	p.Chart.SetChart(charts.Breakdown(p.bars, charts.BreakdownOptions{Title: "milliseconds per iteration", Style: style}))
	p.Export.Enable()
	p.refreshRows()
}

// Text is the panel as text: its sentences, then the table shown (tab-separated, under
// its titles); "" when nothing is explained.
func (p *WhyPanel) Text() string {
	if p.x == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(p.Header.Text)
	b.WriteString("\n\n")
	rows, cols := p.tableSize()
	titles := make([]string, cols)
	for c := range titles {
		titles[c] = p.columnTitle(c)
	}
	writeRow(&b, titles)
	for r := 0; r < rows; r++ {
		cells := make([]string, cols)
		for c := range cells {
			cells[c] = p.Cell(r, c)
		}
		writeRow(&b, cells)
	}
	return b.String()
}

// Clear empties the panel (the explained curve is no longer shown).
func (p *WhyPanel) Clear() {
	p.x, p.bars, p.rows = nil, nil, nil
	p.Header.SetText(whyEmpty)
	p.Chart.SetChart(nil)
	p.Export.Disable()
	p.table.Refresh()
}

// barTooltip reads out a bar of the chart.
func (p *WhyPanel) barTooltip(m charts.Mark) string {
	if p.x == nil || m.Curve < 0 || m.Curve >= len(p.bars) {
		return ""
	}
	b := p.bars[m.Curve]
	whole, of := p.x.Phases.Total(), "the step"
	if b.Group == app.KindsGroup {
		whole, of = 0, "the layers' kernel time"
		for _, k := range p.x.Kinds {
			whole += k.MS
		}
	}
	return fmt.Sprintf("%s (%s)\n%s per iteration, %s of %s", b.Label, b.Group, charts.FormatMS(b.Value), app.ShareText(b.Value, whole), of)
}

// breakdownBars are the chart's bars: the phases under their groups, then the kinds
// of layer (app.WhyBars).
func breakdownBars(x *predictor.Explanation) []charts.Bar { return app.WhyBars(x) }

// phaseTitle is a phase's name in words.
func phaseTitle(phase string) string {
	return strings.ReplaceAll(strings.ReplaceAll(phase, "_", " "), "-", " ")
}

func (p *WhyPanel) refreshRows() {
	p.rows = nil
	if p.x != nil {
		switch p.Which.Selected {
		case whyEvery:
			p.rows = p.x.SlowestLayers(0) // every layer that runs a kernel, in the network's order
			slices.SortFunc(p.rows, func(a, b predictor.LayerTime) int { return cmp.Compare(a.Index, b.Index) })
		case whySlowest:
			p.rows = p.x.Slowest
		}
	}
	p.table.Refresh()
}

func (p *WhyPanel) tableSize() (int, int) {
	if p.x == nil {
		return 0, len(whyColumns)
	}
	switch p.Which.Selected {
	case whyPhases:
		return len(p.x.Phases.List()), 3
	case whyKinds:
		return len(p.x.Kinds), 4
	}
	return len(p.rows), len(whyColumns)
}

// columnTitle is a column's header for what the table shows; "" for a column the
// table is about to drop (it asks for the old columns while it changes).
func (p *WhyPanel) columnTitle(col int) string {
	titles := whyColumns
	switch p.Which.Selected {
	case whyPhases:
		titles = []string{"Phase", "Time", "Share of the step"}
	case whyKinds:
		titles = []string{"Kind of layer", "Layers", "Time", "Share of kernel time"}
	}
	if col < 0 || col >= len(titles) {
		return ""
	}
	return titles[col]
}

// Cell is the table's text at a row and column, as shown.
func (p *WhyPanel) Cell(row, col int) string {
	if p.x == nil {
		return ""
	}
	switch p.Which.Selected {
	case whyPhases:
		list := p.x.Phases.List()
		if row >= len(list) || col > 2 {
			return ""
		}
		ph := list[row]
		return []string{phaseTitle(string(ph.Phase)), charts.FormatMS(ph.MS), app.ShareText(ph.MS, p.x.Phases.Total())}[col]
	case whyKinds:
		if row >= len(p.x.Kinds) || col > 3 {
			return ""
		}
		k := p.x.Kinds[row]
		return []string{k.Kind, strconv.Itoa(k.Layers), charts.FormatMS(k.MS), app.ShareText(k.SharePct, 100)}[col]
	}
	if row >= len(p.rows) {
		return ""
	}
	l := p.rows[row]
	ms := func(v float64) string {
		if v == 0 {
			return "–"
		}
		return charts.FormatMS(v)
	}
	switch col {
	case 0:
		return l.Name
	case 1:
		return l.Kind
	case 2:
		return l.Shape
	case 3:
		return ms(l.ForwardMS)
	case 4:
		return ms(l.BackwardDataMS)
	case 5:
		return ms(l.BackwardWeightMS)
	case 6:
		return ms(l.MS())
	case 7:
		return string(l.Source)
	}
	return ""
}
