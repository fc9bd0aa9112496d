package hw

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// awsVMs is a piece of SkyPilot's catalogs/v7/aws/vms.csv in its own column order.
const awsVMs = `InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone
c5.large,,,2.0,4.0,,0.085,0.035300,us-east-1,use1-az1
p3.2xlarge,V100,1.0,8.0,61.0,"{'Gpus': [{'Name': 'V100', 'Count': 1}]}",3.06,0.918000,us-east-1,use1-az4
p3.2xlarge,V100,1.0,8.0,61.0,"{'Gpus': [{'Name': 'V100', 'Count': 1}]}",3.06,0.850300,us-east-1,use1-az6
p3.2xlarge,V100,1.0,8.0,61.0,"{'Gpus': [{'Name': 'V100', 'Count': 1}]}",3.305,,eu-west-1,euw1-az1
`

// awsVMsReordered is the same rows with the columns in runpod's order and no GpuInfo.
const awsVMsReordered = `InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region,SpotPrice,Price,AvailabilityZone
c5.large,,,2.0,4.0,us-east-1,0.035300,0.085,use1-az1
p3.2xlarge,V100,1.0,8.0,61.0,us-east-1,0.918000,3.06,use1-az4
p3.2xlarge,V100,1.0,8.0,61.0,us-east-1,0.850300,3.06,use1-az6
p3.2xlarge,V100,1.0,8.0,61.0,eu-west-1,,3.305,euw1-az1
`

