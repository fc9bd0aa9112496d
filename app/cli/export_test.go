package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/db"
)

func runExportCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--db", filepath.Join(t.TempDir(), "cache.db")}, args...)
	code := RunCLI(context.Background(), full, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExportCommandWritesEveryFormat(t *testing.T) {
	dir := t.TempDir()
	sel := []string{"--models", "resnet50,vgg16", "--machines", "aws/p3.2xlarge,gcp/a2-highgpu-1g", "--batches", "16,32,64,128,256,512"}
	tests := []struct {
		name  string
		args  []string
		file  string
		check func(t *testing.T, data []byte)
	}{
		{"curves png", []string{"--chart", "curves", "--out"}, "curves.png", func(t *testing.T, data []byte) {
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil || img.Bounds().Dx() != 640 || img.Bounds().Dy() != 400 {
				t.Errorf("PNG: %v, err %v", img.Bounds(), err)
			}
		}},
		{"scatter svg", []string{"--chart", "scatter", "--out"}, "scatter.svg", func(t *testing.T, data []byte) {
			var root struct{ XMLName xml.Name }
			if err := xml.Unmarshal(data, &root); err != nil || root.XMLName.Local != "svg" {
				t.Errorf("SVG root %q, err %v", root.XMLName.Local, err)
			}
		}},
		{"curves pdf", []string{"--metric", "cost", "--logx", "--out"}, "curves.pdf", func(t *testing.T, data []byte) {
			if !bytes.HasPrefix(data, []byte("%PDF")) {
				t.Errorf("PDF starts with %q", data[:min(8, len(data))])
			}
		}},
		{"results csv", []string{"--csv"}, "results.csv", func(t *testing.T, data []byte) {
			recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil || len(recs) != 5 || strings.Join(recs[0], ",") != strings.Join(app.SummaryCSVHeader, ",") {
				t.Fatalf("results CSV: %d records, err %v", len(recs), err)
			}
			if recs[1][0] != "resnet50" || recs[1][1] != "aws/p3.2xlarge" || recs[1][4] == "" || recs[1][7] == "" {
				t.Errorf("first results row %v", recs[1])
			}
		}},
		{"curves csv", []string{"--table", "curves", "--csv"}, "curves.csv", func(t *testing.T, data []byte) {
			recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil || len(recs) != 1+4*6 {
				t.Fatalf("curves CSV: %d records, err %v", len(recs), err)
			}
			best := 0
			for _, r := range recs[1:] {
				if r[16] == "true" {
					best++
				}
			}
			if best != 4 {
				t.Errorf("%d rows marked best, want one per curve (4)", best)
			}
		}},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.file)
		args := append(append([]string{"export"}, sel...), "--width", "640", "--height", "400")
		args = append(append(args, tt.args...), path)
		code, stdout, stderr := runExportCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, code, stderr)
		}
		if !strings.Contains(stdout, "wrote "+path) {
			t.Errorf("%s: stdout %q", tt.name, stdout)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tt.check(t, data)
	}
}

func TestExportCommandJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	code, stdout, stderr := runExportCLI(t, "--json", "export", "--models", "resnet18", "--machines", "aws/p3.2xlarge", "--csv", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct{ Written []ExportWritten }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got.Written) != 1 || got.Written[0].Path != path || got.Written[0].Bytes == 0 || got.Written[0].Format != "csv" {
		t.Errorf("JSON %q (err %v)", stdout, err)
	}
}

func TestExportCommandMistakes(t *testing.T) {
	dir := t.TempDir()
	sel := []string{"export", "--models", "resnet50", "--machines", "aws/p3.2xlarge"}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"nothing to write", sel, 2, "nothing to write"},
		{"chart without out", append(sel, "--chart", "curves"), 2, "needs --out"},
		{"bad chart", append(sel, "--chart", "pie", "--out", filepath.Join(dir, "a.png")), 2, "use curves or scatter"},
		{"bad extension", append(sel, "--out", filepath.Join(dir, "a.gif")), 2, ".png, .svg or .pdf"},
		{"bad metric", append(sel, "--metric", "speed", "--out", filepath.Join(dir, "a.png")), 2, "unknown metric"},
		{"tiny", append(sel, "--width", "10", "--out", filepath.Join(dir, "a.png")), 2, "100 to 10000"},
		{"unknown model", []string{"export", "--models", "resnet5", "--machines", "aws/p3.2xlarge", "--csv", filepath.Join(dir, "a.csv")}, 2, "resnet50"},
		{"missing folder", append(sel, "--csv", filepath.Join(dir, "no", "such", "a.csv")), 1, "writable"},
		{"bad table", append(sel, "--table", "x", "--csv", filepath.Join(dir, "a.csv")), 2, "results or curves"},
		{"deadline on curves", append(sel, "--deadline", "24h", "--out", filepath.Join(dir, "a.png")), 2, "add --chart scatter"},
		{"negative budget", append(sel, "--budget", "-5", "--chart", "scatter", "--out", filepath.Join(dir, "a.png")), 2, "positive"},
		{"budget abc", append(sel, "--budget", "abc", "--chart", "scatter", "--out", filepath.Join(dir, "a.png")), 2, "budget"},
	}
	for _, tt := range tests {
		code, _, stderr := runExportCLI(t, tt.args...)
		if code != tt.wantCode || !strings.Contains(stderr, tt.wantErr) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d mentioning %q", tt.name, code, stderr, tt.wantCode, tt.wantErr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed exports left files behind: %v", entries)
	}
}

