package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor/measure"
)

// formulaNames are texts a spreadsheet would run as formulas, and one it would not,
// with the cell every cnntime CSV must hold for each. (A custom model's name can no
// longer start a formula: it starts with a letter or a digit, however it comes.)
var formulaNames = []struct{ name, cell string }{
	{"=1+2", "'=1+2"},
	{"+x", "'+x"},
	{"-y", "'-y"},
	{"@z", "'@z"},
	{"normal", "normal"},
}

// hostileCache is a cache holding a user machine for each of formulaNames, whose
// region (free text, a price's region in every CSV) is that name: user/f0, user/f1, ….
func hostileCache(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cache.db")
	for i, n := range formulaNames {
		var out, errb bytes.Buffer
		if code := RunCLI(context.Background(), []string{"--db", path, "machine", "add", "--name", fmt.Sprintf("f%d", i), "--gpu", "t4", "--price", "1", "--region=" + n.name},
			strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("machine add: exit %d: %s", code, errb.String())
		}
	}
	return path
}

// hostileMachines lists hostileCache's machines.
func hostileMachines() string {
	ids := make([]string, len(formulaNames))
	for i := range formulaNames {
		ids[i] = fmt.Sprintf("user/f%d", i)
	}
	return strings.Join(ids, ",")
}

func runOn(t *testing.T, cache string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := RunCLI(context.Background(), append([]string{"--db", cache}, args...), strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

func csvRecords(t *testing.T, text string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return recs
}

// checkRows asserts that every row's price region cell is the neutralised region of a
// distinct machine, that no text cell starts a formula, and that the numeric columns
// hold numbers.
func checkRows(t *testing.T, what string, recs [][]string, numeric ...string) {
	t.Helper()
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	seen := map[string]int{}
	for _, r := range recs[1:] {
		seen[r[col["price_region"]]]++
		for i, c := range r {
			if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
				t.Errorf("%s: column %s holds %q, a formula", what, recs[0][i], c)
			}
		}
		if !strings.HasPrefix(r[col["machine"]], "user/f") {
			t.Errorf("%s: machine cell %q, want one of user/f0 … user/f4", what, r[col["machine"]])
		}
		for _, h := range numeric {
			if _, err := parseNumber(r[col[h]]); err != nil {
				t.Errorf("%s: %s cell %q is not a number", what, h, r[col[h]])
			}
		}
	}
	for _, n := range formulaNames {
		if seen[n.cell] == 0 {
			t.Errorf("%s: no row with price region cell %q (rows by region: %v)", what, n.cell, seen)
		}
	}
	if len(seen) != len(formulaNames) {
		t.Errorf("%s: regions %v, want exactly %d", what, seen, len(formulaNames))
	}
}

func parseNumber(s string) (float64, error) {
	var x float64
	_, err := fmt.Sscan(s, &x)
	return x, err
}

// predict --csv, best --csv and export --csv (results and curves) neutralise texts
// that start a formula (a user machine's region); the numbers stay numbers.
func TestCSVWritersNeutraliseFormulaNames(t *testing.T) {
	cache := hostileCache(t)
	machine := hostileMachines()
	recs := csvRecords(t, runOn(t, cache, "predict", "--model", "resnet18", "--machine", machine, "--batches", "4,8", "--csv"))
	if len(recs) != 1+2*len(formulaNames) {
		t.Fatalf("predict --csv: %d records, want %d", len(recs), 1+2*len(formulaNames))
	}
	checkRows(t, "predict --csv", recs, "gpu_count", "batch", "iter_ms", "images_per_s", "total_s", "cost_usd", "memory_gb")

	recs = csvRecords(t, runOn(t, cache, "best", "--model", "resnet18", "--machine", machine, "--batches", "1-16", "--csv"))
	if len(recs) != 1+len(formulaNames) {
		t.Fatalf("best --csv: %d records", len(recs))
	}
	checkRows(t, "best --csv", recs, "best_batch", "iter_ms", "total_s", "cost_usd", "max_batch", "saving_vs_pow2_pct")

	dir := t.TempDir()
	results, curves := filepath.Join(dir, "results.csv"), filepath.Join(dir, "curves.csv")
	runOn(t, cache, "export", "--models", "resnet18", "--machines", machine, "--batches", "4,8", "--csv", results)
	runOn(t, cache, "export", "--models", "resnet18", "--machines", machine, "--batches", "4,8", "--table", "curves", "--csv", curves)
	for _, f := range []struct {
		path    string
		header  []string
		rows    int
		numeric []string
	}{
		{results, app.SummaryCSVHeader, len(formulaNames), []string{"best_batch", "iter_ms", "total_s", "cost_usd", "max_batch"}},
		{curves, app.CurvesCSVHeader, 2 * len(formulaNames), []string{"batch", "iter_ms", "images_per_s", "cost_usd", "memory_gb", "error_pct"}},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		recs := csvRecords(t, string(data))
		if len(recs) != 1+f.rows || strings.Join(recs[0], ",") != strings.Join(f.header, ",") {
			t.Fatalf("%s: %d records, header %v", f.path, len(recs), recs[0])
		}
		checkRows(t, filepath.Base(f.path), recs, f.numeric...)
	}
}

// Step measurements of custom models named like formulas go out through `cache export
// --csv` neutralised and come back through `cache import` unchanged.
func TestCacheCSVRoundTripsFormulaNames(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src.db")
	d, err := db.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var steps []measure.Step
	for i, n := range formulaNames {
		steps = append(steps, measure.Step{DeviceKey: "cpu:" + n.name, Model: n.name, Batch: 8 + i, Precision: measure.FP32,
			Framework: n.name, Source: n.name, MedianMS: 10 + float64(i), Status: measure.OK})
	}
	if err := d.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	d.Close()

	file := filepath.Join(t.TempDir(), "steps.csv")
	runOn(t, src, "cache", "export", file, "--csv")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs := csvRecords(t, string(data))
	if len(recs) != 1+len(formulaNames) {
		t.Fatalf("%d records:\n%s", len(recs), data)
	}
	byModel := map[string][]string{}
	for _, r := range recs[1:] {
		byModel[r[1]] = r
	}
	for _, n := range formulaNames {
		r, ok := byModel[n.cell]
		if !ok {
			t.Errorf("no row with model cell %q:\n%s", n.cell, data)
			continue
		}
		if r[0] != "cpu:"+n.name || r[4] != n.cell || r[8] != n.cell {
			t.Errorf("row of %q = %q: want gpu cpu:%s, framework and source %q", n.name, r, n.name, n.cell)
		}
	}

	dst := filepath.Join(t.TempDir(), "dst.db")
	runOn(t, dst, "cache", "import", file)
	d, err = db.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	back, err := d.Steps(ctx, db.StepFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]measure.Step{}
	for _, s := range back {
		got[s.Model] = s
	}
	for _, s := range steps {
		b, ok := got[s.Model]
		if !ok || b.DeviceKey != s.DeviceKey || b.Framework != s.Framework || b.Source != s.Source || b.Batch != s.Batch || b.MedianMS != s.MedianMS {
			t.Errorf("imported %+v, want %+v", b, s)
		}
	}
	if len(back) != len(steps) {
		t.Errorf("imported %d steps, want %d", len(back), len(steps))
	}
}