func TestParseSkyPilotCatalogFoldsZonesIntoRegions(t *testing.T) {
	want := []CloudOffer{
		{Cloud: "aws", Instance: "p3.2xlarge", Region: "eu-west-1", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSD: 3.305},
		{Cloud: "aws", Instance: "p3.2xlarge", Region: "us-east-1", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSD: 3.06, SpotUSD: 0.8503, SpotZone: "use1-az6"},
	}
	for name, data := range map[string]string{"aws order": awsVMs, "other order": awsVMsReordered} {
		cat, err := ParseSkyPilotCatalog("aws", "aws/vms.csv", []byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(cat.Offers, want) || cat.Rows != 4 || cat.CPUOnly != 1 {
			t.Errorf("%s: offers %+v, %d rows, %d CPU-only; want %+v, 4 rows, 1 CPU-only", name, cat.Offers, cat.Rows, cat.CPUOnly, want)
		}
	}
}

// gcpVMs is a piece of catalogs/v7/gcp/vms.csv: VMs, GPUs without an instance type, a TPU.
const gcpVMs = `InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.748405,0.224522
n1-standard-4,4.0,15.0,,,,us-central1,us-central1-a,0.189999,0.04
,,,A100,1,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 40960}}]}",us-central1,us-central1-a,2.933908,1.10022
,,,V100,1,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]}",us-central1,us-central1-a,2.48,0.992
,,,V100,1,"{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]}",europe-west4,europe-west4-a,2.55,1.02
,,,tpu-v3-8,1,tpu-v3-8,us-central1,us-central1-a,8.0,2.4
`

func TestParseSkyPilotCatalogAttachesGCPGPUsToTheirVM(t *testing.T) {
	cat, err := ParseSkyPilotCatalog("gcp", "gcp/vms.csv", []byte(gcpVMs))
	if err != nil {
		t.Fatal(err)
	}
	want := []CloudOffer{
		// A100 on its A2 VM: the VM's price plus the GPU's, spot likewise.
		{Cloud: "gcp", Instance: "a2-highgpu-1g", Region: "us-central1", Accelerator: "A100", AcceleratorCount: 1, VCPUs: 12, MemoryGiB: 85,
			PriceUSD: 3.68231, SpotUSD: 1.32474, SpotZone: "us-central1-a"},
		// V100 on an N1 VM in us-central1; none in europe-west4, where the catalog has no N1 VM.
		{Cloud: "gcp", Instance: "n1-standard-4-1x-nvidia-tesla-v100", Region: "us-central1", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 4, MemoryGiB: 15,
			PriceUSD: 2.67, SpotUSD: 1.032, SpotZone: "us-central1-a"},
		// A TPU has no VM of cnntime's: an offer of its own, for the record.
		{Cloud: "gcp", Instance: "tpu-v3-8", Region: "us-central1", Accelerator: "tpu-v3-8", AcceleratorCount: 1, PriceUSD: 8, SpotUSD: 2.4, SpotZone: "us-central1-a"},
	}
	if !reflect.DeepEqual(cat.Offers, want) {
		t.Errorf("GCP offers =\n%+v\nwant\n%+v", cat.Offers, want)
	}
}

// gcpA4 are real rows of SkyPilot's catalogs/v8/gcp/vms.csv (@006059e0): the A4 and A3
// Ultra VMs and their GPUs. A4's VM is listed at $0.0, its GPUs' row carrying the price.
const gcpA4 = `InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a3-ultragpu-8g,224.0,2952.0,,,,us-central1,us-central1-b,12.266,3.74713
a4-highgpu-8g,224.0,3968.0,,,,us-central1,us-central1-b,0.0,0.0
a4-highgpu-8g,224.0,3968.0,,,,us-east4,us-east4-b,0.0,0.0
n1-standard-4,4.0,15.0,,,,us-central1,us-central1-b,0.0,0.0
,,,B200,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 184320}}]},us-central1,us-central1-b,90.216,32.6064
,,,B200,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 184320}}]},us-east4,us-east4-b,64.44,32.6064
,,,H200,8,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 144384}}]},us-central1,us-central1-b,74.49392,37.2472
,,,T4,1,{'Gpus': [{'MemoryInfo': {'SizeInMiB': 16384}}]},us-central1,us-central1-b,0.35,0.1383
`

// GCP's A4 (B200) is priced by its GPUs' row, its VM row being $0.0; another VM at $0
// (here an N1 with no known price) leaves its offer unpriced, never at the GPUs' price alone.
func TestParseSkyPilotCatalogPricesGCPA4ByItsGPUs(t *testing.T) {
	cat, err := ParseSkyPilotCatalog("gcp", "gcp/vms.csv", []byte(gcpA4))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]CloudOffer{}
	for _, o := range cat.Offers {
		got[o.Instance+" "+o.Region] = o
	}
	for key, want := range map[string][2]float64{
		"a4-highgpu-8g us-central1":                    {90.216, 32.6064},
		"a4-highgpu-8g us-east4":                       {64.44, 32.6064},
		"a3-ultragpu-8g us-central1":                   {86.75992, 40.99433},
		"n1-standard-4-1x-nvidia-tesla-t4 us-central1": {0, 0},
	} {
		o, ok := got[key]
		if !ok {
			t.Errorf("no offer %s among %v", key, cat.Offers)
			continue
		}
		if o.PriceUSD != want[0] || o.SpotUSD != want[1] {
			t.Errorf("%s priced %v (spot %v), want %v (spot %v)", key, o.PriceUSD, o.SpotUSD, want[0], want[1])
		}
	}
}

