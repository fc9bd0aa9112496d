package libfind

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CUDAMajorOf is the CUDA major version a CUDA library file belongs to, read from its
// soname (libcublas.so.12 → 12, libnvrtc.so.11.2 → 11) or, for PyTorch's CUDA 13 wheels,
// its directory (nvidia/cu13/lib); 0 when neither says (a bare libcublas.so, cuDNN,
// whose soname is its own version).
func CUDAMajorOf(path string) int {
	base := filepath.Base(path)
	if !strings.HasPrefix(base, "libcudnn") {
		if m, err := strconv.Atoi(soMajor(base)); err == nil {
			return m
		}
	}
	dir := filepath.ToSlash(filepath.Dir(path))
	if i := strings.Index(dir, "nvidia/cu"); i >= 0 {
		rest := dir[i+len("nvidia/cu"):]
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if m, err := strconv.Atoi(rest[:end]); err == nil {
			return m
		}
	}
	return 0
}

// Compatible says whether a library of CUDA major version major runs on a driver whose
// cuDriverGetVersion() is driverVersion (12080 is CUDA 12.8) and on GPUs of compute
// capability cc (major·10 + minor, the oldest of the machine's): a driver runs the
// libraries of its own CUDA major and older (CUDA's minor-version compatibility: a 12.x
// library on any 12.y driver); CUDA 13 dropped Maxwell, Pascal and Volta (compute
// capability below 7.5), CUDA 12 Kepler (below 5.0). An unknown major (0) or driver (≤ 0)
// or capability (0) is not held against it. why says what is wrong.
func Compatible(major, driverVersion, cc int) (ok bool, why string) {
	if major <= 0 {
		return true, ""
	}
	if driverVersion > 0 && major > driverVersion/1000 {
		return false, fmt.Sprintf("a CUDA %d library, and the driver runs CUDA %d.%d at most (update the driver, or install the CUDA %d libraries)",
			major, driverVersion/1000, driverVersion%1000/10, driverVersion/1000)
	}
	if cc > 0 && major >= 13 && cc < 75 {
		return false, fmt.Sprintf("a CUDA %d library, which has no code for compute capability %d.%d (CUDA 13 dropped Maxwell, Pascal and Volta): install the CUDA 12 libraries", major, cc/10, cc%10)
	}
	if cc > 0 && major >= 12 && cc < 50 {
		return false, fmt.Sprintf("a CUDA %d library, which has no code for compute capability %d.%d: install the CUDA 11 libraries", major, cc/10, cc%10)
	}
	return true, ""
}

// Consistent orders the loadable candidates of a library for a machine: those
// incompatible with its driver or GPUs (Compatible) are skipped, saying why; of the
// rest, those of CUDA major want (the major of the cuDNN loaded, so cuDNN, cuBLAS and
// NVRTC are one CUDA's; 0 for none) come first, then the others newest major first,
// each group in search order. The worker loads the first and moves to the next when it
// does not load or its handle cannot be created.
func Consistent(cands []Candidate, want, driverVersion, cc int) []Candidate {
	out := make([]Candidate, len(cands))
	copy(out, cands)
	rank := make([]int, len(out))
	for i := range out {
		c := &out[i]
		if !c.Loadable() {
			rank[i] = 1 << 20
			continue
		}
		major := CUDAMajorOf(c.Path)
		if ok, why := Compatible(major, driverVersion, cc); !ok {
			c.Verdict, c.Why = Skipped, c.Why+"; but "+why
			rank[i] = 1 << 20
			continue
		}
		switch {
		case want > 0 && major == want:
			rank[i] = 0
		case major == 0:
			rank[i] = 1000 // a bare soname: whatever the loader has, after the known ones
		default:
			rank[i] = 100 - major // newest major first
		}
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rank[idx[a]] < rank[idx[b]] })
	sorted := make([]Candidate, len(out))
	first := true
	for i, j := range idx {
		sorted[i] = out[j]
		if sorted[i].Loadable() {
			sorted[i].Verdict = Found
			if first {
				sorted[i].Verdict, first = Load, false
			}
		}
	}
	return sorted
}
