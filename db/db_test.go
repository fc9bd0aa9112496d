package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/predictor/host"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// openTemp opens a new cache in a fresh directory and closes it when the test ends.
func openTemp(t testing.TB) *DB {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// fileHash is the SHA-256 of the file at path.
func fileHash(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// rawExec runs statements on the SQLite file at path without cnntime's Open.
func rawExec(t testing.TB, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

func kernel(device, config string, batch int, phase measure.Phase, ms float64) measure.Measurement {
	return measure.Measurement{
		DeviceKey: device, ConfigKey: config, Batch: batch, Precision: measure.FP32, Phase: phase,
		Policy: measure.Heuristic, Algorithm: "IMPLICIT_GEMM", MedianMS: ms, SpreadMS: ms / 100,
		Repeats: 10, WorkspaceBytes: 4096, Status: measure.OK, At: t0,
	}
}

func TestOpenCreatesMarkedCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "cache.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Path() != path {
		t.Errorf("Path() = %q, want %q", d.Path(), path)
	}
	v, err := d.SchemaVersion(context.Background())
	if err != nil || v != latestVersion {
		t.Errorf("SchemaVersion() = %d, %v; want %d", v, err, latestVersion)
	}
	var appID int
	var mode string
	var fk int
	if err := d.sqldb().QueryRow("PRAGMA application_id").Scan(&appID); err != nil || appID != applicationID {
		t.Errorf("application_id = %#x, %v; want %#x", appID, err, applicationID)
	}
	if err := d.sqldb().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := d.sqldb().QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
}

func TestOpenRefusesWithoutChangingTheFile(t *testing.T) {
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		wantErr string
	}{
		{"text file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("gpu,model,batch_size\nv100,resnet50,32\n"), 0o644)
		}, "not an SQLite database"},
		{"short binary file", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("SQLite format 3"), 0o644)
		}, "not an SQLite database"},
		{"another program's database", func(t *testing.T, path string) {
			rawExec(t, path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)", "INSERT INTO notes (body) VALUES ('keep me')")
		}, "another program"},
		{"another application id", func(t *testing.T, path string) {
			rawExec(t, path, "PRAGMA application_id = 1234", "CREATE TABLE t (x)")
		}, "application id 0x4d2"},
		{"newer schema", func(t *testing.T, path string) {
			d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			rawExec(t, path, "PRAGMA user_version = 99")
		}, "newer cnntime (schema version 99"},
		{"truncated cache", func(t *testing.T, path string) {
			d, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			ms := make([]measure.Measurement, 2000)
			for i := range ms {
				ms[i] = kernel("cpu:h:x", "conv/"+strings.Repeat("k", i%50), i+1, measure.Forward, 1)
			}
			if err := d.PutMeasurements(context.Background(), ms); err != nil {
				t.Fatal(err)
			}
			d.Close()
			info, _ := os.Stat(path)
			os.Truncate(path, info.Size()/2)
		}, "truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "file.db")
			tc.make(t, path)
			before := fileHash(t, path)
			d, err := Open(path)
			if err == nil {
				d.Close()
				t.Fatalf("Open succeeded, want an error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if fileHash(t, path) != before {
				t.Error("the refused file was changed")
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				t.Error("a WAL file was created next to the refused file")
			}
		})
	}
}

// A cache path that names no regular file is refused before anything opens it: a
// named pipe blocked open(2) for ever (deaf to Ctrl-C and SIGTERM), and a device, a
// socket or a folder is no cache. Nothing is created beside it.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.db")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder.db")
	os.Mkdir(folder, 0o755)
	link := filepath.Join(dir, "link.db")
	os.Symlink(fifo, link)
	for _, tc := range []struct{ path, want string }{
		{fifo, "is a named pipe, not a file"},
		{link, "is a named pipe, not a file"},
		{"/dev/null", "is a device, not a file"},
		{folder, "is a directory, not a file"},
	} {
		done := make(chan error, 1)
		go func() {
			d, err := Open(tc.path)
			if err == nil {
				d.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%s): %v, want an error saying it %s", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Open(%s) is still blocked after 5 s", tc.path)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("the folder holds %v, want only what the test made", entries)
	}
}

func TestOpenAdoptsEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path)
	if err != nil {
		t.Fatalf("Open of an empty file: %v", err)
	}
	d.Close()
}

