package app

import (
	"math"
	"runtime"

	"cnntime/gpu/cpu"
)

// LocalHost is this computer's host as the workstation's detection finds it: the CPU's
// model name, its hardware threads and its memory (each zero where not found).
type LocalHost struct {
	CPUModel  string  `json:"cpu_model,omitempty"`
	VCPUs     int     `json:"vcpus,omitempty"`
	MemoryGiB float64 `json:"memory_gib,omitempty"`
}

// detectLocalHost reads this computer's host: the thread count from Go's runtime, the
// CPU's model and the memory from Linux's /proc (elsewhere they stay unknown and the
// user names them with 'cnntime machine add --cpu').
func detectLocalHost() LocalHost {
	h := localHostOf(cpu.ProcInfo())
	h.VCPUs = runtime.NumCPU()
	return h
}

// localHostOf is the CPU's model and the memory that /proc/cpuinfo's and
// /proc/meminfo's texts give: x86's "model name", or an Arm server's "Model" /
// "Hardware" where the kernel gives one ("" when none is given, as on most arm64
// kernels, or it is too long to be a model's name); MemTotal in GiB, to a tenth.
func localHostOf(cpuinfo, meminfo []byte) LocalHost {
	var h LocalHost
	if m := cpu.InfoValue(cpuinfo, "model name", "Model", "Hardware"); len(m) <= 200 {
		h.CPUModel = m
	}
	h.MemoryGiB = math.Round(float64(cpu.MemTotalBytes(meminfo))/(1<<30)*10) / 10
	return h
}