// --no-error-bands leaves the shaded bands out: the PNG of the same curves then has
// fewer pixels tinted by a series colour than with them.
func TestExportWithoutErrorBands(t *testing.T) {
	dir := t.TempDir()
	tinted := func(args ...string) int {
		base := []string{"--models", "resnet50", "--machines", "aws/p3.2xlarge", "--chart", "curves"}
		img := exportedPNG(t, filepath.Join(dir, fmt.Sprintf("c%d.png", len(args))), append(base, args...)...)
		return countPixels(img, func(r, g, b uint8) bool { return max(r, g, b)-min(r, g, b) > 0x10 }) // not grey: a series colour, solid or tinted
	}
	with, without := tinted(), tinted("--no-error-bands")
	if without == 0 || without >= with {
		t.Errorf("coloured pixels: %d with bands, %d without; want fewer without", with, without)
	}
}

// exportedPNG exports a 640×400 PNG chart of batches 16–128 to path with args (the
// selection and chart flags) and reads it back.
func exportedPNG(t *testing.T, path string, args ...string) image.Image {
	t.Helper()
	cmd := append([]string{"export", "--batches", "16,32,64,128", "--width", "640", "--height", "400", "--out", path}, args...)
	if code, _, stderr := runExportCLI(t, cmd...); code != 0 {
		t.Fatalf("export %v: exit %d: %s", args, code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// countPixels counts img's pixels whose 8-bit colour is, says is.
func countPixels(img image.Image, is func(r, g, b uint8) bool) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if is(uint8(r>>8), uint8(g>>8), uint8(b>>8)) {
				n++
			}
		}
	}
	return n
}

// Exports write into what the user named when it is not a regular file, and create
// files with the umask: `--csv -` is standard output, a named pipe and a device node
// keep their type (the rename of a temporary file made them regular 0600 files), a new
// file is 0666 less the umask, a dangling link is refused without creating its target,
// and a cache is never replaced by a CSV.
func TestExportWritesIntoWhatTheUserNamed(t *testing.T) {
	dir := t.TempDir()
	sel := []string{"export", "--models", "resnet18", "--machines", "aws/p3.2xlarge", "--batches", "32,64"}
	header := strings.Join(app.SummaryCSVHeader, ",") + "\n"

	code, stdout, stderr := runExportCLI(t, append(sel, "--csv", "-")...)
	if code != 0 || !strings.HasPrefix(stdout, header) || strings.Contains(stdout, "wrote") || strings.Count(stdout, "\n") != 2 {
		t.Errorf("--csv -: exit %d, stdout %q, stderr %q; want the CSV alone", code, stdout, stderr)
	}

	fifo := filepath.Join(dir, "pipe.csv")
	read := readPipe(t, fifo)
	if code, _, stderr := runExportCLI(t, append(sel, "--csv", fifo)...); code != 0 {
		t.Fatalf("--csv FIFO: exit %d: %s", code, stderr)
	}
	if got := read(); !strings.HasPrefix(got, header) {
		t.Errorf("the pipe's reader got %q", got)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe is now %v", st.Mode())
	}

	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		null = "/dev/null" // this user may not make device nodes
	}
	if code, stdout, stderr := runExportCLI(t, append(sel, "--csv", null)...); code != 0 || !strings.Contains(stdout, "wrote "+null) {
		t.Fatalf("--csv %s: exit %d: %s%s", null, code, stdout, stderr)
	}
	if st, err := os.Stat(null); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("%s is now %v (err %v), want a character device", null, st.Mode(), err)
	}

	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	csvPath := filepath.Join(dir, "r.csv")
	if code, _, stderr := runExportCLI(t, append(sel, "--csv", csvPath)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(csvPath); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("with umask 027 the CSV is %v (err %v), want 0640", st.Mode().Perm(), err)
	}

	dangling := filepath.Join(dir, "dangling.csv")
	os.Symlink(filepath.Join(dir, "target.csv"), dangling)
	cache := filepath.Join(dir, "cache.db")
	if d, err := db.Open(cache); err == nil {
		d.Close()
	}
	before := sha(t, cache)
	for _, tc := range []struct{ path, want string }{
		{dangling, "symbolic link to " + filepath.Join(dir, "target.csv") + ", which does not exist"},
		{cache, "SQLite database"},
	} {
		code, _, stderr := runExportCLI(t, append(sel, "--csv", tc.path)...)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("--csv %s: exit %d, stderr %q; want a refusal mentioning %q", tc.path, code, stderr, tc.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "target.csv")); err == nil {
		t.Error("the dangling link's target was created")
	}
	if sha(t, cache) != before {
		t.Error("the cache was changed by an export onto it")
	}
}

// --deadline and --budget reach the scatter: its dashed lines are drawn in the limit's
// colour (within the antialiasing's blur), which nothing else on this chart uses.
func TestExportScatterDrawsTheLimit(t *testing.T) {
	dir := t.TempDir()
	want := charts.LightStyle.Limit.(color.RGBA)
	near := func(a, b uint8) bool { return max(a, b)-min(a, b) <= 48 }
	limitPixels := func(args ...string) int {
		base := []string{"--models", "resnet50,vgg16", "--machines", "aws/p3.2xlarge,aws/g5.xlarge", "--chart", "scatter"}
		img := exportedPNG(t, filepath.Join(dir, fmt.Sprintf("s%d.png", len(args))), append(base, args...)...)
		return countPixels(img, func(r, g, b uint8) bool { return near(r, want.R) && near(g, want.G) && near(b, want.B) })
	}
	if n := limitPixels(); n != 0 {
		t.Errorf("%d pixels in the limit's colour without a limit", n)
	}
	for _, args := range [][]string{{"--deadline", "48h"}, {"--budget", "40"}} {
		if n := limitPixels(args...); n < 100 {
			t.Errorf("%v: %d pixels in the limit's colour, want its line drawn", args, n)
		}
	}
}
