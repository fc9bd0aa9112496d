package hw

import (
	"strconv"
	"strings"
)

// ParseComputeCapability parses a compute capability such as "8.6" into 86; 0 when it
// is unknown or malformed.
func ParseComputeCapability(cc string) int {
	major, minor, _ := strings.Cut(strings.TrimSpace(cc), ".")
	ma, err := strconv.Atoi(major)
	if err != nil || ma < 0 {
		return 0
	}
	mi, err := strconv.Atoi(minor)
	if err != nil || mi < 0 || mi > 9 {
		mi = 0
	}
	return ma*10 + mi
}

// Family is a GPU generation whose tensor cores and libraries behave alike, told by
// its compute capability (the per-layer model fits its efficiencies per family).
type Family int

const (
	FamilyUnknown Family = iota
	FamilyVolta          // 7.0, 7.2: V100, Titan V
	FamilyTuring         // 7.5: T4, RTX 20
	FamilyGA100          // 8.0: A100, A30
	FamilyGA10x          // 8.6, 8.7: A10, A40, RTX 30, RTX A6000
	FamilyAda            // 8.9: L4, L40S, RTX 40
	FamilyHopper         // 9.0: H100, H200
	FamilyKepler         // 3.x: K80, K40, GTX 700
	// FamilyBlackwell is the datacenter Blackwell (10.x: B200, GB200, B300); the
	// GeForce and workstation Blackwell parts (12.x) are a different SM and are not in it.
	FamilyBlackwell
	// FamilyGB20x is the GeForce and professional Blackwell (12.x: RTX 5090, RTX 5080,
	// RTX PRO 6000): GB20x dies with GDDR7, a large L2 and the consumer SM (no tensor
	// memory, no tcgen05), a different tensor-core path from the datacenter Blackwell.
	FamilyGB20x
	// NumFamilies counts the families, FamilyUnknown included: the size of an array
	// indexed by Family.
	NumFamilies
)

var familyNames = [NumFamilies]string{"unknown", "volta", "turing", "ga100", "ga10x", "ada", "hopper", "kepler", "blackwell", "gb20x"}

func (f Family) String() string {
	if f < 0 || f >= NumFamilies {
		return "unknown"
	}
	return familyNames[f]
}

// FamilyNames are the known families' names, FamilyUnknown left out, in Family order.
func FamilyNames() []string { return append([]string(nil), familyNames[1:]...) }

// FamilyOf returns g's family from its compute capability.
func FamilyOf(g GPU) Family {
	switch cc := ParseComputeCapability(g.ComputeCapability); {
	case cc == 70 || cc == 72:
		return FamilyVolta
	case cc == 75:
		return FamilyTuring
	case cc == 80:
		return FamilyGA100
	case cc == 86 || cc == 87:
		return FamilyGA10x
	case cc == 89:
		return FamilyAda
	case cc >= 90 && cc < 100:
		return FamilyHopper
	case cc >= 30 && cc < 40:
		return FamilyKepler
	case cc >= 100 && cc < 110:
		return FamilyBlackwell
	case cc >= 120 && cc < 130:
		return FamilyGB20x
	}
	return FamilyUnknown
}
