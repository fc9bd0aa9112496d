package validate

import (
	"context"
	"math"
	"testing"

	"cnntime/gpu/cpu"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// The CPU step the predictor composes is exactly the sum of its layers' phases, each
// measured alone (CPUOverheads adds nothing): fixed layer timings, two CNNs × two batch
// sizes. The real-timing comparison is `cnntime validate` (table 1) and
// BenchmarkMeasureCPU; a test on a shared machine cannot assert a timing.
func TestCPUStepIsTheSumOfItsLayers(t *testing.T) {
	dev := cpu.New().Device()
	batches := []int{1, 4}
	var nets []*cnn.Network
	for _, name := range []string{"squeezenet1_1", "mobilenet_v2"} {
		net, err := cnn.Build(name, cnn.Options{Resolution: 32, Classes: 10})
		if err != nil {
			t.Fatal(err)
		}
		nets = append(nets, net)
	}
	// Every distinct (configuration, batch, phase) gets its own time: 0.25 ms × its
	// order of appearance × the batch, so a phase counted twice or left out shows.
	type key struct {
		cfg   string
		batch int
		phase measure.Phase
	}
	timing := map[key]float64{}
	var ms []measure.Measurement
	want := map[string][]float64{}
	for _, net := range nets {
		for _, b := range batches {
			step := 0.0
			for i := range net.Layers {
				l := &net.Layers[i]
				for _, ph := range predictor.EveryPhaseKernels.Phases(l) {
					k := key{l.Config.Key(), b, ph}
					if _, ok := timing[k]; !ok {
						timing[k] = 0.25 * float64(len(timing)+1) * float64(b)
						ms = append(ms, measure.Measurement{DeviceKey: dev.Key, ConfigKey: k.cfg, Batch: b, Precision: measure.FP32,
							Phase: ph, Policy: measure.NoPolicy, MedianMS: timing[k], Repeats: 1, Status: measure.OK})
					}
					step += timing[k]
				}
			}
			want[net.Name] = append(want[net.Name], step)
		}
	}
	got, err := PredictCPUSteps(nil, dev, nets, batches, ms)
	if err != nil {
		t.Fatal(err)
	}
	for _, net := range nets {
		for i, b := range batches {
			if g, w := got[net.Name][i], want[net.Name][i]; math.Abs(g-w) > 1e-9*w {
				t.Errorf("%s at batch %d: predicted step %.6f ms, want the sum of its layers' phases %.6f ms", net.Name, b, g, w)
			}
		}
	}
}

func TestMeasureCPURejectsEmptyOptions(t *testing.T) {
	good := CPUOptions{Models: []string{"squeezenet1_1"}, Batches: []int{1}, Input: 32, Rounds: 1, Repeats: 1}
	tests := []struct {
		name   string
		change func(*CPUOptions)
	}{
		{"no models", func(o *CPUOptions) { o.Models = nil }},
		{"no batches", func(o *CPUOptions) { o.Batches = nil }},
		{"no rounds", func(o *CPUOptions) { o.Rounds = 0 }},
		{"no repeats", func(o *CPUOptions) { o.Repeats = 0 }},
		{"no input", func(o *CPUOptions) { o.Input = 0 }},
		{"unknown model", func(o *CPUOptions) { o.Models = []string{"resnet9000"} }},
	}
	for _, tc := range tests {
		o := good
		tc.change(&o)
		if acc, err := MeasureCPU(context.Background(), nil, o, nil); err == nil {
			t.Errorf("%s: no error, got %+v", tc.name, acc)
		}
	}
}

// BenchmarkMeasureCPU measures a reduced table 1 of `cnntime validate` on this
// machine's CPU and reports its MAPE: the real-timing check the tests cannot make.
func BenchmarkMeasureCPU(b *testing.B) {
	opts := CPUOptions{Models: []string{"squeezenet1_1", "mobilenet_v2"}, Batches: []int{1, 4}, Input: 32, Rounds: 3, Repeats: 2}
	for b.Loop() {
		acc, err := MeasureCPU(context.Background(), nil, opts, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(acc.MAPEPct, "mape_%")
	}
}
