package published

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Read reads a CSV file of published figures (name, for its messages): a header that
// has every one of columns, then rows, each in the tuning or the held-out set. It
// hands each row to parse in turn; the first error, parse's, a number's that did not
// read (Row.Num; parse sees it as Row.Err) or the file's, ends the reading and says
// the file, the line and the column.
func Read(name string, data []byte, columns []string, parse func(f *Row) error) error {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range columns {
		if _, ok := col[c]; !ok {
			return fmt.Errorf("%s: the header lacks column %q", name, c)
		}
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		f := &Row{name: name, line: line, col: col, rec: rec}
		if set := f.Text("set"); set != "tuning" && set != "held out" {
			return f.CellErrorf("set", "%q is neither tuning nor held out", set)
		}
		if err := parse(f); err != nil {
			return err
		}
		if f.err != nil {
			return f.err
		}
	}
}

// Row is one row of a figures file as Read hands it on: its cells by column name, and
// the first number that did not read.
type Row struct {
	name string
	line int
	col  map[string]int
	rec  []string
	err  error
}

// Text is the row's cell in column c, trimmed; "" where the file has no such column.
func (f *Row) Text(c string) string {
	i, ok := f.col[c]
	if !ok || i >= len(f.rec) {
		return ""
	}
	return strings.TrimSpace(f.rec[i])
}

// Num is the row's positive number in column c: 0 for an empty cell that is not
// required; anything else that is not a positive finite number is the row's error.
func (f *Row) Num(c string, required bool) float64 {
	s := f.Text(c)
	if s == "" && !required {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if (err != nil || !(v > 0) || math.IsInf(v, 0)) && f.err == nil {
		f.err = f.CellErrorf(c, "%q is not a positive number", s)
	}
	return v
}

// Err is the first number of the row that did not read (Num), nil if none.
func (f *Row) Err() error { return f.err }

// Errorf is an error about the row as a whole: "loader_runs.csv line 7: …".
func (f *Row) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s line %d: "+format, append([]any{f.name, f.line}, args...)...)
}

// CellErrorf is an error about the row's cell in column c: "loader_runs.csv line 7, set: …".
func (f *Row) CellErrorf(c, format string, args ...any) error {
	return fmt.Errorf("%s line %d, %s: "+format, append([]any{f.name, f.line, c}, args...)...)
}
