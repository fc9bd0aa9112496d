package app

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/gpu"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// fakeTools is a detector with a worker that lists workerDevices (none installed when
// nil, failing with workerErr when set) and tools that print canned output or fail.
func fakeTools(workerDevices []measure.Device, workerErr error, outputs map[string]string, failures map[string]error) detector {
	return detector{
		findWorker: func() (string, error) {
			if workerDevices == nil && workerErr == nil {
				return "", gpu.ErrNoWorker
			}
			return "/opt/cnntime-gpu", nil
		},
		listDevices: func(context.Context, string) ([]measure.Device, error) { return workerDevices, workerErr },
		look: func(name string) (string, error) {
			if _, ok := outputs[name]; ok {
				return "/opt/" + name, nil
			}
			if _, ok := failures[name]; ok {
				return "/opt/" + name, nil
			}
			return "", exec.ErrNotFound
		},
		run: func(_ context.Context, path string, _ ...string) ([]byte, error) {
			name := filepath.Base(path)
			if err := failures[name]; err != nil {
				return nil, err
			}
			return []byte(outputs[name]), nil
		},
	}
}

func TestDetectGPUs(t *testing.T) {
	c, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	const smi = "Tesla V100-SXM2-32GB, 32510, GPU-aaa\nTesla V100-SXM2-32GB, 32510, GPU-bbb\nNVIDIA GeForce RTX 4080, 16376, GPU-ccc\n"
	worker := []measure.Device{
		{Key: "cuda:GPU-1", Backend: "cuda", Name: "NVIDIA GeForce RTX 3090", UUID: "GPU-1", MemoryBytes: 25438126080},
		{Key: "cuda:GPU-2", Backend: "cuda", Name: "Some future name", UUID: "GPU-2", GPUID: "l40s"},
		{Key: "cpu:host:x", Backend: "cpu", Name: "AMD Ryzen 9"},
	}
	smiOnly := map[string]string{nvidiaSMIName: smi}
	tests := []struct {
		name       string
		tools      detector
		wantMethod string
		wantIDs    []string
		wantErr    string
	}{
		{"worker first", fakeTools(worker, nil, smiOnly, nil), DetectedByWorker, []string{"rtx-3090", "l40s"}, ""},
		{"worker with no GPU", fakeTools([]measure.Device{}, nil, smiOnly, nil), DetectedByWorker, nil, ""},
		{"nvidia-smi when no worker", fakeTools(nil, nil, smiOnly, nil), DetectedByNvidiaSMI, []string{"v100-sxm2-32gb", "v100-sxm2-32gb", ""}, ""},
		{"nvidia-smi with units", fakeTools(nil, nil, map[string]string{nvidiaSMIName: "NVIDIA A100-SXM4-80GB, 81920 MiB, GPU-x\n"}, nil), DetectedByNvidiaSMI, []string{"a100-sxm4-80gb"}, ""},
		{"nvidia-smi when the worker fails", fakeTools(nil, errors.New("no driver"), smiOnly, nil), DetectedByNvidiaSMI, []string{"v100-sxm2-32gb", "v100-sxm2-32gb", ""}, ""},
		{"nothing installed", fakeTools(nil, nil, nil, nil), DetectedByNothing, nil, ""},
		{"nvidia-smi fails", fakeTools(nil, nil, nil, map[string]error{nvidiaSMIName: errors.New("NVIDIA-SMI has failed")}), DetectedByNothing, nil, "NVIDIA-SMI has failed"},
		{"worker fails, no nvidia-smi", fakeTools(nil, errors.New("worker crashed"), nil, nil), DetectedByNothing, nil, "worker crashed"},
		{"garbled nvidia-smi", fakeTools(nil, nil, map[string]string{nvidiaSMIName: "No devices were found\n"}, nil), DetectedByNothing, nil, "want name, memory.total, uuid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			det, err := tt.tools.detect(context.Background(), c)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if det.Method != tt.wantMethod {
				t.Errorf("method %q, want %q", det.Method, tt.wantMethod)
			}
			var ids []string
			for _, g := range det.GPUs {
				ids = append(ids, g.GPUID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.wantIDs, ",") {
				t.Errorf("GPU ids %q, want %q", ids, tt.wantIDs)
			}
		})
	}
}

