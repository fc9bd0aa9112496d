package kernels

import (
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
