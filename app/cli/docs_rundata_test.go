package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The run-data table of docs/predicting.md shows what each run-data flag does to one
// prediction. Its figures are claims like the examples' output: each row's command is
// run and every figure its result cell states is compared with what cnntime prints.

// runDataBase is the prediction the table starts from, as its caption says.
var runDataBase = []string{"predict", "--model", "resnet50", "--precision", "amp", "--batch", "256", "--json"}

// The figures a result cell may state.
var (
	cellImagesPerS = regexp.MustCompile(`([\d,]+) images/s`)
	cellBound      = regexp.MustCompile("`bound: (\\w+)`")
	cellMemory     = regexp.MustCompile(`([\d.]+) GB instead of ([\d.]+)`)
	cellEpoch      = regexp.MustCompile(`an epoch of ([\d,]+) s(?: instead of ([\d,]+) s)?`)
	cellInput      = regexp.MustCompile("`\"input\": (\\d+)`")
	cellFlags      = regexp.MustCompile("`([^`]*)`")
)

// runDataRow is one row of the table: the flags its first cell adds and its result.
type runDataRow struct {
	flags  []string
	cell   string // the first cell, as written
	result string
}

func runDataTable(t *testing.T) []runDataRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "predicting.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "| command adds | what changes | result |\n|---|---|---|\n")
	if !ok {
		t.Fatal("docs/predicting.md has no run-data table (| command adds | what changes | result |)")
	}
	var rows []runDataRow
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("run-data row %q: want 3 cells", line)
		}
		r := runDataRow{cell: strings.TrimSpace(cells[0]), result: strings.TrimSpace(cells[2])}
		if !strings.HasPrefix(r.cell, "(nothing") { // "(nothing: the defaults spelled out)" adds nothing
			m := cellFlags.FindStringSubmatch(r.cell)
			if m == nil {
				t.Fatalf("run-data row %q: its first cell has no `flags`", line)
			}
			r.flags = strings.Fields(m[1])
		}
		if strings.Contains(r.cell, "(fp32)") {
			r.flags = append(r.flags, "--precision", "fp32")
		}
		rows = append(rows, r)
	}
	if len(rows) < 5 {
		t.Fatalf("the run-data table has %d rows", len(rows))
	}
	return rows
}

// runDataPredict runs the base prediction with flags (the last of a repeated flag
// wins, and a machine replaces the bare GPU) and returns its one row.
func runDataPredict(t *testing.T, flags []string) map[string]any {
	t.Helper()
	args := append([]string(nil), runDataBase...)
	machine := false
	for _, f := range flags {
		machine = machine || f == "--machine"
	}
	if !machine {
		args = append(args, "--gpu", "a100-sxm4-80gb")
	}
	code, out, errOut := runPredictCLI(t, append(args, flags...)...)
	if code != 0 {
		t.Fatalf("cnntime %s: exit %d: %s", strings.Join(append(args, flags...), " "), code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("cnntime %s: %v, %d rows", strings.Join(flags, " "), err, len(rows))
	}
	return rows[0]
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRunDataTableIsWhatCnntimePrints(t *testing.T) {
	base := runDataPredict(t, nil)
	for _, r := range runDataTable(t) {
		got := runDataPredict(t, r.flags)
		f := func(row map[string]any, key string) float64 {
			x, _ := row[key].(float64)
			return x
		}
		var wrong []string
		check := func(claim string, shown, printed float64, digits int) {
			scale := math.Pow(10, float64(digits))
			if math.Round(shown*scale) != math.Round(printed*scale) {
				wrong = append(wrong, fmt.Sprintf("%s: the page says %v, cnntime prints %.*f", claim, shown, digits, printed))
			}
		}
		claims := 0
		if m := cellImagesPerS.FindStringSubmatch(r.result); m != nil {
			claims++
			check("images/s", number(t, m[1]), f(got, "images_per_s"), 0)
		}
		if m := cellBound.FindStringSubmatch(r.result); m != nil {
			claims++
			if b, _ := got["bound"].(string); b != m[1] {
				wrong = append(wrong, fmt.Sprintf("bound: the page says %s, cnntime prints %s", m[1], b))
			}
		}
		if m := cellMemory.FindStringSubmatch(r.result); m != nil {
			claims++
			check("memory GB", number(t, m[1]), f(got, "memory_gb"), 1)
			check("the base's memory GB", number(t, m[2]), f(base, "memory_gb"), 1)
		}
		if m := cellEpoch.FindStringSubmatch(r.result); m != nil {
			claims++
			check("epoch s", number(t, m[1]), f(got, "epoch_s"), 0)
			if m[2] != "" {
				check("the base's epoch s", number(t, m[2]), f(base, "epoch_s"), 0)
			}
		}
		if m := cellInput.FindStringSubmatch(r.result); m != nil {
			claims++
			check("input", number(t, m[1]), f(got, "input"), 0)
		}
		if claims == 0 {
			t.Errorf("run-data row %s: its result %q states no figure this test reads", r.cell, r.result)
		}
		if len(wrong) > 0 {
			t.Errorf("docs/predicting.md's run-data row %s (%s) is not what cnntime prints:\n  %s",
				r.cell, r.result, strings.Join(wrong, "\n  "))
		}
	}
}
