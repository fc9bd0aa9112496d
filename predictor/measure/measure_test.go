package measure

import "testing"

func TestCPUFramework(t *testing.T) {
	for key, want := range map[string]string{
		"cpu:box:AMD EPYC 7B13:pytorch-2-threads":  FrameworkPyTorch,
		"cpu:box:AMD EPYC 7B13:pytorch-16-threads": FrameworkPyTorch,
		"cpu:box:AMD EPYC 7B13":                    FrameworkCnntimeCPU,
		"cpu:box:pytorch-x-threads":                FrameworkCnntimeCPU,
		"cpu:box:AMD:pytorch--threads":             FrameworkCnntimeCPU,
		"cuda:GPU-1:pytorch-2-threads":             FrameworkCnntimeCPU, // not a CPU at all
	} {
		if got := CPUFramework(key); got != want {
			t.Errorf("CPUFramework(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestMeasuredByPyTorch(t *testing.T) {
	for key, want := range map[string]bool{
		"cuda:GPU-8e1f":                   false,
		"cuda:GPU-8e1f:pytorch":           true,
		"cpu:lab1:EPYC":                   false,
		"cpu:lab1:EPYC:pytorch-2-threads": true,
		"gpu:a100-sxm4-80gb":              false,
	} {
		if got := MeasuredByPyTorch(key); got != want {
			t.Errorf("MeasuredByPyTorch(%q) = %v, want %v", key, got, want)
		}
	}
}
