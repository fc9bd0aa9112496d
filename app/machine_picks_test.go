package app

import (
	"slices"
	"testing"

	"cnntime/predictor/hw"
)

func catalogGPUMap(t *testing.T) (map[string]hw.GPU, []hw.Machine) {
	t.Helper()
	c, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	gpus := map[string]hw.GPU{}
	for _, g := range c.GPUs() {
		gpus[g.ID] = g
	}
	return gpus, c.Machines()
}

func TestSortMachinesNewestFirstWithinProvider(t *testing.T) {
	gpus, ms := catalogGPUMap(t)
	ms = append(ms, hw.Machine{ID: "user/box", Provider: "user", GPUID: "rtx-4090", GPUCount: 1, User: true, Listing: hw.ListingUser})
	SortMachines(ms, gpus)
	if ms[0].ID != "user/box" {
		t.Errorf("first machine %s, want the user's own", ms[0].ID)
	}
	pos := map[string]int{}
	for i, m := range ms {
		pos[m.ID] = i
	}
	before := [][2]string{
		{"aws/p5.4xlarge", "aws/p2.xlarge"},         // Hopper before Kepler
		{"aws/g6e.xlarge", "aws/g6.xlarge"},         // L40S before L4 (same Ada generation, faster)
		{"aws/p5.4xlarge", "aws/p5.48xlarge"},       // one GPU before eight
		{"aws/p2.16xlarge", "gcp/a2-highgpu-1g"},    // AWS before GCP
		{"gcp/a3-highgpu-8g", "azure/Standard_NC6"}, // GCP before Azure
		{"azure/Standard_NC6", "lambda/gpu_1x_a10"}, // Azure before Lambda
		{"lambda/gpu_1x_a10", "runpod/l40s-secure-cloud"},
		{"runpod/l40s-secure-cloud", "coreweave/gb200-4x"}, // the providers in their order, CoreWeave last
	}
	for _, p := range before {
		if pos[p[0]] >= pos[p[1]] {
			t.Errorf("%s (at %d) should come before %s (at %d)", p[0], pos[p[0]], p[1], pos[p[1]])
		}
	}
}

func TestPreviousGeneration(t *testing.T) {
	gpus, ms := catalogGPUMap(t)
	byID := map[string]hw.Machine{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	tests := []struct {
		id   string
		want bool
	}{
		{"aws/p2.xlarge", true},                          // K80
		{"gcp/n1-standard-4-1x-nvidia-tesla-p100", true}, // P100
		{"aws/p5.48xlarge-historical", true},             // an old price
		{"aws/p3.2xlarge", false},                        // V100 is still offered
		{"aws/g4dn.xlarge", false},                       // T4
		{"lambda/gpu_1x_h100_sxm5", false},
	}
	for _, tt := range tests {
		m, ok := byID[tt.id]
		if !ok {
			t.Fatalf("catalog has no %s", tt.id)
		}
		if got := PreviousGeneration(m, gpus); got != tt.want {
			t.Errorf("PreviousGeneration(%s) = %v, want %v", tt.id, got, tt.want)
		}
	}
	if PreviousGeneration(hw.Machine{ID: "user/old", GPUID: "k80", User: true}, gpus) {
		t.Error("the user's own K80 machine was hidden")
	}
}

func TestQuickPicks(t *testing.T) {
	gpus, ms := catalogGPUMap(t)
	ms = append(ms, hw.Machine{ID: "local/rtx-4090", Provider: "local", GPUID: "rtx-4090", GPUCount: 1, Listing: hw.ListingLocal})
	SortMachines(ms, gpus)
	tests := []struct {
		pick QuickPick
		want []string
	}{
		// the cheapest current one-GPU machine of each provider with a current GPU
		{PickCheapest, []string{"aws/g4dn.xlarge", "gcp/n1-standard-4-1x-nvidia-tesla-t4", "azure/Standard_NC4as_T4_v3", "lambda/gpu_1x_a6000", "runpod/rtx-4090-community-cloud"}},
		// the fastest GPU of each provider by published tensor rate, one GPU: Azure's
		// H100 NVL (835.5 dense FP16 TFLOPS) beats its A100, and Lambda's one-GPU B200
		// (2250) its GH200 (990) and H100 SXM (989.4); RunPod's RTX 6000 Ada (364.2) edges
		// its L40S (362)
		{PickFastest, []string{"aws/p5.4xlarge", "gcp/a2-highgpu-1g", "azure/Standard_NC40ads_H100_v5", "lambda/gpu_1x_b200_sxm6", "runpod/rtx-6000-ada-secure-cloud"}},
		{PickWorkstation, []string{"local/rtx-4090"}},
		{QuickPick("nonsense"), nil},
	}
	for _, tt := range tests {
		got := Pick(tt.pick, ms, gpus)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Pick(%s) = %v, want %v", tt.pick, got, tt.want)
		}
	}
}

func TestFirstLaunchMachinesAreInTheCatalog(t *testing.T) {
	_, ms := catalogGPUMap(t)
	got := FirstLaunchMachines(ms)
	if !slices.Equal(got, firstLaunchMachines) {
		t.Errorf("FirstLaunchMachines = %v, want all of %v: a catalog change dropped some", got, firstLaunchMachines)
	}
	if got := FirstLaunchMachines(ms[:1]); len(got) != 0 && got[0] != ms[0].ID {
		t.Errorf("FirstLaunchMachines over one machine = %v", got)
	}
}

func TestBatchSpanGrid(t *testing.T) {
	tests := []struct {
		name             string
		span             BatchSpan
		maxFit, gpus     int
		wantFirst, wLast int
	}{
		{"one GPU, runs one grid size past the fit", BatchSpan{Min: 1}, 300, 1, 1, 304},
		{"eight GPUs run past 1024, in multiples of 8", BatchSpan{Min: 1}, 8 * 600, 8, 8, 4864},
		{"the cap stops it", BatchSpan{Min: 1, Cap: 256}, 4800, 8, 8, 256},
		{"a cap above the fit still ends past the fit", BatchSpan{Min: 1, Cap: 2048}, 1000, 1, 1, 1024},
		{"unknown memory: 1024 per GPU", BatchSpan{Min: 1}, -1, 2, 2, 2048},
		{"four instances: multiples of 4 only", BatchSpan{Min: 3, Cap: 90}, 400, 4, 4, 88},
		{"nothing fits", BatchSpan{Min: 1}, 0, 1, 1, 1},
		{"min above the fit", BatchSpan{Min: 512}, 100, 1, 512, 512},
		{"small fit", BatchSpan{Min: 1}, 37, 1, 1, 38},
	}
	for _, tt := range tests {
		got := tt.span.Grid(tt.maxFit, tt.gpus)
		if got[0] != tt.wantFirst || got[len(got)-1] != tt.wLast {
			t.Errorf("%s: grid from %d to %d, want %d to %d", tt.name, got[0], got[len(got)-1], tt.wantFirst, tt.wLast)
		}
		for _, b := range got {
			if b%tt.gpus != 0 {
				t.Errorf("%s: batch %d does not split evenly over %d GPUs", tt.name, b, tt.gpus)
				break
			}
		}
	}
}
