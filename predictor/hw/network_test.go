package hw

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCatalogNetworks(t *testing.T) {
	c := loadRealCatalog(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "assets", "catalog", NetworksFile))
	if err != nil {
		t.Fatal(err)
	}
	n, err := ParseNetworks(data, c)
	if err != nil {
		t.Fatalf("the embedded network file does not parse: %v", err)
	}
	for _, tc := range []struct {
		machine string
		fabric  string
		gbps    float64
		known   bool
	}{
		{"aws/p3dn.24xlarge", "EFA", 100, true},
		{"aws/p4d.24xlarge", "EFA", 400, true},
		{"aws/p5.48xlarge", "EFA", 3200, true},
		{"aws/p3.16xlarge", "Ethernet (ENA)", 25, true},
		{"azure/Standard_ND96asr_v4", "InfiniBand HDR", 1600, true},
		{"AZURE/standard_nd96isr_h100_v5", "InfiniBand NDR", 3200, true},
		{"lambda/gpu_8x_a100", "Ethernet", 25, false}, // unknown: the assumption
	} {
		got := n.For(tc.machine)
		if got.Fabric != tc.fabric || got.Gbps != tc.gbps || got.Assumed == tc.known || n.Known(tc.machine) != tc.known || got.Source == "" {
			t.Errorf("%s: %+v (known %v); want %s %g Gbit/s, known %v, with a source", tc.machine, got, n.Known(tc.machine), tc.fabric, tc.gbps, tc.known)
		}
	}
	if s := n.For("lambda/gpu_8x_a100").String(); s != "Ethernet 25 Gbit/s (assumed)" {
		t.Errorf("assumed network reads %q", s)
	}
}

func TestBrokenNetworkRows(t *testing.T) {
	c, err := ParseCatalog([]byte(gpuHeader+gpuV100+gpuT4), []byte(machineHeader+machineP3+machineG4))
	if err != nil {
		t.Fatal(err)
	}
	const head = "machine,fabric,gbps,latency_us,source\n"
	for _, tc := range []struct {
		name, csv, field string
		line             int
	}{
		{"unknown machine", head + "aws/p9,EFA,100,,doc\n", "machine", 2},
		{"twice", head + "aws/p3.2xlarge,ENA,10,,doc\naws/p3.2xlarge,ENA,10,,doc\n", "machine", 3},
		{"no bandwidth", head + "aws/p3.2xlarge,ENA,,,doc\n", "gbps", 2},
		{"not a number", head + "aws/p3.2xlarge,ENA,ten,,doc\n", "gbps", 2},
		{"no source", head + "aws/p3.2xlarge,ENA,10,,\n", "source", 2},
		{"no fabric", head + "aws/p3.2xlarge,,10,,doc\n", "fabric", 2},
		{"missing column", "machine,fabric,gbps,source\naws/p3.2xlarge,ENA,10,doc\n", "latency_us", 1},
	} {
		_, err := ParseNetworks([]byte(tc.csv), c)
		var re *RowError
		if !errors.As(err, &re) || re.File != NetworksFile || re.Field != tc.field || re.Line != tc.line {
			t.Errorf("%s: %v; want a %s error at line %d, field %s", tc.name, err, NetworksFile, tc.line, tc.field)
		}
	}
	for _, g := range []float64{0, -5} {
		if _, err := UserNetwork(g); err == nil || !strings.Contains(err.Error(), "positive") {
			t.Errorf("UserNetwork(%v): %v", g, err)
		}
	}
	if n, err := UserNetwork(200); err != nil || !n.Assumed || n.Gbps != 200 {
		t.Errorf("UserNetwork(200) = %+v, %v", n, err)
	}
}
