package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor/measure"
)

// runAsCLIEnv makes this test binary run as the cnntime command line, so a script a
// test starts (scripts/pytorch_sweep.py --layers reads layer graphs from `cnntime
// model --json`) can call cnntime without building the GUI binary.
const runAsCLIEnv = "CNNTIME_TEST_RUN_CLI"

// testDay is the day this package's goldens were written: TestMain pins the app's
// clock to it, so a price's age in them is the same on any day the tests run.
var testDay = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	// The goldens were written on this day: their price ages hold on any other.
	app.SetClock(app.FixedClock(testDay))
	if os.Getenv(superviseTestEnv) != "" {
		os.Exit(supervisedTestMain())
	}
	if os.Getenv(runAsCLIEnv) == "1" {
		os.Exit(RunCLI(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// pythonWithTorch is the Python that has PyTorch and torchvision (Debian's
// python3-torch, python3-torchvision), or why there is none.
func pythonWithTorch() (string, string) {
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		return "", py + " is missing"
	}
	if out, err := exec.Command(py, "-c", "import torch, torchvision").CombinedOutput(); err != nil {
		return "", py + " has no torch/torchvision (make test-deps installs python3-torch python3-torchvision): " + strings.TrimSpace(string(out))
	}
	return py, ""
}

// TestPyTorchLayersImport runs scripts/pytorch_sweep.py --layers on a small model at two
// batch sizes (one round, one repeat), imports its CSV into a new cache and checks the
// structure: one PyTorch CPU device, described; a measurement of exactly the phases
// PyTorch runs for each distinct configuration (`cnntime model --json`'s phases) at each
// batch; local/cpu answering from them with backend pytorch. Never a time: on a shared
// machine a timing is a coin toss.
func TestPyTorchLayersImport(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("starts PyTorch and times a small model's layers (seconds); not with -short")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "pytorch_sweep.py")
	dir := t.TempDir()
	model := writeModel(t, dir, "local_mini.json", localNetJSON)
	csvPath := filepath.Join(dir, "layers.csv")
	cmd := exec.Command(py, script, "--device", "cpu", "--layers", "--models", model, "--batches", "2,3",
		"--rounds", "1", "--repeats", "1", "--warmup", "1", "--cnntime", self, "--out", csvPath)
	cmd.Env = append(os.Environ(), runAsCLIEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pytorch_sweep.py --layers: %v\n%s", err, out)
	}

	// What PyTorch runs for each distinct configuration, by cnntime's graph.
	net, err := app.LoadModel(context.Background(), model, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{} // config/phase/batch
	for _, l := range DescribeModel(net).Layers {
		for _, ph := range l.Phases {
			for _, b := range []string{"2", "3"} {
				want[l.Config+"/"+ph+"/"+b] = true
			}
		}
	}

	dbPath := filepath.Join(dir, "cache.db")
	code, out, errOut := runCLIWithDB(t, dbPath, "--json", "cache", "import", csvPath)
	if code != 0 {
		t.Fatalf("cache import: exit %d: %s", code, errOut)
	}
	var rep db.ImportReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Kind != "layers-csv" || rep.Devices != 1 || rep.Measurements != (db.Merged{Added: len(want)}) {
		t.Errorf("import report %+v; want a kernel measurement CSV of 1 new device and %d measurements added", rep, len(want))
	}

	d, err := db.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := d.Devices(context.Background())
	if err != nil || len(devs) != 1 {
		d.Close()
		t.Fatalf("devices %+v, %v; want one", devs, err)
	}
	dev := devs[0]
	host, _ := os.Hostname()
	if measure.CPUFramework(dev.Key) != measure.FrameworkPyTorch || !strings.HasPrefix(dev.Key, "cpu:"+host+":") ||
		dev.Backend != "cpu" || dev.Name == "" || dev.Name == dev.Key || dev.SMs < 1 || dev.MemoryBytes <= 0 || dev.Host != host {
		t.Errorf("device %+v; want this host's CPU as PyTorch measured it, described", dev)
	}
	ms, err := d.Measurements(context.Background(), dev.Key, nil)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range ms {
		got[m.ConfigKey+"/"+string(m.Phase)+"/"+strconv.Itoa(m.Batch)] = true
		if m.Status != measure.OK || m.Precision != measure.FP32 || m.Policy != measure.NoPolicy || m.Repeats != 1 {
			t.Errorf("%s %s at batch %d: %s, %s, policy %q, %d repeats; want ok, fp32, no policy, 1 repeat",
				m.ConfigKey, m.Phase, m.Batch, m.Status, m.Precision, m.Policy, m.Repeats)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("no measurement of %s", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("a measurement of %s, which PyTorch does not run", k)
		}
	}

	// local/cpu is the PyTorch-measured CPU and says so.
	m, ok := listedMachine(t, dbPath, "local/cpu")
	if !ok || !strings.Contains(m.Instance, "PyTorch") {
		t.Errorf("local/cpu = %+v, %v; want the CPU PyTorch measured", m, ok)
	}
	rows := predictRows(t, dbPath, "--model", model, "--machine", "local/cpu", "--batches", "2,3", "--loader", "synthetic")
	for _, r := range rows {
		if r.Backend != measure.FrameworkPyTorch || !slices.Contains([]string{"measured", "interpolated"}, r.Source) {
			t.Errorf("batch %d on local/cpu: backend %q, source %q; want pytorch's own measurements", r.Batch, r.Backend, r.Source)
		}
	}
}
