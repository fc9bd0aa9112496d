package db

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A measurement CSV is read as a stream: a row at a time, checked and written inside
// one transaction (all rows or none), so memory does not grow with the file. What no
// measurement CSV holds stops the read at once, naming the line: a NUL byte (a binary
// file, /dev/zero), a line longer than maxCSVLine, text that is not UTF-8 or that holds a
// control character (an ANSI escape in a model name would rewrite the terminal of
// whoever lists it), a batch size beyond MaxBatch, or a catalog GPU id the catalog does
// not have (ImportChecks).

// maxCSVLine is the longest line a measurement CSV may have.
const maxCSVLine = 1 << 20

// MaxBatch is the largest batch size a measurement may have: the largest cnntime sweeps
// and predicts (gpu.MaxBatch).
const MaxBatch = 1 << 16

// ImportChecks are the checks of an import that need what only the application knows.
// A nil field checks nothing.
type ImportChecks struct {
	// GPU reports whether id is a catalog GPU id: a step or kernel row of device
	// "gpu:<id>" (or a bare id) must name one.
	GPU func(id string) bool
	// CustomModel says why a custom model file (its name and JSON) cannot be used, or
	// nil: an imported cache's custom models must pass it.
	CustomModel func(name string, data []byte) error
}

// SetImportChecks makes every later import through d make checks c.
func (d *DB) SetImportChecks(c ImportChecks) { d.checks = c }

// textReader passes a CSV through, refusing a NUL byte or a line longer than
// maxCSVLine with an error that names the line.
type textReader struct {
	r    io.Reader
	line int // complete lines read
	run  int // bytes since the last line break
	err  error
}

func (t *textReader) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.r.Read(p)
	for _, c := range p[:n] {
		switch {
		case c == '\n':
			t.line++
			t.run = 0
		case c == 0:
			t.err = fmt.Errorf("line %d holds a NUL byte: it is not a CSV text file", t.line+1)
		default:
			if t.run++; t.run > maxCSVLine {
				t.err = fmt.Errorf("line %d is longer than %d MiB: it is not a measurement CSV", t.line+1, maxCSVLine>>20)
			}
		}
		if t.err != nil {
			return 0, t.err
		}
	}
	return n, err
}

// csvStream is a measurement CSV being read: its reader, past the header line.
type csvStream struct {
	cr     *csv.Reader
	header []string
	name   string
}

// openCSV starts reading the CSV r, named name (for messages), and reads its header.
// An empty file returns io.EOF.
func openCSV(r io.Reader, name string) (*csvStream, error) {
	cr := csv.NewReader(bufio.NewReaderSize(&textReader{r: r}, 64<<10))
	cr.FieldsPerRecord = -1 // checked by next, with a clearer message
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	header = append([]string(nil), header...)
	for i, h := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if err := checkCell(header[i]); err != nil {
			return nil, fmt.Errorf("%s line 1: a column name %v", name, err)
		}
	}
	return &csvStream{cr: cr, header: header, name: name}, nil
}

// next returns the next row, its line and whether there is one; blank lines are
// skipped. The row is reused by the next call. Every cell is checked to be UTF-8 text
// without control characters.
func (s *csvStream) next() (rec []string, line int, ok bool, err error) {
	for {
		rec, err := s.cr.Read()
		if errors.Is(err, io.EOF) {
			return nil, 0, false, nil
		}
		if err != nil {
			return nil, 0, false, csvError(s.name, err)
		}
		line, _ := s.cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(rec) != len(s.header) {
			return nil, line, false, fmt.Errorf("%s line %d: %d fields, the header has %d", s.name, line, len(rec), len(s.header))
		}
		for i, cell := range rec {
			if err := checkCell(cell); err != nil {
				return nil, line, false, fmt.Errorf("%s line %d: %s %v", s.name, line, s.header[i], err)
			}
		}
		return rec, line, true, nil
	}
}

// csvError names the file in an error of reading it (a csv.ParseError names the line).
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	return fmt.Errorf("%s %w", name, err) // textReader's: "line N holds …"
}

// checkCell refuses a cell that is not UTF-8 text or holds a control character.
func checkCell(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("is not UTF-8 text")
	}
	for _, r := range v {
		if r < 0x20 && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("holds the control character %U", r)
		}
	}
	return nil
}

// checkBatch refuses a batch size above MaxBatch (Validate refuses one below 1).
func checkBatch(b int) error {
	if b > MaxBatch {
		return fmt.Errorf("batch_size %d is above %d, the largest cnntime sweeps and predicts", b, MaxBatch)
	}
	return nil
}

// checkDevice refuses a catalog GPU device ("gpu:<id>") that c's catalog lacks.
func (c *ImportChecks) checkDevice(column, key string) error {
	id, ok := strings.CutPrefix(key, "gpu:")
	if !ok || c.GPU == nil || c.GPU(id) {
		return nil
	}
	return fmt.Errorf("%s %q is not a GPU of the catalog ('cnntime machines' lists them; a measured device's key has its backend before ':', e.g. cuda:GPU-…)", column, id)
}
