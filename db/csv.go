package db

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"cnntime/db/csvsafe"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// StepCSVColumns is the header of a CSV of whole training-step measurements, the format
// that `cnntime cache import` reads, `cnntime cache export --csv` writes and the
// PyTorch sweep script emits. One row is one model at one batch size on one GPU:
//
//	gpu          the catalog GPU id ("v100-sxm2-16gb"), stored as device "gpu:<id>"; or a
//	             measured device's key containing ':' ("cuda:GPU-…"), stored as it is
//	model        the torchvision model name ("resnet50")
//	batch_size   the mini-batch size per GPU, a positive integer
//	precision    fp32 (PyTorch's default), fp32-strict (TF32 off) or amp
//	framework    what ran it, e.g. "pytorch 2.5.1+cu124"
//	step_ms      the median time of one training step (forward, backward, optimizer
//	             update) in milliseconds: a number > 0 when status is ok, may be empty otherwise
//	spread_ms    half the interquartile range of the repeats, in ms: a number ≥ 0, or empty for 0
//	status       ok, oom (the batch does not fit in memory) or unsupported
//	source       where the figure came from (a host, a paper); empty: "csv:<file name>"
//	measured_at  optional column: when, in RFC 3339 ("2026-03-01T12:00:00Z"); empty: unknown
//
// The header line is required; columns may come in any order; an unknown or missing
// column is an error. A row with the same gpu, model, batch_size, precision, framework
// and source as one already in the cache replaces it only when its measured_at is later.
//
// The file is opened in spreadsheets, so WriteStepsCSV neutralises the text cells (gpu,
// model, precision, framework, status, source) that would start a formula: a model named
// =cmd is written '=cmd (csvsafe.Text). ParseStepsCSV takes that apostrophe off again
// (csvsafe.Untext), so an exported CSV imports back with every name unchanged, and a
// hand-written '=cmd names the model =cmd.
var StepCSVColumns = []string{"gpu", "model", "batch_size", "precision", "framework", "step_ms", "spread_ms", "status", "source", "measured_at"}

// optionalStepColumns may be left out of a step CSV's header.
var optionalStepColumns = map[string]bool{"measured_at": true}

// ParseStepsCSV reads a step CSV (see StepCSVColumns) named name (for messages and the
// default source). It reads all of it or returns the first error, naming its line.
func ParseStepsCSV(r io.Reader, name string) ([]measure.Step, error) {
	var steps []measure.Step
	err := readStepsCSV(r, name, &ImportChecks{}, func(s measure.Step) error {
		steps = append(steps, s)
		return nil
	})
	return steps, err
}

// readStepsCSV reads the step CSV r, named name, and calls fn with each step, in order,
// as it reads them; it stops at the first error, of the file or of fn.
func readStepsCSV(r io.Reader, name string, checks *ImportChecks, fn func(measure.Step) error) error {
	s, err := openCSV(r, name)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s is empty: a step CSV starts with the header %s", name, strings.Join(StepCSVColumns, ","))
	}
	if err != nil {
		return err
	}
	return s.steps(checks, fn)
}

// steps reads the rest of s, a step CSV, calling fn with each step.
func (s *csvStream) steps(checks *ImportChecks, fn func(measure.Step) error) error {
	col, err := stepColumnIndex(s.header)
	if err != nil {
		return fmt.Errorf("%s line 1: %w", s.name, err)
	}
	n := 0
	for {
		rec, line, ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		st, err := parseStepRecord(rec, col, s.name, checks)
		if err != nil {
			return fmt.Errorf("%s line %d: %w", s.name, line, err)
		}
		if err := fn(st); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s has a header but no measurements", s.name)
	}
	return nil
}

// stepColumnIndex maps each column name to its position in header.
func stepColumnIndex(header []string) (map[string]int, error) {
	known := map[string]bool{}
	for _, c := range StepCSVColumns {
		known[c] = true
	}
	col := map[string]int{}
	for i, h := range header {
		if !known[h] {
			return nil, fmt.Errorf("unknown column %q: a step CSV has the columns %s", h, strings.Join(StepCSVColumns, ", "))
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("column %q appears twice", h)
		}
		col[h] = i
	}
	for _, c := range StepCSVColumns {
		if _, ok := col[c]; !ok && !optionalStepColumns[c] {
			return nil, fmt.Errorf("missing column %q: a step CSV has the columns %s", c, strings.Join(StepCSVColumns, ", "))
		}
	}
	return col, nil
}

