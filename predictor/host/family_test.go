package host

import (
	"math"
	"testing"
)

func TestFamilyOfTellsTheCatalogsAndLscpusNames(t *testing.T) {
	for _, tt := range []struct{ model, want string }{
		{"Intel Xeon Gold 5118", "skylake-sp"},
		{"Intel Xeon Platinum 8175M", "skylake-sp"},
		{"Intel Xeon P-8259L", "cascade-lake"},
		{"Intel Xeon Platinum 8259CL", "cascade-lake"},
		{"Intel Xeon Platinum 8275CL", "cascade-lake"},
		{"Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz", "ice-lake"},
		{"Intel(R) Xeon(R) Platinum 8480+", "sapphire-rapids"},
		{"Intel Xeon Platinum 8488C", "sapphire-rapids"},
		{"INTEL(R) XEON(R) PLATINUM 8592+", "emerald-rapids"},
		{"INTEL(R) XEON(R) PLATINUM 8581C CPU @ 2.30GHz", "emerald-rapids"},
		{"Intel Xeon (Emerald Rapids)", "emerald-rapids"},
		{"Intel Xeon (Sapphire Rapids)", "sapphire-rapids"},
		{"Intel Xeon Processor (Cascadelake)", "cascade-lake"},
		{"Intel Xeon (Skylake)", "skylake-sp"},
		{"Intel Xeon E5-2686 v4", "broadwell"},
		{"Intel(R) Xeon(R) CPU E5-2690 v3 @ 2.60GHz", "haswell"},
		{"AMD EPYC 7R32", "zen2"},
		{"AMD EPYC 7V12", "zen2"},
		{"AMD EPYC-Rome Processor", "zen2"},
		{"AMD EPYC 7702 64-Core Processor", "zen2"},
		{"AMD EPYC 7R13", "zen3"},
		{"AMD EPYC 74F3V", "zen3"},
		{"AMD EPYC 9V84", "zen4"},
		{"AMD EPYC 9B14", "zen4"},
		{"AMD EPYC 9B45", "zen5"},
		{"AMD Ryzen Threadripper 3970X 32-Core Processor", "zen2"},
		{"AMD Ryzen 7 5800H with Radeon Graphics", "zen3"},
		{"NVIDIA Grace", "neoverse-v2"},
		{"Neoverse-V2", "neoverse-v2"},
		{"AWS Graviton2 Processor", "neoverse-n1"},
		{"Neoverse-N1", "neoverse-n1"},
	} {
		f, ok := FamilyOf(tt.model)
		if !ok || f.ID != tt.want {
			t.Errorf("FamilyOf(%q) = %q, %v; want %q", tt.model, f.ID, ok, tt.want)
		}
	}
	for _, model := range []string{"", "Intel Core i9-7920X", "Apple M2 Pro", "AMD EPYC 7601", "this computer's CPU", "Intel Xeon 6980P"} {
		if f, ok := FamilyOf(model); ok {
			t.Errorf("FamilyOf(%q) = %q; want no family", model, f.ID)
		}
	}
}

func TestSpeedTakesTheMeasuredFamilyElseTheClock(t *testing.T) {
	ref := ReferenceDecodeImagesPerS
	for _, tt := range []struct {
		name string
		cpu  CPU
		want float64
	}{
		{"the reference core", ReferenceCPU, 1},
		{"a clock-scaled family: its turbo over 3.2 GHz", CPU{Model: "Intel Xeon E5-2686 v4", TurboGHz: 3.0}, 3.0 / 3.2},
		{"Cascade Lake at 3.6 GHz", CPU{Model: "Intel Xeon Platinum 8275CL", TurboGHz: 3.6}, 3.6 / 3.2},
		{"a measured family ignores the part's clock", CPU{Model: "Intel Xeon Platinum 8480+", TurboGHz: 3.8}, 576.9 / ref},
		{"Grace is the measured Neoverse V2", CPU{Model: "NVIDIA Grace"}, 550.5 / ref},
		{"Zen 4", CPU{Model: "AMD EPYC 9V84", TurboGHz: 3.7}, 536.6 / ref},
		{"a clock-scaled part without a clock: its family's default", CPU{Model: "AMD EPYC-Rome Processor"}, 3.35 / 3.2},
		{"an unknown part without a clock", CPU{Model: "Some CPU"}, 1},
		{"an unknown part: its clock", CPU{Model: "Intel Core i9-7920X", TurboGHz: 4.4}, 4.4 / 3.2},
		{"a measured speed wins", CPU{Model: "Intel Xeon Platinum 8480+", MeasuredSpeed: 0.8}, 0.8},
	} {
		if got := tt.cpu.Speed(); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Speed() = %.4f, want %.4f", tt.name, got, tt.want)
		}
	}
	// the measured families' core speeds, as cpu_decode.csv's tuning rows give them
	for id, want := range map[string]float64{"emerald-rapids": 1.473, "sapphire-rapids": 1.473, "zen4": 1.370,
		"zen5": 1.854, "neoverse-v2": 1.406, "neoverse-n1": 0.920} {
		f, _ := familyByID(id)
		if got := f.CoreSpeed(); math.Abs(got-want) > 0.001 {
			t.Errorf("%s core speed %.4f, want %.3f", id, got, want)
		}
	}
}
