package views

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// A results cell longer than its column is cut with an ellipsis to the column's
// width, so it never runs over the next column; a short one is left whole.
func TestFitCellCutsToTheColumn(t *testing.T) {
	newTestApp(t)
	long := "none: no spot price in region sa-east-1 of the shipped snapshot of 2026-12-07 for this machine"
	width := func(s string) float32 {
		return fyne.MeasureText(s, theme.TextSize(), fyne.TextStyle{}).Width + 2*theme.InnerPadding()
	}
	tests := []struct {
		name   string
		text   string
		column float32
		whole  bool
	}{
		{"short cell", "$0.2568/h spot us-east-2, 2026-12-07", 260, true},
		{"long cell in a wide column", long, width(long) + 1, true},
		{"long cell in a narrow column", long, 250, false},
		{"before the first layout", long, 0, true},
	}
	for _, tc := range tests {
		got := fitCell(tc.text, tc.column)
		switch {
		case tc.whole && got != tc.text:
			t.Errorf("%s: %q; want it whole", tc.name, got)
		case !tc.whole && (!strings.HasSuffix(got, "…") || width(got) > tc.column || !strings.HasPrefix(tc.text, strings.TrimSuffix(got, "…"))):
			t.Errorf("%s: %q (%.0f px); want a prefix with an ellipsis within %.0f px", tc.name, got, width(got), tc.column)
		case !tc.whole && width(got+"x") <= tc.column && len(got) < len(tc.text):
			t.Errorf("%s: %q is cut shorter than the column needs", tc.name, got)
		}
	}
}
