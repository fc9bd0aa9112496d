package host

import (
	"regexp"
	"strings"
	"sync"
)

// Family is a CPU microarchitecture whose cores do the DataLoader's work alike: what
// one core is worth relative to the reference core, and how many hardware threads a
// vCPU is of a core.
type Family struct {
	ID     string `json:"id"`   // "sapphire-rapids"
	Name   string `json:"name"` // "Intel Sapphire Rapids (4th Gen Xeon Scalable)"
	Vendor string `json:"vendor"`
	// ThreadsPerCore is how many vCPUs share one core: 2 on the x86 server parts
	// clouds sell (Hyper-Threading, SMT), 1 on Arm (Grace, Graviton, Axion, Altra).
	ThreadsPerCore int `json:"threads_per_core"`
	// DecodeImagesPerS is what one core of the family decodes of ImageNet's validation
	// JPEGs per second with Pillow, one thread (imread_benchmark; assets/validation/
	// cpu_decode.csv): set for the families measured there (their CoreSpeed is this
	// over ReferenceDecodeImagesPerS), 0 for those scaled by their clock. MeasuredOn
	// names the part it was measured on; Derived says why a family not measured takes
	// another's figure.
	DecodeImagesPerS float64 `json:"decode_images_per_s,omitempty"`
	MeasuredOn       string  `json:"measured_on,omitempty"`
	Derived          string  `json:"derived,omitempty"`
	// DefaultSpeed is the core's speed when a clock-scaled family's part has no
	// published clock: the family's measured part's clock over the reference's, or 1.
	DefaultSpeed float64 `json:"default_speed,omitempty"`
}

// CoreSpeed is one core of the family relative to the reference core, from its
// measured decode rate; 0 for a family scaled by its part's clock.
func (f Family) CoreSpeed() float64 {
	if !(f.DecodeImagesPerS > 0) {
		return 0
	}
	return f.DecodeImagesPerS / ReferenceDecodeImagesPerS
}

// The decode measurements the families' core speeds come from (assets/validation/
// cpu_decode.csv holds them with their sources, and which are held out):
// ternaus/imread_benchmark (the benchmark of arXiv 2605.08731, Iglovikov and
// Kosarevsky, 2026), commit f869db85, output/linux_*/pillow_1t_results.json: Pillow
// 12.2 decoding the 50,000 ImageNet validation JPEGs from memory on one thread, mean
// of five runs, on 16-vCPU Google Cloud VMs.
//
// The bridge to the reference core: the same repository's AMD EPYC 7702 (Zen 2,
// 3.35 GHz boost; output/linux_AMD-EPYC-7702-64-Core-Processor/pillow_results.json at
// commit 691cc79, 2,000 of the validation images) decodes 410.0 images/s, 122.4 per GHz
// of boost clock. The loader model scales the cores of the families it was fitted and
// checked on (Haswell to Cascade Lake, Zen 2 and 3) by their clocks alone, one clock
// of each worth the same; at that per-clock rate the reference core (3.2 GHz) decodes
// ReferenceDecodeImagesPerS, and a measured family's core is its own rate over that.
// The held-out rows of the same repository check the clock rule: a Threadripper 3970X
// (Zen 2, 4.5 GHz) decodes 601 images/s where 122.4 × 4.5 = 551 (−8%), a Ryzen 7
// 5800H (Zen 3, 4.4 GHz) 513 where 539 (+5%).
const (
	BridgeDecodeImagesPerS    = 410.01 // AMD EPYC 7702, one thread
	BridgeTurboGHz            = 3.35   // AMD EPYC 7702's boost clock
	ReferenceDecodeImagesPerS = BridgeDecodeImagesPerS / BridgeTurboGHz * 3.2
)

// The families, oldest first. Intel's Xeon Scalable parts are told by the second digit
// of their number (8175M: 1, Skylake; 8259CL: 2, Cascade Lake; 8358: 3, Ice Lake;
// 8480+: 4, Sapphire Rapids; 8592+: 5, Emerald Rapids), AMD's EPYC by the last (7R32:
// 2, Zen 2; 7R13: 3, Zen 3; 9V84: 4, Zen 4; 9B45: 5, Zen 5), and by codename where a
// provider gives only that ("Intel Xeon (Sapphire Rapids)").
var Families = []Family{
	{ID: "haswell", Name: "Intel Haswell (Xeon E5 v3)", Vendor: "Intel", ThreadsPerCore: 2, DefaultSpeed: 1},
	{ID: "broadwell", Name: "Intel Broadwell (Xeon E5 v4)", Vendor: "Intel", ThreadsPerCore: 2, DefaultSpeed: 1},
	{ID: "skylake-sp", Name: "Intel Skylake-SP (1st Gen Xeon Scalable)", Vendor: "Intel", ThreadsPerCore: 2, DefaultSpeed: 1},
	{ID: "cascade-lake", Name: "Intel Cascade Lake (2nd Gen Xeon Scalable)", Vendor: "Intel", ThreadsPerCore: 2, DefaultSpeed: 1},
	{ID: "ice-lake", Name: "Intel Ice Lake (3rd Gen Xeon Scalable)", Vendor: "Intel", ThreadsPerCore: 2, DefaultSpeed: 1},
	{ID: "sapphire-rapids", Name: "Intel Sapphire Rapids (4th Gen Xeon Scalable)", Vendor: "Intel", ThreadsPerCore: 2,
		DecodeImagesPerS: 576.9, MeasuredOn: "Intel Xeon Platinum 8581C (Emerald Rapids)",
		Derived: "Emerald Rapids' measured core: its Raptor Cove core is Sapphire Rapids' Golden Cove with more cache"},
	{ID: "emerald-rapids", Name: "Intel Emerald Rapids (5th Gen Xeon Scalable)", Vendor: "Intel", ThreadsPerCore: 2,
		DecodeImagesPerS: 576.9, MeasuredOn: "Intel Xeon Platinum 8581C"},
	{ID: "zen2", Name: "AMD Zen 2 (EPYC 7002, Rome)", Vendor: "AMD", ThreadsPerCore: 2, DefaultSpeed: BridgeTurboGHz / 3.2},
	{ID: "zen3", Name: "AMD Zen 3 (EPYC 7003, Milan)", Vendor: "AMD", ThreadsPerCore: 2, DefaultSpeed: 1},
	{ID: "zen4", Name: "AMD Zen 4 (EPYC 9004, Genoa)", Vendor: "AMD", ThreadsPerCore: 2,
		DecodeImagesPerS: 536.6, MeasuredOn: "AMD EPYC 9B14"},
	{ID: "zen5", Name: "AMD Zen 5 (EPYC 9005, Turin)", Vendor: "AMD", ThreadsPerCore: 2,
		DecodeImagesPerS: 726.2, MeasuredOn: "AMD EPYC 9B45"},
	{ID: "neoverse-n1", Name: "Arm Neoverse N1 (AWS Graviton2, Ampere Altra)", Vendor: "Arm", ThreadsPerCore: 1,
		DecodeImagesPerS: 360.3, MeasuredOn: "Ampere Altra (Neoverse-N1)"},
	{ID: "neoverse-v2", Name: "Arm Neoverse V2 (NVIDIA Grace, AWS Graviton4, Google Axion)", Vendor: "Arm", ThreadsPerCore: 1,
		DecodeImagesPerS: 550.5, MeasuredOn: "Google Axion (Neoverse-V2)"},
}

