package measure

import (
	"fmt"
	"strings"
	"time"
)

// Phase is the part of a training step a kernel time belongs to.
type Phase string

const (
	Forward         Phase = "fwd"
	BackwardData    Phase = "bwd_data"    // gradient with respect to the layer's input
	BackwardWeights Phase = "bwd_weights" // gradient with respect to its parameters
)

// Phases lists the layer phases in execution order.
var Phases = []Phase{Forward, BackwardData, BackwardWeights}

// Precision is the arithmetic a kernel or a training step ran in.
//
// Kernel precisions: FP32 (strict IEEE FP32), TF32 (tensor cores with TF32 inputs),
// AMP (FP16 tensor cores, FP32 accumulate).
// Training precisions, as the predictor and PyTorch name them: FP32 (PyTorch's default:
// TF32 convolutions on Ampere and later), FP32Strict (TF32 off everywhere), AMP.
type Precision string

const (
	FP32       Precision = "fp32"
	FP32Strict Precision = "fp32-strict"
	TF32       Precision = "tf32"
	AMP        Precision = "amp"
	BF16       Precision = "bf16"
)

// Precisions lists every precision ParsePrecision accepts, in the order help shows them.
var Precisions = []Precision{FP32, FP32Strict, TF32, AMP, BF16}

// ParsePrecision accepts one of Precisions.
func ParsePrecision(s string) (Precision, error) {
	for _, p := range Precisions {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown precision %q: use fp32, fp32-strict, tf32, amp or bf16", s)
}

// Policy is how cuDNN's convolution algorithm is chosen.
type Policy string

const (
	Heuristic Policy = "heuristic" // cudnnGet*Algorithm_v7, PyTorch's cudnn.benchmark=False
	Fastest   Policy = "fastest"   // cudnnFind*Algorithm, PyTorch's cudnn.benchmark=True
	NoPolicy  Policy = ""          // backends without a choice (CPU)
)

// Policies lists the policies ParsePolicy accepts, in the order help shows them.
var Policies = []Policy{Heuristic, Fastest}

// ParsePolicy accepts one of Policies: "heuristic" or "fastest".
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown algorithm policy %q: use heuristic or fastest", s)
}

// Status says whether a measurement has a time.
type Status string

const (
	OK          Status = "ok"
	OutOfMemory Status = "oom"         // the batch does not fit: marks where the batch range ends
	Unsupported Status = "unsupported" // the backend cannot run this configuration
)

// Device identifies a measured processor and the software it ran.
type Device struct {
	Key               string `json:"key"`     // stable identity: "cuda:<UUID>" or "cpu:<host>:<model>"
	Backend           string `json:"backend"` // "cuda" or "cpu"
	Name              string `json:"name"`
	UUID              string `json:"uuid,omitempty"`
	GPUID             string `json:"gpu_id,omitempty"` // the catalog GPU it is, where known
	ComputeCapability string `json:"compute_capability,omitempty"`
	SMs               int    `json:"sm_count,omitempty"` // cores, for a CPU
	MemoryBytes       int64  `json:"memory_bytes,omitempty"`
	ClockMHz          int    `json:"clock_mhz,omitempty"`
	MemoryClockMHz    int    `json:"memory_clock_mhz,omitempty"`
	Driver            string `json:"driver,omitempty"`
	CUDA              string `json:"cuda,omitempty"`
	CuDNN             string `json:"cudnn,omitempty"`
	Host              string `json:"host,omitempty"`
}

// Measurement is the time of one phase of one layer configuration at one batch size.
type Measurement struct {
	DeviceKey      string    `json:"device"`
	ConfigKey      string    `json:"config"` // cnn.Config.Key()
	Batch          int       `json:"batch"`
	Precision      Precision `json:"precision"` // a kernel precision: fp32, tf32 or amp
	Phase          Phase     `json:"phase"`
	Policy         Policy    `json:"policy"`
	Algorithm      string    `json:"algorithm,omitempty"`
	MedianMS       float64   `json:"median_ms"`
	SpreadMS       float64   `json:"spread_ms"` // half the interquartile range of the repeats
	Repeats        int       `json:"repeats"`
	WorkspaceBytes int64     `json:"workspace_bytes"`
	Status         Status    `json:"status"`
	SweepID        int64     `json:"sweep_id,omitempty"`
	At             time.Time `json:"at"`
	// Notes say how to read the time, comma-separated (package gpu/timing): host-bound
	// (the host may have paced the kernels), l2-flushed (buffers that fit in the L2,
	// timed after a flush), l2-hot (the same, with no flush: a warm cache).
	Notes string `json:"notes,omitempty"`
}

