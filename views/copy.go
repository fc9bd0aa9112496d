package views

import (
	"strings"

	"cnntime/app"
	"cnntime/app/charts"
)

// CopyText is what Edit → Copy (Ctrl+C) puts on the clipboard: the tab shown, as
// text a spreadsheet or a message takes — the results or the machines as
// tab-separated rows under their titles, the Why tab's sentences and its table.
func (mw *MainWindow) CopyText() string {
	if mw.tabs == nil {
		return ""
	}
	switch mw.tabs.Selected().Text {
	case "Machines":
		var b strings.Builder
		titles := make([]string, len(specColumns))
		for i, c := range specColumns {
			titles[i] = c.title
		}
		writeRow(&b, titles[1:])
		for row := range mw.Specs.Rows() {
			cells := make([]string, len(specColumns)-1)
			for col := 1; col < len(specColumns); col++ {
				cells[col-1] = mw.Specs.Cell(row, col)
			}
			writeRow(&b, cells)
		}
		return b.String()
	case "Results":
		var b strings.Builder
		writeRow(&b, app.SummaryTitles(mw.Results.Rows()))
		for _, r := range mw.Results.Rows() {
			cells := make([]string, len(app.SummaryColumns))
			for col := range cells {
				cells[col] = r.Cell(app.SummaryColumn(col))
			}
			writeRow(&b, cells)
		}
		return b.String()
	case "Why this number?":
		return mw.Why.Text()
	}
	return ""
}

// writeRow writes cells as one tab-separated line; a tab or line break in a cell
// becomes a space.
func writeRow(b *strings.Builder, cells []string) {
	for i, c := range cells {
		if i > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(strings.NewReplacer("\t", " ", "\n", " ").Replace(c))
	}
	b.WriteByte('\n')
}

// copyShown puts CopyText on the clipboard and says so.
func (mw *MainWindow) copyShown() {
	text := mw.CopyText()
	if text == "" {
		mw.notify("Nothing to copy here: Edit › Copy copies the Machines, Results or Why this number? tab.")
		return
	}
	mw.App.Clipboard().SetContent(text)
	lines := strings.Count(text, "\n")
	mw.notify("Copied the " + mw.tabs.Selected().Text + " tab (" + charts.Count(lines, "line", "lines") + ") to the clipboard.")
}
