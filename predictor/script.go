package predictor

import (
	"fmt"
	"strings"
)

// Script is the training script around the step: what it does on the host once per
// step besides issuing the step's kernels (metrics, logging, `.item()` reads that wait
// for the GPU, meter updates). A small batch pays it most.
type Script string

// The scripts. The zero value adds nothing (a benchmark's tight loop, as Lean).
const (
	// Lean is a tight loop: forward, loss, zero_grad, backward, optimizer.step.
	Lean Script = "lean"
	// Reference is torchvision's reference training script
	// (references/classification/train.py): per step, after optimizer.step(), it
	// computes top-1/top-5 accuracy, reads the loss and both accuracies with .item()
	// and updates its MetricLogger's meters.
	Reference Script = "reference"
	// Examples is pytorch/examples' imagenet main.py (and the many scripts copied from
	// it): the same per-step metrics, but it reads the loss with .item() right after the
	// forward pass, so the host waits for the forward kernels before it zeroes the
	// gradients and issues the backward pass, which the GPU waits for in turn.
	Examples Script = "examples"
	// Lightning is a PyTorch Lightning Trainer loop (its callbacks, progress bar and
	// the loss it logs each step).
	Lightning Script = "lightning"
)

// Scripts lists the scripts in the order help text shows them.
var Scripts = []Script{Lean, Reference, Examples, Lightning}

// DefaultScript is what a user's run assumes: most published runs are reference-style
// scripts (torchvision's references, pytorch/examples' main.py, NVIDIA's DLE main.py
// all read the loss and accuracy every step).
const DefaultScript = Reference

// ParseScript accepts lean, reference or lightning ("" is lean).
func ParseScript(s string) (Script, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return Lean, nil
	}
	for _, sc := range Scripts {
		if string(sc) == s {
			return sc, nil
		}
	}
	return "", fmt.Errorf("unknown script %q: use lean (a tight loop), reference (torchvision's reference script: per-step metrics and .item() reads), examples (pytorch/examples' imagenet main.py: the loss read after the forward pass) or lightning", s)
}

// ScriptCost is what a script adds to every step, on the host and so on the step's
// critical path: each .item() waits for the GPU, so the host cannot run ahead into the
// next step while it does the script's work.
type ScriptCost struct {
	// HostMS is the script's own Python work per step (accuracy kernels' issue, meter
	// updates, timers).
	HostMS float64 `json:"host_ms"`
	// Kernels is how many small GPU kernels the script launches per step after the
	// step's own (accuracy's topk, transpose, compare, slices and sums), each issued by
	// the host at the forward pass's launch cost while the GPU waits for it.
	Kernels int `json:"kernels"`
	// Syncs is how many times per step the script reads a GPU value (.item()); the
	// first waits for the step, which the step's time already holds; each further one
	// is a device-to-host copy and synchronisation of SyncUS.
	Syncs  int     `json:"syncs"`
	SyncUS float64 `json:"sync_us"`
	// SyncAfterForward says the first read comes right after the forward pass: the
	// host waits there for the GPU, and the GPU then waits for the host to zero the
	// gradients and start the backward pass (the step, not ScriptMS, holds that).
	SyncAfterForward bool `json:"sync_after_forward,omitempty"`
	// Source says where the figures come from.
	Source string `json:"source"`
}

// SyncUS is one extra device-to-host read of a scalar (.item() after the GPU is idle):
// a cudaMemcpy of 4 bytes and a stream synchronisation. ASSUMED: CUDA's small-copy
// latency is about 10 µs (NVIDIA's CUDA C++ Best Practices Guide, "Data Transfer Between
// Host and Device": each transfer has an overhead on the order of 10 µs), and PyTorch's
// dispatcher and .item() conversion add a few more; 15 µs is taken.
const SyncUS = 15

// scriptCosts are the scripts' per-step costs.
//
// reference: HostMS is measured here: scripts/script_overhead.py runs torchvision's
// reference loop (its MetricLogger.log_every, accuracy(topk=(1, 5)), three .item() reads
// and the meter updates) and a tight loop over the same negligible model on one CPU
// thread (PyTorch 1.13, Debian) and takes the difference per step: 0.151 ms at batch 32
// and 0.555 ms at 256 (thread CPU time, median of 5 rounds of 1000 steps, 2-core AMD
// EPYC VM under load). The line through them has 0.093 ms at batch 0: the Python work;
// the rest grows with the batch, the CPU running topk over B × 1000 logits, which on a
// GPU is one of the script's Kernels. So 0.1 ms, 10 kernels (accuracy's topk, t, eq, and
// per k a slice, flatten, sum and scale, less views) and its three reads as Syncs.
//
// lightning: PyTorch Lightning's own parity benchmark against a vanilla loop
// (lightning.ai docs, "Benchmark performance vs. vanilla PyTorch": "about 0.06s slower
// per epoch" for its MNIST CNN; ParityModuleMNIST runs 60,000 images in batches of 128,
// 469 steps) is 0.13 ms per step; the loss it logs is read once per step.
var scriptCosts = map[Script]ScriptCost{
	Lean:      {Source: "a tight loop: nothing beyond the step"},
	Reference: {HostMS: 0.1, Kernels: 10, Syncs: 3, SyncUS: SyncUS, Source: "measured: scripts/script_overhead.py (torchvision reference loop − tight loop, CPU: 0.093 ms + topk); accuracy's 10 kernels; 3 .item() reads"},
	Examples: {HostMS: 0.1, Kernels: 10, Syncs: 3, SyncUS: SyncUS, SyncAfterForward: true,
		Source: "as reference (its AverageMeters and accuracy are alike); the loss read after the forward pass"},
	Lightning: {HostMS: 0.13, Syncs: 1, SyncUS: SyncUS, Source: "Lightning's parity benchmark: 0.06 s per 469-step epoch; the logged loss read once"},
}

// Cost is the script's cost per step; an unknown or empty script costs nothing.
func (s Script) Cost() ScriptCost { return scriptCosts[s] }

// StepMS is what the script adds to a step when the host issues a kernel in launchUS
// microseconds: its host work, its kernels' issue, and every read after the first.
func (c ScriptCost) StepMS(launchUS float64) float64 {
	ms := c.HostMS + float64(c.Kernels)*launchUS/1000
	if c.Syncs > 1 {
		ms += float64(c.Syncs-1) * c.SyncUS / 1000
	}
	return ms
}