func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	// Build a version-1 cache as an older cnntime wrote it.
	old, err := openUnmigrated(path)
	if err != nil {
		t.Fatal(err)
	}
	sqldb := old.sqldb()
	if err := old.migrateTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := sqldb.Exec(`INSERT INTO devices (key, name) VALUES ('cuda:GPU-1', 'Tesla T4')`); err != nil {
		t.Fatal(err)
	}
	if _, err := sqldb.Exec(`INSERT INTO configs (key) VALUES ('conv2d/64x56x56')`); err != nil {
		t.Fatal(err)
	}
	if _, err := sqldb.Exec(`INSERT INTO measurements (device_id, config_id, batch, precision, phase,
		policy, median_ms, status, at) VALUES (1, 1, 32, 'fp32', 'fwd', 'heuristic', 1.5, 'ok', 7)`); err != nil {
		t.Fatal(err)
	}
	var cols int
	sqldb.QueryRow(`SELECT count(*) FROM pragma_table_info('measurements') WHERE name = 'source'`).Scan(&cols)
	if cols != 0 {
		t.Fatal("the version-1 schema already has measurements.source")
	}
	sqldb.Close()

	d, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a version-1 cache: %v", err)
	}
	defer d.Close()
	if v, _ := d.SchemaVersion(ctx); v != latestVersion {
		t.Errorf("schema version after Open = %d, want %d", v, latestVersion)
	}
	ms, err := d.Measurements(ctx, "cuda:GPU-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []measure.Measurement{{DeviceKey: "cuda:GPU-1", ConfigKey: "conv2d/64x56x56", Batch: 32,
		Precision: measure.FP32, Phase: measure.Forward, Policy: measure.Heuristic, MedianMS: 1.5,
		Status: measure.OK, At: time.Unix(0, 7).UTC()}}
	if !reflect.DeepEqual(ms, want) {
		t.Errorf("measurements after migration = %+v, want %+v", ms, want)
	}
	var source string
	if err := d.sqldb().QueryRow(`SELECT source FROM measurements`).Scan(&source); err != nil || source != "" {
		t.Errorf("source of an old row = %q, %v; want \"\"", source, err)
	}
}

func TestDevices(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	t4 := measure.Device{Key: "cuda:GPU-abc", Backend: "cuda", Name: "Tesla T4", UUID: "GPU-abc",
		GPUID: "t4", ComputeCapability: "7.5", SMs: 40, MemoryBytes: 15 << 30, ClockMHz: 1590,
		MemoryClockMHz: 5001, Driver: "550.54", CUDA: "12.4", CuDNN: "9.1.0", Host: "lab1"}
	cpu := measure.Device{Key: "cpu:lab1:epyc", Backend: "cpu", Name: "EPYC", SMs: 2, Host: "lab1"}
	for _, dev := range []measure.Device{t4, cpu} {
		if err := d.PutDevice(ctx, dev); err != nil {
			t.Fatal(err)
		}
	}
	t4.Driver = "555.42" // a driver update replaces the row
	if err := d.PutDevice(ctx, t4); err != nil {
		t.Fatal(err)
	}
	got, err := d.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []measure.Device{cpu, t4}; !reflect.DeepEqual(got, want) {
		t.Errorf("Devices() = %+v, want %+v", got, want)
	}
	if err := d.PutDevice(ctx, measure.Device{Name: "nameless"}); err == nil {
		t.Error("PutDevice without a key succeeded")
	}
}

