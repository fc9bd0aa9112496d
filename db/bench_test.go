package db

import (
	"context"
	"fmt"
	"testing"

	"cnntime/predictor/measure"
)

// BenchmarkPutMeasurements inserts new measurements in transactions of 1,000, as a
// sweep saves its results; rows/s is the figure to read (target ≥ 50,000).
func BenchmarkPutMeasurements(b *testing.B) {
	ctx := context.Background()
	d := openTemp(b)
	const batch = 1000
	n := 0
	for b.Loop() {
		ms := make([]measure.Measurement, batch)
		for i := range ms {
			ms[i] = kernel("cuda:bench", fmt.Sprintf("conv/%d", n/64), n%64+1, measure.Forward, 1.5)
			n++
		}
		if err := d.PutMeasurements(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
}

// benchCache fills a cache with 100,000 measurements of one device: 1,000 layer
// configurations × 3 phases × 33 batch sizes (plus one).
func benchCache(b *testing.B) (*DB, []string) {
	ctx := context.Background()
	d := openTemp(b)
	var configs []string
	var ms []measure.Measurement
	for c := 0; len(ms) < 100_000; c++ {
		key := fmt.Sprintf("conv2d/%d", c)
		configs = append(configs, key)
		for _, phase := range measure.Phases {
			for batch := 1; batch <= 33 && len(ms) < 100_000; batch++ {
				ms = append(ms, kernel("cuda:bench", key, batch*8, phase, float64(batch)))
			}
		}
	}
	if err := d.PutMeasurements(ctx, ms); err != nil {
		b.Fatal(err)
	}
	return d, configs
}

// BenchmarkMeasurementsOfModel is the predictor's query: one device's measurements of
// one CNN's layer configurations (60 of them, ResNet-50's count) in a cache of 100,000
// rows (target ≤ 20 ms).
func BenchmarkMeasurementsOfModel(b *testing.B) {
	d, configs := benchCache(b)
	set := make([]string, 0, 60)
	for i := 0; i < 60; i++ {
		set = append(set, configs[i*len(configs)/60])
	}
	rows := 0
	for b.Loop() {
		ms, err := d.Measurements(context.Background(), "cuda:bench", set)
		if err != nil {
			b.Fatal(err)
		}
		rows = len(ms)
	}
	b.ReportMetric(float64(rows), "rows/op")
}

// BenchmarkMeasurementsOfDevice reads back all 100,000 measurements of the device.
func BenchmarkMeasurementsOfDevice(b *testing.B) {
	d, _ := benchCache(b)
	rows := 0
	for b.Loop() {
		ms, err := d.Measurements(context.Background(), "cuda:bench", nil)
		if err != nil {
			b.Fatal(err)
		}
		rows = len(ms)
	}
	b.ReportMetric(float64(rows), "rows/op")
}
