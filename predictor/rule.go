package predictor

import (
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// KernelRule says which kernels a backend runs for each layer of a training step.
type KernelRule int

const (
	// FrameworkKernels is PyTorch (on cuDNN, or on the CPU) as cnn.Layer.Phases
	// describes it: batch norm's backward is one fused kernel, views run nothing, add
	// and concat pass their gradient on without a kernel, and a layer on the image
	// computes no input gradient.
	FrameworkKernels KernelRule = iota
	// EveryPhaseKernels is the CPU backend: every layer runs its forward pass (views
	// copy), a data gradient unless all its inputs are the image, and a weight
	// gradient when it has parameters.
	EveryPhaseKernels
)

// Phases lists the kernels layer l runs under rule r, in execution order: a shared
// list (cnn.PhaseList), to read and never change.
func (r KernelRule) Phases(l *cnn.Layer) []measure.Phase {
	if r == FrameworkKernels {
		return l.Phases()
	}
	return cnn.PhaseList(needsDataGradient(l), l.Params > 0)
}

// CPUKernels is the kernel rule of a measured CPU device: PyTorch's (FrameworkKernels)
// for a CPU that PyTorch measured (scripts/pytorch_sweep.py --layers times exactly the
// phases PyTorch runs), the Go CPU backend's (EveryPhaseKernels) for the others.
func CPUKernels(deviceKey string) KernelRule {
	if measure.CPUFramework(deviceKey) == measure.FrameworkPyTorch {
		return FrameworkKernels
	}
	return EveryPhaseKernels
}
