package db

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cnntime/predictor/measure"
)

// hostileNames are names a user may give a custom model or a machine, with the cell a
// spreadsheet-safe CSV holds for each.
var hostileNames = []struct{ name, cell string }{
	{"=1+2", "'=1+2"},
	{"+x", "'+x"},
	{"-y", "'-y"},
	{"@z", "'@z"},
	{"normal", "normal"},
	{`=HYPERLINK("http://evil","x")`, `'=HYPERLINK("http://evil","x")`},
	{"'=quoted", "''=quoted"},
	{"'plain", "'plain"},
}

// readCSV reads every record of a CSV as encoding/csv (and so a spreadsheet) sees it.
func readCSV(t *testing.T, b []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return recs
}

// A step CSV neutralises every text cell that would start a formula, keeps numbers as
// numbers, and imports back (export → cache import) with every name unchanged.
func TestStepCSVNeutralisesFormulasAndRoundTrips(t *testing.T) {
	ctx := context.Background()
	var steps []measure.Step
	for i, h := range hostileNames {
		steps = append(steps, measure.Step{DeviceKey: "gpu:" + h.name, Model: h.name, Batch: i + 1, Precision: measure.FP32,
			Framework: h.name, Source: h.name, MedianMS: 1.5 + float64(i), SpreadMS: 0.25, Status: measure.OK, At: t0})
	}
	d := openTemp(t)
	if err := d.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := d.ExportStepsCSV(ctx, &buf, ExportFilter{}); err != nil || n != len(steps) {
		t.Fatalf("ExportStepsCSV = %d, %v", n, err)
	}
	recs := readCSV(t, buf.Bytes())
	if !reflect.DeepEqual(recs[0], StepCSVColumns) {
		t.Errorf("header = %v", recs[0])
	}
	byBatch := map[string][]string{}
	for _, r := range recs[1:] {
		byBatch[r[2]] = r
	}
	for i, h := range hostileNames {
		r := byBatch[string(rune('1'+i))]
		gpu := h.cell
		if strings.Contains(h.name, ":") {
			gpu = "gpu:" + h.name // a GPU id with a ':' keeps its prefix, so it reads back as one
		}
		want := []string{gpu, h.cell, string(rune('1' + i)), "fp32", h.cell, formatMS(1.5 + float64(i)), "0.25", "ok", h.cell, "2026-03-01T12:00:00.123456789Z"}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("row of %q =\n%q\nwant\n%q", h.name, r, want)
		}
	}

	// export → import into another cache, through a file as `cnntime cache import` does.
	path := filepath.Join(t.TempDir(), "steps.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	other := openTemp(t)
	rep, err := other.Import(ctx, path)
	if err != nil || rep.Steps.Added != len(steps) {
		t.Fatalf("Import = %+v, %v", rep, err)
	}
	back, err := other.Steps(ctx, StepFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := d.Steps(ctx, StepFilter{})
	if !reflect.DeepEqual(back, want) {
		t.Errorf("imported steps =\n%+v\nwant\n%+v", back, want)
	}
	// A second import of the same file neither adds nor replaces: the keys and times match.
	if rep, err := other.Import(ctx, path); err != nil || rep.Steps != (Merged{Kept: len(steps)}) {
		t.Errorf("second Import = %+v, %v; want every row kept", rep, err)
	}
}

// A hand-written (or pytorch_sweep.py) CSV may neutralise names itself: '=x names =x,
// while an apostrophe before anything else is part of the name.
func TestStepCSVReadsNeutralisedCells(t *testing.T) {
	const in = "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source\n" +
		"'-gpu,'=1+2,8,fp32,'@torch,2.5,,ok,'+lab\n" +
		"cuda:GPU-1,'plain,8,fp32,pytorch,2,,ok,''=x\n"
	steps, err := ParseStepsCSV(bytes.NewReader([]byte(in)), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []measure.Step{
		{DeviceKey: "gpu:-gpu", Model: "=1+2", Batch: 8, Precision: measure.FP32, Framework: "@torch", Source: "+lab", MedianMS: 2.5, Status: measure.OK},
		{DeviceKey: "cuda:GPU-1", Model: "'plain", Batch: 8, Precision: measure.FP32, Framework: "pytorch", Source: "'=x", MedianMS: 2, Status: measure.OK},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("ParseStepsCSV =\n%+v\nwant\n%+v", steps, want)
	}
}

// The kernel-measurement CSV (cache export --csv --layers) neutralises its text cells
// too and keeps its numbers.
func TestMeasurementCSVNeutralisesFormulas(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	var ms []measure.Measurement
	for i, h := range hostileNames {
		m := kernel(h.name, h.name, i+1, measure.Forward, 2)
		m.Algorithm = h.name
		ms = append(ms, m)
	}
	if err := d.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := d.ExportMeasurementsCSV(ctx, &buf, ExportFilter{}); err != nil || n != len(ms) {
		t.Fatalf("ExportMeasurementsCSV = %d, %v", n, err)
	}
	recs := readCSV(t, buf.Bytes())
	if !reflect.DeepEqual(recs[0], MeasurementCSVColumns) {
		t.Errorf("header = %v", recs[0])
	}
	byConfig := map[string][]string{}
	for _, r := range recs[1:] {
		byConfig[r[1]] = r
	}
	for i, h := range hostileNames {
		r, ok := byConfig[h.cell]
		if !ok {
			t.Errorf("no row with config cell %q:\n%s", h.cell, buf.String())
			continue
		}
		want := []string{h.cell, h.cell, string(rune('1' + i)), "fp32", "fwd", "heuristic", h.cell,
			"2", "0.02", "10", "4096", "ok", "", "2026-03-01T12:00:00.123456789Z", "", ""}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("row of %q =\n%q\nwant\n%q", h.name, r, want)
		}
	}
}

// The kernel measurement CSV is read back too (cache import of pytorch_sweep.py
// --layers or another cache's export): neutralised cells come back as they were.
func TestMeasurementCSVRoundTripsHostileNames(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	var ms []measure.Measurement
	for i, h := range hostileNames {
		m := kernel("cuda:"+h.name, h.name, i+1, measure.Forward, 2)
		m.Algorithm = h.name
		ms = append(ms, m)
	}
	if err := src.PutMeasurements(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := src.ExportMeasurementsCSV(ctx, &buf, ExportFilter{}); err != nil {
		t.Fatal(err)
	}
	dst := openTemp(t)
	if _, err := dst.ImportCSV(ctx, &buf, "hostile.csv"); err != nil {
		t.Fatal(err)
	}
	want, _ := src.Measurements(ctx, "", nil)
	got, err := dst.Measurements(ctx, "", nil)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after export and import:\n%+v\nwant\n%+v (%v)", got, want, err)
	}
}