func TestParseSkyPilotCatalogRefusesWhatIsNotACatalog(t *testing.T) {
	header := "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
	tests := []struct {
		name, cloud, data string
		wantErr           string
	}{
		{"empty file", "aws", "", "the file is empty"},
		{"HTML error page", "aws", "<html><body>Service Unavailable</body></html>\n", "not a SkyPilot catalog"},
		{"missing spot column", "aws", "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region\np3.2xlarge,V100,1,8,61,3.06,us-east-1\n", "the header lacks SpotPrice"},
		{"header only", "aws", header, "has a header but no rows"},
		{"price abc", "aws", header + "p3.2xlarge,V100,1,8,61,abc,0.9,us-east-1\n", `line 2, field Price: "abc" is not a number`},
		{"negative price", "aws", header + "p3.2xlarge,V100,1,8,61,-3.06,0.9,us-east-1\n", "line 2, field Price: -3.06 is negative"},
		{"NaN spot price", "aws", header + "p3.2xlarge,V100,1,8,61,3.06,NaN,us-east-1\n", `field SpotPrice: "NaN" is not a number`},
		{"infinite memory", "aws", header + "p3.2xlarge,V100,1,8,Inf,3.06,0.9,us-east-1\n", `field MemoryGiB: "Inf" is not a number`},
		{"half-downloaded", "aws", header + "p3.2xlarge,V100,1,8,61,3.06,0.9,us-east-1\np3.8xlarge,V100,4,32,24", "looks cut short"},
		{"cut mid-row at a newline", "aws", header + "p3.2xlarge,V100,1,8,61,3.06\n", "line 2, field row: has a different number of fields"},
		{"no region", "aws", header + "p3.2xlarge,V100,1,8,61,3.06,0.9,\n", "line 2, field Region: is empty"},
		{"zero GPUs", "aws", header + "p3.2xlarge,V100,0,8,61,3.06,0.9,us-east-1\n", "needs a count above 0"},
		{"GPU without VM outside GCP", "aws", header + ",V100,1,,,3.06,0.9,us-east-1\n", "only GCP lists GPUs without the VM"},
		{"hexadecimal price", "aws", header + "p3.2xlarge,V100,1,8,61,0x1p4,0.9,us-east-1\n", `line 2, field Price: "0x1p4" is not a number`},
		{"price with underscores", "aws", header + "p3.2xlarge,V100,1,8,61,1_0.5,0.9,us-east-1\n", `line 2, field Price: "1_0.5" is not a number`},
		{"absurd price", "aws", header + "p3.2xlarge,V100,1,8,61,1.7e308,0.9,us-east-1\n", "line 2, field Price: 1.7e+308 is more than any instance has"},
		{"price beyond float64", "aws", header + "p3.2xlarge,V100,1,8,61,1e999,0.9,us-east-1\n", `line 2, field Price: "1e999" is not a number`},
		{"absurd spot price", "aws", header + "p3.2xlarge,V100,1,8,61,3.06,2e6,us-east-1\n", "line 2, field SpotPrice: 2e+06 is more than any instance has"},
		{"2e19 GPUs", "aws", header + "p3.2xlarge,V100,2e19,8,61,3.06,0.9,us-east-1\n", "line 2, field AcceleratorCount: 2e+19 is more than any instance has (at most 64"},
		{"a billion GPUs", "aws", header + "p3.2xlarge,V100,1e9,8,61,3.06,0.9,us-east-1\n", "field AcceleratorCount: 1e+09 is more than any instance has"},
		{"1e300 vCPUs", "aws", header + "p3.2xlarge,V100,1,1e300,61,3.06,0.9,us-east-1\n", "line 2, field vCPUs: 1e+300 is more than any instance has"},
		{"absurd memory", "aws", header + "p3.2xlarge,V100,1,8,1e12,3.06,0.9,us-east-1\n", "line 2, field MemoryGiB: 1e+12 is more than any instance has"},
		{"reserved cloud name", "user", header + "p3.2xlarge,V100,1,8,61,3.06,0.9,us-east-1\n", "cnntime's own provider name"},
		{"bad cloud name", "AWS!", header + "p3.2xlarge,V100,1,8,61,3.06,0.9,us-east-1\n", "not a cloud name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := ParseSkyPilotCatalog(tc.cloud, "vms.csv", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseSkyPilotCatalog = %v, want an error with %q", err, tc.wantErr)
			}
			if cat != nil {
				t.Errorf("a refused file gave a catalog: %+v", cat)
			}
		})
	}
}

