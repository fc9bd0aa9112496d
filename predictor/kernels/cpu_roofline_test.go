package kernels

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

func cpuMeas(dev string, c cnn.Config, phase measure.Phase, batch int, ms float64) measure.Measurement {
	m := meas(dev, c.Key(), batch, ms)
	m.Phase, m.Policy = phase, measure.NoPolicy
	return m
}

func TestCPUWork(t *testing.T) {
	c := conv(16, 32, 8, 3, 1) // 8×8 output, 16·9 reduction
	bn := cnn.Config{Op: cnn.OpBatchNorm, In: cnn.Shape{C: 32, H: 8, W: 8}, Out: cnn.Shape{C: 32, H: 8, W: 8}, NumInputs: 1}
	flat := cnn.Config{Op: cnn.OpFlatten, In: cnn.Shape{C: 32, H: 2, W: 2}, Out: cnn.Shape{C: 128, H: 1, W: 1}, NumInputs: 1}
	tests := []struct {
		name         string
		c            cnn.Config
		phase        measure.Phase
		n            int
		flops, bytes float64
	}{
		{"conv forward: 2·M·N·K, input+output+weights", c, measure.Forward, 2, 2 * (64 * 2) * 32 * (16 * 9), (2*(16*64+32*64) + 16*32*9) * 4},
		{"conv weight gradient: the batch grows the reduction", c, measure.BackwardWeights, 3, 2 * 32 * (16 * 9) * (64 * 3), (3*(16*64+32*64) + 16*32*9) * 4},
		{"batch norm weight gradient is a pass of its own on the CPU", bn, measure.BackwardWeights, 4, 0, 4 * (2048 + 2048) * 4},
		{"a view copies its input", flat, measure.Forward, 5, 0, 5 * (128 + 128) * 4},
		{"no batch, no work", c, measure.Forward, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flops, bytes := CPUWork(tt.c, tt.phase, tt.n)
			if flops != tt.flops || bytes != tt.bytes {
				t.Errorf("CPUWork = %g FLOPs, %g bytes; want %g, %g", flops, bytes, tt.flops, tt.bytes)
			}
		})
	}
}

// synthetic measurements of a CPU that reaches exactly gflops and gbs: the fit must
// find both rates and no error.
func TestFitCPURoofline(t *testing.T) {
	const gflops, gbs = 40.0, 8.0
	convs := []cnn.Config{conv(16, 32, 8, 3, 1), conv(32, 64, 8, 1, 1), conv(32, 32, 16, 3, 2)}
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 32, H: 8, W: 8}, Out: cnn.Shape{C: 32, H: 8, W: 8}, NumInputs: 1}
	pool := cnn.Config{Op: cnn.OpMaxPool, In: cnn.Shape{C: 32, H: 8, W: 8}, Out: cnn.Shape{C: 32, H: 4, W: 4}, NumInputs: 1,
		Kernel: cnn.Pair{2, 2}, Stride: cnn.Pair{2, 2}}
	configs := map[string]cnn.Config{}
	var ms []measure.Measurement
	for _, c := range append(convs, relu, pool) {
		configs[c.Key()] = c
		for _, b := range []int{1, 2, 4} {
			flops, bytes := CPUWork(c, measure.Forward, b)
			t := bytes / (gbs * 1e9)
			if ClassOf(c) != ClassMemory {
				t = flops / (gflops * 1e9)
			}
			ms = append(ms, cpuMeas("cpu:h", c, measure.Forward, b, t*1000))
		}
	}
	unknown := cpuMeas("cpu:h", conv(3, 8, 8, 3, 1), measure.Forward, 1, 1e6) // its configuration is not given: left out
	oom := cpuMeas("cpu:h", convs[0], measure.Forward, 8, 1e6)
	oom.Status = measure.OutOfMemory
	r, err := FitCPURoofline(append(ms, unknown, oom), configs)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.GFLOPS-gflops) > 1e-9*gflops || math.Abs(r.GBs-gbs) > 1e-9*gbs || r.Kernels != len(ms) {
		t.Errorf("fit = %+v; want %g GFLOP/s, %g GB/s over %d kernels", r, gflops, gbs, len(ms))
	}
	// The GEMM kernels' memory traffic is below their arithmetic time at these rates,
	// so the roofline reproduces every synthetic measurement.
	if r.RelErr > 1e-9 {
		t.Errorf("relative error %g on its own synthetic measurements; want 0", r.RelErr)
	}
	for _, m := range ms {
		if got := r.MS(configs[m.ConfigKey], m.Phase, m.Batch); math.Abs(got-m.MedianMS) > 1e-9*m.MedianMS {
			t.Errorf("MS(%s, batch %d) = %g; want %g", m.ConfigKey, m.Batch, got, m.MedianMS)
		}
	}

	onlyMemory := map[string]cnn.Config{relu.Key(): relu}
	if _, err := FitCPURoofline(ms, onlyMemory); err == nil || !strings.Contains(err.Error(), "0 GEMM kernels") {
		t.Errorf("a fit without GEMM kernels: err = %v; want one saying so", err)
	}
}

