package host

import (
	"math"
	"strings"
	"testing"
)

func TestResolveSaysWhatIsAssumed(t *testing.T) {
	sapphire := CPU{Model: "Intel Xeon Platinum 8480+", BaseGHz: 2, TurboGHz: 3.8, Source: "lscpu"}
	grace := CPU{Model: "NVIDIA Grace", Source: "lscpu"}
	for _, tt := range []struct {
		name                     string
		cpu                      *CPU
		vcpus                    int
		cpuAssumed, vcpusAssumed bool
		family                   string
		threads                  int
		slow, fast               float64
		text                     string
		sentence                 []string
	}{
		{name: "a named x86 CPU", cpu: &sapphire, vcpus: 26, family: "sapphire-rapids", threads: 2,
			slow: 1.473, fast: 1.473, text: "Intel Xeon Platinum 8480+, 26 vCPUs",
			sentence: []string{"Intel Xeon Platinum 8480+ (Intel Sapphire Rapids (4th Gen Xeon Scalable)); one core does 1.47× the reference core's loader work", "26 vCPUs (13 cores, 2 threads each)"}},
		{name: "Grace: a vCPU is a core", cpu: &grace, vcpus: 64, family: "neoverse-v2", threads: 1,
			slow: 1.406, fast: 1.406, text: "NVIDIA Grace, 64 vCPUs", sentence: []string{"64 vCPUs (64 cores)"}},
		{name: "no CPU named", cpu: nil, vcpus: 5, cpuAssumed: true, family: "skylake-sp", threads: 2,
			slow: 0.920, fast: 1.854, text: "CPU assumed: Intel Xeon Gold 5118, 5 vCPUs",
			sentence: []string{"CPU assumed: no CPU is named for this machine, so the loader's reference core (Intel Xeon Gold 5118) stands in, and the host's cores may do 0.92× to 1.85× its work"}},
		{name: "a bare GPU: nothing known", cpu: nil, vcpus: 0, cpuAssumed: true, vcpusAssumed: true, family: "skylake-sp", threads: 2,
			slow: 0.920, fast: 1.854, text: "CPU assumed: Intel Xeon Gold 5118, vCPUs unknown",
			sentence: []string{"vCPUs assumed: none are published, each loader worker is taken to have a core of its own"}},
		{name: "vCPUs unknown, CPU named", cpu: &sapphire, vcpus: 0, vcpusAssumed: true, family: "sapphire-rapids", threads: 2,
			slow: 1.473, fast: 1.473, text: "Intel Xeon Platinum 8480+, vCPUs unknown"},
	} {
		h := Resolve(tt.cpu, tt.vcpus, 0)
		if h.CPUAssumed != tt.cpuAssumed || h.VCPUsAssumed != tt.vcpusAssumed || h.Assumed() != (tt.cpuAssumed || tt.vcpusAssumed) {
			t.Errorf("%s: assumed cpu %v vcpus %v, want %v %v", tt.name, h.CPUAssumed, h.VCPUsAssumed, tt.cpuAssumed, tt.vcpusAssumed)
		}
		if h.Family != tt.family || h.ThreadsPerCore != tt.threads {
			t.Errorf("%s: family %q, %d threads a core; want %q, %d", tt.name, h.Family, h.ThreadsPerCore, tt.family, tt.threads)
		}
		if math.Abs(h.SlowSpeed-tt.slow) > 0.001 || math.Abs(h.FastSpeed-tt.fast) > 0.001 {
			t.Errorf("%s: speed range %.3f–%.3f, want %.3f–%.3f", tt.name, h.SlowSpeed, h.FastSpeed, tt.slow, tt.fast)
		}
		if h.Text() != tt.text {
			t.Errorf("%s: Text() = %q, want %q", tt.name, h.Text(), tt.text)
		}
		for _, want := range tt.sentence {
			if !strings.Contains(h.Sentence(), want) {
				t.Errorf("%s: Sentence() = %q, want it to say %q", tt.name, h.Sentence(), want)
			}
		}
	}
}

func TestAnAssumedHostKeepsTheReferenceCoreInsideItsRange(t *testing.T) {
	h := Resolve(nil, 8, 0)
	if h.Speed != 1 || !(h.SlowSpeed < 1) || !(h.FastSpeed > 1) {
		t.Errorf("assumed host speed %g in %g–%g: want the reference core (1) strictly inside", h.Speed, h.SlowSpeed, h.FastSpeed)
	}
	if h.CPU.Model != ReferenceCPU.Model || !h.CPU.Assumed {
		t.Errorf("assumed host CPU %+v, want the reference CPU marked assumed", h.CPU)
	}
}
