package hw

import (
	"math"
	"strings"
	"testing"
)

func TestParsePrice(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"1.25", 1.25, ""},
		{" $0.40 ", 0.40, ""},
		{"0", 0, ""},
		{"-1", 0, "negative"},
		{"abc", 0, "not a number"},
		{"NaN", 0, "not a number"},
		{"Inf", 0, "not a number"},
		{"", 0, "not a number"},
		{"0x1p4", 0, "not a number"}, // Go reads 16
		{"1_000", 0, "not a number"},
		{"+Inf", 0, "not a number"},
		{"2e-3", 0.002, ""},
		{".5", 0.5, ""},
		{"1e7", 0, "above $1e+06/h"},
	}
	for _, tt := range tests {
		got, err := ParsePrice(tt.in)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParsePrice(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParsePrice(%q) error %v, want one saying %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestUserMachineID(t *testing.T) {
	tests := []struct{ name, want string }{
		{"Lab box 2", "user/lab-box-2"},
		{"  My Workstation ", "user/my-workstation"},
		{"rtx/3090 (home)", "user/rtx-3090-home"},
		{"a.b_c", "user/a.b_c"},
		{"!!!", ""},
		{"../../etc", ""},
		{"/etc/passwd", ""},
		{`..\\windows`, ""},
		{".hidden", ""},
		{"lab\x1b[2Jbox", ""},
	}
	for _, tt := range tests {
		got, err := UserMachineID(tt.name)
		if tt.want == "" {
			if err == nil {
				t.Errorf("UserMachineID(%q) = %q, want an error", tt.name, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("UserMachineID(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestCheckUserMachine(t *testing.T) {
	c := loadRealCatalog(t)
	good := Machine{ID: "user/lab", GPUID: "rtx-3090", GPUCount: 2, PriceUSDPerHour: 0.3, VCPUs: 16, MemoryGiB: 64}
	tests := []struct {
		name    string
		edit    func(m *Machine)
		wantErr string
	}{
		{"valid", func(m *Machine) {}, ""},
		{"free is fine", func(m *Machine) { m.PriceUSDPerHour = 0 }, ""},
		{"unknown GPU", func(m *Machine) { m.GPUID = "rtx-3080" }, `unknown GPU "rtx-3080"`},
		{"zero GPUs", func(m *Machine) { m.GPUCount = 0 }, "from 1 to 64"},
		{"negative GPUs", func(m *Machine) { m.GPUCount = -2 }, "from 1 to 64"},
		{"a billion GPUs", func(m *Machine) { m.GPUCount = 1000000000 }, "from 1 to 64"},
		{"a price of a million dollars an hour and more", func(m *Machine) { m.PriceUSDPerHour = 2e6 }, "above $1e+06/h"},
		{"negative price", func(m *Machine) { m.PriceUSDPerHour = -0.1 }, "negative"},
		{"NaN price", func(m *Machine) { m.PriceUSDPerHour = math.NaN() }, "not a number"},
		{"negative vCPUs", func(m *Machine) { m.VCPUs = -1 }, "vCPUs"},
		{"negative memory", func(m *Machine) { m.MemoryGiB = -1 }, "memory"},
		{"not a user id", func(m *Machine) { m.ID = "lab" }, "user/NAME"},
		{"catalog provider", func(m *Machine) { m.ID = "aws/p3.2xlarge" }, "user/NAME"},
	}
	for _, tt := range tests {
		m := good
		tt.edit(&m)
		err := c.CheckUserMachine(m)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestMergeAppliesOverridesAndAppendsUserMachines(t *testing.T) {
	c := loadRealCatalog(t)
	user := []Machine{
		{ID: "user/zeta", GPUID: "t4", GPUCount: 1},
		{ID: "user/alpha", GPUID: "rtx-4090", GPUCount: 1, PriceUSDPerHour: 0.12},
	}
	overrides := map[string]float64{"aws/p3.2xlarge": 2.5, "aws/gone.xlarge": 1, "aws/g4dn.xlarge": -4}
	got := c.Merge(user, overrides)
	if len(got) != len(c.Machines())+2 {
		t.Fatalf("%d machines, want %d", len(got), len(c.Machines())+2)
	}
	byID := map[string]Machine{}
	for _, m := range got {
		byID[m.ID] = m
	}
	p3 := byID["aws/p3.2xlarge"]
	if p3.PriceUSDPerHour != 2.5 || !p3.PriceOverridden || p3.CatalogPrice != 3.06 {
		t.Errorf("overridden p3.2xlarge = price %v overridden %v catalog %v; want 2.5 true 3.06", p3.PriceUSDPerHour, p3.PriceOverridden, p3.CatalogPrice)
	}
	if g4 := byID["aws/g4dn.xlarge"]; g4.PriceOverridden || g4.PriceUSDPerHour != 0.526 {
		t.Errorf("an invalid override changed g4dn.xlarge: %+v", g4)
	}
	n := len(got)
	if got[n-2].ID != "user/alpha" || got[n-1].ID != "user/zeta" {
		t.Errorf("user machines at the end in id order: got %s, %s", got[n-2].ID, got[n-1].ID)
	}
	if a := got[n-2]; !a.User || a.Listing != ListingUser || a.Provider != UserProvider || !a.Comparable() {
		t.Errorf("user machine not marked as such: %+v", a)
	}
	if orig, _ := c.Machine("aws/p3.2xlarge"); orig.PriceUSDPerHour != 3.06 {
		t.Errorf("Merge changed the catalog: p3.2xlarge now %v", orig.PriceUSDPerHour)
	}
}

func TestMatchGPUName(t *testing.T) {
	c := loadRealCatalog(t)
	tests := []struct {
		name   string
		memGiB float64
		want   string
	}{
		{"Tesla K80", 11.2, "k80"},
		{"Tesla P100-PCIE-16GB", 15.9, "p100-pcie-16gb"},
		{"Tesla V100-SXM2-16GB", 15.8, "v100-sxm2-16gb"},
		{"Tesla V100-SXM2-32GB", 31.7, "v100-sxm2-32gb"},
		{"Tesla V100-SXM2-32GB", 0, "v100-sxm2-32gb"},
		{"Tesla T4", 15, "t4"},
		{"NVIDIA A10G", 22, "a10g"},
		{"NVIDIA A10", 22, "a10"},
		{"NVIDIA L4", 22, "l4"},
		{"NVIDIA L40S", 44, "l40s"},
		{"NVIDIA A100-SXM4-40GB", 39.4, "a100-sxm4-40gb"},
		{"NVIDIA A100-SXM4-80GB", 79.2, "a100-sxm4-80gb"},
		{"NVIDIA A100-SXM4-80GB", 0, "a100-sxm4-80gb"},
		{"NVIDIA A100 80GB PCIe", 79.2, "a100-pcie-80gb"},
		{"NVIDIA H100 80GB HBM3", 79.6, "h100-sxm"},
		{"NVIDIA H100 PCIe", 79.6, "h100-pcie"},
		{"NVIDIA H100 NVL", 93.6, "h100-nvl"},
		{"NVIDIA H200", 139.8, "h200"},
		{"NVIDIA GH200 480GB", 95, "gh200"},
		{"NVIDIA GeForce RTX 3090", 24, "rtx-3090"},
		{"NVIDIA GeForce RTX 4090", 24, "rtx-4090"},
		{"NVIDIA RTX A6000", 47.5, "rtx-a6000"},
		{"NVIDIA GeForce GTX 1080 Ti", 10.9, "gtx-1080-ti"},
		{"NVIDIA GeForce RTX 2080 Ti", 10.7, "rtx-2080-ti"},
		{"NVIDIA TITAN V", 11.8, "titan-v"},
		{"NVIDIA GeForce RTX 3090 Ti", 24, ""},
		{"NVIDIA RTX 6000 Ada Generation", 47.5, ""},
		{"NVIDIA A100-PCIE-40GB", 39.4, ""},
		{"Tesla V100-PCIE-16GB", 15.8, ""},
		{"NVIDIA GeForce RTX 4080", 16, ""},
	}
	for _, tt := range tests {
		got, ok := c.MatchGPUName(tt.name, tt.memGiB)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("MatchGPUName(%q, %g) = %q, %v; want %q", tt.name, tt.memGiB, got, ok, tt.want)
		}
	}
}