func TestMeasurementsRoundTripAndQueries(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	a := kernel("cuda:A", "conv/1", 32, measure.Forward, 2.5)
	b := kernel("cuda:A", "conv/1", 64, measure.Forward, 4.75)
	c := kernel("cuda:A", "conv/2", 32, measure.BackwardData, 1.25)
	oom := kernel("cuda:A", "conv/2", 4096, measure.BackwardData, 0)
	oom.Status = measure.OutOfMemory
	other := kernel("cpu:h:x", "conv/1", 32, measure.Forward, 90)
	other.Policy, other.Algorithm, other.SweepID = measure.NoPolicy, "", 3
	if err := d.PutConfig(ctx, "conv/1", `{"op":"conv2d"}`); err != nil {
		t.Fatal(err)
	}
	if err := d.PutMeasurements(ctx, []measure.Measurement{a, b, c, oom, other}); err != nil {
		t.Fatal(err)
	}
	a.MedianMS, a.Algorithm = 2.25, "WINOGRAD" // re-measured: replaces the row
	if err := d.PutMeasurements(ctx, []measure.Measurement{a}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		device  string
		configs []string
		want    []measure.Measurement
	}{
		{"one device, all configs", "cuda:A", nil, []measure.Measurement{a, b, c, oom}},
		{"one device, one config", "cuda:A", []string{"conv/2"}, []measure.Measurement{c, oom}},
		{"all devices, one config", "", []string{"conv/1"}, []measure.Measurement{other, a, b}},
		{"unknown config", "cuda:A", []string{"conv/9"}, nil},
		{"empty config set", "cuda:A", []string{}, nil},
		{"unknown device", "cuda:B", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.Measurements(ctx, tc.device, tc.configs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Measurements(%q, %q) =\n%+v\nwant\n%+v", tc.device, tc.configs, got, tc.want)
			}
		})
	}
	configs, err := d.Configs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Config{{"conv/1", `{"op":"conv2d"}`}, {"conv/2", ""}}; !reflect.DeepEqual(configs, want) {
		t.Errorf("Configs() = %+v, want %+v", configs, want)
	}
	set, err := d.MeasuredSet(ctx, "cuda:A", measure.FP32, measure.Heuristic)
	if err != nil {
		t.Fatal(err)
	}
	wantSet := map[MeasuredKey]Cached{
		{"conv/1", 32, measure.Forward}: {measure.OK, "WINOGRAD"}, {"conv/1", 64, measure.Forward}: {measure.OK, "IMPLICIT_GEMM"},
		{"conv/2", 32, measure.BackwardData}: {measure.OK, "IMPLICIT_GEMM"}, {"conv/2", 4096, measure.BackwardData}: {measure.OutOfMemory, "IMPLICIT_GEMM"},
	}
	if !reflect.DeepEqual(set, wantSet) {
		t.Errorf("MeasuredSet = %v, want %v", set, wantSet)
	}
	if set, _ := d.MeasuredSet(ctx, "cuda:A", measure.AMP, measure.Heuristic); len(set) != 0 {
		t.Errorf("MeasuredSet at amp = %v, want empty", set)
	}
	devices, _ := d.Devices(ctx)
	if len(devices) != 2 || devices[1].Key != "cuda:A" || devices[1].Backend != "cuda" {
		t.Errorf("devices created from measurement keys = %+v", devices)
	}
}

func TestPutMeasurementsIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	good := kernel("cuda:A", "conv/1", 32, measure.Forward, 2)
	tests := []struct {
		name    string
		bad     func(m measure.Measurement) measure.Measurement
		wantErr string
	}{
		{"zero batch", func(m measure.Measurement) measure.Measurement { m.Batch = 0; return m }, "batch size 0"},
		{"negative time", func(m measure.Measurement) measure.Measurement { m.MedianMS = -1; return m }, "must be positive"},
		{"unknown phase", func(m measure.Measurement) measure.Measurement { m.Phase = "sideways"; return m }, "unknown phase"},
		{"unknown precision", func(m measure.Measurement) measure.Measurement { m.Precision = "fp8"; return m }, "unknown precision"},
		{"unknown policy", func(m measure.Measurement) measure.Measurement { m.Policy = "random"; return m }, "unknown algorithm policy"},
		{"negative spread", func(m measure.Measurement) measure.Measurement { m.SpreadMS = -0.5; return m }, "negative"},
		{"no device", func(m measure.Measurement) measure.Measurement { m.DeviceKey = ""; return m }, "no device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := openTemp(t)
			err := d.PutMeasurements(ctx, []measure.Measurement{good, tc.bad(kernel("cuda:A", "conv/1", 64, measure.Forward, 3))})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "measurement 2 of 2") {
				t.Errorf("error = %v, want one naming measurement 2 of 2 and %q", err, tc.wantErr)
			}
			if got, _ := d.Measurements(ctx, "", nil); len(got) != 0 {
				t.Errorf("%d measurements saved after a refused batch, want 0", len(got))
			}
		})
	}
}