// familyByID finds a family by its id.
func familyByID(id string) (Family, bool) {
	for _, f := range Families {
		if f.ID == id {
			return f, true
		}
	}
	return Family{}, false
}

var (
	xeonScalable = regexp.MustCompile(`\b(?:platinum|gold|silver|bronze|p-?)\s*[3-9]([1-5])\d{2}`)
	xeonE5       = regexp.MustCompile(`\be5-\d{4}[a-z]?\s*v([34])\b`)
	epyc         = regexp.MustCompile(`\bepyc\s+[79][0-9a-z]{2}([2-5])`)
	ryzen        = regexp.MustCompile(`\b(?:ryzen|threadripper)\b.*?\b([3579])\d{3}`)
)

// codenames are the families' names as providers and lscpu write them.
var codenames = []struct{ words, id string }{
	{"emerald rapids", "emerald-rapids"}, {"sapphire rapids", "sapphire-rapids"}, {"ice lake", "ice-lake"},
	{"icelake", "ice-lake"}, {"cascade lake", "cascade-lake"}, {"cascadelake", "cascade-lake"}, {"skylake", "skylake-sp"},
	{"broadwell", "broadwell"}, {"haswell", "haswell"},
	{"turin", "zen5"}, {"genoa", "zen4"}, {"milan", "zen3"}, {"rome", "zen2"},
	{"grace", "neoverse-v2"}, {"neoverse-v2", "neoverse-v2"}, {"neoverse v2", "neoverse-v2"}, {"axion", "neoverse-v2"},
	{"graviton4", "neoverse-v2"}, {"graviton2", "neoverse-n1"}, {"neoverse-n1", "neoverse-n1"}, {"neoverse n1", "neoverse-n1"},
	{"altra", "neoverse-n1"},
}

// FamilyOf tells a CPU's family from its name as a provider's page, lscpu or
// /proc/cpuinfo writes it ("Intel(R) Xeon(R) Platinum 8480+", "AMD EPYC 7R13", "Intel
// Xeon (Sapphire Rapids)", "NVIDIA Grace"); ok is false when it is no family's.
//
// A name's family id is worked out once and remembered (every curve of a machine asks
// again: 5,700 curves of the zoo on the catalog).
func FamilyOf(model string) (Family, bool) {
	id, ok := familyIDs.Load(model)
	if !ok {
		id, _ = familyIDs.LoadOrStore(model, familyIDOf(model))
	}
	return familyByID(id.(string))
}

// familyIDs remembers familyIDOf of the CPU names asked about.
var familyIDs sync.Map

// trademarks are the marks taken out of a CPU's lowercased name before it is read.
var trademarks = strings.NewReplacer("(r)", "", "(tm)", "", "®", "", "™", "")

// familyIDOf is the id of the family a CPU's name tells (FamilyOf), "" where none.
func familyIDOf(model string) string {
	s := trademarks.Replace(strings.ToLower(model))
	for _, c := range codenames {
		if strings.Contains(s, c.words) {
			return c.id
		}
	}
	if m := xeonE5.FindStringSubmatch(s); m != nil {
		return map[string]string{"3": "haswell", "4": "broadwell"}[m[1]]
	}
	if strings.Contains(s, "xeon") {
		if m := xeonScalable.FindStringSubmatch(s); m != nil {
			return []string{"", "skylake-sp", "cascade-lake", "ice-lake", "sapphire-rapids", "emerald-rapids"}[m[1][0]-'0']
		}
	}
	if m := epyc.FindStringSubmatch(s); m != nil {
		return "zen" + m[1]
	}
	if m := ryzen.FindStringSubmatch(s); m != nil {
		return map[string]string{"3": "zen2", "5": "zen3", "7": "zen4", "9": "zen5"}[m[1]]
	}
	return ""
}
