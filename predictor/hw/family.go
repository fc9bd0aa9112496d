package hw

import (
	"strconv"
	"strings"
)

// ParseComputeCapability parses a compute capability such as "8.6" into 86; 0 when it
// is unknown or malformed.
func ParseComputeCapability(cc string) int {
	// The catalog's form, one or two digits, a point and one, read without strconv
	// (the estimator asks a few times for every kernel it prepares).
	digit := func(i int) bool { return cc[i] >= '0' && cc[i] <= '9' }
	switch {
	case len(cc) == 3 && digit(0) && cc[1] == '.' && digit(2):
		return int(cc[0]-'0')*10 + int(cc[2]-'0')
	case len(cc) == 4 && digit(0) && digit(1) && cc[2] == '.' && digit(3):
		return int(cc[0]-'0')*100 + int(cc[1]-'0')*10 + int(cc[3]-'0')
	}
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

// Month counts calendar months from January of year 0: year×12 + (month − 1). The
// software releases' and the GPU architectures' dates are Months, so that an age in
// months is a difference.
type Month int

// MonthOf is the Month of year and month (1–12).
func MonthOf(year, month int) Month { return Month(year*12 + month - 1) }

// Year and MonthOfYear split m into its year and month (1–12).
func (m Month) Year() int        { return int(m) / 12 }
func (m Month) MonthOfYear() int { return int(m)%12 + 1 }

// String writes m as YYYY-MM.
func (m Month) String() string {
	return strconv.Itoa(m.Year()) + "-" + twoDigits(m.MonthOfYear())
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// architectureLaunch is the month each architecture's first GPU shipped, by compute
// capability major version (minor versions of one major share it, except where a
// later minor is its own generation: 7.5 Turing, 8.6 GA10x, 8.9 Ada). Public launch
// dates: Tesla K20 (GK110) November 2012; GeForce GTX 980 (Maxwell GM204) September
// 2014; Tesla P100 (Pascal) announced April 2016, GeForce GTX 1080 May 2016; Tesla
// V100 (Volta) shipping June 2017; GeForce RTX 2080 and Tesla T4 (Turing) September
// 2018; A100 (Ampere GA100) May 2020; GeForce RTX 3080 (GA10x) September 2020; H100
// PCIe (Hopper) general availability October 2022; GeForce RTX 4090 (Ada) October
// 2022; B200 (datacenter Blackwell) first deliveries December 2024; GeForce RTX 5090
// (GB20x) January 2025.
var architectureLaunch = []struct {
	minCC, maxCC int // compute capability ×10, inclusive
	month        Month
}{
	{30, 39, MonthOf(2012, 11)},
	{50, 59, MonthOf(2014, 9)},
	{60, 69, MonthOf(2016, 5)},
	{70, 72, MonthOf(2017, 6)},
	{75, 75, MonthOf(2018, 9)},
	{80, 80, MonthOf(2020, 5)},
	{86, 87, MonthOf(2020, 9)},
	{89, 89, MonthOf(2022, 10)},
	{90, 99, MonthOf(2022, 10)},
	{100, 119, MonthOf(2024, 12)},
	{120, 129, MonthOf(2025, 1)},
}

// LaunchMonth is the month g's architecture first shipped (architectureLaunch): how old
// a software release is for g counts from it. False when g's compute capability is
// unknown or of no architecture listed.
func LaunchMonth(g GPU) (Month, bool) {
	cc := ParseComputeCapability(g.ComputeCapability)
	for _, a := range architectureLaunch {
		if cc >= a.minCC && cc <= a.maxCC {
			return a.month, true
		}
	}
	return 0, false
}
