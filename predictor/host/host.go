package host

import (
	"fmt"
	"math"
	"strings"
)

// Host is a machine's host as the loader model sees it: the CPU that runs the loader
// (the catalog's, or ReferenceCPU standing in), its family, the vCPUs and memory, what
// one core is worth (Speed, relative to the reference core) and, where something is
// assumed, the range the unknown host may take.
type Host struct {
	CPU CPU `json:"cpu"`
	// Family is the CPU's family id ("" when its name is no known family's).
	Family string `json:"family,omitempty"`
	// VCPUs and MemoryGiB are the machine's (0: not published).
	VCPUs     int     `json:"vcpus,omitempty"`
	MemoryGiB float64 `json:"memory_gib,omitempty"`
	// ThreadsPerCore is how many vCPUs share a core (2 on x86, 1 on Arm).
	ThreadsPerCore int `json:"threads_per_core"`
	// Speed is one core relative to the reference core (CPU.Speed); SlowSpeed and
	// FastSpeed are the range it may take: equal to Speed when the CPU is named, the
	// families' range (AssumedSlowSpeed to AssumedFastSpeed) when it is assumed.
	Speed     float64 `json:"core_speed"`
	SlowSpeed float64 `json:"core_speed_slow"`
	FastSpeed float64 `json:"core_speed_fast"`
	// CPUAssumed: the catalog names no CPU and ReferenceCPU stands in; VCPUsAssumed:
	// it gives no vCPUs, and each loader worker is taken to have a core of its own.
	CPUAssumed   bool `json:"cpu_assumed,omitempty"`
	VCPUsAssumed bool `json:"vcpus_assumed,omitempty"`
}

// AssumedSlowSpeed and AssumedFastSpeed bound the core of a host nobody named: the
// slowest and the fastest core of the families above (the measured ones and the
// reference core), from Arm's Neoverse N1 to AMD's Zen 5.
var AssumedSlowSpeed, AssumedFastSpeed = speedRange()

func speedRange() (lo, hi float64) {
	lo, hi = 1, 1
	for _, f := range Families {
		if s := f.CoreSpeed(); s > 0 {
			lo, hi = math.Min(lo, s), math.Max(hi, s)
		}
	}
	return lo, hi
}

// Resolve is the host of a machine whose catalog row gives cpu (nil: none), vcpus and
// memGiB (0: not published).
func Resolve(cpu *CPU, vcpus int, memGiB float64) Host {
	h := Host{VCPUs: vcpus, MemoryGiB: memGiB, ThreadsPerCore: 2, VCPUsAssumed: vcpus <= 0}
	if cpu == nil || cpu.Assumed {
		h.CPU, h.CPUAssumed = ReferenceCPU, true
		if cpu != nil {
			h.CPU = *cpu
		}
	} else {
		h.CPU = *cpu
	}
	if f, ok := h.CPU.Family(); ok {
		h.Family, h.ThreadsPerCore = f.ID, f.ThreadsPerCore
	}
	h.Speed = h.CPU.Speed()
	h.SlowSpeed, h.FastSpeed = h.Speed, h.Speed
	if h.CPUAssumed {
		h.SlowSpeed, h.FastSpeed = math.Min(AssumedSlowSpeed, h.Speed), math.Max(AssumedFastSpeed, h.Speed)
	}
	return h
}

// Assumed reports whether anything about the host is assumed: its CPU or its vCPUs.
func (h Host) Assumed() bool { return h.CPUAssumed || h.VCPUsAssumed }

// FamilyName is the CPU family's name, "" when unknown.
func (h Host) FamilyName() string {
	f, ok := familyByID(h.Family)
	if !ok {
		return ""
	}
	return f.Name
}

// Text names the host in a few words, as a table cell shows it: "Intel Xeon Platinum
// 8480+, 26 vCPUs", or "CPU assumed: Intel Xeon Gold 5118" where the catalog names none
// (", vCPUs unknown" where it gives no vCPUs either).
func (h Host) Text() string {
	s := h.CPU.Model
	if h.CPUAssumed {
		s = "CPU assumed: " + s
	}
	if h.VCPUs > 0 {
		return fmt.Sprintf("%s, %d vCPUs", s, h.VCPUs)
	}
	return s + ", vCPUs unknown"
}

// Sentence says what the host is and, where something is assumed, what (Assumptions):
// "Intel Xeon Platinum 8480+ (Intel Sapphire Rapids (4th Gen Xeon Scalable)); one core
// does 1.47× the reference core's loader work; 26 vCPUs (13 cores, 2 threads each)", or
// "CPU assumed: no CPU is named for this machine, so the loader's reference core (Intel
// Xeon Gold 5118) stands in, and the host's cores may do 0.92× to 1.85× its work; 5
// vCPUs (2.5 cores, 2 threads each)".
func (h Host) Sentence() string {
	var parts []string
	assumed := h.Assumptions()
	if h.CPUAssumed {
		parts = append(parts, assumed[0])
	} else {
		s := h.CPU.Model
		if name := h.FamilyName(); name != "" {
			s += " (" + name + ")"
		}
		parts = append(parts, fmt.Sprintf("%s; one core does %.2f× the reference core's loader work", s, h.Speed))
	}
	switch {
	case h.VCPUsAssumed:
		parts = append(parts, assumed[len(assumed)-1])
	default:
		parts = append(parts, fmt.Sprintf("%d vCPUs (%s)", h.VCPUs, coresWords(h)))
	}
	return strings.Join(parts, "; ")
}

// Assumptions says, a clause each, what is assumed of the host: its CPU (the reference
// core standing in, and the range the unknown one may take) and its vCPUs; none when
// the catalog names both.
func (h Host) Assumptions() []string {
	var out []string
	if h.CPUAssumed {
		out = append(out, fmt.Sprintf("CPU assumed: no CPU is named for this machine, so the loader's reference core (%s) stands in, and the host's cores may do %.2f× to %.2f× its work",
			h.CPU.Model, h.SlowSpeed, h.FastSpeed))
	}
	if h.VCPUsAssumed {
		out = append(out, "vCPUs assumed: none are published, each loader worker is taken to have a core of its own")
	}
	return out
}

// coresWords says how the vCPUs are cores: "13 cores, 2 threads each" or "64 cores".
func coresWords(h Host) string {
	if h.ThreadsPerCore <= 1 {
		return fmt.Sprintf("%d cores", h.VCPUs)
	}
	return fmt.Sprintf("%g cores, %d threads each", float64(h.VCPUs)/float64(h.ThreadsPerCore), h.ThreadsPerCore)
}
