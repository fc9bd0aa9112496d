package app

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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

// Row adds one row.
func (t *Table) Row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }

// suggestion returns ` (did you mean "x"?)` for the candidate closest to name (see
// hw.Closest), or "".
func suggestion(name string, candidates []string) string {
	best := hw.Closest(name, candidates, 1)
	if len(best) == 0 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best[0])
}

// Suggest is suggestion for other packages' names (models, machines, GPUs).
func Suggest(name string, candidates []string) string { return suggestion(name, candidates) }
