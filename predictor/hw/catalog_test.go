package hw

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loadRealCatalog parses the catalog files the app embeds.
func loadRealCatalog(t *testing.T) *Catalog {
	t.Helper()
	dir := filepath.Join("..", "..", "assets", "catalog")
	gpus, err := os.ReadFile(filepath.Join(dir, GPUsFile))
	if err != nil {
		t.Fatal(err)
	}
	machines, err := os.ReadFile(filepath.Join(dir, MachinesFile))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(gpus, machines)
	if err != nil {
		t.Fatalf("the embedded catalog does not parse: %v", err)
	}
	return c
}

func TestCatalogCoversTheRequiredGPUsAndProviders(t *testing.T) {
	c := loadRealCatalog(t)
	required := []string{"k80", "p100-pcie-16gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "t4", "a10g", "a10", "l4",
		"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie", "h200", "l40s", "rtx-3090",
		"rtx-4090", "rtx-a6000", "gtx-1080-ti", "rtx-2080-ti", "titan-v"}
	for _, id := range required {
		g, err := c.GPU(id)
		if err != nil {
			t.Errorf("required GPU %s: %v", id, err)
			continue
		}
		if g.Source == "" || g.Architecture == "" || g.MemoryGB == 0 {
			t.Errorf("GPU %s lacks its source, architecture or memory: %+v", id, g)
		}
	}
	if n := len(c.GPUs()); n < 21 {
		t.Errorf("%d GPUs, want at least 21", n)
	}
	if n := len(c.Machines()); n < 40 {
		t.Errorf("%d machines, want at least 40", n)
	}
	providers := c.Providers()
	for _, p := range []string{"aws", "gcp", "azure", "lambda"} {
		if !slices.Contains(providers, p) {
			t.Errorf("providers %v lack %s", providers, p)
		}
	}
	for _, m := range c.Machines() {
		if m.PriceSource == "" {
			t.Errorf("machine %s has no price source", m.ID)
		}
	}
}

