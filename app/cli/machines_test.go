package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/predictor/host"
	"cnntime/predictor/hw"
)

// runMachinesCLI runs cnntime with a --db and returns the exit status and outputs.
func runMachinesCLI(t *testing.T, dbPath string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := RunCLI(context.Background(), append([]string{"--db", dbPath}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// listMachines runs 'cnntime machines --json' and decodes it.
func listMachines(t *testing.T, dbPath string, args ...string) machinesJSON {
	t.Helper()
	code, out, errOut := runMachinesCLI(t, dbPath, append([]string{"machines", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("machines --json %v: exit %d: %s", args, code, errOut)
	}
	var got machinesJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("machines --json is not JSON: %v\n%s", err, out)
	}
	return got
}

func machineByID(ms []hw.Machine, id string) (hw.Machine, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return hw.Machine{}, false
}

func TestMachinesJSONListsTheCatalog(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	got := listMachines(t, dbPath)
	if len(got.GPUs) < 21 {
		t.Errorf("%d GPUs, want at least 21", len(got.GPUs))
	}
	if len(got.Machines) < 40 {
		t.Errorf("%d machines, want at least 40", len(got.Machines))
	}
	providers := map[string]bool{}
	for _, m := range got.Machines {
		providers[m.Provider] = true
		if m.PriceSource == "" {
			t.Errorf("%s has no price source", m.ID)
		}
	}
	if len(providers) < 4 {
		t.Errorf("providers %v, want at least 4", providers)
	}
	for _, g := range got.GPUs {
		if g.Source == "" {
			t.Errorf("GPU %s has no source", g.ID)
		}
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Errorf("listing machines created the cache file (stat: %v)", err)
	}
	// The JSON carries every field, with the documented names.
	_, raw, _ := runMachinesCLI(t, dbPath, "machines", "--json", "--gpu", "v100-sxm2-16gb")
	for _, field := range []string{`"memory_bandwidth_gbps": 900`, `"interconnect_source"`, `"price_date": "2026-01-21"`, `"listing": "current"`, `"price_usd_per_hour": 3.06`} {
		if !strings.Contains(raw, field) {
			t.Errorf("machines --json lacks %s", field)
		}
	}
}

func TestMachinesFilters(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	tests := []struct {
		args         []string
		wantProvider string
		wantGPU      string
		atLeast      int
	}{
		{[]string{"--provider", "lambda"}, "lambda", "", 10},
		{[]string{"--provider", "AWS"}, "aws", "", 20},
		{[]string{"--gpu", "t4"}, "", "t4", 8},
		{[]string{"--gpu", "H100-SXM", "--provider", "azure"}, "azure", "h100-sxm", 1},
	}
	for _, tt := range tests {
		got := listMachines(t, dbPath, tt.args...)
		if len(got.Machines) < tt.atLeast {
			t.Errorf("%v: %d machines, want at least %d", tt.args, len(got.Machines), tt.atLeast)
		}
		for _, m := range got.Machines {
			if (tt.wantProvider != "" && m.Provider != tt.wantProvider) || (tt.wantGPU != "" && m.GPUID != tt.wantGPU) {
				t.Errorf("%v listed %s (%s, %s)", tt.args, m.ID, m.Provider, m.GPUID)
			}
		}
		if tt.wantGPU != "" && (len(got.GPUs) != 1 || got.GPUs[0].ID != tt.wantGPU) {
			t.Errorf("%v: GPUs %v, want only %s", tt.args, got.GPUs, tt.wantGPU)
		}
	}
	bad := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"machines", "--provider", "lambada"}, `did you mean "lambda"`},
		{[]string{"machines", "--gpu", "v100"}, `did you mean "v100-sxm2-16gb"`},
		{[]string{"machines", "extra"}, `unexpected argument "extra": 'machines' takes flags only`},
		{[]string{"machines", "add"}, "run 'cnntime machine add'"},
		{[]string{"machines", "set-price"}, "to set price, run 'cnntime machine set-price'"},
		{[]string{"machines", "AWS"}, "run 'cnntime machines --provider aws'"},
		{[]string{"machines", "t4"}, "run 'cnntime machines --gpu t4'"},
	}
	for _, tt := range bad {
		code, _, errOut := runMachinesCLI(t, dbPath, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.wantErr)
		}
	}
	code, out, _ := runMachinesCLI(t, dbPath, "machines", "--provider", "runpod")
	if code != 0 || !strings.Contains(out, "runpod/rtx-4090-community-cloud") || strings.Contains(out, "aws/") {
		t.Errorf("table for runpod: exit %d\n%s", code, out)
	}
}