// hostileCatalog is a vms.csv of n rows, each made by row(i), after the header.
func hostileCatalog(n int, row func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone\n")
	for i := 0; i < n; i++ {
		b.WriteString(row(i))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// A catalog beyond what any cloud's holds is refused whole, at the line where it went
// over, before it is kept: so no file can make later commands slow (issue 30).
func TestParseSkyPilotCatalogBoundsWhatItKeeps(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"a million rows", hostileCatalog(1_000_000, func(i int) string { return fmt.Sprintf("c5.large,,,2,4,0.085,0.03,us-east-1,z%d", i%5) }),
			fmt.Sprintf("line %d, field row: the catalog holds more than %d rows", MaxCatalogRows+2, MaxCatalogRows)},
		{"an instance type per row", hostileCatalog(MaxCloudInstanceTypes+1, func(i int) string { return fmt.Sprintf("x%d,A100,8,96,1152,30.5,10.1,us-east-1,z1", i) }),
			fmt.Sprintf("line %d, field row: the catalog holds more than %d instance types with an accelerator", MaxCloudInstanceTypes+2, MaxCloudInstanceTypes)},
		{"a region per row", hostileCatalog(MaxCloudOffers+1, func(i int) string { return fmt.Sprintf("x%d,A100,8,96,1152,30.5,10.1,r%d,z1", i%100, i) }),
			fmt.Sprintf("line %d, field row: the catalog holds more than %d instance types × regions", MaxCloudOffers+2, MaxCloudOffers)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := ParseSkyPilotCatalog("aws", "aws/vms.csv", tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseSkyPilotCatalog = %v, want an error with %q", err, tc.wantErr)
			}
			if cat != nil {
				t.Errorf("a refused file gave a catalog of %d offers", len(cat.Offers))
			}
		})
	}
	// At the bounds, and with every zone of a region folded, a catalog is kept whole.
	atBounds := hostileCatalog(MaxCloudOffers*2, func(i int) string {
		return fmt.Sprintf("x%d,A100,8,96,1152,30.5,10.1,r%d,z%d", i%MaxCloudInstanceTypes, i%MaxCloudOffers, i/MaxCloudOffers)
	})
	cat, err := ParseSkyPilotCatalog("aws", "aws/vms.csv", atBounds)
	if err != nil {
		t.Fatalf("a catalog at the bounds: %v", err)
	}
	if len(cat.Offers) != MaxCloudOffers || cat.Rows != 2*MaxCloudOffers {
		t.Errorf("a catalog at the bounds kept %d offers of %d rows, want %d of %d", len(cat.Offers), cat.Rows, MaxCloudOffers, 2*MaxCloudOffers)
	}
}

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"3.06", 3.06, true}, {"0", 0, true}, {".5", 0.5, true}, {"2e-3", 0.002, true}, {"-1.5", -1.5, true}, {"7.", 7, true},
		{"0x1p4", 0, false}, {"1_0.5", 0, false}, {"Inf", 0, false}, {"NaN", 0, false}, {"1e999", 0, false}, {"", 0, false}, {" 1", 0, false}, {"1,5", 0, false},
	} {
		if got, ok := ParseDecimal(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("ParseDecimal(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestGPUForOfferIsTheOneTable(t *testing.T) {
	tests := []struct {
		cloud, accelerator, instance string
		count                        float64
		gpu                          string // "" when there is no performance data
		why                          string
	}{
		{"aws", "V100", "p3.2xlarge", 1, "v100-sxm2-16gb", ""},
		{"aws", "V100-32GB", "p3dn.24xlarge", 8, "v100-sxm2-32gb", ""},
		{"aws", "A100", "p4d.24xlarge", 8, "a100-sxm4-40gb", ""},
		{"aws", "A100-80GB", "p4de.24xlarge", 8, "a100-sxm4-80gb", ""},
		{"aws", "H100", "p5.48xlarge", 8, "h100-sxm", ""},
		{"aws", "H200", "p5en.48xlarge", 8, "h200", ""},
		{"aws", "B200", "p6-b200.48xlarge", 8, "b200", ""},
		{"lambda", "B200", "gpu_8x_b200_sxm6", 8, "b200", ""},
		{"azure", "GB200", "Standard_ND128isr_NDR_GB200_v6", 4, "gb200", ""},
		{"aws", "A10G", "g5.xlarge", 1, "a10g", ""},
		{"aws", "l4", "g6.xlarge", 1, "l4", ""}, // names match case-insensitively
		{"aws", "L40S", "g6e.xlarge", 1, "l40s", ""},
		{"aws", "Inferentia2", "inf2.xlarge", 1, "", `no performance data: cnntime's GPU catalog has no "Inferentia2"`},
		{"aws", "L4", "g6f.large", 0.125, "", "0.125 of a GPU"},
		{"gcp", "H100-MEGA", "a3-megagpu-8g", 8, "h100-sxm", ""},
		{"gcp", "tpu-v3-8", "tpu-v3-8", 1, "", "no performance data"},
		{"azure", "A100-80GB", "Standard_NC24ads_A100_v4", 1, "a100-pcie-80gb", ""},
		{"azure", "A100-80GB", "Standard_ND96amsr_A100_v4", 8, "a100-sxm4-80gb", ""},
		{"azure", "H100", "Standard_NC40ads_H100_v5", 1, "h100-nvl", ""},
		{"azure", "H100", "Standard_NCC40ads_H100_v5", 1, "h100-nvl", ""},
		{"azure", "H100", "Standard_ND96isr_H100_v5", 8, "h100-sxm", ""},
		{"azure", "A10", "Standard_NV6ads_A10_v5", 0.167, "", "0.167 of a GPU"},
		{"lambda", "A100", "gpu_1x_a100_sxm4", 1, "a100-sxm4-40gb", ""},
		{"lambda", "A100", "gpu_8x_a100", 8, "a100-sxm4-40gb", ""},
		{"lambda", "A100", "gpu_1x_a100", 1, "", "A100 PCIe 40GB"},
		{"lambda", "H100", "gpu_1x_h100_pcie", 1, "h100-pcie", ""},
		{"lambda", "H100", "gpu_8x_h100_sxm5", 8, "h100-sxm", ""},
		{"lambda", "GH200", "gpu_1x_gh200", 1, "gh200", ""},
		{"lambda", "A6000", "gpu_1x_a6000", 1, "rtx-a6000", ""},
		{"runpod", "A100-80GB", "1x_A100-80GB_SECURE", 1, "a100-pcie-80gb", ""},
		{"runpod", "A100-80GB-SXM", "1x_A100-80GB-SXM_SECURE", 1, "a100-sxm4-80gb", ""},
		{"runpod", "H100", "1x_H100_SECURE", 1, "h100-pcie", ""},
		{"runpod", "H100-NVL", "1x_H100-NVL_SECURE", 1, "h100-nvl", ""},
		{"runpod", "RTX4090", "2x_RTX4090_SECURE", 2, "rtx-4090", ""},
		{"runpod", "MI300X", "1x_MI300X_SECURE", 1, "", "no performance data"},
	}
	for _, tc := range tests {
		o := CloudOffer{Cloud: tc.cloud, Accelerator: tc.accelerator, Instance: tc.instance, AcceleratorCount: tc.count}
		gpu, n, why, ok := GPUForOffer(o)
		if gpu != tc.gpu || ok != (tc.gpu != "") || (ok && n != int(tc.count)) || !strings.Contains(why, tc.why) {
			t.Errorf("GPUForOffer(%s %s %s ×%g) = %q ×%d, %q, %v; want %q, why with %q", tc.cloud, tc.accelerator, tc.instance, tc.count, gpu, n, why, ok, tc.gpu, tc.why)
		}
	}
}

func TestAcceleratorRulesNameCatalogGPUs(t *testing.T) {
	c := loadRealCatalog(t)
	for _, r := range AcceleratorRules {
		if r.GPU == "" {
			if r.Why == "" {
				t.Errorf("rule for %s %s has no GPU and does not say why", r.Cloud, r.Accelerator)
			}
			continue
		}
		if _, err := c.GPU(r.GPU); err != nil {
			t.Errorf("rule for %s %s: %v", r.Cloud, r.Accelerator, err)
		}
	}
}

func TestGCPHostFor(t *testing.T) {
	tests := []struct {
		accelerator    string
		count          int
		host, instance string
		ok             bool
	}{
		{"A100", 8, "a2-highgpu-8g", "a2-highgpu-8g", true},
		{"A100-80GB", 1, "a2-ultragpu-1g", "a2-ultragpu-1g", true},
		{"L4", 2, "g2-standard-24", "g2-standard-24", true},
		{"T4", 4, "n1-standard-16", "n1-standard-16-4x-nvidia-tesla-t4", true},
		{"V100", 1, "n1-standard-4", "n1-standard-4-1x-nvidia-tesla-v100", true},
		{"V100", 3, "", "", false},
		{"H200", 1, "", "", false},
		{"tpu-v3-8", 1, "", "", false},
	}
	for _, tc := range tests {
		host, instance, ok := GCPHostFor(tc.accelerator, tc.count)
		if host != tc.host || instance != tc.instance || ok != tc.ok {
			t.Errorf("GCPHostFor(%s, %d) = %q, %q, %v; want %q, %q, %v", tc.accelerator, tc.count, host, instance, ok, tc.host, tc.instance, tc.ok)
		}
	}
}

func TestPriced(t *testing.T) {
	regional := Machine{ID: "aws/p3.2xlarge", Listing: ListingCurrent, Regions: []RegionPrice{
		{Region: "eu-west-1", PriceUSD: 3.305},
		{Region: "us-east-1", PriceUSD: 3.06, SpotUSD: 0.85, SpotZone: "use1-az6"},
		{Region: "us-west-2", PriceUSD: 3.06, SpotUSD: 0.92},
	}}
	shipped := Machine{ID: "aws/p2.xlarge", Region: "us-east-1", PriceUSDPerHour: 0.9, Listing: ListingCurrent}
	snapshot := Machine{ID: "aws/g6.xlarge", Region: "us-east-1", PriceUSDPerHour: 0.8048, PriceDate: "2026-01-21", Listing: ListingCurrent,
		ShippedSpot: &SpotSnapshot{Date: "2026-12-07", Source: "skypilot-catalog", Regions: []RegionPrice{
			{Region: "us-east-1", SpotUSD: 0.4007, SpotZone: "use1-az4"}, {Region: "us-east-2", SpotUSD: 0.2568, SpotZone: "use2-az3"}},
			onDemand: catalogPrice{region: "us-east-1", price: 0.8048, date: "2026-01-21", listing: ListingCurrent}}}
	overridden := regional
	overridden.PriceUSDPerHour, overridden.PriceOverridden = 2, true
	tests := []struct {
		name       string
		m          Machine
		choice     PriceChoice
		region     string
		price      float64
		kind       PriceKind
		listing    Listing
		noteSubstr string
	}{
		{"cheapest on-demand region", regional, PriceChoice{}, "us-east-1", 3.06, OnDemand, ListingCurrent, ""},
		{"chosen region", regional, PriceChoice{Region: "EU-west-1"}, "eu-west-1", 3.305, OnDemand, ListingCurrent, ""},
		{"cheapest spot region", regional, PriceChoice{Spot: true}, "us-east-1", 0.85, Spot, ListingCurrent, ""},
		{"spot in a chosen region", regional, PriceChoice{Region: "us-west-2", Spot: true}, "us-west-2", 0.92, Spot, ListingCurrent, ""},
		{"no spot in that region", regional, PriceChoice{Region: "eu-west-1", Spot: true}, "", 0, Spot, ListingUnpriced, "no spot price in region eu-west-1"},
		{"not offered there", regional, PriceChoice{Region: "ap-south-1"}, "", 0, OnDemand, ListingUnpriced, "not offered in region ap-south-1 (its regions: eu-west-1, us-east-1, us-west-2)"},
		{"shipped price fits", shipped, PriceChoice{Region: "us-east-1"}, "us-east-1", 0.9, OnDemand, ListingCurrent, ""},
		{"shipped price has no spot", shipped, PriceChoice{Spot: true}, "us-east-1", 0, Spot, ListingUnpriced, "the shipped spot snapshot does not list it"},
		{"snapshot: cheapest spot region", snapshot, PriceChoice{Spot: true}, "us-east-2", 0.2568, Spot, ListingCurrent, ""},
		{"snapshot: a chosen region", snapshot, PriceChoice{Spot: true, Region: "US-EAST-1"}, "us-east-1", 0.4007, Spot, ListingCurrent, ""},
		{"snapshot: not in that region", snapshot, PriceChoice{Spot: true, Region: "sa-east-1"}, "", 0, Spot, ListingUnpriced,
			"no spot price in region sa-east-1: the shipped snapshot of 2026-12-07 has its spot prices in us-east-1, us-east-2"},
		{"snapshot: on-demand stays the catalog's", snapshot, PriceChoice{}, "us-east-1", 0.8048, OnDemand, ListingCurrent, ""},
		{"shipped price elsewhere", shipped, PriceChoice{Region: "eu-west-1"}, "us-east-1", 0, OnDemand, ListingUnpriced, "its only price is for us-east-1"},
		{"the user's price stays", overridden, PriceChoice{Spot: true}, "", 2, UserPrice, ListingCurrent, ""},
	}
	for _, tc := range tests {
		got := tc.m.Priced(tc.choice)
		if (tc.region != "" && got.Region != tc.region) || got.PriceUSDPerHour != tc.price || got.PriceKind != tc.kind ||
			got.Listing != tc.listing || !strings.Contains(got.PriceNote, tc.noteSubstr) || (tc.noteSubstr == "" && got.PriceNote != "") {
			t.Errorf("%s: Priced(%+v) = region %q, $%g, %s, %s, note %q; want %q, $%g, %s, %s, note with %q", tc.name, tc.choice,
				got.Region, got.PriceUSDPerHour, got.PriceKind, got.Listing, got.PriceNote, tc.region, tc.price, tc.kind, tc.listing, tc.noteSubstr)
		}
	}
	// A spot snapshot's price is dated by the snapshot, and pricing on-demand again
	// gives the catalog's price and date back.
	if sp := snapshot.Priced(PriceChoice{Spot: true}); sp.PriceDate != "2026-12-07" || sp.PriceSource != "spot snapshot skypilot-catalog" {
		t.Errorf("spot from the snapshot dated %q from %q; want 2026-12-07 from the snapshot", sp.PriceDate, sp.PriceSource)
	} else if back := sp.Priced(PriceChoice{}); back.PriceUSDPerHour != 0.8048 || back.PriceDate != "2026-01-21" || back.Region != "us-east-1" {
		t.Errorf("on-demand after spot = $%g %s %s; want $0.8048 us-east-1 2026-01-21", back.PriceUSDPerHour, back.Region, back.PriceDate)
	}
	// Pricing again from an unpriced result gives the regional price back.
	if back := regional.Priced(PriceChoice{Region: "ap-south-1"}).Priced(PriceChoice{}); back.PriceUSDPerHour != 3.06 || back.Listing != ListingCurrent {
		t.Errorf("re-pricing an unpriced machine = $%g, %s; want $3.06, current", back.PriceUSDPerHour, back.Listing)
	}
}

func TestPriceAge(t *testing.T) {
	today := time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)
	tests := []struct {
		date  string
		days  int
		ok    bool
		stale bool
	}{
		{"2026-11-25", 0, true, false},
		{"2026-11-20", 5, true, false},
		{"2026-08-27", 90, true, false},
		{"2026-08-26", 91, true, true},
		{"2026-01-21", 308, true, true},
		{"2025-01", 693, true, true},
		{"2027-01-01", 0, true, false},
		{"", 0, false, false},
		{"last week", 0, false, false},
	}
	for _, tc := range tests {
		days, ok := PriceAgeDays(tc.date, today)
		if days != tc.days || ok != tc.ok {
			t.Errorf("PriceAgeDays(%q) = %d, %v; want %d, %v", tc.date, days, ok, tc.days, tc.ok)
		}
		m := Machine{PriceDate: tc.date, PriceKind: OnDemand}.Aged(today)
		if (m.PriceAgeDays != nil) != tc.ok || (tc.ok && *m.PriceAgeDays != tc.days) || m.PriceStale != tc.stale {
			t.Errorf("Aged(%q) = %v days, stale %v; want %d, %v", tc.date, m.PriceAgeDays, m.PriceStale, tc.days, tc.stale)
		}
	}
}

func TestWithOffersJoinsTheCatalogAndListsTheRest(t *testing.T) {
	c := loadRealCatalog(t)
	offers := []CloudOffer{
		{Cloud: "aws", Instance: "p3.2xlarge", Region: "us-west-2", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSD: 3.06, SpotUSD: 0.92},
		{Cloud: "aws", Instance: "p3.2xlarge", Region: "us-east-1", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSD: 2.9, SpotUSD: 0.85},
		{Cloud: "aws", Instance: "g5.4xlarge", Region: "us-east-1", Accelerator: "A10G", AcceleratorCount: 1, VCPUs: 16, MemoryGiB: 64, PriceUSD: 1.624},
		{Cloud: "aws", Instance: "inf2.xlarge", Region: "us-east-1", Accelerator: "Inferentia2", AcceleratorCount: 1, PriceUSD: 0.76},
	}
	sources := map[string]PriceSource{"aws": {Cloud: "aws", Source: "catalogs/v7/aws/vms.csv", Date: "2026-11-20"}}
	machines, unknown := c.WithOffers(offers, sources)
	byID := map[string]Machine{}
	for _, m := range machines {
		byID[m.ID] = m
	}
	catalogMachines := len(c.Machines())
	if len(machines) != catalogMachines+1 {
		t.Fatalf("WithOffers gave %d machines, want the catalog's %d and one new", len(machines), catalogMachines)
	}
	old := byID["aws/p3.2xlarge"] // in the catalog: keeps its id and GPU, takes the offers' prices
	if old.GPUID != "v100-sxm2-16gb" || old.Region != "us-east-1" || old.PriceUSDPerHour != 2.9 || old.SpotPriceUSDPerHour != 0.85 ||
		old.PriceDate != "2026-11-20" || !strings.Contains(old.PriceSource, "catalogs/v7/aws/vms.csv") || len(old.Regions) != 2 || old.Regions[0].Region != "us-east-1" {
		t.Errorf("aws/p3.2xlarge = %+v; want v100-sxm2-16gb at $2.9 in us-east-1 (spot $0.85) from the imported catalog of 2026-11-20", old)
	}
	added := byID["aws/g5.4xlarge"]
	if added.GPUID != "a10g" || added.GPUCount != 1 || added.VCPUs != 16 || added.MemoryGiB != 64 || added.Provider != "aws" ||
		added.PriceUSDPerHour != 1.624 || added.Listing != ListingCurrent || added.PriceKind != OnDemand {
		t.Errorf("aws/g5.4xlarge = %+v; want 1 × a10g, 16 vCPUs, 64 GiB at $1.624", added)
	}
	if len(unknown) != 1 || unknown[0].Instance != "inf2.xlarge" || !strings.Contains(unknown[0].Why, "no performance data") {
		t.Errorf("unpredictable offers = %+v, want inf2.xlarge with no performance data", unknown)
	}
}
