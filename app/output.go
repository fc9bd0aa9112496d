package app

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"cnntime/predictor/hw"
)

// Table writes aligned columns for terminal output.
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table with the given column headers.
func NewTable(w io.Writer, headers ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.Row(headers...)
	return t
}

// Row adds one row; its cells are made Printable.
func (t *Table) Row(cells ...string) {
	for i, c := range cells {
		cells[i] = Printable(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// Printable is s with what a terminal would act on instead of showing written out as
// escapes: control characters (an ANSI escape in a model name clears the screen of
// whoever lists it; a tab breaks a table's columns), DEL, C1 controls and bytes that are
// not UTF-8 become \x1b, \u009b and the like. Text without them comes back as it is.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; {
		r, n := utf8.DecodeRuneInString(s[i:])
		clean = !unprintable(r, n)
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !unprintable(r, n):
			b.WriteString(s[i : i+n])
		case n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// unprintable reports whether a terminal acts on the rune r of n bytes rather than
// showing it, or whether it stands for a byte that is not UTF-8.
func unprintable(r rune, n int) bool {
	return hw.Unprintable(r) || (r == utf8.RuneError && n == 1)
}

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }

// suggestion returns ` (did you mean "x"?)` for the candidate closest to name (see
// hw.Closest), or "".
func suggestion(name string, candidates []string) string {
	best := hw.Closest(name, candidates, 1)
	if len(best) == 0 || best[0] == name { // never "did you mean" the name itself
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best[0])
}

// Suggest is suggestion for other packages' names (models, machines, GPUs).
func Suggest(name string, candidates []string) string { return suggestion(name, candidates) }
