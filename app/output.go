package app

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes v as indented JSON followed by a newline: the stable --json form.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

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

// suggestion returns ` (did you mean "x"?)` for the candidate closest to name, or "".
func suggestion(name string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(name)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Suggest is suggestion for other packages' names (models, machines, GPUs).
func Suggest(name string, candidates []string) string { return suggestion(name, candidates) }

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
