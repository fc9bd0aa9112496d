package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTablesWriteNumbersAsTheWindowDoes: predict's and best's tables write their
// numbers as the window does (app/numfmt), where issue 43 found "2816" beside "1,664",
// a CIFAR run's cost as "0.00" and durations as "4m46s" beside the window's "4.8 min".
func TestTablesWriteNumbersAsTheWindowDoes(t *testing.T) {
	code, out, errOut := runPredictCLI(t, "predict", "--model", "resnet18", "--machine", "aws/g4dn.xlarge",
		"--dataset", "cifar-10", "--epochs", "1", "--batches", "64,2816")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	head, rows, _ := strings.Cut(out, "\n")
	for _, h := range []string{"COST", "ENERGY"} {
		if !strings.Contains(head, h) || strings.Contains(head, "COST $") || strings.Contains(head, "ENERGY KWH") {
			t.Errorf("header %q: want COST and ENERGY, their units in the cells", head)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`\s2,816\s`),              // a batch with its thousands separator
		regexp.MustCompile(`\s\$0\.00[1-9][0-9]?\s`), // under a cent: two significant digits, never $0.00
		regexp.MustCompile(`\s[0-9.]+ s\s`),          // an epoch in seconds, with its unit
		regexp.MustCompile(`\s0\.00[0-9]+ kWh\s`),    // under 1 kWh: two significant digits
		regexp.MustCompile(`\s1[0-9],[0-9]{3}\s`),    // images/s with a separator
	} {
		if !want.MatchString(rows) {
			t.Errorf("predict's rows lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(rows, "$0.00 ") || regexp.MustCompile(`\d+m\d\ds`).MatchString(rows) {
		t.Errorf("predict's rows write a cost of $0.00 or a duration as 4m46s:\n%s", out)
	}

	code, out, errOut = runPredictCLI(t, "best", "--model", "resnet50", "--machine", "aws/p4d.24xlarge")
	if code != 0 {
		t.Fatalf("best: exit %d: %s", code, errOut)
	}
	row := strings.Split(out, "\n")[1]
	if !regexp.MustCompile(`^resnet50\s+aws/p4d.24xlarge\s+8×a100-sxm4-40gb\s+\d,\d{3}\s+\d,\d{3} \(`).MatchString(row) ||
		!regexp.MustCompile(`\s\d+\.\d h\s+\$\d+\.\d\d\s`).MatchString(row) {
		t.Errorf("best's row: want the best batch written as the recommended one (2,816 beside 1,664), the total in h and the cost in $:\n%s", row)
	}
}

// TestExportDrawsTheWindowsAxes: the exported curves chart is log-log as the window's
// (a batch axis at the powers of two, a time axis at named durations), unless the flags
// say otherwise; its numbers are written as everywhere else (1,024, never 1e+03).
func TestExportDrawsTheWindowsAxes(t *testing.T) {
	dir := t.TempDir()
	texts := func(args ...string) string {
		t.Helper()
		path := filepath.Join(dir, "c.svg")
		code, _, errOut := runExportCLI(t, append([]string{"export", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batches", "1-256", "--chart", "curves", "--out", path}, args...)...)
		if code != 0 {
			t.Fatalf("export %v: exit %d: %s", args, code, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var ts []string
		for _, m := range regexp.MustCompile(`>([^<>]+)</text>`).FindAllStringSubmatch(string(data), -1) {
			ts = append(ts, m[1])
		}
		return "|" + strings.Join(ts, "|") + "|"
	}
	def := texts()
	for _, want := range []string{"|total training time|", "|4|", "|16|", "|64|", "|10 days|"} {
		if !strings.Contains(def, want) {
			t.Errorf("the default curves chart lacks %q (log-log, as the window): %s", want, def)
		}
	}
	linear := texts("--logx=false", "--logy=false")
	if !strings.Contains(linear, "|total training time (days)|") || !strings.Contains(linear, "|100|") || strings.Contains(linear, "|10 days|") {
		t.Errorf("--logx=false --logy=false: want linear axes, the time in days: %s", linear)
	}
}