func parseStepRecord(rec []string, col map[string]int, name string, checks *ImportChecks) (measure.Step, error) {
	field := func(c string) string {
		if i, ok := col[c]; ok {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	// text is a text cell, without the apostrophe WriteStepsCSV puts before a formula.
	text := func(c string) string { return csvsafe.Untext(field(c)) }
	s := measure.Step{
		Model:     text("model"),
		Precision: measure.Precision(text("precision")),
		Framework: text("framework"),
		Source:    text("source"),
		Status:    measure.Status(text("status")),
	}
	var err error
	if s.DeviceKey, err = csvDeviceKey("gpu", text("gpu")); err != nil {
		return s, err
	}
	if err := checks.checkDevice("gpu", s.DeviceKey); err != nil {
		return s, err
	}
	if s.Source == "" {
		s.Source = "csv:" + name
	}
	if s.Batch, err = strconv.Atoi(field("batch_size")); err != nil {
		return s, fmt.Errorf("batch_size %q is not a whole number", field("batch_size"))
	}
	if err := checkBatch(s.Batch); err != nil {
		return s, err
	}
	if s.MedianMS, err = parseMS("step_ms", field("step_ms")); err != nil {
		return s, err
	}
	if s.SpreadMS, err = parseMS("spread_ms", field("spread_ms")); err != nil {
		return s, err
	}
	if s.At, err = parseMeasuredAt(field("measured_at")); err != nil {
		return s, err
	}
	if err := validateStep(s); err != nil {
		return s, err
	}
	return s, nil
}

// csvDeviceKey reads a CSV's device cell: a cache device key ("cuda:GPU-…",
// "cpu:host:…") as it is, a bare catalog GPU id ("t4") as "gpu:t4".
func csvDeviceKey(column, v string) (string, error) {
	switch {
	case v == "":
		return "", fmt.Errorf("%s is empty", column)
	case strings.Contains(v, ":"):
		return v, nil
	}
	return "gpu:" + v, nil
}

// parseMeasuredAt reads a measured_at cell (RFC 3339, in UTC, a time checkMeasuredAt
// takes); empty is the zero time.
func parseMeasuredAt(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("measured_at %q is not an RFC 3339 time such as 2026-03-01T12:00:00Z", v)
	}
	if err := checkMeasuredAt(at); err != nil {
		return time.Time{}, err
	}
	return at.UTC(), nil
}

// parseMS reads a non-negative time in milliseconds; empty is 0.
func parseMS(column, v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	x, ok := hw.ParseDecimal(v) // decimal only: not "0x1p4", "1_0.5", "Inf" or "NaN"
	if !ok {
		return 0, fmt.Errorf("%s %q is not a number of milliseconds (write it in decimal, e.g. 12.5)", column, v)
	}
	if x < 0 {
		return 0, fmt.Errorf("%s %v is negative: a time must be 0 or more", column, x)
	}
	return x, nil
}

// WriteStepsCSV writes steps as a step CSV (see StepCSVColumns), header first; text
// cells that would start a formula are neutralised (csvsafe.Text), numbers are not.
func WriteStepsCSV(w io.Writer, steps []measure.Step) error {
	cw := csv.NewWriter(w)
	cw.Write(StepCSVColumns)
	for _, s := range steps {
		at := ""
		if !s.At.IsZero() {
			at = s.At.UTC().Format(time.RFC3339Nano)
		}
		stepMS := formatMS(s.MedianMS)
		if s.Status != measure.OK && s.MedianMS == 0 {
			stepMS = "" // no time: out of memory or unsupported
		}
		gpu := s.DeviceKey
		if id, ok := strings.CutPrefix(gpu, "gpu:"); ok && !strings.Contains(id, ":") {
			gpu = id // a catalog GPU id; one with a ':' keeps its prefix, or it would read back as a device key
		}
		cw.Write([]string{csvsafe.Text(gpu), csvsafe.Text(s.Model), strconv.Itoa(s.Batch),
			csvsafe.Text(string(s.Precision)), csvsafe.Text(s.Framework), stepMS, formatMS(s.SpreadMS),
			csvsafe.Text(string(s.Status)), csvsafe.Text(s.Source), at})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write step CSV: %w", err)
	}
	return nil
}

func formatMS(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