func TestSteps(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	step := func(model string, batch int, source string, ms float64) measure.Step {
		return measure.Step{DeviceKey: "gpu:v100-sxm2-16gb", Model: model, Batch: batch,
			Precision: measure.AMP, Framework: "pytorch 2.5", Source: source, MedianMS: ms,
			SpreadMS: 0.5, Status: measure.OK, At: t0}
	}
	r32 := step("resnet50", 32, "lab", 100)
	r64 := step("resnet50", 64, "lab", 180)
	r64pub := step("resnet50", 64, "paper", 175)
	v16 := step("vgg16", 16, "lab", 120)
	if err := d.PutSteps(ctx, []measure.Step{r32, r64, r64pub, v16}); err != nil {
		t.Fatal(err)
	}
	stale := r32
	stale.MedianMS, stale.At = 250, t0.Add(-time.Hour) // same key, measured earlier: kept out
	same := r32
	same.MedianMS = 300                          // same key, measured at the same time: kept out
	r32.MedianMS, r32.At = 98, t0.Add(time.Hour) // same key, measured later: replaced
	if err := d.PutSteps(ctx, []measure.Step{stale, r32, same}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		filter StepFilter
		want   []measure.Step
	}{
		{StepFilter{}, []measure.Step{r32, r64, r64pub, v16}},
		{StepFilter{Model: "resnet50", Source: "lab"}, []measure.Step{r32, r64}},
		{StepFilter{Source: "paper"}, []measure.Step{r64pub}},
		{StepFilter{Precision: measure.FP32}, nil},
		{StepFilter{DeviceKey: "gpu:t4"}, nil},
	}
	for _, tc := range tests {
		got, err := d.Steps(ctx, tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Steps(%+v) = %+v, want %+v", tc.filter, got, tc.want)
		}
	}
	bad := step("resnet50", 128, "lab", 0)
	if err := d.PutSteps(ctx, []measure.Step{step("alexnet", 8, "lab", 5), bad}); err == nil || !strings.Contains(err.Error(), "step 2 of 2") {
		t.Errorf("PutSteps with a zero time: error = %v, want one naming step 2 of 2", err)
	}
	if got, _ := d.Steps(ctx, StepFilter{Model: "alexnet"}); len(got) != 0 {
		t.Errorf("a refused batch saved %d steps", len(got))
	}
}

func TestSweeps(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	first, err := d.CreateSweep(ctx, "cuda:A", `{"models":["resnet50"]}`, 10)
	if err != nil {
		t.Fatal(err)
	}
	second, err := d.CreateSweep(ctx, "cpu:h:x", `{}`, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.UpdateSweep(ctx, first, SweepPaused, 7); err != nil {
		t.Fatal(err)
	}
	errs := []struct {
		id      int64
		state   string
		done    int
		wantErr string
	}{
		{first, "asleep", 1, `unknown state "asleep"`},
		{first, SweepDone, 11, "more than planned"},
		{first, SweepDone, -1, "must not be negative"},
		{99, SweepDone, 1, "no sweep 99"},
	}
	for _, e := range errs {
		if err := d.UpdateSweep(ctx, e.id, e.state, e.done); err == nil || !strings.Contains(err.Error(), e.wantErr) {
			t.Errorf("UpdateSweep(%d, %q, %d) = %v, want an error containing %q", e.id, e.state, e.done, err, e.wantErr)
		}
	}
	sweeps, err := d.Sweeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sweeps) != 2 {
		t.Fatalf("Sweeps() has %d, want 2", len(sweeps))
	}
	got := []Sweep{sweeps[0], sweeps[1]}
	for i := range got {
		if got[i].Created.IsZero() || got[i].Updated.Before(got[i].Created) {
			t.Errorf("sweep %d times: created %v updated %v", got[i].ID, got[i].Created, got[i].Updated)
		}
		got[i].Created, got[i].Updated = time.Time{}, time.Time{}
	}
	want := []Sweep{
		{ID: second, DeviceKey: "cpu:h:x", Plan: `{}`, State: SweepRunning, Total: 4, PID: os.Getpid()},
		{ID: first, DeviceKey: "cuda:A", Plan: `{"models":["resnet50"]}`, State: SweepPaused, Total: 10, Done: 7},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sweeps() = %+v, want %+v", got, want)
	}
}