func TestMachineRoundTripSurvivesRestart(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	steps := []struct {
		args    []string
		wantOut string
	}{
		{[]string{"machine", "add", "--name", "Lab box", "--gpu", "rtx-3090", "--count", "2", "--price", "0.35", "--vcpus", "16", "--memory", "64"}, "added user/lab-box: 2 × rtx-3090 at $0.35/h"},
		{[]string{"machine", "set-price", "user/lab-box", "0.5"}, "price of user/lab-box is now $0.5/h"},
		{[]string{"machine", "set-price", "aws/p3.2xlarge", "2.5"}, "price of aws/p3.2xlarge is now $2.5/h"},
		{[]string{"machine", "set-price", "LAMBDA/gpu_1x_a10", "$1"}, "price of lambda/gpu_1x_a10 is now $1/h"},
	}
	for _, s := range steps {
		code, out, errOut := runMachinesCLI(t, dbPath, s.args...)
		if code != 0 || !strings.Contains(out, s.wantOut) {
			t.Fatalf("%v: exit %d, out %q, err %q; want %q", s.args, code, out, errOut, s.wantOut)
		}
	}
	// Each RunCLI opens the cache afresh: what it reads was stored, as after a restart.
	got := listMachines(t, dbPath)
	lab, ok := machineByID(got.Machines, "user/lab-box")
	if !ok || lab.GPUID != "rtx-3090" || lab.GPUCount != 2 || lab.PriceUSDPerHour != 0.5 || lab.VCPUs != 16 || lab.MemoryGiB != 64 || !lab.User || lab.Listing != hw.ListingUser {
		t.Errorf("user/lab-box = %+v", lab)
	}
	if lab.CPU != nil {
		t.Errorf("user/lab-box was added without --cpu and has the CPU %+v", lab.CPU)
	}
	p3, _ := machineByID(got.Machines, "aws/p3.2xlarge")
	if p3.PriceUSDPerHour != 2.5 || !p3.PriceOverridden || p3.CatalogPrice != 3.06 {
		t.Errorf("overridden p3.2xlarge = %v overridden %v catalog %v", p3.PriceUSDPerHour, p3.PriceOverridden, p3.CatalogPrice)
	}
	code, table, _ := runMachinesCLI(t, dbPath, "machines", "--provider", "aws")
	if code != 0 || !strings.Contains(table, "$2.5*") {
		t.Errorf("the table does not mark the override with *:\n%s", table)
	}

	code, out, errOut := runMachinesCLI(t, dbPath, "machine", "reset-price", "aws/p3.2xlarge")
	if code != 0 || !strings.Contains(out, "back to the catalog's $3.06/h") {
		t.Fatalf("reset-price: exit %d %q %q", code, out, errOut)
	}
	code, _, errOut = runMachinesCLI(t, dbPath, "machine", "remove", "user/lab-box")
	if code != 0 {
		t.Fatalf("remove: exit %d: %s", code, errOut)
	}
	got = listMachines(t, dbPath)
	if _, ok := machineByID(got.Machines, "user/lab-box"); ok {
		t.Error("user/lab-box still listed after remove")
	}
	p3, _ = machineByID(got.Machines, "aws/p3.2xlarge")
	if p3.PriceUSDPerHour != 3.06 || p3.PriceOverridden {
		t.Errorf("after reset p3.2xlarge = %v overridden %v", p3.PriceUSDPerHour, p3.PriceOverridden)
	}
	if a10, _ := machineByID(got.Machines, "lambda/gpu_1x_a10"); a10.PriceUSDPerHour != 1 || !a10.PriceOverridden {
		t.Errorf("the other override was lost: %+v", a10)
	}
}

