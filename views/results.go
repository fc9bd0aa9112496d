package views

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"cnntime/app"
	"cnntime/predictor"
)

// ResultsTable is the results tab: one row per CNN × machine at its best batch size,
// sortable by any column from its header (again to reverse).
type ResultsTable struct {
	widget.BaseWidget
	table      *widget.Table
	content    fyne.CanvasObject
	rows       []app.Summary
	columns    *stretchColumns
	sortColumn app.SummaryColumn // -1: the prediction's order (with a limit, its ranking)
	descending bool
	// Answer is the line above the table that answers the Run tab's deadline or budget
	// (app.RunLimit.Answer, best's answer line); hidden without one. missed holds the
	// rows (model and machine) that do not meet it, drawn dimmed; limit is the limit the
	// rows were ranked by.
	Answer *widget.Label
	missed map[[2]string]bool
	limit  app.RunLimit
	// OnSelected is called with the row the user clicks.
	OnSelected func(app.Summary)
}

// resultWidths are the columns' least widths; a column is widened to its widest
// cell (up to resultWidthMax) so no figure, price date or OLD is cut off.
var resultWidths = []float32{110, 200, 80, 150, 80, 80, 80, 80, 80, 80, 80, 80, 250, 110, 200, 260}

// resultWidthMax is the widest a results column grows to fit its cells; a longer cell
// (a list of warnings) is cut and its whole text is in the Why tab and the CSV.
const resultWidthMax = 520

// NewResultsTable makes an empty results table.
func NewResultsTable() *ResultsTable {
	t := &ResultsTable{sortColumn: -1}
	t.table = widget.NewTable(
		func() (int, int) { return len(t.rows), len(app.SummaryColumns) },
		func() fyne.CanvasObject {
			// The columns are as wide as their cells (fitWidths): no text is cut, and
			// cutting a few hundred cells to fit on every prediction costs a redraw's time.
			return widget.NewLabel("")
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			if id.Row < len(t.rows) {
				l := o.(*widget.Label)
				r := t.rows[id.Row]
				l.Importance = widget.MediumImportance
				if t.missed[[2]string{r.Model, r.Machine}] {
					l.Importance = widget.LowImportance // misses the deadline or budget
				}
				l.SetText(fitCell(r.Cell(app.SummaryColumn(id.Col)), t.columns.widthOf(id.Col)))
			}
		})
	t.table.OnSelected = func(id widget.TableCellID) {
		t.table.UnselectAll()
		if t.OnSelected != nil && id.Row >= 0 && id.Row < len(t.rows) {
			t.OnSelected(t.rows[id.Row])
		}
	}
	t.table.ShowHeaderRow = true
	t.table.CreateHeader = newSortHeader
	t.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		col := app.SummaryColumn(id.Col)
		showSortHeader(o, app.SummaryTitles(t.rows)[col], col == t.sortColumn, t.descending, func() { t.SortBy(col) })
	}
	t.table.StickyColumnCount = 2 // the CNN and the machine stay while the figures scroll
	var table fyne.CanvasObject
	table, t.columns = newStretchTable(t.table, resultWidths)
	t.Answer = widget.NewLabel("")
	t.Answer.Wrapping = fyne.TextWrapWord
	t.Answer.Hide()
	t.content = container.NewBorder(t.Answer, nil, nil, nil, table)
	t.ExtendBaseWidget(t)
	return t
}

// fitCell is a cell's text cut with an ellipsis to the column's width: a label draws
// its whole text, over the next columns when it is longer. Only the rare long cell
// (a list of warnings, a price's reason) is measured.
func fitCell(text string, width float32) string {
	if width <= 0 || len(text) < 40 {
		return text
	}
	size, pad := theme.TextSize(), 2*theme.InnerPadding()
	if fyne.MeasureText(text, size, fyne.TextStyle{}).Width+pad <= width {
		return text
	}
	r := []rune(text)
	lo, hi := 0, len(r) // the longest prefix that fits with its ellipsis
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fyne.MeasureText(string(r[:mid])+"…", size, fyne.TextStyle{}).Width+pad <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(r[:lo]) + "…"
}

// SetCurves shows a prediction's results, keeping the sort.
func (t *ResultsTable) SetCurves(curves []predictor.Curve) {
	t.SetRanked(curves, app.RunLimit{}, app.LimitRanking{}, "")
}

// SetRanked shows a prediction's results ranked by a deadline or budget (the ranking
// and answer of app.SessionState.LimitAnswer): the rows that meet it first, those that
// miss it dimmed, and the answer above the table. A new limit shows its ranking again
// in place of a column's sort; without a limit it is SetCurves.
func (t *ResultsTable) SetRanked(curves []predictor.Curve, limit app.RunLimit, r app.LimitRanking, answer string) {
	t.rows = app.Summarize(curves)
	t.missed = nil
	if limit != t.limit {
		t.limit, t.sortColumn, t.descending = limit, -1, false
	}
	if limit.Set() && len(r.Order) == len(t.rows) {
		t.missed = map[[2]string]bool{}
		for i, meets := range r.Meets {
			if !meets {
				t.missed[[2]string{t.rows[i].Model, t.rows[i].Machine}] = true
			}
		}
		t.rows = app.Permute(t.rows, r.Order)
	}
	t.showAnswer(answer, limit.Set() && len(r.Order) > 0 && r.Meets[r.Order[0]])
	if t.sortColumn >= 0 {
		app.SortSummaries(t.rows, t.sortColumn, t.descending)
	}
	t.columns.setBase(fitWidths(resultWidths, app.SummaryTitles(t.rows), len(t.rows), func(row, col int) string {
		return t.rows[row].Cell(app.SummaryColumn(col))
	}, resultWidthMax))
	t.table.Refresh()
}

// SortBy sorts by a column; sorting by the same column again reverses the order.
func (t *ResultsTable) SortBy(col app.SummaryColumn) {
	if col == t.sortColumn {
		t.descending = !t.descending
	} else {
		t.sortColumn, t.descending = col, false
	}
	app.SortSummaries(t.rows, t.sortColumn, t.descending)
	t.table.Refresh()
}

// showAnswer shows the limit's answer above the table ("" hides it), green when a run
// meets the limit and in the warning colour when none does.
func (t *ResultsTable) showAnswer(answer string, met bool) {
	if answer == "" {
		if t.Answer.Visible() {
			t.Answer.Hide()
			t.content.Refresh()
		}
		return
	}
	t.Answer.Importance = widget.WarningImportance
	if met {
		t.Answer.Importance = widget.SuccessImportance
	}
	t.Answer.SetText(uiText(answer))
	if !t.Answer.Visible() {
		t.Answer.Show()
		t.content.Refresh()
	}
}

// Missed reports whether a row misses the deadline or budget it was ranked by.
func (t *ResultsTable) Missed(r app.Summary) bool { return t.missed[[2]string{r.Model, r.Machine}] }

// Rows are the rows shown, in the order shown.
func (t *ResultsTable) Rows() []app.Summary { return t.rows }

// CreateRenderer is part of fyne.Widget.
func (t *ResultsTable) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(t.content)
}
