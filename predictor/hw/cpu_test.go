package hw

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cnntime/predictor/host"
)

// loadRealCPUs parses the embedded catalog with its CPU file.
func loadRealCPUs(t *testing.T) *Catalog {
	t.Helper()
	c := loadRealCatalog(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "assets", "catalog", CPUsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := ParseCPUs(data, c); err != nil {
		t.Fatalf("the embedded CPU file does not parse: %v", err)
	}
	return c
}

// Every CPU the catalog names is a family the loader model knows, and the machines it
// names none for are these, each for the reason given: their numbers say "CPU assumed".
func TestEveryCatalogCPUIsAKnownFamilyAndTheUnnamedAreListed(t *testing.T) {
	c := loadRealCPUs(t)
	unnamed := map[string]string{
		"gcp/nvidia-tesla-v100-gpu-addon":  "a GPU add-on: the VM it attaches to is the user's choice",
		"gcp/nvidia-tesla-t4-gpu-addon":    "a GPU add-on",
		"gcp/nvidia-tesla-p100-gpu-addon":  "a GPU add-on",
		"lambda/gpu_1x_a100_sxm4":          "no public record of Lambda's A100 SXM4 hosts found",
		"lambda/gpu_8x_a100":               "as gpu_1x_a100_sxm4",
		"lambda/gpu_8x_a100_80gb_sxm4":     "as gpu_1x_a100_sxm4",
		"runpod/rtx-4090-community-cloud":  "RunPod publishes vCPUs per pod, not the host CPU",
		"runpod/rtx-4090-secure-cloud":     "as the community pod",
		"runpod/l40s-secure-cloud":         "as the community pod",
		"runpod/8x-rtx-5090-secure-cloud":  "as the community pod",
		"runpod/rtx-6000-ada-secure-cloud": "as the community pod",
		"gcp/a4-highgpu-8g":                "Google's pages name the A4's CPU platform; no copy of them was found to cite",
		"gcp/a3-ultragpu-8g":               "as a4-highgpu-8g",
	}
	var missing []string
	for _, m := range c.Machines() {
		if m.CPU == nil {
			missing = append(missing, m.ID)
			if _, ok := unnamed[m.ID]; !ok {
				t.Errorf("%s has no CPU in %s: give its CPU with a source, or list it here with the reason", m.ID, CPUsFile)
			}
			continue
		}
		if f, ok := m.CPU.Family(); !ok {
			t.Errorf("%s's CPU %q is no family predictor/host knows: add its family (host.FamilyOf)", m.ID, m.CPU.Model)
		} else if m.VCPUs > 0 && f.ThreadsPerCore == 1 && m.CPU.Model != "NVIDIA Grace" {
			t.Errorf("%s: an Arm host other than Grace: check its vCPUs are cores", m.ID)
		}
		if m.CPU.Source == "" {
			t.Errorf("%s's CPU has no source", m.ID)
		}
	}
	for id := range unnamed {
		if !slices.Contains(missing, id) {
			t.Errorf("%s is listed as having no CPU but has one now (or is gone): take it off the list", id)
		}
	}
	for _, m := range c.Machines() {
		if m.VCPUs == 0 && m.Listing != ListingComponent {
			t.Errorf("%s has no vCPUs: the loader's workers would be guessed", m.ID)
		}
	}
}

// The GH200, Lambda's and AWS's Blackwell machines have the CPUs their providers run.
func TestTheCatalogNamesTodaysHosts(t *testing.T) {
	c := loadRealCPUs(t)
	for _, tt := range []struct{ id, family string }{
		{"lambda/gpu_1x_gh200", "neoverse-v2"},
		{"lambda/gpu_1x_h100_sxm5", "sapphire-rapids"},
		{"lambda/gpu_1x_b200_sxm6", "emerald-rapids"},
		{"lambda/gpu_8x_b200_sxm6", "emerald-rapids"},
		{"aws/p6-b200.48xlarge", "emerald-rapids"},
		{"aws/p6e-gb200.36xlarge", "neoverse-v2"},
		{"aws/p5.48xlarge", "zen3"},
		{"aws/p5en.48xlarge", "sapphire-rapids"},
		{"azure/Standard_NC40ads_H100_v5", "zen4"},
	} {
		m, err := c.Machine(tt.id)
		if err != nil {
			t.Fatal(err)
		}
		h := host.Resolve(m.CPU, m.VCPUs, m.MemoryGiB)
		if h.CPUAssumed || h.Family != tt.family {
			t.Errorf("%s: host %+v, want a named %s CPU", tt.id, h, tt.family)
		}
	}
}

func TestParseCPUsTakesClocksOrNone(t *testing.T) {
	const machines = "id,provider,instance,gpu,gpu_count,vcpus,memory_gib,region,price_usd_per_hour,price_date,price_source,listing,notes\n" +
		"x/m,x,m,t4,1,8,32,r,1,,src,current,\n"
	for _, tt := range []struct {
		name, row, field string
		turbo            float64
	}{
		{name: "clocks given", row: "x/m,Intel Xeon Platinum 8480+,2.0,3.8,lscpu", turbo: 3.8},
		{name: "no clocks: a measured family needs none", row: "x/m,NVIDIA Grace,,,lscpu"},
		{name: "one clock without the other", row: "x/m,Intel Xeon Platinum 8480+,,3.8,lscpu", field: "turbo_ghz"},
		{name: "turbo below base", row: "x/m,Intel Xeon Platinum 8480+,3.8,2.0,lscpu", field: "turbo_ghz"},
		{name: "no model", row: "x/m,,2,3,lscpu", field: "cpu"},
		{name: "no source", row: "x/m,NVIDIA Grace,,,", field: "source"},
		{name: "not a catalog machine", row: "x/other,NVIDIA Grace,,,lscpu", field: "machine"},
	} {
		c, err := ParseCatalog([]byte(gpuHeader+gpuT4), []byte(machines))
		if err != nil {
			t.Fatal(err)
		}
		err = ParseCPUs([]byte("machine,cpu,base_ghz,turbo_ghz,source\n"+tt.row+"\n"), c)
		var re *RowError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (!errors.As(err, &re) || re.Field != tt.field):
			t.Errorf("%s: error %v, want one about %s", tt.name, err, tt.field)
		case tt.field == "":
			m, _ := c.Machine("x/m")
			if m.CPU == nil || m.CPU.TurboGHz != tt.turbo || !strings.Contains(m.CPU.Source, "lscpu") {
				t.Errorf("%s: CPU %+v", tt.name, m.CPU)
			}
		}
	}
}