func TestFitCPURooflineMedian(t *testing.T) {
	c := conv(16, 16, 8, 3, 1)
	relu := cnn.Config{Op: cnn.OpReLU, In: cnn.Shape{C: 16, H: 8, W: 8}, Out: cnn.Shape{C: 16, H: 8, W: 8}, NumInputs: 1}
	configs := map[string]cnn.Config{c.Key(): c, relu.Key(): relu}
	flops, _ := CPUWork(c, measure.Forward, 1)
	_, bytes := CPUWork(relu, measure.Forward, 1)
	// Three GEMM measurements at 10, 20 and 80 GFLOP/s and one memory-bound at 5 GB/s.
	var ms []measure.Measurement
	for i, rate := range []float64{10, 20, 80} {
		ms = append(ms, cpuMeas("cpu:h", c, measure.Forward, 1, flops/(rate*1e9)*1000))
		ms[i].Batch = i + 1 // batches 1, 2, 3: a forward GEMM grows with the batch, the rate stands
		ms[i].MedianMS *= float64(i + 1)
	}
	ms = append(ms, cpuMeas("cpu:h", relu, measure.Forward, 1, bytes/(5e9)*1000))
	r, err := FitCPURoofline(ms, configs)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.GFLOPS-20) > 1e-9 || math.Abs(r.GBs-5) > 1e-9 {
		t.Errorf("fit = %+v; want the median 20 GFLOP/s and 5 GB/s", r)
	}
	// Errors: 10 GFLOP/s measured, 20 predicted → |t/2 − t|/t = 0.5; 20 → 0; 80 → 3; relu 0.
	if math.Abs(r.RelErr-0.25) > 1e-9 {
		t.Errorf("relative error %g; want the median of 0.5, 0, 3, 0 = 0.25", r.RelErr)
	}
}

func TestCPUTimerSources(t *testing.T) {
	measured := conv(16, 32, 8, 3, 1)
	unmeasured := conv(32, 32, 8, 3, 1)
	cpuDev := measure.Device{Key: "cpu:h", Backend: "cpu"}
	gpuDev := measure.Device{Key: "cuda:v100", Backend: "cuda", GPUID: v100.ID}
	ms := []measure.Measurement{
		cpuMeas("cpu:h", measured, measure.Forward, 1, 2), cpuMeas("cpu:h", measured, measure.Forward, 4, 8),
		meas("cuda:v100", unmeasured.Key(), 2, 0.01), // a GPU's measurement is never transferred to the CPU
	}
	model := NewModel(PriorCalibration(), []hw.GPU{v100}, []measure.Device{cpuDev, gpuDev}, ms)
	roof := CPURoofline{GFLOPS: 25, GBs: 6, RelErr: 0.2}
	timer := CPUTimer{Model: model, Roofline: roof}
	dev := Device{GPU: hw.HostCPU("test CPU", 2, 8, 0.025, 6, ""), Key: "cpu:h"}
	tests := []struct {
		name   string
		c      cnn.Config
		batch  int
		source Source
		ms     float64
	}{
		{"measured", measured, 4, Measured, 8},
		{"between measured batches", measured, 2, Interpolated, 4},
		{"never measured on the CPU: its roofline, though a GPU measured it", unmeasured, 2, Estimated, roof.MS(unmeasured, measure.Forward, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := make([]Estimate, 1)
			timer.Times(dev, Request{Config: tt.c, Phase: measure.Forward, Precision: measure.FP32, Policy: measure.NoPolicy}, []int{tt.batch}, out)
			if out[0].Source != tt.source || math.Abs(out[0].MS-tt.ms) > 1e-9*tt.ms {
				t.Errorf("got %.6g ms %s; want %.6g ms %s", out[0].MS, out[0].Source, tt.ms, tt.source)
			}
			if tt.source == Estimated && out[0].RelErr != roof.RelErr {
				t.Errorf("error band %g; want the roofline's %g", out[0].RelErr, roof.RelErr)
			}
		})
	}
}
