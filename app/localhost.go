package app

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
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
	h := LocalHost{VCPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		h.CPUModel = cpuModelOf(b)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		h.MemoryGiB = memoryGiBOf(b)
	}
	return h
}

// cpuModelOf is the CPU's model in /proc/cpuinfo: x86's "model name", or an Arm
// server's "Model" / "Hardware" where the kernel gives one; "" when none is given
// (most arm64 kernels name no model).
func cpuModelOf(cpuinfo []byte) string {
	fields := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		if _, seen := fields[k]; !seen && v != "" {
			fields[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "Hardware"} {
		if v := fields[k]; v != "" && len(v) <= 200 {
			return v
		}
	}
	return ""
}

// memoryGiBOf is MemTotal in /proc/meminfo in GiB, rounded to a tenth; 0 when absent.
func memoryGiBOf(meminfo []byte) float64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kB, err := strconv.ParseFloat(f[1], 64)
			if err != nil || kB <= 0 || len(f) > 2 && f[2] != "kB" {
				return 0
			}
			return float64(int(kB/(1<<20)*10+0.5)) / 10
		}
	}
	return 0
}