func TestCatalogFigures(t *testing.T) {
	c := loadRealCatalog(t)
	gpu := func(id string) GPU {
		g, err := c.GPU(id)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	machine := func(id string) Machine {
		m, err := c.Machine(id)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		what      string
		got, want any
	}{
		{"v100-sxm2-16gb bandwidth", gpu("v100-sxm2-16gb").MemoryBandwidthGBs, 900.0},
		{"v100-sxm2-16gb SMs", gpu("v100-sxm2-16gb").SMs, 80},
		{"v100-sxm2-16gb FP16 tensor", gpu("v100-sxm2-16gb").FP16TFLOPS, 125.0},
		{"v100-sxm2-16gb NVLink per direction", gpu("v100-sxm2-16gb").InterconnectGBs, 150.0},
		{"v100-sxm2-16gb interconnect", gpu("v100-sxm2-16gb").Interconnect, "NVLink"},
		{"k80 is one die: memory", gpu("k80").MemoryGB, 12.0},
		{"k80 is one die: bandwidth", gpu("k80").MemoryBandwidthGBs, 240.0},
		{"k80 is one die: FP32", gpu("k80").FP32TFLOPS, 4.37},
		{"k80 is one die: SMX", gpu("k80").SMs, 13},
		{"a100-sxm4-80gb bandwidth", gpu("a100-sxm4-80gb").MemoryBandwidthGBs, 2039.0},
		{"a100-pcie-80gb bandwidth unknown", gpu("a100-pcie-80gb").MemoryBandwidthGBs, 0.0},
		{"a100-pcie-80gb link", gpu("a100-pcie-80gb").Interconnect, "PCIe"},
		{"h100-sxm TF32 dense", gpu("h100-sxm").TF32TFLOPS, 494.7},
		{"h100-sxm NVLink per direction", gpu("h100-sxm").InterconnectGBs, 450.0},
		{"h100-pcie PCIe gen5", gpu("h100-pcie").InterconnectGBs, 64.0},
		{"t4 PCIe gen3", gpu("t4").InterconnectGBs, 16.0},
		{"titan-v tensor unknown", gpu("titan-v").FP16TFLOPS, 0.0},
		{"l4 L2", gpu("l4").L2MB, 48.0},
		{"aws/p3.2xlarge price", machine("aws/p3.2xlarge").PriceUSDPerHour, 3.06},
		{"aws/p3.2xlarge GPU", machine("aws/p3.2xlarge").GPUID, "v100-sxm2-16gb"},
		{"aws/p3.2xlarge price date", machine("aws/p3.2xlarge").PriceDate, "2026-01-21"},
		{"aws/p2.16xlarge counts dies", machine("aws/p2.16xlarge").GPUCount, 16},
		{"azure/Standard_ND96isr_H100_v5 GPUs", machine("azure/Standard_ND96isr_H100_v5").GPUCount, 8},
		{"lookup ignores case", machine("AZURE/standard_nc6s_v3").VCPUs, 6},
		{"lambda/gpu_8x_h100_sxm5 price", machine("lambda/gpu_8x_h100_sxm5").PriceUSDPerHour, 31.92},
		{"gcp/a2-highgpu-8g RAM", machine("gcp/a2-highgpu-8g").MemoryGiB, 680.0},
		{"historical row flagged", machine("aws/p5.48xlarge-historical").Listing, ListingHistorical},
		{"unpriced row flagged", machine("aws/p6e-gb200.36xlarge").Listing, ListingUnpriced},
		{"p5e priced by its Capacity Block rate", machine("aws/p5e.48xlarge").PriceUSDPerHour, 39.8},
		{"p5e's rate flagged", machine("aws/p5e.48xlarge").Listing, ListingHistorical},
		{"b200 SMs as the device reports", gpu("b200").SMs, 148},
		{"b200 FP16 tensor dense", gpu("b200").FP16TFLOPS, 2250.0},
		{"b200 FP8 tensor dense", gpu("b200").FP8TFLOPS, 4500.0},
		{"b200 bandwidth", gpu("b200").MemoryBandwidthGBs, 7700.0},
		{"b200 NVLink5 per direction", gpu("b200").InterconnectGBs, 900.0},
		{"b200 compute capability", gpu("b200").ComputeCapability, "10.0"},
		{"gb200 FP16 tensor dense", gpu("gb200").FP16TFLOPS, 2500.0},
		{"gb200 memory", gpu("gb200").MemoryGB, 186.0},
		{"gb200 host link is not PCIe", gpu("gb200").PCIeGen, 0},
		{"aws/p6-b200.48xlarge price", machine("aws/p6-b200.48xlarge").PriceUSDPerHour, 113.9328},
		{"gcp/a4-highgpu-8g GPUs", machine("gcp/a4-highgpu-8g").GPUID, "b200"},
		{"lambda/gpu_8x_b200_sxm6 price", machine("lambda/gpu_8x_b200_sxm6").PriceUSDPerHour, 53.52},
		{"gcp/a3-ultragpu-8g GPUs", machine("gcp/a3-ultragpu-8g").GPUID, "h200"},
		{"GPU add-on flagged", machine("gcp/nvidia-tesla-t4-gpu-addon").Listing, ListingComponent},
		{"current row", machine("aws/g4dn.xlarge").Listing, ListingCurrent},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.what, tt.got, tt.want)
		}
	}
}

func TestEveryNVLinkAndDerivedFigureSaysWhy(t *testing.T) {
	c := loadRealCatalog(t)
	for _, g := range c.GPUs() {
		if g.InterconnectGBs > 0 && !strings.Contains(g.InterconnectSource, "DERIVED") {
			t.Errorf("GPU %s interconnect %g GB/s has no derivation: %q", g.ID, g.InterconnectGBs, g.InterconnectSource)
		}
	}
	for _, id := range []string{"k80", "a100-pcie-80gb", "rtx-2080-ti", "a10g"} {
		g, _ := c.GPU(id)
		if !strings.Contains(g.Source, "DERIVED") {
			t.Errorf("GPU %s has derived figures but its source does not say so: %q", id, g.Source)
		}
	}
}

