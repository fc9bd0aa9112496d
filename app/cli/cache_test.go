package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/db"
	"cnntime/predictor/measure"
)

// runWithDB runs the CLI on the cache at dbPath with stdin and returns its exit status and output.
func runWithDB(t *testing.T, dbPath, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = RunCLI(context.Background(), append([]string{"--db", dbPath}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

const stepsCSV = `gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source
t4,resnet50,32,fp32,pytorch 2.5.1,210.5,2,ok,lab
t4,resnet50,64,fp32,pytorch 2.5.1,405,3,ok,lab
t4,resnet18,512,fp32,pytorch 2.5.1,,,oom,lab
`

func sha(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestCacheCommands(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.db")
	csvPath := filepath.Join(dir, "steps.csv")
	if err := os.WriteFile(csvPath, []byte(stepsCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	badCSV := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(badCSV, []byte(stepsCSV+"t4,vgg16,8,fp32,pytorch,slow,1,ok,lab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(cache)
	if err != nil {
		t.Fatal(err)
	}
	err = d.PutMeasurements(context.Background(), []measure.Measurement{{DeviceKey: "cpu:lab:epyc",
		ConfigKey: "relu/64x56x56", Batch: 8, Precision: measure.FP32, Phase: measure.Forward,
		MedianMS: 0.5, Repeats: 5, Status: measure.OK}})
	d.Close()
	if err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"info", "", []string{"cache", "info"}, 0, "1 kernel measurements of 1 layer configurations on 1 devices; 0 step measurements", ""},
		{"import a csv", "", []string{"cache", "import", csvPath}, 0, "step measurements: 3 added, 0 replaced", ""},
		{"import it again", "", []string{"cache", "import", csvPath}, 0, "0 added, 0 replaced older ones, 3 left out (the cache's were as new)", ""},
		{"import from stdin", strings.ReplaceAll(stepsCSV, ",lab\n", ",\n"), []string{"cache", "import", "-"}, 0, "3 added", ""},
		{"import a bad csv", "", []string{"cache", "import", badCSV}, 1, "", `bad.csv line 5: step_ms "slow" is not a number`},
		{"import a missing file", "", []string{"cache", "import", filepath.Join(dir, "nope.csv")}, 1, "", "no such file"},
		{"import without a file", "", []string{"cache", "import"}, 2, "", "FILE…"},
		{"misspelt action", "", []string{"cache", "imprt", csvPath}, 2, "", `(did you mean "import"?)`},
		{"no action", "", []string{"cache"}, 2, "", "say what to do"},
		{"info after imports", "", []string{"cache", "info"}, 0, "6 step measurements", ""},
		{"export a cache", "", []string{"cache", "export", filepath.Join(dir, "out.db")}, 0, "exported 1 kernel measurements (1 devices, 1 layer configurations) and 6 step measurements", ""},
		{"import the exported cache", "", []string{"cache", "import", filepath.Join(dir, "out.db")}, 0, "cloud prices: 0 clouds added, 0 replaced by later prices, 0 left out", ""},
		{"export over a file", "", []string{"cache", "export", filepath.Join(dir, "out.db")}, 1, "", "the file exists"},
		{"export one device", "", []string{"cache", "export", filepath.Join(dir, "cpu.db"), "--device", "cpu:lab:epyc"}, 0, "exported 1 kernel measurements (1 devices, 1 layer configurations) and 0 step", ""},
		{"export an unknown device", "", []string{"cache", "export", filepath.Join(dir, "x.db"), "--device", "cpu:lab:epic"}, 2, "", `(did you mean "cpu:lab:epyc"?)`},
		{"export an unknown model", "", []string{"cache", "export", filepath.Join(dir, "x.db"), "--model", "resnet5O"}, 2, "", `unknown model "resnet5O"`},
		{"export one model as csv", "", []string{"cache", "export", filepath.Join(dir, "r18.csv"), "--model", "resnet18", "--csv"}, 0, "exported 2 step measurements", ""},
		{"export layers as csv to stdout", "", []string{"cache", "export", "-", "--csv", "--layers"}, 0, "cpu:lab:epyc,relu/64x56x56,8,fp32,fwd,", ""},
		{"--layers without --csv", "", []string{"cache", "export", filepath.Join(dir, "y.db"), "--layers"}, 2, "", "--layers goes with --csv"},
		{"check", "", []string{"cache", "check"}, 0, "ok: ", ""},
		{"help", "", []string{"help", "cache"}, 0, "cnntime cache import FILE", ""},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			before := sha(t, cache)
			code, stdout, stderr := runWithDB(t, cache, s.stdin, s.args...)
			if code != s.wantCode {
				t.Errorf("exit status %d, want %d (stdout %q, stderr %q)", code, s.wantCode, stdout, stderr)
			}
			if !strings.Contains(stdout, s.wantStdout) {
				t.Errorf("stdout %q does not contain %q", stdout, s.wantStdout)
			}
			if !strings.Contains(stderr, s.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, s.wantStderr)
			}
			if code != 0 && sha(t, cache) != before {
				t.Error("a failed command changed the cache")
			}
		})
	}
	b, err := os.ReadFile(filepath.Join(dir, "r18.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n" +
		"t4,resnet18,512,fp32,pytorch 2.5.1,,0,oom,csv:stdin,\n" +
		"t4,resnet18,512,fp32,pytorch 2.5.1,,0,oom,lab,\n"
	if string(b) != want {
		t.Errorf("exported CSV =\n%s\nwant\n%s", b, want)
	}
}

func TestCacheJSON(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache.db")
	code, stdout, stderr := runWithDB(t, cache, stepsCSV, "--json", "cache", "import", "-")
	if code != 0 {
		t.Fatalf("import: exit %d, %s", code, stderr)
	}
	var rep db.ImportReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Kind != "csv" || rep.Steps.Added != 3 {
		t.Errorf("import --json = %s (%v)", stdout, err)
	}
	code, stdout, _ = runWithDB(t, cache, "", "cache", "info", "--json")
	var info db.Info
	if err := json.Unmarshal([]byte(stdout), &info); err != nil || code != 0 || info.Steps != 3 || info.Devices == nil {
		t.Errorf("info --json = %s (%v)", stdout, err)
	}
	code, stdout, _ = runWithDB(t, cache, "", "cache", "check", "--json")
	var check struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(stdout), &check); err != nil || code != 0 || !check.OK || check.Problems == nil {
		t.Errorf("check --json = %s (%v)", stdout, err)
	}
}

func TestCacheRefusesAForeignFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("not a cache\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runWithDB(t, path, "", "cache", "info")
	if code != 1 || !strings.Contains(stderr, "not a cnntime cache") {
		t.Errorf("exit %d, stderr %q; want 1 and a message that it is not a cache", code, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "not a cache\n" {
		t.Error("the foreign file changed")
	}
}

// Names in a cache (an older cnntime's, another program's) that hold terminal escapes
// are listed as text: cache info never writes the escape itself.
func TestCacheInfoPrintsNamesAsText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = d.PutSteps(context.Background(), []measure.Step{{DeviceKey: "gpu:t4", Model: "net", Batch: 8,
		Precision: measure.FP32, Framework: "pytorch", Source: "lab\x1b[2J\x1b]0;pwned\x07", MedianMS: 1, Status: measure.OK}})
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLIWithDB(t, path, "cache", "info")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `lab\x1b[2J\x1b]0;pwned\x07`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want the source written out as text", code, out, errOut)
	}
}

// A sweep left running by a process that is gone is said to be interrupted, with how
// to continue it.
func TestCacheInfoSaysWhichSweepsWereInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.CreateSweep(context.Background(), "cpu:lab", "{}", 8); err != nil {
		t.Fatal(err)
	}
	d.Close() // its process is gone without recording an end: as a SIGKILL leaves it
	code, out, errOut := runCLIWithDB(t, path, "cache", "info")
	if code != 0 || !strings.Contains(out, "1 sweeps were interrupted") || !strings.Contains(out, "running the same sweep again continues") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCLIWithDB(t, path, "--json", "cache", "info")
	if code != 0 || !strings.Contains(out, `"interrupted_sweeps": 1`) {
		t.Errorf("cache info --json: exit %d, %s", code, out)
	}
}

// A cache with a damaged page is said to be damaged by cache info (exit 1), and the
// commands that write refuse to add to it.
func TestDamagedCacheIsSaidDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	steps := make([]measure.Step, 300)
	for i := range steps {
		steps[i] = measure.Step{DeviceKey: "gpu:t4", Model: "resnet18", Batch: i + 1, Precision: measure.FP32,
			Framework: "pytorch", Source: "lab", MedianMS: float64(i + 1), Status: measure.OK}
	}
	err = d.PutSteps(context.Background(), steps)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.WriteAt([]byte{0x55, 0xaa, 0x55, 0xaa, 0x55, 0xaa, 0x55, 0xaa}, st.Size()-4096) // the last page's header
	f.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cache", "info"}, "is damaged"},
		{[]string{"machine", "set-price", "aws/p3.2xlarge", "2"}, "is damaged"},
		{[]string{"machine", "add", "--name", "lab", "--gpu", "t4", "--price", "1"}, "is damaged"},
		// Commands that only read say it too, not SQLite's "database disk image is malformed (11)" alone.
		{[]string{"cache", "export", "--csv", "-"}, "database disk image is malformed (11)): restore it from a copy, or export what still reads"},
	} {
		code, out, errOut := runCLIWithDB(t, path, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// cache export never follows a dangling link into a new file, writes its CSV into a
// named pipe (which stays one), and still refuses to overwrite a file.
func TestCacheExportTargets(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.db")
	csvPath := filepath.Join(dir, "steps.csv")
	os.WriteFile(csvPath, []byte(stepsCSV), 0o644)
	if code, _, stderr := runWithDB(t, cache, "", "cache", "import", csvPath); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "target"), dangling)
	for _, args := range [][]string{{"cache", "export", dangling}, {"cache", "export", "--csv", dangling}} {
		code, _, stderr := runWithDB(t, cache, "", args...)
		if code != 1 || !strings.Contains(stderr, "which does not exist") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal of the dangling link", args, code, stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); err == nil {
		t.Error("the dangling link's target was created")
	}
	if code, _, stderr := runWithDB(t, cache, "", "cache", "export", "--csv", csvPath); code != 1 || !strings.Contains(stderr, "the file exists") {
		t.Errorf("export over a file: exit %d, stderr %q", code, stderr)
	}

	fifo := filepath.Join(dir, "pipe")
	read := readPipe(t, fifo)
	if code, _, stderr := runWithDB(t, cache, "", "cache", "export", "--csv", fifo); code != 0 {
		t.Fatalf("export to a named pipe: exit %d: %s", code, stderr)
	}
	if got := read(); strings.Count(got, "\n") != 4 || !strings.HasPrefix(got, strings.Join(db.StepCSVColumns, ",")) {
		t.Errorf("the pipe's reader got %q", got)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe is now %v", st.Mode())
	}
}
