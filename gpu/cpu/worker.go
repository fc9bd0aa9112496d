package cpu

import (
	"fmt"

	"cnntime/gpu"
	"cnntime/predictor/measure"
)

// Worker serves the CPU backend over the worker protocol (gpu.Serve): one device, index 0.
// The protocol's tests use it as a worker process that runs on any machine.
type Worker struct{}

// Devices lists this machine's CPU.
func (Worker) Devices() ([]measure.Device, error) { return []measure.Device{New().Device()}, nil }

// Open returns the CPU backend for index 0.
func (Worker) Open(index int) (gpu.Backend, error) {
	if index != 0 {
		return nil, fmt.Errorf("there is no CPU device %d: the CPU is device 0", index)
	}
	return New(), nil
}