const (
	gpuHeader     = "id,name,architecture,compute_capability,sm_count,boost_clock_mhz,fp32_tflops,tf32_tensor_tflops,fp16_tensor_tflops,fp8_tensor_tflops,memory_gb,memory_type,memory_bandwidth_gbps,l2_cache_mb,pcie_gen,pcie_lanes,interconnect,interconnect_gbps,interconnect_source,tdp_w,source,notes\n"
	gpuV100       = "v100-sxm2-16gb,Tesla V100 SXM2 16GB,Volta,7.0,80,1530,15.7,,125,,16,HBM2,900,6,3,16,NVLink,150,NVLink2,300,datasheet,\n"
	gpuT4         = "t4,Tesla T4,Turing,7.5,40,1590,8.1,,65,,16,GDDR6,320,4,3,16,PCIe,16,gen3 x16,70,datasheet,\n"
	machineHeader = "id,provider,instance,gpu,gpu_count,vcpus,memory_gib,region,price_usd_per_hour,price_date,price_source,listing,notes\n"
	machineP3     = "aws/p3.2xlarge,aws,p3.2xlarge,v100-sxm2-16gb,1,8,61,us-east-1,3.06,2026-01-21,vantage,current,\n"
	machineG4     = "aws/g4dn.xlarge,aws,g4dn.xlarge,t4,1,4,16,us-east-1,0.526,2026-01-21,vantage,current,\n"
)

func TestParseCatalogSmall(t *testing.T) {
	c, err := ParseCatalog([]byte(gpuHeader+gpuV100+gpuT4), []byte(machineHeader+machineP3+machineG4))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GPUIDs(); !slices.Equal(got, []string{"v100-sxm2-16gb", "t4"}) {
		t.Errorf("GPU ids %v", got)
	}
	if got := c.MachineIDs(); !slices.Equal(got, []string{"aws/p3.2xlarge", "aws/g4dn.xlarge"}) {
		t.Errorf("machine ids %v", got)
	}
	g, _ := c.GPU("t4")
	if g.TDPW != 70 || g.PCIeGen != 3 || g.ComputeCapability != "7.5" || g.TF32TFLOPS != 0 {
		t.Errorf("t4 parsed as %+v", g)
	}
}

func TestBrokenRowsNameFileLineAndField(t *testing.T) {
	replace := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("test fixture lacks %q", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	tests := []struct {
		name            string
		gpus, machines  string
		file, field     string
		line            int
		messageContains string
	}{
		{"bandwidth not a number", gpuHeader + gpuV100 + replace(gpuT4, ",320,", ",fast,"), machineHeader, GPUsFile, "memory_bandwidth_gbps", 3, `"fast" is not a number`},
		{"negative FP32", gpuHeader + replace(gpuV100, ",15.7,", ",-15.7,"), machineHeader, GPUsFile, "fp32_tflops", 2, "negative"},
		{"SM count not whole", gpuHeader + replace(gpuV100, ",80,", ",80.5,"), machineHeader, GPUsFile, "sm_count", 2, "whole number"},
		{"bad GPU id", gpuHeader + replace(gpuV100, "v100-sxm2-16gb", "V100 SXM2"), machineHeader, GPUsFile, "id", 2, "not a GPU id"},
		{"duplicate GPU", gpuHeader + gpuV100 + gpuV100, machineHeader, GPUsFile, "id", 3, "twice"},
		{"no source", gpuHeader + replace(gpuV100, "datasheet", ""), machineHeader, GPUsFile, "source", 2, "required"},
		{"bad compute capability", gpuHeader + replace(gpuV100, ",7.0,", ",seven,"), machineHeader, GPUsFile, "compute_capability", 2, "compute capability"},
		{"unknown link", gpuHeader + replace(gpuV100, "NVLink,", "Infiniband,"), machineHeader, GPUsFile, "interconnect", 2, "neither"},
		{"link without basis", gpuHeader + replace(gpuV100, "NVLink2", ""), machineHeader, GPUsFile, "interconnect_source", 2, "comes from"},
		{"missing column", strings.Replace(gpuHeader, ",tdp_w", "", 1) + gpuV100, machineHeader, GPUsFile, "tdp_w", 1, "lacks"},
		{"unknown column", strings.Replace(gpuHeader, "notes", "remarks", 1) + gpuV100, machineHeader, GPUsFile, "notes", 1, "lacks"},
		{"short row", gpuHeader + "t4,Tesla T4\n", machineHeader, GPUsFile, "row", 2, "number of fields"},
		{"empty GPU file", "", machineHeader, GPUsFile, "header", 1, "empty"},
		{"no GPUs", gpuHeader, machineHeader, GPUsFile, "id", 2, "no GPUs"},
		{"unknown GPU in machine", gpuHeader + gpuV100, machineHeader + replace(machineP3, "v100-sxm2-16gb", "v100"), MachinesFile, "gpu", 2, `did you mean "v100-sxm2-16gb"`},
		{"zero GPUs", gpuHeader + gpuV100, machineHeader + replace(machineP3, ",1,8,", ",0,8,"), MachinesFile, "gpu_count", 2, "at least 1"},
		{"price not a number", gpuHeader + gpuV100 + gpuT4, machineHeader + machineP3 + replace(machineG4, "0.526", "cheap"), MachinesFile, "price_usd_per_hour", 3, `"cheap" is not a number`},
		{"negative price", gpuHeader + gpuV100, machineHeader + replace(machineP3, "3.06", "-3.06"), MachinesFile, "price_usd_per_hour", 2, "negative"},
		{"current without price", gpuHeader + gpuV100, machineHeader + replace(machineP3, "3.06", ""), MachinesFile, "price_usd_per_hour", 2, "unpriced"},
		{"id not provider/instance", gpuHeader + gpuV100, machineHeader + replace(machineP3, "aws/p3.2xlarge", "gcp/p3.2xlarge"), MachinesFile, "id", 2, "aws/INSTANCE"},
		{"reserved provider", gpuHeader + gpuV100, machineHeader + strings.ReplaceAll(machineP3, "aws", "user"), MachinesFile, "provider", 2, "reserved"},
		{"reserved local provider", gpuHeader + gpuV100, machineHeader + strings.ReplaceAll(machineP3, "aws", "local"), MachinesFile, "provider", 2, "reserved"},
		{"bad listing", gpuHeader + gpuV100, machineHeader + replace(machineP3, "current", "old"), MachinesFile, "listing", 2, "not one of"},
		{"bad price date", gpuHeader + gpuV100, machineHeader + replace(machineP3, "2026-01-21", "last year"), MachinesFile, "price_date", 2, "not a date"},
		{"duplicate machine", gpuHeader + gpuV100, machineHeader + machineP3 + replace(machineP3, "aws/p3.2xlarge", "aws/P3.2xlarge"), MachinesFile, "id", 3, "twice"},
		{"quoted field broken", gpuHeader + gpuV100, machineHeader + `aws/p3.2xlarge,aws,"p3,v100-sxm2-16gb` + "\n", MachinesFile, "row", 2, "quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseCatalog([]byte(tt.gpus), []byte(tt.machines))
			if err == nil {
				t.Fatalf("parsed a broken catalog: %d GPUs", len(c.GPUs()))
			}
			var re *RowError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *RowError", err)
			}
			if re.File != tt.file || re.Line != tt.line || re.Field != tt.field {
				t.Errorf("error at %s line %d field %s, want %s line %d field %s (%v)", re.File, re.Line, re.Field, tt.file, tt.line, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.messageContains) {
				t.Errorf("error %q does not say %q", err, tt.messageContains)
			}
		})
	}
}