func TestWorkstationFromDetection(t *testing.T) {
	two := Detection{Method: DetectedByNvidiaSMI, GPUs: []LocalGPU{
		{Name: "NVIDIA GeForce RTX 4090", GPUID: "rtx-4090"},
		{Name: "NVIDIA GeForce GTX 1080 Ti", GPUID: "gtx-1080-ti"},
		{Name: "NVIDIA GeForce RTX 4090", GPUID: "rtx-4090"},
	}}
	m, err := Workstation(two, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != hw.WorkstationID || m.GPUID != "rtx-4090" || m.GPUCount != 2 || m.PriceUSDPerHour != 0 || !strings.Contains(m.Notes, "GTX 1080 Ti") {
		t.Errorf("workstation = %+v", m)
	}
	prev := hw.Machine{ID: hw.WorkstationID, PriceUSDPerHour: 0.21, PriceSource: "set by the user", VCPUs: 32}
	m, _ = Workstation(two, &prev)
	if m.PriceUSDPerHour != 0.21 || m.VCPUs != 32 {
		t.Errorf("re-detection lost the user's price or vCPUs: %+v", m)
	}
	// The host this detection found replaces an earlier one's, and a part it did not
	// find (here the memory) is kept.
	found := two
	found.Host = LocalHost{CPUModel: "AMD Ryzen 9 7950X 16-Core Processor", VCPUs: 32}
	prev.MemoryGiB, prev.VCPUs = 64, 8
	m, _ = Workstation(found, &prev)
	if m.CPU == nil || m.CPU.Model != "AMD Ryzen 9 7950X 16-Core Processor" || m.CPU.Source != hw.UserCPUSource || m.VCPUs != 32 || m.MemoryGiB != 64 {
		t.Errorf("workstation with a detected host = %+v, CPU %+v", m, m.CPU)
	}
	if f, ok := m.CPU.Family(); !ok || f.ID != "zen4" {
		t.Errorf("a Ryzen 9 7950X is of family %+v, want zen4", f)
	}
	for _, det := range []Detection{
		{Method: DetectedByNothing},
		{Method: DetectedByNvidiaSMI, GPUs: []LocalGPU{{Name: "NVIDIA GeForce RTX 4080"}}},
	} {
		if _, err := Workstation(det, nil); err == nil || !strings.Contains(err.Error(), "cnntime machine add") {
			t.Errorf("detection %+v: error %v, want advice to add by hand", det, err)
		}
	}
}

// The host's CPU and memory as Linux's /proc describes them on an x86 workstation, an
// Arm server that names its model, and one that names none.
func TestLocalHostFromProc(t *testing.T) {
	for _, tc := range []struct {
		name, cpuinfo, meminfo string
		model                  string
		gib                    float64
	}{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9354 32-Core Processor\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9354 32-Core Processor\n",
			"MemTotal:       395930644 kB\nMemFree:        1000 kB\n", "AMD EPYC 9354 32-Core Processor", 377.6},
		{"arm named", "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\nModel\t\t: NVIDIA Grace   CPU\n", "MemTotal: 2048 kB\n", "NVIDIA Grace CPU", 0},
		{"arm unnamed", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n", "MemTotal: lots kB\n", "", 0},
		{"empty", "", "", "", 0},
	} {
		got := localHostOf([]byte(tc.cpuinfo), []byte(tc.meminfo))
		if got.CPUModel != tc.model {
			t.Errorf("%s: model %q, want %q", tc.name, got.CPUModel, tc.model)
		}
		if got.MemoryGiB != tc.gib {
			t.Errorf("%s: memory %v GiB, want %v", tc.name, got.MemoryGiB, tc.gib)
		}
	}
}