func TestUserMachinesAndPriceOverrides(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	box := hw.Machine{ID: "user/lab-box", Provider: "user", Instance: "lab-box", GPUID: "rtx-4090",
		GPUCount: 2, VCPUs: 32, MemoryGiB: 128, PriceUSDPerHour: 0.4, PriceSource: "electricity", User: true}
	if err := d.PutUserMachine(ctx, box); err != nil {
		t.Fatal(err)
	}
	box.GPUCount = 1
	if err := d.PutUserMachine(ctx, box); err != nil {
		t.Fatal(err)
	}
	got, err := d.UserMachines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []hw.Machine{box}) {
		t.Errorf("UserMachines() = %+v, want [%+v]", got, box)
	}
	// Its host CPU is kept with it, the user named as its source.
	box.CPU = &host.CPU{Model: "AMD EPYC 9354", TurboGHz: 3.8, Source: hw.UserCPUSource}
	if err := d.PutUserMachine(ctx, box); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.UserMachines(ctx); len(got) != 1 || !reflect.DeepEqual(got[0].CPU, box.CPU) {
		t.Errorf("UserMachines() after naming its CPU = %+v, want the CPU %+v", got, box.CPU)
	}
	for _, bad := range []hw.Machine{{Instance: "no id"}, {ID: "user/x", GPUCount: -1}, {ID: "user/y", PriceUSDPerHour: -2},
		{ID: "user/z", CPU: &host.CPU{}}, {ID: "user/w", CPU: &host.CPU{Model: "x", TurboGHz: -3}}} {
		if err := d.PutUserMachine(ctx, bad); err == nil {
			t.Errorf("PutUserMachine(%+v) succeeded", bad)
		}
	}
	if err := d.RemoveUserMachine(ctx, "user/nope"); err == nil || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"user/nope"`) {
		t.Errorf("RemoveUserMachine of a missing id = %v, want ErrNotFound naming it", err)
	}
	if err := d.RemoveUserMachine(ctx, box.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.UserMachines(ctx); len(got) != 0 {
		t.Errorf("after removal UserMachines() = %+v", got)
	}

	if err := d.SetPriceOverride(ctx, "aws/p3.2xlarge", 2.5); err != nil {
		t.Fatal(err)
	}
	if err := d.SetPriceOverride(ctx, "aws/p3.2xlarge", 2.25); err != nil {
		t.Fatal(err)
	}
	if err := d.SetPriceOverride(ctx, "user/lab-box", 0); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{-1, posInf(), nanValue()} {
		if err := d.SetPriceOverride(ctx, "gcp/a2", bad); err == nil {
			t.Errorf("SetPriceOverride(%v) succeeded", bad)
		}
	}
	prices, err := d.PriceOverrides(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"aws/p3.2xlarge": 2.25, "user/lab-box": 0}; !reflect.DeepEqual(prices, want) {
		t.Errorf("PriceOverrides() = %v, want %v", prices, want)
	}
	if err := d.ClearPriceOverride(ctx, "aws/p3.2xlarge"); err != nil {
		t.Fatal(err)
	}
	if err := d.ClearPriceOverride(ctx, "aws/p3.2xlarge"); !errors.Is(err, ErrNotFound) {
		t.Errorf("clearing a cleared override = %v, want ErrNotFound", err)
	}
}

func posInf() float64   { return math.Inf(1) }
func nanValue() float64 { return math.NaN() }

// TestMeasurementNotesTravel: the worker's notes on a time (host-bound, l2-flushed) are
// kept, replaced with the measurement, and merged with it into another cache.
func TestMeasurementNotesTravel(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	m := kernel("cuda:A", "relu/1", 1, measure.Forward, 0.004)
	m.Notes = "host-bound,l2-flushed"
	if err := src.PutMeasurements(ctx, []measure.Measurement{m}); err != nil {
		t.Fatal(err)
	}
	got, err := src.Measurements(ctx, "cuda:A", nil)
	if err != nil || len(got) != 1 || got[0].Notes != m.Notes {
		t.Fatalf("read back %+v, %v: want the notes %q", got, err, m.Notes)
	}
	dst := openTemp(t)
	if _, err := dst.ImportCache(ctx, src.Path()); err != nil {
		t.Fatal(err)
	}
	if got, err := dst.Measurements(ctx, "cuda:A", nil); err != nil || len(got) != 1 || got[0].Notes != m.Notes {
		t.Errorf("imported %+v, %v: want the notes %q", got, err, m.Notes)
	}
	m.Notes, m.At = "", m.At.Add(time.Hour) // measured again, nothing to note
	if err := src.PutMeasurements(ctx, []measure.Measurement{m}); err != nil {
		t.Fatal(err)
	}
	if got, _ := src.Measurements(ctx, "cuda:A", nil); len(got) != 1 || got[0].Notes != "" {
		t.Errorf("a new measurement kept the old notes: %+v", got)
	}
}
