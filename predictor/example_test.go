package predictor_test

import (
	"fmt"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// Predict a CPU's training step of a small CNN from its kernels' measured times: every
// phase of every layer took 0.5 ms, so the step is their sum (CPUOverheads adds nothing).
func Example() {
	net, err := cnn.Build("squeezenet1_1", cnn.Options{Resolution: 32, Classes: 10})
	if err != nil {
		panic(err)
	}
	dev := measure.Device{Key: "cpu:example", Name: "Example CPU", Backend: "cpu"}
	var ms []measure.Measurement
	seen := map[string]bool{}
	phases := 0
	for i := range net.Layers {
		l := &net.Layers[i]
		for _, ph := range predictor.EveryPhaseKernels.Phases(l) {
			phases++
			if k := l.Config.Key() + string(ph); !seen[k] {
				seen[k] = true
				ms = append(ms, measure.Measurement{DeviceKey: dev.Key, ConfigKey: l.Config.Key(), Batch: 8, Precision: measure.FP32,
					Phase: ph, Policy: measure.NoPolicy, MedianMS: 0.5, Repeats: 1, Status: measure.OK})
			}
		}
	}
	eng := predictor.NewEngine(kernels.NewModel(nil, nil, []measure.Device{dev}, ms), predictor.CPUOverheads, predictor.DefaultMemoryModel)
	c, err := eng.Curve(predictor.Request{Network: net, Machine: hw.Machine{ID: "cpu", GPUCount: 1},
		GPU: hw.GPU{ID: "cpu", Name: dev.Name, Architecture: "CPU"}, DeviceKey: dev.Key,
		Precision: measure.FP32, Policy: measure.NoPolicy, Batches: []int{8},
		Run: predictor.Run{Epochs: 1, Images: 8}, Kernels: predictor.EveryPhaseKernels})
	if err != nil {
		panic(err)
	}
	p := c.Points[0]
	fmt.Printf("%d kernel phases × 0.5 ms = %.1f ms per step of batch %d (%s)\n", phases, p.IterMS, p.Batch, p.Source)
	// Output:
	// 159 kernel phases × 0.5 ms = 79.5 ms per step of batch 8 (measured)
}