func TestUnknownIDsSuggest(t *testing.T) {
	c := loadRealCatalog(t)
	tests := []struct {
		id   string
		want string // the first suggestion; "" for none
	}{
		{"v100", "v100-sxm2-16gb"},
		{"a100-sxm4-80", "a100-sxm4-80gb"},
		{"rtx-4080", "rtx-4090"},
		{"quantum-computer", ""},
	}
	for _, tt := range tests {
		_, err := c.GPU(tt.id)
		var ue *UnknownIDError
		if !errors.As(err, &ue) {
			t.Fatalf("GPU(%q) error %v, want *UnknownIDError", tt.id, err)
		}
		got := ""
		if len(ue.Suggestions) > 0 {
			got = ue.Suggestions[0]
		}
		if got != tt.want {
			t.Errorf("GPU(%q) suggests %v, want first %q", tt.id, ue.Suggestions, tt.want)
		}
	}
	_, err := c.Machine("aws/p3.2xlarg")
	if err == nil || !strings.Contains(err.Error(), `did you mean "aws/p3.2xlarge"`) {
		t.Errorf("Machine(aws/p3.2xlarg) error %v, want a suggestion of aws/p3.2xlarge", err)
	}
}

// BenchmarkParseCatalog measures start-up's catalog cost: parsing and validating both files.
func BenchmarkParseCatalog(b *testing.B) {
	dir := filepath.Join("..", "..", "assets", "catalog")
	gpus, err := os.ReadFile(filepath.Join(dir, GPUsFile))
	if err != nil {
		b.Fatal(err)
	}
	machines, err := os.ReadFile(filepath.Join(dir, MachinesFile))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseCatalog(gpus, machines); err != nil {
			b.Fatal(err)
		}
	}
}
