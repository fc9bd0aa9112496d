package cpu

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"cnntime/predictor/cnn"
)

// memoryLimits are the limits on this process's memory, in bytes (0: none): the
// machine's memory, the memory cgroup's limit (v2 memory.max or v1
// memory.limit_in_bytes, the smallest along the cgroup's path), and what the address
// space and data segment limits (RLIMIT_AS, RLIMIT_DATA) leave above what the process
// maps already.
type memoryLimits struct {
	total, cgroup, addressSpace, data int64
}

// budget is the most a measurement may allocate: half the tightest limit, or 4 GiB
// when none is known.
func (l memoryLimits) budget() int64 {
	tightest := int64(0)
	for _, v := range []int64{l.total, l.cgroup, l.addressSpace, l.data} {
		if v > 0 && (tightest == 0 || v < tightest) {
			tightest = v
		}
	}
	if tightest == 0 {
		return 4 << 30
	}
	return tightest / 2
}

// readMemoryLimits reads the limits from the files under root ("/" on a live system:
// proc/meminfo, proc/self/cgroup, proc/self/status and the cgroup files under
// sys/fs/cgroup) and the process's resource limits rlimit.
func readMemoryLimits(root string, rlimit func(resource int) (uint64, bool)) memoryLimits {
	var l memoryLimits
	l.total = kibField(filepath.Join(root, "proc/meminfo"), "MemTotal:")
	l.cgroup = cgroupLimit(root)
	status := filepath.Join(root, "proc/self/status")
	for _, r := range []struct {
		resource int
		used     string
		out      *int64
	}{{syscall.RLIMIT_AS, "VmSize:", &l.addressSpace}, {syscall.RLIMIT_DATA, "VmData:", &l.data}} {
		if max, ok := rlimit(r.resource); ok && max < 1<<62 {
			left := int64(max) - kibField(status, r.used)
			*r.out = max64(left, 1) // no room at all still counts as a limit
		}
	}
	return l
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// processRlimit is the soft limit of resource, and whether there is one.
func processRlimit(resource int) (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(resource, &r); err != nil || r.Cur >= 1<<63 { // RLIM_INFINITY
		return 0, false
	}
	return r.Cur, true
}

// kibField reads a "Name: N kB" line of a /proc file, in bytes; 0 when missing.
func kibField(path, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == name {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit is the memory limit of this process's cgroup: the smallest memory.max
// (cgroup v2) or memory.limit_in_bytes (v1) from its cgroup up to the root; 0 when none.
func cgroupLimit(root string) int64 {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0
	}
	limit := int64(0)
	tighter := func(v int64) {
		if v > 0 && v < 1<<62 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3) // hierarchy-ID:controllers:path
		if len(parts) != 3 {
			continue
		}
		var dir, file string
		switch {
		case parts[0] == "0" && parts[1] == "": // v2, the unified hierarchy
			dir, file = filepath.Join(root, "sys/fs/cgroup"), "memory.max"
		case hasController(parts[1], "memory"): // v1
			dir, file = filepath.Join(root, "sys/fs/cgroup/memory"), "memory.limit_in_bytes"
		default:
			continue
		}
		for p := filepath.Clean("/" + parts[2]); ; p = filepath.Dir(p) {
			if b, err := os.ReadFile(filepath.Join(dir, p, file)); err == nil {
				if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil { // "max": none
					tighter(v)
				}
			}
			if p == "/" {
				break
			}
		}
	}
	return limit
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// scratchBytes is the working memory an op of configuration c allocates besides its
// tensors at batch batch: a convolution's im2col and product buffers, a linear layer's
// dense copy of its output gradient, a dropout's mask, a max pool's argmax.
func scratchBytes(c cnn.Config, batch int) int64 {
	out := int64(batch) * c.Out.Elems()
	switch c.Op {
	case cnn.OpConv2d:
		g := max(c.Groups, 1)
		cinG, coutG := c.In.C/g, c.Out.C/g
		if cinG == 1 && coutG == 1 || c.In.C%g != 0 || c.Out.C%g != 0 {
			return 0 // depthwise: a direct loop; or unsupported
		}
		k, p := int64(cinG*c.Kernel[0]*c.Kernel[1]), int64(c.Out.H*c.Out.W)
		chunk := int64(convChunk(int(k), int(p), batch))
		return 4 * (k*chunk*p + int64(coutG)*chunk*p)
	case cnn.OpLinear, cnn.OpDropout:
		return 4 * out
	case cnn.OpMaxPool:
		return 4 * out // int32 indices
	}
	return 0
}
