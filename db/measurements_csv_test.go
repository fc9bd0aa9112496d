package db

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/measure"
)

// layersCSV is what scripts/pytorch_sweep.py --layers writes: the export's columns,
// policy empty on a CPU, sweep_id empty, the device described in device_info.
const layersCSV = `device,config,batch_size,precision,phase,policy,algorithm,median_ms,spread_ms,repeats,workspace_bytes,status,sweep_id,measured_at,source,device_info
cpu:box:AMD EPYC:pytorch-2-threads,"conv2d:in=3x32x32,out=64x16x16,k=7x7,s=2x2,p=3x3,d=1x1,g=1,bias=false",2,fp32,fwd,,,0.25,0.01,25,0,ok,,2026-11-25T09:36:29Z,pytorch_sweep.py --layers on box,"{""backend"":""cpu"",""name"":""AMD EPYC"",""sm_count"":2,""memory_bytes"":8589934592,""host"":""box""}"
cpu:box:AMD EPYC:pytorch-2-threads,"conv2d:in=3x32x32,out=64x16x16,k=7x7,s=2x2,p=3x3,d=1x1,g=1,bias=false",2,fp32,bwd_weights,,,0.5,0.02,25,0,ok,,2026-11-25T09:36:29Z,pytorch_sweep.py --layers on box,"{""backend"":""cpu"",""name"":""AMD EPYC"",""sm_count"":2,""memory_bytes"":8589934592,""host"":""box""}"
cpu:box:AMD EPYC:pytorch-2-threads,"batchnorm2d:in=512x1x1,out=512x1x1",1,fp32,fwd,,,,,0,0,unsupported,,2026-11-25T09:36:29Z,pytorch_sweep.py --layers on box,"{""backend"":""cpu"",""name"":""AMD EPYC"",""sm_count"":2,""memory_bytes"":8589934592,""host"":""box""}"
t4,conv/1,32,tf32,fwd,heuristic,IMPLICIT_GEMM,2,,,,ok,7,,,
`

func TestParseMeasurementsCSV(t *testing.T) {
	rows, err := ParseMeasurementsCSV(strings.NewReader(layersCSV), "layers.csv")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 9, 36, 29, 0, time.UTC)
	box := &measure.Device{Key: "cpu:box:AMD EPYC:pytorch-2-threads", Backend: "cpu", Name: "AMD EPYC", SMs: 2, MemoryBytes: 8 << 30, Host: "box"}
	conv := "conv2d:in=3x32x32,out=64x16x16,k=7x7,s=2x2,p=3x3,d=1x1,g=1,bias=false"
	want := []CSVMeasurement{
		{measure.Measurement{DeviceKey: box.Key, ConfigKey: conv, Batch: 2, Precision: measure.FP32, Phase: measure.Forward,
			MedianMS: 0.25, SpreadMS: 0.01, Repeats: 25, Status: measure.OK, At: at}, "pytorch_sweep.py --layers on box", box},
		{measure.Measurement{DeviceKey: box.Key, ConfigKey: conv, Batch: 2, Precision: measure.FP32, Phase: measure.BackwardWeights,
			MedianMS: 0.5, SpreadMS: 0.02, Repeats: 25, Status: measure.OK, At: at}, "pytorch_sweep.py --layers on box", box},
		{measure.Measurement{DeviceKey: box.Key, ConfigKey: "batchnorm2d:in=512x1x1,out=512x1x1", Batch: 1, Precision: measure.FP32,
			Phase: measure.Forward, Status: measure.Unsupported, At: at}, "pytorch_sweep.py --layers on box", box},
		// A catalog id is stored as gpu:<id>; the sweep id of another cache is dropped.
		{measure.Measurement{DeviceKey: "gpu:t4", ConfigKey: "conv/1", Batch: 32, Precision: measure.TF32, Phase: measure.Forward,
			Policy: measure.Heuristic, Algorithm: "IMPLICIT_GEMM", MedianMS: 2, Status: measure.OK}, "csv:layers.csv", nil},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("ParseMeasurementsCSV =\n%+v\nwant\n%+v", rows, want)
	}
}

