package kernels

import (
	"math"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// A phase the cost model runs no kernel for (batch norm's weight gradient, fused into
// its data gradient on cuDNN) is still answered from a device's own measurements: the
// CPU backend runs it as a separate kernel and its time must count.
func TestMeasurementWinsOverNoKernel(t *testing.T) {
	bn := cnn.Config{Op: cnn.OpBatchNorm, In: cnn.Shape{C: 64, H: 8, W: 8}, Out: cnn.Shape{C: 64, H: 8, W: 8}, NumInputs: 1}
	flatten := cnn.Config{Op: cnn.OpFlatten, In: cnn.Shape{C: 512, H: 1, W: 1}, Out: cnn.Shape{C: 512, H: 1, W: 1}, NumInputs: 1}
	cpuDev := measure.Device{Key: "cpu:host", Backend: "cpu"}
	at := func(c cnn.Config, ph measure.Phase, b int, ms float64) measure.Measurement {
		x := meas("cpu:host", c.Key(), b, ms)
		x.Phase, x.Policy = ph, measure.NoPolicy
		return x
	}
	m := NewModel(PriorCalibration(), nil, []measure.Device{cpuDev}, []measure.Measurement{
		at(bn, measure.BackwardWeights, 2, 0.4), at(bn, measure.BackwardWeights, 4, 0.8),
		at(flatten, measure.Forward, 4, 0.01),
	})
	cpu := Device{GPU: hw.GPU{ID: "cpu"}, Key: cpuDev.Key}
	tests := []struct {
		name   string
		dev    Device
		c      cnn.Config
		phase  measure.Phase
		batch  int
		ms     float64
		source Source
	}{
		{"measured weight gradient", cpu, bn, measure.BackwardWeights, 4, 0.8, Measured},
		{"interpolated weight gradient", cpu, bn, measure.BackwardWeights, 3, 0.6, Interpolated},
		{"measured view copy", cpu, flatten, measure.Forward, 4, 0.01, Measured},
		{"a GPU never borrows a CPU measurement", Device{GPU: v100}, bn, measure.BackwardWeights, 4, 0, Estimated},
		{"unmeasured on the CPU: no kernel", cpu, flatten, measure.BackwardWeights, 4, 0, Estimated},
	}
	for _, tc := range tests {
		out := make([]Estimate, 1)
		m.Times(tc.dev, Request{Config: tc.c, Phase: tc.phase, Precision: measure.FP32, Policy: measure.NoPolicy}, []int{tc.batch}, out)
		if out[0].Source != tc.source || out[0].MS < tc.ms*(1-1e-9) || out[0].MS > tc.ms*(1+1e-9) {
			t.Errorf("%s: %.4g ms (%s), want %.4g ms (%s)", tc.name, out[0].MS, out[0].Source, tc.ms, tc.source)
		}
	}
}

// A GPU the cache never measured is transferred from cnntime's worker's rows of the most
// similar GPU, not from PyTorch's layer rows of the same GPU ("cuda:…:pytorch"), even
// where PyTorch's cover more batch sizes; PyTorch's rows serve where the worker measured
// nothing, and a GPU of the target's own architecture still wins over either.
func TestTransferPrefersWorkerRowsOverPyTorchs(t *testing.T) {
	c := conv(128, 128, 28, 3, 1)
	key := c.Key()
	h100 := hw.GPU{ID: "h100-sxm", Architecture: "Hopper", ComputeCapability: "9.0", SMs: 132, BoostClockMHz: 1980,
		FP32TFLOPS: 67, TF32TFLOPS: 494.7, FP16TFLOPS: 989.4, MemoryBandwidthGBs: 3350}
	worker, pytorch := "cuda:GPU-9f", "cuda:GPU-9f"+measure.PyTorchGPUSuffix
	devices := []measure.Device{
		{Key: pytorch, Backend: "cuda", GPUID: a100.ID},
		{Key: worker, Backend: "cuda", GPUID: a100.ID},
		{Key: "cuda:GPU-v100" + measure.PyTorchGPUSuffix, Backend: "cuda", GPUID: v100.ID},
	}
	ms := []measure.Measurement{
		meas(worker, key, 16, 0.30),
		meas(pytorch, key, 8, 0.50), meas(pytorch, key, 16, 0.60), meas(pytorch, key, 32, 0.90),
		meas("cuda:GPU-v100"+measure.PyTorchGPUSuffix, key, 16, 0.70),
	}
	other := conv(64, 64, 56, 3, 1)
	ms = append(ms, meas(pytorch, other.Key(), 16, 0.40), meas("cuda:GPU-v100"+measure.PyTorchGPUSuffix, other.Key(), 16, 0.80))
	m := NewModel(PriorCalibration(), []hw.GPU{a100, v100, h100}, devices, ms)
	est := func(g hw.GPU, c cnn.Config) float64 {
		x, _ := EstimateMS(m.Calibration(), c, measure.Forward, g, measure.FP32, 16)
		return x
	}
	tests := []struct {
		name string
		c    cnn.Config
		want float64
	}{
		{"the worker's A100 rows, though PyTorch's have more batch sizes", c, 0.30 * est(h100, c) / est(a100, c)},
		{"PyTorch's A100 rows where the worker measured nothing", other, 0.40 * est(h100, other) / est(a100, other)},
	}
	for _, tc := range tests {
		out := make([]Estimate, 1)
		m.Times(Device{GPU: h100}, Request{Config: tc.c, Phase: measure.Forward, Precision: measure.FP32, Policy: measure.Heuristic}, []int{16}, out)
		if out[0].Source != Transferred || math.Abs(out[0].MS-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: %.6g ms (%s), want %.6g ms transferred", tc.name, out[0].MS, out[0].Source, tc.want)
		}
	}
}
