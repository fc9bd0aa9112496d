package db

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// damagedCache writes a cache of a few hundred measurements at path and overwrites the
// header of one of its b-tree pages, as a failing disk or a stray write would: the file
// still opens, and its first page (the schema) reads.
func damagedCache(t *testing.T, path string) {
	t.Helper()
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]measure.Measurement, 400)
	for i := range ms {
		ms[i] = kernel("cpu:h:damage", "conv/damage", i+1, measure.Forward, float64(i)+1)
	}
	if err := d.PutMeasurements(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	d.Close()
	h, size, err := readHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	page := size/h.pageSize - 1 // the last page: a table's or an index's
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0x55, 0xaa, 0x55, 0xaa, 0x55, 0xaa, 0x55, 0xaa}, page*h.pageSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A cache with a damaged page takes no write (it would add to a file that already lost
// data) and its Info says it is damaged instead of counting what it holds.
func TestDamagedCacheRefusesWritesAndSaysSo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.db")
	damagedCache(t, path)
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	info, err := d.Info(ctx)
	if err != nil || info.Damage == "" {
		t.Fatalf("Info = %+v, %v; want the damage named", info, err)
	}
	other := filepath.Join(dir, "steps.csv")
	if err := os.WriteFile(other, []byte("gpu,model,batch_size,precision,framework,step_ms,spread_ms,status,source\nt4,m,1,fp32,f,1,,ok,s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writes := []struct {
		name string
		do   func() error
	}{
		{"a price override", func() error { return d.SetPriceOverride(ctx, "aws/p3.2xlarge", 2) }},
		{"a user machine", func() error {
			return d.PutUserMachine(ctx, hw.Machine{ID: "user/lab", GPUID: "t4", GPUCount: 1})
		}},
		{"an import", func() error { _, err := d.Import(ctx, other); return err }},
		{"steps", func() error {
			return d.PutSteps(ctx, []measure.Step{{DeviceKey: "gpu:t4", Model: "m", Batch: 1, Precision: measure.FP32,
				Framework: "f", Source: "s", MedianMS: 1, Status: measure.OK}})
		}},
	}
	for _, w := range writes {
		if err := w.do(); err == nil || !strings.Contains(err.Error(), "is damaged") || !strings.Contains(err.Error(), "restore it from a copy") {
			t.Errorf("%s into a damaged cache: error %v, want one saying it is damaged", w.name, err)
		}
	}
	if intact, err := Open(filepath.Join(dir, "intact.db")); err != nil {
		t.Fatal(err)
	} else {
		defer intact.Close()
		if info, err := intact.Info(ctx); err != nil || info.Damage != "" {
			t.Errorf("an intact cache's Info = %+v, %v", info, err)
		}
		if err := intact.SetPriceOverride(ctx, "aws/p3.2xlarge", 2); err != nil {
			t.Errorf("a write into an intact cache: %v", err)
		}
	}
}