// A machine's named host CPU is kept and sets its loader's per-core rate as a catalog
// machine's does: its family's measured core, no "CPU assumed", no widened band.
func TestMachineAddNamesItsCPU(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	for _, args := range [][]string{
		{"machine", "add", "--name", "zen box", "--gpu", "rtx-4090", "--price", "0.3", "--vcpus", "16", "--cpu", "AMD EPYC 9354"},
		{"machine", "add", "--name", "plain box", "--gpu", "rtx-4090", "--price", "0.3", "--vcpus", "16"},
		{"machine", "add", "--name", "clocked box", "--gpu", "rtx-4090", "--price", "0.3", "--vcpus", "16", "--cpu", "Acme Q9000", "--cpu-ghz", "4.5"},
	} {
		if code, _, errOut := runMachinesCLI(t, dbPath, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	zen, _ := machineByID(listMachines(t, dbPath).Machines, "user/zen-box")
	if zen.CPU == nil || zen.CPU.Model != "AMD EPYC 9354" || zen.CPU.Source != hw.UserCPUSource {
		t.Fatalf("user/zen-box's CPU = %+v, want AMD EPYC 9354 named by the user", zen.CPU)
	}
	hosts := map[string]host.Host{}
	for _, id := range []string{"user/zen-box", "user/plain-box", "user/clocked-box"} {
		code, out, errOut := runMachinesCLI(t, dbPath, "predict", "--model", "resnet50", "--machine", id, "--batch", "256", "--json")
		var rows []struct {
			Host host.Host `json:"host"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
			t.Fatalf("predict on %s: exit %d: %s%s", id, code, out, errOut)
		}
		hosts[id] = rows[0].Host
	}
	for _, tc := range []struct {
		id       string
		assumed  bool
		family   string
		speed    float64
		slowLess bool // the band's slow end below its speed: an assumed CPU
	}{
		{"user/zen-box", false, "zen4", host.CPU{Model: "AMD EPYC 9354"}.Speed(), false},
		{"user/plain-box", true, "skylake-sp", 1, true},
		{"user/clocked-box", false, "", 4.5 / host.ReferenceCPU.TurboGHz, false},
	} {
		h := hosts[tc.id]
		if h.CPUAssumed != tc.assumed || h.Family != tc.family || h.Speed != tc.speed || (h.SlowSpeed < h.Speed) != tc.slowLess {
			t.Errorf("%s: host %+v; want assumed %v, family %q, core speed %v", tc.id, h, tc.assumed, tc.family, tc.speed)
		}
	}
	if s := hosts["user/zen-box"].Speed; s <= 1 {
		t.Errorf("a Zen 4 core loads at %v of the reference core; its family's measured rate is faster", s)
	}
}

func TestMachineBadInputChangesNothing(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	for _, args := range [][]string{
		{"machine", "add", "--name", "lab", "--gpu", "t4", "--price", "0.2"},
		{"machine", "set-price", "aws/g4dn.xlarge", "0.4"},
	} {
		if code, _, errOut := runMachinesCLI(t, dbPath, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	snapshot := func() string {
		_, out, _ := runMachinesCLI(t, dbPath, "machines", "--json")
		return out
	}
	before := snapshot()
	tests := []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "-1"}, 2, "negative"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "cheap"}, 2, "not a number"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "NaN"}, 2, "not a number"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "v100", "--price", "1"}, 2, `did you mean "v100-sxm2-16gb"`},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--count", "0", "--price", "1"}, 2, "from 1 to 64"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--count", "-3", "--price", "1"}, 2, "from 1 to 64"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--count", "1000000000", "--price", "1"}, 2, "from 1 to 64"},
		{[]string{"machine", "add", "--name", "../../etc", "--gpu", "t4", "--price", "1"}, 2, "reads as a file path"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "0x1p4"}, 2, `price "0x1p4" is not a number`},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "1", "--memory", "NaN"}, 2, "--memory"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--count", "two", "--price", "1"}, 2, "invalid value"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "1", "--memory", "-8"}, 2, "memory"},
		{[]string{"machine", "add", "--name", "???", "--gpu", "t4", "--price", "1"}, 2, "no letter or digit"},
		{[]string{"machine", "add", "--gpu", "t4", "--price", "1"}, 2, "--name is required"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4"}, 2, "--price is required"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "1", "--cpu-ghz", "3"}, 2, "needs a model name"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "1", "--cpu", "EPYC", "--cpu-ghz", "40"}, 2, "at most 10 GHz"},
		{[]string{"machine", "add", "--name", "x", "--gpu", "t4", "--price", "1", "--cpu", "EPYC\x1b[2J"}, 2, "control character"},
		{[]string{"machine", "add", "--name", "LAB", "--gpu", "l4", "--price", "1"}, 1, "already a machine user/lab"},
		{[]string{"machine", "set-price", "aws/p3.2xlarge", "-1"}, 2, "negative"},
		{[]string{"machine", "set-price", "aws/p3.2xlarge", "lots"}, 2, "not a number"},
		{[]string{"machine", "set-price", "user/lab", "Inf"}, 2, "not a number"},
		{[]string{"machine", "set-price", "aws/p3.2xlarge", "0x1p4"}, 2, `price "0x1p4" is not a number`},
		{[]string{"machine", "set-price", "aws/p3.2xlarg", "1"}, 1, `did you mean "aws/p3.2xlarge"`},
		{[]string{"machine", "set-price", "aws/p3.2xlarge"}, 2, "takes ID USD"},
		{[]string{"machine", "reset-price", "aws/p3.2xlarge"}, 1, "not overridden"},
		{[]string{"machine", "reset-price", "user/lab"}, 1, "no catalog price"},
		{[]string{"machine", "remove", "aws/p3.2xlarge"}, 1, "cannot be removed"},
		{[]string{"machine", "remove", "user/lob"}, 1, `did you mean "user/lab"`},
		{[]string{"machine", "frobnicate"}, 2, "unknown action"},
		{[]string{"machine", "remov", "user/lab"}, 2, `did you mean "remove"`},
		{[]string{"machine"}, 2, "say what to do"},
	}
	for _, tt := range tests {
		code, out, errOut := runMachinesCLI(t, dbPath, tt.args...)
		if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q (stdout %q)", tt.args, code, errOut, tt.wantCode, tt.wantErr, out)
		}
		if after := snapshot(); after != before {
			t.Fatalf("%v changed the machines", tt.args)
		}
	}
}

func TestBadAddLeavesNoCacheFile(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	code, _, _ := runMachinesCLI(t, dbPath, "machine", "add", "--name", "x", "--gpu", "nope", "--price", "1")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Errorf("a rejected add created the cache (stat: %v)", err)
	}
}
