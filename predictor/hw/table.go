package hw

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RowError is a mistake in one cell of a catalog file. Line counts from 1, the header
// being line 1; Field is the column's name.
type RowError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *RowError) Error() string {
	return fmt.Sprintf("%s line %d, field %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// table is a CSV file read into records, with its columns found by name so that the
// files' column order is free.
type table struct {
	file string
	col  map[string]int
	rows []record
}

// record is one data row and the line it starts on.
type record struct {
	t      *table
	line   int
	fields []string
}

// readTable parses data as CSV with a header naming exactly the columns in want
// (in any order). A missing or unknown column, or malformed CSV, is a *RowError.
func readTable(file string, data []byte, want []string) (*table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = 0 // every row as wide as the header
	header, err := r.Read()
	if err == io.EOF {
		return nil, &RowError{File: file, Line: 1, Field: "header", Msg: "the file is empty; it needs a header row naming the columns " + strings.Join(want, ", ")}
	}
	if err != nil {
		return nil, csvError(file, err)
	}
	t := &table{file: file, col: map[string]int{}}
	for i, name := range header {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		if _, dup := t.col[name]; dup {
			return nil, &RowError{File: file, Line: 1, Field: name, Msg: "the column appears twice in the header"}
		}
		t.col[name] = i
	}
	for _, name := range want {
		if _, ok := t.col[name]; !ok {
			return nil, &RowError{File: file, Line: 1, Field: name, Msg: "the header lacks this column"}
		}
	}
	if len(t.col) != len(want) {
		for name := range t.col {
			if !contains(want, name) {
				return nil, &RowError{File: file, Line: 1, Field: name, Msg: "unknown column; the columns are " + strings.Join(want, ", ")}
			}
		}
	}
	for {
		fields, err := r.Read()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, record{t: t, line: line, fields: fields})
	}
}

func csvError(file string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("read %s: %w", file, err)
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		return &RowError{File: file, Line: pe.Line, Field: "row", Msg: "has a different number of fields from the header; every row needs one cell per column (quote cells that contain commas)"}
	}
	return &RowError{File: file, Line: pe.Line, Field: "row", Msg: fmt.Sprintf("%v at character %d", pe.Err, pe.Column)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r record) errorf(field, format string, args ...any) error {
	return &RowError{File: r.t.file, Line: r.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// text is the trimmed cell of the named column.
func (r record) text(field string) string { return strings.TrimSpace(r.fields[r.t.col[field]]) }

// required is text that must not be empty.
func (r record) required(field string) (string, error) {
	s := r.text(field)
	if s == "" {
		return "", r.errorf(field, "is empty; it is required")
	}
	return s, nil
}

// number is a finite, non-negative number; an empty cell is 0, meaning unknown.
func (r record) number(field string) (float64, error) {
	s := r.text(field)
	if s == "" {
		return 0, nil
	}
	v, ok := ParseDecimal(s)
	if !ok {
		return 0, r.errorf(field, "%q is not a number (write it in decimal, e.g. 3.06)", s)
	}
	if v < 0 {
		return 0, r.errorf(field, "%s is negative", s)
	}
	return v, nil
}

// count is a non-negative whole number; an empty cell is 0, meaning unknown.
func (r record) count(field string) (int, error) {
	s := r.text(field)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, r.errorf(field, "%q is not a whole number", s)
	}
	if v < 0 {
		return 0, r.errorf(field, "%d is negative", v)
	}
	return v, nil
}