// Validate reports the first thing wrong with m, or nil.
func (m Measurement) Validate() error {
	switch {
	case m.DeviceKey == "":
		return fmt.Errorf("measurement has no device")
	case m.ConfigKey == "":
		return fmt.Errorf("measurement has no layer configuration")
	case m.Batch <= 0:
		return fmt.Errorf("measurement of %s has batch size %d: must be positive", m.ConfigKey, m.Batch)
	case m.Phase != Forward && m.Phase != BackwardData && m.Phase != BackwardWeights:
		return fmt.Errorf("measurement of %s has unknown phase %q", m.ConfigKey, m.Phase)
	case m.Status != OK && m.Status != OutOfMemory && m.Status != Unsupported:
		return fmt.Errorf("measurement of %s has unknown status %q", m.ConfigKey, m.Status)
	case m.Status == OK && !(m.MedianMS > 0):
		return fmt.Errorf("measurement of %s at batch %d has time %v ms: must be positive", m.ConfigKey, m.Batch, m.MedianMS)
	}
	return nil
}

// Step is the time of a whole training step (forward, backward, optimizer update) of a
// network, measured end to end by a backend or a framework.
type Step struct {
	DeviceKey string    `json:"device"` // a measured device's key, or "gpu:<catalog id>" for published and framework figures
	Model     string    `json:"model"`
	Batch     int       `json:"batch"`
	Precision Precision `json:"precision"` // a training precision: fp32, fp32-strict or amp
	Framework string    `json:"framework"` // "cnntime-cpu", "cnntime-cuda", "pytorch 2.5", ...
	Source    string    `json:"source"`    // where the figure came from: a sweep, a file, a publication
	MedianMS  float64   `json:"median_ms"`
	SpreadMS  float64   `json:"spread_ms"`
	Status    Status    `json:"status"`
	At        time.Time `json:"at"`
}

// Validate reports the first thing wrong with s, or nil.
func (s Step) Validate() error {
	switch {
	case s.DeviceKey == "":
		return fmt.Errorf("step measurement has no device")
	case s.Model == "":
		return fmt.Errorf("step measurement has no model")
	case s.Batch <= 0:
		return fmt.Errorf("step measurement of %s has batch size %d: must be positive", s.Model, s.Batch)
	case s.Status != OK && s.Status != OutOfMemory && s.Status != Unsupported:
		return fmt.Errorf("step measurement of %s has unknown status %q", s.Model, s.Status)
	case s.Status == OK && !(s.MedianMS > 0):
		return fmt.Errorf("step measurement of %s at batch %d has time %v ms: must be positive", s.Model, s.Batch, s.MedianMS)
	}
	return nil
}

// Frameworks that measure CPUs: cnntime's own Go CPU backend, and PyTorch through
// scripts/pytorch_sweep.py --device cpu.
const (
	FrameworkCnntimeCPU = "cnntime-cpu"
	FrameworkPyTorch    = "pytorch"
)

// CPUFramework says what measured the CPU device of key: FrameworkPyTorch for a key
// that scripts/pytorch_sweep.py --device cpu writes, "cpu:<host>:<model>:pytorch-<N>-threads"
// (N is PyTorch's thread count), else FrameworkCnntimeCPU (the Go backend's keys are
// "cpu:<host>:<model>").
func CPUFramework(key string) string {
	i := strings.LastIndexByte(key, ':')
	if i < 0 || !strings.HasPrefix(key, "cpu:") {
		return FrameworkCnntimeCPU
	}
	n, ok := strings.CutPrefix(key[i+1:], "pytorch-")
	if !ok {
		return FrameworkCnntimeCPU
	}
	n, ok = strings.CutSuffix(n, "-threads")
	if !ok || n == "" || strings.Trim(n, "0123456789") != "" {
		return FrameworkCnntimeCPU
	}
	return FrameworkPyTorch
}

// PyTorchGPUSuffix ends the device key of a GPU's layer rows that scripts/pytorch_sweep.py
// --layers measured ("cuda:GPU-<uuid>:pytorch"): kept apart from the rows of cnntime's
// CUDA worker, which measure other things on the same GPU.
const PyTorchGPUSuffix = ":pytorch"

// MeasuredByPyTorch reports whether the device of key is one PyTorch measured: a CPU's
// "cpu:…:pytorch-<N>-threads" or a GPU's "cuda:…:pytorch".
func MeasuredByPyTorch(key string) bool {
	if strings.HasPrefix(key, "cuda:") {
		return strings.HasSuffix(key, PyTorchGPUSuffix)
	}
	return CPUFramework(key) == FrameworkPyTorch
}
