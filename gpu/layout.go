package gpu

import (
	"fmt"
	"strings"

	"cnntime/predictor/measure"
)

// The activations' layouts a GPU sweep measures in: PyTorch's default (contiguous,
// NCHW) and channels_last (NHWC), where cuDNN's tensor-core convolutions read and write
// without transposes.
const (
	NCHW = "nchw"
	NHWC = "nhwc"
)

// NHWCSuffix ends the device key of the rows a sweep measured in NHWC
// ("cuda:GPU-<uuid>:nhwc"): the same GPU, kernels of another layout, kept apart from its
// NCHW rows as PyTorch's own rows are (measure.PyTorchGPUSuffix).
const NHWCSuffix = ":" + NHWC

// LayoutKey is the device key a measurement of the device of key in layout is stored
// under: the key itself for NCHW (or ""), the key with NHWCSuffix for NHWC.
func LayoutKey(key, layout string) string {
	if layout == NHWC && !strings.HasSuffix(key, NHWCSuffix) {
		return key + NHWCSuffix
	}
	return key
}

// CheckLayout accepts "" (NCHW), nchw or nhwc.
func CheckLayout(layout string) error {
	switch layout {
	case "", NCHW, NHWC:
		return nil
	}
	return fmt.Errorf("unknown memory layout %q: use nchw or nhwc", layout)
}

// LayoutSetter is implemented by backends that can measure in NHWC (channels_last).
type LayoutSetter interface {
	SetLayout(layout string) error
}

// KernelPrecision is the arithmetic an item runs in within a job: its own (a sweep in
// PyTorch's fp32 measures convolutions in TF32 and the rest in FP32), else the job's.
func (it Item) KernelPrecision(job measure.Precision) measure.Precision {
	if it.Precision != "" {
		return it.Precision
	}
	return job
}
