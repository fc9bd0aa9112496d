package db_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cnntime/db"
	"cnntime/predictor/measure"
)

// Open a cache, store a kernel measurement, and read back what it holds per device.
func Example() {
	dir, err := os.MkdirTemp("", "cnntime-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cache, err := db.Open(filepath.Join(dir, "cache.db"))
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	ctx := context.Background()
	m := measure.Measurement{DeviceKey: "cpu:example", ConfigKey: "conv/1", Batch: 32, Precision: measure.FP32,
		Phase: measure.Forward, Policy: measure.NoPolicy, MedianMS: 2.5, Repeats: 3, Status: measure.OK,
		At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := cache.PutMeasurements(ctx, []measure.Measurement{m}); err != nil {
		panic(err)
	}
	ms, err := cache.Measurements(ctx, "cpu:example", nil)
	if err != nil {
		panic(err)
	}
	counts, err := cache.CountsByDevice(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s at batch %d: %.1f ms\n", ms[0].ConfigKey, ms[0].Batch, ms[0].MedianMS)
	fmt.Printf("cpu:example holds %d kernels\n", counts["cpu:example"].Kernels)
	// Output:
	// conv/1 at batch 32: 2.5 ms
	// cpu:example holds 1 kernels
}
