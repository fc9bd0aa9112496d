package cpu

import (
	"runtime"
	"testing"
)

// The backend's device names the CPU by x86's "model name" alone (its key in the
// cache); the keys asked are tried in order, each at its first line.
func TestProcInfo(t *testing.T) {
	const x86 = "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)  Platinum 8480+\n\nprocessor\t: 1\nmodel name\t: other\n"
	const arm = "processor\t: 0\nCPU part\t: 0xd4f\nModel\t\t: NVIDIA Grace CPU\nHardware\t: x\n"
	for _, tc := range []struct {
		cpuinfo string
		keys    []string
		want    string
	}{
		{x86, []string{"model name"}, "Intel(R) Xeon(R) Platinum 8480+"},
		{arm, []string{"model name"}, ""},
		{arm, []string{"model name", "Model", "Hardware"}, "NVIDIA Grace CPU"},
		{arm, []string{"Hardware", "Model"}, "x"},
		{"", []string{"model name"}, ""},
	} {
		if got := InfoValue([]byte(tc.cpuinfo), tc.keys...); got != tc.want {
			t.Errorf("InfoValue(%q, %q) = %q, want %q", tc.cpuinfo, tc.keys, got, tc.want)
		}
	}
	if got, want := cpuModel([]byte(arm)), runtime.GOARCH+" CPU"; got != want {
		t.Errorf("a CPU /proc names no model of is %q, want %q", got, want)
	}
	for meminfo, want := range map[string]int64{
		"MemTotal:       395930644 kB\nMemFree: 1 kB\n": 395930644 << 10,
		"MemFree: 1 kB\n": 0, "MemTotal: lots kB\n": 0, "MemTotal: 12 MB\n": 0,
	} {
		if got := MemTotalBytes([]byte(meminfo)); got != want {
			t.Errorf("MemTotalBytes(%q) = %d, want %d", meminfo, got, want)
		}
	}
}