func TestImportMeasurementsCSVMergesByKeyAndDescribesDevices(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	// The device is known by its key only (a sweep of another kind left it bare): the
	// import describes it.
	if err := d.PutMeasurements(ctx, []measure.Measurement{kernel("cpu:box:AMD EPYC:pytorch-2-threads", "old/1", 4, measure.Forward, 1)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "layers.csv")
	writeFile(t, path, layersCSV)
	rep, err := d.Import(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != "layers-csv" || rep.Measurements != (Merged{Added: 4}) || rep.Devices != 1 || rep.Configs != 3 {
		t.Errorf("first import report = %+v, want 4 measurements, 1 device (gpu:t4) and 3 configurations added", rep)
	}
	devs, err := d.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 || devs[0].Name != "AMD EPYC" || devs[0].SMs != 2 || devs[0].Host != "box" || devs[0].Backend != "cpu" {
		t.Errorf("devices after the import: %+v, want the CPU described by device_info", devs)
	}
	ms, err := d.Measurements(ctx, "cpu:box:AMD EPYC:pytorch-2-threads", nil)
	if err != nil || len(ms) != 4 {
		t.Fatalf("the CPU has %d measurements (%v), want 4", len(ms), err)
	}
	var sources []string
	rows, err := d.sqldb().QueryContext(ctx, `SELECT DISTINCT source FROM measurements ORDER BY source`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		rows.Scan(&s)
		sources = append(sources, s)
	}
	rows.Close()
	if !reflect.DeepEqual(sources, []string{"", "csv:layers.csv", "pytorch_sweep.py --layers on box"}) {
		t.Errorf("sources %q, want the sweep's own, the file's default and the rows' own", sources)
	}

	// The same file again changes nothing; a later measurement replaces, an earlier one does not.
	rep, err = d.Import(ctx, path)
	if err != nil || rep.Measurements != (Merged{Kept: 4}) || rep.Devices != 0 {
		t.Errorf("second import = %+v, %v; want 4 kept", rep, err)
	}
	later := strings.Replace(layersCSV, "0.25,0.01,25,0,ok,,2026-11-25T09:36:29Z", "0.3,0.01,25,0,ok,,2026-11-26T09:00:00Z", 1)
	earlier := strings.Replace(layersCSV, "0.5,0.02,25,0,ok,,2026-11-25T09:36:29Z", "0.9,0.02,25,0,ok,,2026-11-24T09:00:00Z", 1)
	rep, err = d.ImportCSV(ctx, strings.NewReader(later+earlier[strings.Index(earlier, "\n")+1:]), "again.csv")
	if err != nil || rep.Measurements.Replaced != 1 {
		t.Fatalf("import of a later measurement = %+v, %v; want 1 replaced", rep, err)
	}
	ms, _ = d.Measurements(ctx, "cpu:box:AMD EPYC:pytorch-2-threads", []string{"conv2d:in=3x32x32,out=64x16x16,k=7x7,s=2x2,p=3x3,d=1x1,g=1,bias=false"})
	for _, m := range ms {
		if m.Batch == 2 && m.Phase == measure.Forward && m.MedianMS != 0.3 || m.Phase == measure.BackwardWeights && m.MedianMS != 0.5 {
			t.Errorf("%s at batch %d: %g ms; want the later forward (0.3) and the kept weight gradient (0.5)", m.Phase, m.Batch, m.MedianMS)
		}
	}
}

// A measurement CSV written by the export reads back into another cache unchanged,
// devices described.
func TestMeasurementsCSVRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := openTemp(t)
	dev := measure.Device{Key: "cuda:A", Backend: "cuda", Name: "Tesla T4", GPUID: "t4", SMs: 40, ComputeCapability: "7.5", Host: "lab"}
	if err := src.PutDevice(ctx, dev); err != nil {
		t.Fatal(err)
	}
	oom := kernel("cuda:A", "conv/1", 4096, measure.BackwardData, 0)
	oom.Status = measure.OutOfMemory
	want := []measure.Measurement{kernel("cuda:A", "conv/1", 32, measure.Forward, 2), oom, kernel("cpu:h:m", "relu/1", 8, measure.Forward, 0.1)}
	if err := src.PutMeasurements(ctx, want); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := src.ExportMeasurementsCSV(ctx, &buf, ExportFilter{}); err != nil {
		t.Fatal(err)
	}
	dst := openTemp(t)
	rep, err := dst.ImportCSV(ctx, &buf, "export.csv")
	if err != nil || rep.Measurements != (Merged{Added: 3}) {
		t.Fatalf("import of the export = %+v, %v; want 3 added", rep, err)
	}
	got, err := dst.Measurements(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSorted, _ := src.Measurements(ctx, "", nil)
	if !reflect.DeepEqual(got, wantSorted) {
		t.Errorf("measurements after the round trip:\n%+v\nwant\n%+v", got, wantSorted)
	}
	devs, _ := dst.Devices(ctx)
	if len(devs) != 2 || devs[1] != dev {
		t.Errorf("devices after the round trip: %+v, want %+v described", devs, dev)
	}
}

func TestImportMeasurementsCSVRefusesBadRows(t *testing.T) {
	header := "device,config,batch_size,precision,phase,median_ms,status\n"
	row := "cuda:A,conv/1,32,fp32,fwd,2,ok\n"
	tests := []struct {
		name, csv string
		wantErr   []string
	}{
		{"unknown phase", header + row + "cuda:A,conv/1,32,fp32,backward,2,ok\n", []string{"line 3", `unknown phase "backward"`}},
		{"negative time", header + "cuda:A,conv/1,32,fp32,fwd,-2,ok\n", []string{"line 2", "negative"}},
		{"unknown column", strings.Replace(header, "median_ms", "median", 1) + row, []string{"line 1", `unknown column "median"`}},
		{"missing column", strings.Replace(header, ",phase", "", 1) + "cuda:A,conv/1,32,fp32,2,ok\n", nil}, // read as a step CSV then
		{"bad device description", "device,config,batch_size,precision,phase,median_ms,status,device_info\ncuda:A,conv/1,32,fp32,fwd,2,ok,\"{\"\"cores\"\":2}\"\n",
			[]string{"line 2", "device_info"}},
		{"unknown policy", "device,config,batch_size,precision,phase,median_ms,status,policy\ncuda:A,conv/1,32,fp32,fwd,2,ok,fast\n",
			[]string{"line 2", `unknown algorithm policy "fast"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := openTemp(t)
			_, err := d.ImportCSV(context.Background(), strings.NewReader(tc.csv), "bad.csv")
			if err == nil {
				t.Fatal("import succeeded, want an error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), "not changed") {
				t.Errorf("error %q does not say the cache was not changed", err)
			}
			if ms, _ := d.Measurements(context.Background(), "", nil); len(ms) != 0 {
				t.Errorf("%d measurements after a refused import", len(ms))
			}
		})
	}
}
