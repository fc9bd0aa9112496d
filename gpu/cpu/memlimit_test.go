package cpu

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// fakeSystem writes files (path under root → content) and returns root.
func fakeSystem(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The measurement budget is half the tightest of the machine's memory, the memory
// cgroup's limit (v2 or v1, along the cgroup's path) and what the address-space and
// data limits leave.
func TestMemoryBudgetRespectsEveryLimit(t *testing.T) {
	const gib = 1 << 30
	meminfo := "MemTotal:       25165824 kB\nMemFree:         1000 kB\n"        // 24 GiB
	status := "VmPeak:  3000000 kB\nVmSize:  1048576 kB\nVmData:   524288 kB\n" // 1 GiB mapped, 512 MiB data
	none := func(int) (uint64, bool) { return 0, false }
	tests := []struct {
		name   string
		files  map[string]string
		rlimit func(int) (uint64, bool)
		want   int64
	}{
		{"the machine's memory alone", map[string]string{"proc/meminfo": meminfo}, none, 12 * gib},
		{"cgroup v2 memory.max", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/job/step\n",
			"sys/fs/cgroup/job/step/memory.max": "4294967296\n", "sys/fs/cgroup/job/memory.max": "max\n"}, none, 2 * gib},
		{"cgroup v2 limit on a parent", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/job/step\n",
			"sys/fs/cgroup/job/step/memory.max": "max\n", "sys/fs/cgroup/job/memory.max": "2147483648\n"}, none, 1 * gib},
		{"cgroup v1 memory.limit_in_bytes", map[string]string{"proc/meminfo": meminfo,
			"proc/self/cgroup": "5:cpuacct,cpu:/\n4:memory:/docker/abc\n",
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "6442450944\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":            "9223372036854771712\n"}, none, 3 * gib},
		{"RLIMIT_AS above what is mapped", map[string]string{"proc/meminfo": meminfo, "proc/self/status": status},
			func(r int) (uint64, bool) { return 5 * gib, r == syscall.RLIMIT_AS }, 2 * gib},
		{"RLIMIT_DATA above the data segment", map[string]string{"proc/meminfo": meminfo, "proc/self/status": status},
			func(r int) (uint64, bool) { return 2*gib + gib/2, r == syscall.RLIMIT_DATA }, 1 * gib},
		{"nothing known", map[string]string{}, none, 4 * gib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readMemoryLimits(fakeSystem(t, tc.files), tc.rlimit).budget()
			if got != tc.want {
				t.Errorf("budget = %d MiB, want %d MiB", got>>20, tc.want>>20)
			}
		})
	}
}

// A step or a layer whose tensors fit the budget but not with their working memory
// (ResNet-18 on 2048-pixel images: its first convolution's im2col buffers alone are
// 900 MB) is out of memory, found before anything is allocated. Counting the tensors
// alone, a 4 GB sweep of it at 8192 pixels allocated 9.9 GB and was killed.
func TestMemoryGuardCountsIm2col(t *testing.T) {
	net, err := cnn.Build("resnet18", cnn.Options{Resolution: 2048})
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	tensors := 4 * int64(net.Input.Elems()) // what the guard counted before the buffers
	for i := range net.Layers {
		tensors += 4 * (2*net.Layers[i].Out.Elems() + 3*net.Layers[i].Params)
	}
	b.MemoryLimit = tensors + 1<<20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := b.RunStep(context.Background(), net, 1, measure.FP32, 1)
	runtime.ReadMemStats(&after)
	if err != nil || s.Status != measure.OutOfMemory {
		t.Fatalf("RunStep = %+v, %v; want out of memory", s, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("RunStep allocated %d MB before finding the step out of memory", grew>>20)
	}

	conv := net.Layers[0].Config // 7×7 over 3 channels, 1024×1024 outputs
	in, out := 4*conv.In.Elems(), 4*conv.Out.Elems()
	b.MemoryLimit = 2*(in+out) + 1<<20 // its tensors and their gradients fit
	runtime.ReadMemStats(&before)
	m, err := b.TimeLayer(context.Background(), conv, 1, measure.Forward, measure.FP32, measure.NoPolicy, 1)
	runtime.ReadMemStats(&after)
	if err != nil || m.Status != measure.OutOfMemory {
		t.Errorf("TimeLayer(%s) = %+v, %v; want out of memory", conv.Key(), m, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("TimeLayer allocated %d MB before finding the layer out of memory", grew>>20)
	}
}
