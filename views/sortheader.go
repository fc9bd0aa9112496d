package views

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// newSortHeader is a header cell of a table that sorts when a column's title is tapped.
func newSortHeader() fyne.CanvasObject {
	b := widget.NewButton("", nil)
	b.Importance = widget.LowImportance
	b.Alignment = widget.ButtonAlignLeading
	return b
}

// showSortHeader sets a header cell made by newSortHeader: the column's title, with ▲ or
// ▼ where the table is sorted by it, and sortBy to run when it is tapped.
func showSortHeader(o fyne.CanvasObject, title string, sorted, descending bool, sortBy func()) {
	b := o.(*widget.Button)
	if sorted {
		if descending {
			title += " ▼"
		} else {
			title += " ▲"
		}
	}
	b.OnTapped = sortBy
	b.SetText(title)
}
