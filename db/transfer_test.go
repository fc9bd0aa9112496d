package db

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

const goodCSV = `gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at
v100-sxm2-16gb,resnet50,32,amp,pytorch 2.5.1,101.5,1.25,ok,lab-box,2026-03-01T12:00:00Z
v100-sxm2-16gb,resnet50,512,amp,pytorch 2.5.1,,,oom,lab-box,2026-03-01T12:05:00Z
cuda:GPU-77,vgg16,16,fp32,pytorch 2.5.1,88,0,ok,,
`

func TestParseStepsCSV(t *testing.T) {
	steps, err := ParseStepsCSV(strings.NewReader(goodCSV), "lab.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []measure.Step{
		{DeviceKey: "gpu:v100-sxm2-16gb", Model: "resnet50", Batch: 32, Precision: measure.AMP,
			Framework: "pytorch 2.5.1", Source: "lab-box", MedianMS: 101.5, SpreadMS: 1.25,
			Status: measure.OK, At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		{DeviceKey: "gpu:v100-sxm2-16gb", Model: "resnet50", Batch: 512, Precision: measure.AMP,
			Framework: "pytorch 2.5.1", Source: "lab-box", Status: measure.OutOfMemory,
			At: time.Date(2026, 3, 1, 12, 5, 0, 0, time.UTC)},
		{DeviceKey: "cuda:GPU-77", Model: "vgg16", Batch: 16, Precision: measure.FP32,
			Framework: "pytorch 2.5.1", Source: "csv:lab.csv", MedianMS: 88, Status: measure.OK},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Errorf("ParseStepsCSV =\n%+v\nwant\n%+v", steps, want)
	}
	var buf bytes.Buffer
	if err := WriteStepsCSV(&buf, steps); err != nil {
		t.Fatal(err)
	}
	again, err := ParseStepsCSV(&buf, "again.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, want) {
		t.Errorf("a written CSV reads back as\n%+v\nwant\n%+v", again, want)
	}
}

// seededCache makes a closed cache with a few measurements and steps, and returns its path.
func seededCache(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(dir, "cache.db")
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.PutDevice(ctx, measure.Device{Key: "cuda:A", Backend: "cuda", Name: "Tesla T4"}); err != nil {
		t.Fatal(err)
	}
	if err := d.PutMeasurements(ctx, []measure.Measurement{
		kernel("cuda:A", "conv/1", 32, measure.Forward, 2),
		kernel("cuda:A", "conv/1", 64, measure.Forward, 3.5),
	}); err != nil {
		t.Fatal(err)
	}
	steps, err := ParseStepsCSV(strings.NewReader(goodCSV), "seed.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportRefusesBadFilesAndLeavesTheCacheUnchanged(t *testing.T) {
	header := "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source\n"
	row := "t4,resnet50,32,fp32,pytorch,50,1,ok,lab\n"
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		wantErr []string
	}{
		{"csv with a misspelt column", func(t *testing.T, path string) {
			writeFile(t, path, strings.Replace(header, "step_ms", "step_time", 1)+row)
		}, []string{"line 1", `unknown column "step_time"`}},
		{"csv missing a column", func(t *testing.T, path string) {
			writeFile(t, path, "gpu,model,batch_size,precision,framework,step_ms,status,source\nt4,resnet50,32,fp32,pytorch,50,ok,lab\n")
		}, []string{"line 1", `missing column "spread_ms"`}},
		{"csv with a non-numeric time", func(t *testing.T, path string) {
			writeFile(t, path, header+row+"t4,resnet50,64,fp32,pytorch,fast,1,ok,lab\n")
		}, []string{"line 3", `step_ms "fast" is not a number`}},
		{"csv with a hexadecimal time", func(t *testing.T, path string) {
			writeFile(t, path, header+row+"t4,resnet50,64,fp32,pytorch,0x1p4,1,ok,lab\n")
		}, []string{"line 3", `step_ms "0x1p4" is not a number`}},
		{"csv with an underscored time", func(t *testing.T, path string) {
			writeFile(t, path, header+row+"t4,resnet50,64,fp32,pytorch,1_0.5,1,ok,lab\n")
		}, []string{"line 3", `step_ms "1_0.5" is not a number`}},
		{"csv with an infinite spread", func(t *testing.T, path string) {
			writeFile(t, path, header+row+"t4,resnet50,64,fp32,pytorch,5,Inf,ok,lab\n")
		}, []string{"line 3", `spread_ms "Inf" is not a number`}},
		{"csv with a negative time", func(t *testing.T, path string) {
			writeFile(t, path, header+"t4,resnet50,64,fp32,pytorch,-4,1,ok,lab\n"+row)
		}, []string{"line 2", "negative"}},
		{"csv with a zero ok time", func(t *testing.T, path string) {
			writeFile(t, path, header+row+row+"t4,resnet50,128,fp32,pytorch,0,0,ok,lab\n")
		}, []string{"line 4", "must be positive"}},
		{"csv with a fractional batch", func(t *testing.T, path string) {
			writeFile(t, path, header+"t4,resnet50,3.5,fp32,pytorch,5,1,ok,lab\n")
		}, []string{"line 2", `batch_size "3.5"`}},
		{"csv with an unknown precision", func(t *testing.T, path string) {
			writeFile(t, path, header+"t4,resnet50,8,fp8,pytorch,5,1,ok,lab\n")
		}, []string{"line 2", `unknown precision "fp8"`}},
		{"csv with a short row", func(t *testing.T, path string) {
			writeFile(t, path, header+row+"t4,resnet50,8\n")
		}, []string{"line 3", "3 fields"}},
		{"empty file", func(t *testing.T, path string) { writeFile(t, path, "") }, []string{"empty"}},
		{"header only", func(t *testing.T, path string) { writeFile(t, path, header) }, []string{"no measurements"}},
		{"another program's database", func(t *testing.T, path string) {
			rawExec(t, path, "CREATE TABLE notes (body TEXT)")
		}, []string{"not a cnntime cache"}},
		{"truncated cache", func(t *testing.T, path string) {
			src := seededCache(t, t.TempDir())
			b, _ := os.ReadFile(src)
			writeFile(t, path, string(b[:len(b)*2/3]))
		}, []string{"truncated"}},
		{"newer cache", func(t *testing.T, path string) {
			src := seededCache(t, t.TempDir())
			rawExec(t, src, "PRAGMA user_version = 42")
			b, _ := os.ReadFile(src)
			writeFile(t, path, string(b))
		}, []string{"newer cnntime"}},
		{"damaged cache", func(t *testing.T, path string) {
			src := seededCache(t, t.TempDir())
			b, _ := os.ReadFile(src)
			for i := 4096; i < 4096+12; i++ { // scribble over the header of page 2
				b[i] ^= 0x5a
			}
			writeFile(t, path, string(b))
		}, []string{"damaged"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cachePath := seededCache(t, dir)
			before := fileHash(t, cachePath)
			bad := filepath.Join(dir, "incoming")
			tc.make(t, bad)
			badBefore := fileHash(t, bad)
			d, err := Open(cachePath)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Import(context.Background(), bad)
			d.Close()
			if err == nil {
				t.Fatalf("Import succeeded, want an error containing %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if fileHash(t, cachePath) != before {
				t.Error("the cache changed after a refused import")
			}
			if fileHash(t, bad) != badBefore {
				t.Error("the refused file changed")
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImportStepsCSVReimportKeepsEveryRow(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	path := filepath.Join(t.TempDir(), "lab.csv")
	writeFile(t, path, goodCSV)
	rep, err := d.Import(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != "csv" || rep.Steps != (Merged{Added: 3}) {
		t.Errorf("first import report = %+v, want 3 steps added", rep)
	}
	rep, err = d.Import(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Steps != (Merged{Kept: 3}) {
		t.Errorf("second import report = %+v, want 3 steps kept (measured at the same time)", rep.Steps)
	}
	steps, _ := d.Steps(ctx, StepFilter{})
	if len(steps) != 3 {
		t.Errorf("%d steps after importing the same file twice, want 3", len(steps))
	}
}

// TestImportStepsCSVReplacesOnlyWithLater imports, over a cache holding a step measured
// at noon, a CSV of the same key measured earlier, at the same time, later or at an
// unknown time: only the later one replaces it, and the report says which happened.
func TestImportStepsCSVReplacesOnlyWithLater(t *testing.T) {
	const header = "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n"
	const cached = "t4,resnet50,32,amp,pytorch 2.5.1,100,1,ok,lab,2026-03-01T12:00:00Z\n"
	for _, tc := range []struct {
		name, row  string
		want       Merged
		wantMS     float64
		wantAtHour int
	}{
		{"older", "t4,resnet50,32,amp,pytorch 2.5.1,250,1,ok,lab,2026-02-01T12:00:00Z\n", Merged{Kept: 1}, 100, 12},
		{"same time", "t4,resnet50,32,amp,pytorch 2.5.1,250,1,ok,lab,2026-03-01T12:00:00Z\n", Merged{Kept: 1}, 100, 12},
		{"unknown time", "t4,resnet50,32,amp,pytorch 2.5.1,250,1,ok,lab,\n", Merged{Kept: 1}, 100, 12},
		{"later", "t4,resnet50,32,amp,pytorch 2.5.1,90,1,ok,lab,2026-03-01T13:00:00Z\n", Merged{Replaced: 1}, 90, 13},
		{"later then older in one file",
			"t4,resnet50,32,amp,pytorch 2.5.1,90,1,ok,lab,2026-03-01T13:00:00Z\n" +
				"t4,resnet50,32,amp,pytorch 2.5.1,250,1,ok,lab,2026-02-01T12:00:00Z\n", Merged{Replaced: 1, Kept: 1}, 90, 13},
		{"other source", "t4,resnet50,32,amp,pytorch 2.5.1,250,1,ok,paper,2026-02-01T12:00:00Z\n", Merged{Added: 1}, 100, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d := cacheWithSteps(t, dir, header+cached)
			path := filepath.Join(dir, "incoming.csv")
			writeFile(t, path, header+tc.row)
			rep, err := d.Import(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Steps != tc.want {
				t.Errorf("import report = %+v, want %+v", rep.Steps, tc.want)
			}
			steps, err := d.Steps(ctx, StepFilter{Source: "lab"})
			if err != nil || len(steps) != 1 {
				t.Fatalf("Steps(lab) = %+v, %v; want the one step", steps, err)
			}
			if steps[0].MedianMS != tc.wantMS || steps[0].At.Hour() != tc.wantAtHour {
				t.Errorf("cached step = %v ms at %v, want %v ms at %d:00", steps[0].MedianMS, steps[0].At, tc.wantMS, tc.wantAtHour)
			}
		})
	}
}

func TestImportCacheMergesByKeyAndKeepsProvenance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	older, newer := t0, t0.Add(time.Hour)

	local, err := Open(filepath.Join(dir, "local.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	keep := kernel("cuda:A", "conv/1", 32, measure.Forward, 2) // newer here than there
	keep.At = newer
	stale := kernel("cuda:A", "conv/1", 64, measure.Forward, 4) // older here than there
	stale.At = older
	if err := local.PutMeasurements(ctx, []measure.Measurement{keep, stale}); err != nil {
		t.Fatal(err)
	}
	if err := local.PutUserMachine(ctx, hw.Machine{ID: "user/box", GPUCount: 1}); err != nil {
		t.Fatal(err)
	}

	otherPath := filepath.Join(dir, "other.db")
	other, err := Open(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	t4 := measure.Device{Key: "cuda:B", Backend: "cuda", Name: "Tesla T4", ComputeCapability: "7.5"}
	if err := other.PutDevice(ctx, t4); err != nil {
		t.Fatal(err)
	}
	if err := other.PutConfig(ctx, "conv/1", `{"op":"conv2d"}`); err != nil {
		t.Fatal(err)
	}
	theirsOld := keep
	theirsOld.MedianMS, theirsOld.At = 9, older
	theirsNew := stale
	theirsNew.MedianMS, theirsNew.At = 3, newer
	fresh := kernel("cuda:B", "conv/7", 16, measure.BackwardWeights, 0.5)
	fresh.SweepID = 12
	if err := other.PutMeasurements(ctx, []measure.Measurement{theirsOld, theirsNew, fresh}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateSweep(ctx, "cuda:B", "{}", 1); err != nil {
		t.Fatal(err)
	}
	if err := other.PutUserMachine(ctx, hw.Machine{ID: "user/box", GPUCount: 8}); err != nil {
		t.Fatal(err)
	}
	if err := other.PutUserMachine(ctx, hw.Machine{ID: "user/rig", GPUCount: 4}); err != nil {
		t.Fatal(err)
	}
	steps, _ := ParseStepsCSV(strings.NewReader(goodCSV), "theirs.csv")
	if err := other.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	otherHash := fileHash(t, otherPath)

	rep, err := local.Import(ctx, otherPath)
	if err != nil {
		t.Fatal(err)
	}
	wantRep := ImportReport{File: otherPath, Kind: "cache", Source: "cache:other.db", Devices: 1, Configs: 1,
		Measurements: Merged{Added: 1, Replaced: 1, Kept: 1}, Steps: Merged{Added: 3}, UserMachines: 1}
	if !reflect.DeepEqual(rep, wantRep) {
		t.Errorf("report = %+v\nwant %+v", rep, wantRep)
	}
	if fileHash(t, otherPath) != otherHash {
		t.Error("the imported file changed")
	}
	got, err := local.Measurements(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	freshImported := fresh
	freshImported.SweepID = 0
	theirsNewImported := theirsNew
	if want := []measure.Measurement{keep, theirsNewImported, freshImported}; !reflect.DeepEqual(got, want) {
		t.Errorf("merged measurements =\n%+v\nwant\n%+v", got, want)
	}
	sources := map[string]string{}
	rows, err := local.sqldb().Query(`SELECT c.key || '@' || m.batch, m.source FROM measurements m JOIN configs c ON c.id = m.config_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, s string
		rows.Scan(&k, &s)
		sources[k] = s
	}
	rows.Close()
	wantSources := map[string]string{"conv/1@32": "", "conv/1@64": "cache:other.db", "conv/7@16": "cache:other.db"}
	if !reflect.DeepEqual(sources, wantSources) {
		t.Errorf("sources = %v, want %v", sources, wantSources)
	}
	devices, _ := local.Devices(ctx)
	if len(devices) != 2 || devices[1] != t4 {
		t.Errorf("devices after merge = %+v, want cuda:A and %+v", devices, t4)
	}
	machines, _ := local.UserMachines(ctx)
	if len(machines) != 2 || machines[0].GPUCount != 1 || machines[1].ID != "user/rig" {
		t.Errorf("user machines after merge = %+v: want the local user/box kept and user/rig added", machines)
	}
	if sweeps, _ := local.Sweeps(ctx); len(sweeps) != 0 {
		t.Errorf("sweeps were imported: %+v", sweeps)
	}
	if _, err := local.Import(ctx, local.Path()); err == nil || !strings.Contains(err.Error(), "this cache itself") {
		t.Errorf("importing the cache into itself: %v", err)
	}
	again, err := local.Import(ctx, otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if again.Measurements != (Merged{Kept: 3}) || again.Steps != (Merged{Kept: 3}) {
		t.Errorf("a second import changed rows: %+v", again)
	}
}

func TestImportVersion1Cache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	oldPath := filepath.Join(dir, "v1.db")
	raw, err := openUnmigrated(oldPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.migrateTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.sqldb().Exec(`INSERT INTO devices (key) VALUES ('cpu:old'); INSERT INTO configs (key) VALUES ('relu/1');
		INSERT INTO measurements (device_id, config_id, batch, precision, phase, policy, median_ms, status, at)
		VALUES (1, 1, 8, 'fp32', 'fwd', '', 0.25, 'ok', 5)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	d := openTemp(t)
	rep, err := d.Import(ctx, oldPath)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Measurements.Added != 1 {
		t.Errorf("report = %+v, want 1 measurement added", rep)
	}
	var v int
	raw2, _ := openUnmigrated(oldPath)
	raw2.sqldb().QueryRow("PRAGMA user_version").Scan(&v)
	raw2.Close()
	if v != 1 {
		t.Errorf("the imported version-1 file is now version %d: it must not be migrated in place", v)
	}
}

// openUnmigrated opens a cache file without checking or migrating it.
func openUnmigrated(path string) (*DB, error) {
	if err := createIfMissing(path); err != nil {
		return nil, err
	}
	ident, err := identOf(path)
	if err != nil {
		return nil, err
	}
	f := &openFile{ident: ident}
	openPool(path, f)
	d := &DB{path: path}
	d.file.Store(f)
	return d, nil
}

func TestExportCacheAndCSV(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := openTemp(t)
	if err := d.PutDevice(ctx, measure.Device{Key: "cuda:A", Name: "T4"}); err != nil {
		t.Fatal(err)
	}
	a1 := kernel("cuda:A", "conv/1", 32, measure.Forward, 2)
	a2 := kernel("cuda:A", "conv/2", 32, measure.Forward, 3)
	b1 := kernel("cpu:B", "conv/1", 32, measure.Forward, 70)
	if err := d.PutMeasurements(ctx, []measure.Measurement{a1, a2, b1}); err != nil {
		t.Fatal(err)
	}
	steps, _ := ParseStepsCSV(strings.NewReader(goodCSV), "s.csv")
	if err := d.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	sorted := []measure.Step{steps[2], steps[0], steps[1]} // by device key
	if _, err := d.CreateSweep(ctx, "cuda:A", "{}", 3); err != nil {
		t.Fatal(err)
	}
	if err := d.SetPriceOverride(ctx, "aws/g4dn.xlarge", 0.4); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name         string
		filter       ExportFilter
		wantDevices  []string
		measurements []measure.Measurement
		steps        []measure.Step
		sweeps       int
	}{
		{"whole cache", ExportFilter{}, []string{"cpu:B", "cuda:A"}, []measure.Measurement{b1, a1, a2}, sorted, 1},
		{"one device", ExportFilter{DeviceKey: "cuda:A"}, []string{"cuda:A"}, []measure.Measurement{a1, a2}, nil, 0},
		{"one device's configs", ExportFilter{DeviceKey: "cuda:A", ConfigKeys: []string{"conv/2"}}, []string{"cuda:A"}, []measure.Measurement{a2}, nil, 0},
		{"one model's steps", ExportFilter{Models: []string{"vgg16"}}, nil, nil, steps[2:], 0},
		{"a model and its configs", ExportFilter{Models: []string{"resnet50"}, ConfigKeys: []string{"conv/1"}}, []string{"cpu:B", "cuda:A"}, []measure.Measurement{b1, a1}, steps[:2], 0},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("export%d.db", i))
			rep, err := d.ExportCache(ctx, path, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Measurements != len(tc.measurements) || rep.Steps != len(tc.steps) {
				t.Errorf("report = %+v, want %d measurements and %d steps", rep, len(tc.measurements), len(tc.steps))
			}
			out, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			devices, _ := out.Devices(ctx)
			var keys []string
			for _, dev := range devices {
				keys = append(keys, dev.Key)
			}
			if !reflect.DeepEqual(keys, tc.wantDevices) {
				t.Errorf("exported devices = %v, want %v", keys, tc.wantDevices)
			}
			ms, _ := out.Measurements(ctx, "", nil)
			if !reflect.DeepEqual(ms, tc.measurements) {
				t.Errorf("exported measurements =\n%+v\nwant\n%+v", ms, tc.measurements)
			}
			st, _ := out.Steps(ctx, StepFilter{})
			if !reflect.DeepEqual(st, tc.steps) {
				t.Errorf("exported steps =\n%+v\nwant\n%+v", st, tc.steps)
			}
			sweeps, _ := out.Sweeps(ctx)
			if len(sweeps) != tc.sweeps {
				t.Errorf("exported %d sweeps, want %d", len(sweeps), tc.sweeps)
			}
			if problems, err := out.Check(ctx); err != nil || len(problems) != 0 {
				t.Errorf("the export fails its check: %v %v", problems, err)
			}

			var buf bytes.Buffer
			n, err := d.ExportStepsCSV(ctx, &buf, tc.filter)
			if err != nil || n != len(tc.steps) {
				t.Fatalf("ExportStepsCSV = %d, %v; want %d rows", n, err, len(tc.steps))
			}
			if len(tc.steps) > 0 {
				back, err := ParseStepsCSV(&buf, "back.csv")
				if err != nil || !reflect.DeepEqual(back, tc.steps) {
					t.Errorf("exported step CSV reads back as %+v, %v; want %+v", back, err, tc.steps)
				}
			}
			buf.Reset()
			if n, err := d.ExportMeasurementsCSV(ctx, &buf, tc.filter); err != nil || n != len(tc.measurements) {
				t.Errorf("ExportMeasurementsCSV = %d, %v; want %d rows", n, err, len(tc.measurements))
			}
			if lines := strings.Count(buf.String(), "\n"); lines != len(tc.measurements)+1 {
				t.Errorf("measurement CSV has %d lines, want %d", lines, len(tc.measurements)+1)
			}
		})
	}
	if _, err := d.ExportCache(ctx, filepath.Join(dir, "export0.db"), ExportFilter{}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("export over an existing file: %v", err)
	}
}

func TestCheckFindsInconsistencies(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.PutMeasurements(ctx, []measure.Measurement{kernel("cuda:A", "conv/1", 32, measure.Forward, 2)}); err != nil {
		t.Fatal(err)
	}
	if problems, err := d.Check(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("a sound cache: Check() = %v, %v", problems, err)
	}
	// Rows another tool might write with the constraints off.
	conn, err := d.sqldb().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"PRAGMA foreign_keys = OFF",
		"PRAGMA ignore_check_constraints = ON",
		`INSERT INTO measurements (device_id, config_id, batch, precision, phase, policy, median_ms, status, at)
			VALUES (99, 1, 64, 'fp32', 'fwd', 'heuristic', 1, 'ok', 0)`,
		`INSERT INTO measurements (device_id, config_id, batch, precision, phase, policy, median_ms, status, at)
			VALUES (1, 1, 128, 'fp32', 'fwd', 'heuristic', -3, 'ok', 0)`,
		`INSERT INTO steps (device_key, model, batch, precision, median_ms, status, at)
			VALUES ('gpu:t4', 'resnet50', 8, 'fp32', 0, 'ok', 0)`,
		"PRAGMA foreign_keys = ON",
		"PRAGMA ignore_check_constraints = OFF",
	} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	problems, err := d.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"integrity: CHECK constraint failed in steps",
		"integrity: CHECK constraint failed in measurements",
		"1 rows refer to rows that do not exist (foreign key check)",
		"1 measurements whose device row is missing",
		"1 ok measurements with a time that is not positive",
		"1 ok step measurements with a time that is not positive",
	}
	slices.Sort(problems) // SQLite's integrity messages come in no promised order
	slices.Sort(want)
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("Check() =\n%q\nwant\n%q", problems, want)
	}
}

func TestInfo(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	oom := kernel("cuda:A", "conv/2", 1024, measure.Forward, 0)
	oom.Status = measure.OutOfMemory
	if err := d.PutMeasurements(ctx, []measure.Measurement{
		kernel("cuda:A", "conv/1", 32, measure.Forward, 2), kernel("cuda:A", "conv/1", 8, measure.Forward, 1), oom,
	}); err != nil {
		t.Fatal(err)
	}
	steps, _ := ParseStepsCSV(strings.NewReader(goodCSV), "s.csv")
	if err := d.PutSteps(ctx, steps); err != nil {
		t.Fatal(err)
	}
	info, err := d.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.SchemaVersion != latestVersion || info.Measurements != 3 || info.Configs != 2 || info.Steps != 3 || info.SizeBytes == 0 {
		t.Errorf("Info() = %+v", info)
	}
	wantDevices := []DeviceCounts{{Key: "cuda:A", Name: "cuda:A", Measurements: 3, Configs: 2, OutOfMemory: 1, MinBatch: 8, MaxBatch: 1024}}
	if !reflect.DeepEqual(info.Devices, wantDevices) {
		t.Errorf("Info().Devices = %+v, want %+v", info.Devices, wantDevices)
	}
	wantSources := []SourceCount{{"csv:s.csv", 1}, {"lab-box", 2}}
	if !reflect.DeepEqual(info.StepSources, wantSources) {
		t.Errorf("Info().StepSources = %+v, want %+v", info.StepSources, wantSources)
	}
}

// A cache export is made under a temporary name and named at the end: a failed one
// (here cancelled) leaves nothing at the destination nor beside it, a finished one is a
// whole cache by itself (no log beside it) with the umask's mode, and a dangling link is
// refused without its target being created.
func TestExportCacheNamesTheFileWhenComplete(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.PutMeasurements(ctx, []measure.Measurement{kernel("cuda:A", "conv/1", 32, measure.Forward, 2)}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	failed := filepath.Join(dir, "failed.db")
	if _, err := d.ExportCache(cancelled, failed, ExportFilter{}); err == nil {
		t.Fatal("a cancelled export succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed export left %v", entries)
	}

	old := syscall.Umask(0o027)
	path := filepath.Join(dir, "whole.db")
	rep, err := d.ExportCache(ctx, path, ExportFilter{})
	syscall.Umask(old)
	if err != nil || rep.Measurements != 1 {
		t.Fatalf("export: %+v, %v", rep, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "whole.db" {
		t.Errorf("the folder holds %v, want whole.db alone", entries)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("with umask 027 the export is %v, want 0640", st.Mode().Perm())
	}
	back, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := back.Info(ctx)
	back.Close()
	if err != nil || info.Measurements != 1 {
		t.Errorf("the export reads back as %+v, %v", info, err)
	}

	dangling := filepath.Join(dir, "dangling.db")
	os.Symlink(filepath.Join(dir, "target.db"), dangling)
	if _, err := d.ExportCache(ctx, dangling, ExportFilter{}); err == nil || !strings.Contains(err.Error(), "which does not exist") {
		t.Errorf("export to a dangling link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "target.db")); err == nil {
		t.Error("the dangling link's target was created")
	}
}

// Times a cache cannot store or must not trust are refused naming the line: 9999-12-31
// overflowed Unix nanoseconds into 2261-07-22 and then hid every later genuine row of
// its key. The cache is left as it was, and a later genuine row is then stored, even
// over a row an older cnntime stored with an overflowed (future) time.
func TestImportRefusesTimesOutOfRange(t *testing.T) {
	const header = "gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source,measured_at\n"
	row := func(ms, at string) string { return "t4,resnet50,32,amp,pytorch 2.5.1," + ms + ",1,ok,lab," + at + "\n" }
	future := time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339)
	ctx := context.Background()
	dir := t.TempDir()
	d := cacheWithSteps(t, dir, header+row("100", "2026-03-01T12:00:00Z"))
	for _, tc := range []struct{ at, want string }{
		{"9999-12-31T23:59:59Z", "bad.csv line 3: measured_at 9999-12-31T23:59:59Z is after 2262-04-11"},
		{"2262-04-12T00:00:00Z", "bad.csv line 3: measured_at 2262-04-12T00:00:00Z is after 2262-04-11"},
		{"1969-12-31T23:59:59Z", "bad.csv line 3: measured_at 1969-12-31T23:59:59Z is before 1970"},
		{"0001-01-01T00:00:01Z", "bad.csv line 3: measured_at 0001-01-01T00:00:01Z is before 1970"},
		{future, "bad.csv line 3: measured_at " + future + " is in the future"},
	} {
		bad := filepath.Join(dir, "bad.csv")
		writeFile(t, bad, header+row("90", "2026-03-02T12:00:00Z")+row("80", tc.at))
		if _, err := d.Import(ctx, bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.at, err, tc.want)
		}
		steps, _ := d.Steps(ctx, StepFilter{})
		if len(steps) != 1 || steps[0].MedianMS != 100 {
			t.Errorf("%s: after the refusal the cache holds %+v, want the seed alone", tc.at, steps)
		}
	}
	for _, bad := range []measure.Step{
		{DeviceKey: "gpu:t4", Model: "resnet50", Batch: 32, Precision: measure.AMP, Framework: "x", Source: "lab", MedianMS: 1, Status: measure.OK,
			At: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
	} {
		if err := d.PutSteps(ctx, []measure.Step{bad}); err == nil || !strings.Contains(err.Error(), "after 2262-04-11") {
			t.Errorf("PutSteps at %v: %v", bad.At, err)
		}
	}

	// A row an older cnntime stored at an overflowed time, 2261-07-22: a genuine later
	// row replaces it.
	if _, err := d.sqldb().Exec(`UPDATE steps SET at = ?`, time.Date(2261, 7, 22, 0, 0, 0, 0, time.UTC).UnixNano()); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.csv")
	writeFile(t, good, header+row("70", "2026-03-03T12:00:00Z"))
	rep, err := d.Import(ctx, good)
	if err != nil || rep.Steps != (Merged{Replaced: 1}) {
		t.Fatalf("genuine row: %+v, %v; want it to replace the one from 2261", rep.Steps, err)
	}
	steps, _ := d.Steps(ctx, StepFilter{})
	if len(steps) != 1 || steps[0].MedianMS != 70 || steps[0].At.Year() != 2026 {
		t.Errorf("the cache holds %+v, want the genuine row of 2026", steps)
	}

	// The kernel measurement and loader-rate CSVs follow the same rule.
	if _, err := ParseLoaderRateCSV(strings.NewReader("loader,images_per_s_per_worker,workers,cpu,host,measured_at\npytorch,100,1,X,h,253402300799\n"), "rates.csv"); err == nil || !strings.Contains(err.Error(), "rates.csv line 2: measured_at 9999-12-31T23:59:59Z is after 2262-04-11") {
		t.Errorf("loader rate at 9999: %v", err)
	}
	layers := "device,config,batch_size,precision,phase,policy,algorithm,median_ms,spread_ms,repeats,workspace_bytes,status,sweep_id,measured_at,source,device_info\n" +
		"cuda:A,conv/1,32,fp32,forward,heuristic,,2,0,5,0,ok,,9999-12-31T23:59:59Z,,\n"
	if _, err := ParseMeasurementsCSV(strings.NewReader(layers), "layers.csv"); err == nil || !strings.Contains(err.Error(), "layers.csv line 2: measured_at 9999-12-31T23:59:59Z is after") {
		t.Errorf("kernel measurement at 9999: %v", err)
	}
}

// cacheWithSteps opens a new cache in dir, closed when the test ends, holding the steps of
// the step CSV text.
func cacheWithSteps(t *testing.T, dir, text string) *DB {
	t.Helper()
	d, err := Open(filepath.Join(dir, "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	seed := filepath.Join(dir, "seed.csv")
	writeFile(t, seed, text)
	if _, err := d.Import(context.Background(), seed); err != nil {
		t.Fatal(err)
	}
	return d
}
