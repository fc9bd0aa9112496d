package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/hw"
)

// fixtureCatalogs is SkyPilot's catalog layout (catalogs/v7/<cloud>/vms.csv) with a
// handful of real instance types of five clouds; see app/prices/testdata.
var fixtureCatalogs = filepath.Join("..", "prices", "testdata", "skypilot-catalog", "catalogs", "v7")

func importFixtures(t *testing.T, dbPath string) {
	t.Helper()
	code, out, errOut := runMachinesCLI(t, dbPath, "prices", "import", fixtureCatalogs, "--date", "2026-11-20")
	if code != 0 {
		t.Fatalf("prices import: exit %d: %s%s", code, out, errOut)
	}
	for _, cloud := range []string{"aws", "azure", "gcp", "lambda", "runpod"} {
		if !strings.Contains(out, cloud+" ") || !strings.Contains(out, "imported") {
			t.Errorf("prices import's report lacks %s:\n%s", cloud, out)
		}
	}
}

func TestImportedPricesListAndCostRuns(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	importFixtures(t, dbPath)

	// machines --json lists the imported machines of every cloud with their on-demand
	// and spot prices in every region, the date and the age.
	got := listMachines(t, dbPath)
	clouds := map[string]int{}
	for _, m := range got.Machines {
		if len(m.Regions) > 0 {
			clouds[m.Provider]++
			if m.PriceDate != "2026-11-20" || m.PriceAgeDays == nil || !strings.Contains(m.PriceSource, "SkyPilot catalog") {
				t.Errorf("%s: date %q, age %v, source %q; want 2026-11-20, aged, from the SkyPilot catalog", m.ID, m.PriceDate, m.PriceAgeDays, m.PriceSource)
			}
		}
	}
	if len(clouds) != 5 {
		t.Errorf("machines with imported prices by cloud: %v; want all five clouds", clouds)
	}
	p3, _ := machineByID(got.Machines, "aws/p3.2xlarge")
	wantRegions := []hw.RegionPrice{
		{Region: "eu-west-1", PriceUSD: 3.305, SpotUSD: 0.9915, SpotZone: "euw1-az1"},
		{Region: "us-east-1", PriceUSD: 3.06, SpotUSD: 0.918, SpotZone: "use1-az4"},
		{Region: "us-west-2", PriceUSD: 3.06, SpotUSD: 0.9374, SpotZone: "usw2-az1"},
	}
	if fmt.Sprint(p3.Regions) != fmt.Sprint(wantRegions) || p3.PriceUSDPerHour != 3.06 || p3.SpotPriceUSDPerHour != 0.918 || p3.PriceKind != hw.OnDemand {
		t.Errorf("aws/p3.2xlarge: $%g (spot $%g) %s, regions %+v; want $3.06 (spot $0.918) on-demand in %+v",
			p3.PriceUSDPerHour, p3.SpotPriceUSDPerHour, p3.PriceKind, p3.Regions, wantRegions)
	}
	if _, ok := machineByID(got.Machines, "runpod/1x_H100-NVL_SECURE"); !ok {
		t.Errorf("the imported RunPod H100 NVL instance is not a machine")
	}
	// The JSON names the age field price_age_days.
	_, raw, _ := runMachinesCLI(t, dbPath, "machines", "--json", "--provider", "lambda")
	if !strings.Contains(raw, `"price_age_days": `) {
		t.Errorf("machines --json has no price_age_days:\n%.400s", raw)
	}

	// Filters: spot available, a price ceiling.
	spotOnly := listMachines(t, dbPath, "--has-spot", "--provider", "lambda")
	if len(spotOnly.Machines) != 0 {
		t.Errorf("--has-spot listed Lambda machines, which have no spot prices: %d", len(spotOnly.Machines))
	}
	cheap := listMachines(t, dbPath, "--spot", "--max-price", "0.5")
	for _, m := range cheap.Machines {
		if m.PriceUSDPerHour <= 0 || m.PriceUSDPerHour > 0.5 || m.PriceKind != hw.Spot && m.PriceKind != hw.UserPrice {
			t.Errorf("--spot --max-price 0.5 listed %s at $%g %s", m.ID, m.PriceUSDPerHour, m.PriceKind)
		}
	}

	// best --spot costs each run with the machine's cheapest spot price and says so.
	code, out, errOut := runMachinesCLI(t, dbPath, "best", "--json", "--model", "resnet18", "--batches", "32,64",
		"--machine", "aws/p3.2xlarge,runpod/1x_RTX4090_SECURE,lambda/gpu_1x_gh200", "--spot")
	if code != 0 {
		t.Fatalf("best --spot: exit %d: %s", code, errOut)
	}
	var rows []BestRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("best --json: %v\n%s", err, out)
	}
	want := map[string]struct {
		price  float64
		region string
	}{"aws/p3.2xlarge": {0.918, "us-east-1"}, "runpod/1x_RTX4090_SECURE": {0.29, "IS"}}
	for _, r := range rows {
		b := r.Best
		if b == nil {
			t.Fatalf("%s: nothing fits", r.Machine)
		}
		w, priced := want[r.Machine]
		switch {
		case priced && (b.PriceUSDPerHour == nil || *b.PriceUSDPerHour != w.price || b.PriceKind != "spot" || b.PriceRegion != w.region ||
			b.PriceDate != "2026-11-20" || b.PriceAgeDays == nil || b.CostUSD == nil):
			t.Errorf("best --spot on %s: price %v %s in %s of %s (age %v), cost %v; want spot $%g in %s of 2026-11-20",
				r.Machine, b.PriceUSDPerHour, b.PriceKind, b.PriceRegion, b.PriceDate, b.PriceAgeDays, b.CostUSD, w.price, w.region)
		case !priced && (b.CostUSD != nil || !strings.Contains(b.PriceNote, "no spot price")):
			t.Errorf("best --spot on %s (no spot price): cost %v, note %q; want no cost and a note", r.Machine, b.CostUSD, b.PriceNote)
		}
	}

	// The table says which price each cost uses, and of when.
	code, out, errOut = runMachinesCLI(t, dbPath, "best", "--model", "resnet18", "--batches", "32,64", "--machine", "aws/p3.2xlarge", "--spot", "--region", "us-west-2")
	if code != 0 || !strings.Contains(out, "$0.9374/h spot us-west-2") || !strings.Contains(out, "aws/p3.2xlarge: spot price of 2026-11-20") {
		t.Errorf("best --spot --region us-west-2: exit %d\n%s%s", code, out, errOut)
	}
}

func TestPricesOlderThan90DaysAreFlagged(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	old := testDay.AddDate(0, 0, -120).Format(time.DateOnly)
	code, out, errOut := runMachinesCLI(t, dbPath, "prices", "import", filepath.Join(fixtureCatalogs, "lambda", "vms.csv"), "--date", old)
	if code != 0 {
		t.Fatalf("prices import: exit %d: %s%s", code, out, errOut)
	}
	got := listMachines(t, dbPath, "--provider", "lambda")
	gh, _ := machineByID(got.Machines, "lambda/gpu_1x_gh200")
	if gh.PriceAgeDays == nil || *gh.PriceAgeDays != 120 || !gh.PriceStale {
		t.Errorf("lambda/gpu_1x_gh200 priced on %s: age %v, stale %v; want 120 days, stale", old, gh.PriceAgeDays, gh.PriceStale)
	}
	_, table, _ := runMachinesCLI(t, dbPath, "machines", "--provider", "lambda")
	if !strings.Contains(table, "120d OLD") {
		t.Errorf("the machines table does not flag the 120-day-old price:\n%s", table)
	}
	code, out, _ = runMachinesCLI(t, dbPath, "predict", "--model", "resnet18", "--batch", "64", "--machine", "lambda/gpu_1x_gh200")
	if code != 0 || !strings.Contains(out, "us-east-3 OLD") || !strings.Contains(out, "OLD, older than 90 days") {
		t.Errorf("predict does not flag the old price:\n%s", out)
	}
	_, js, _ := runMachinesCLI(t, dbPath, "predict", "--json", "--model", "resnet18", "--batch", "64", "--machine", "lambda/gpu_1x_gh200")
	if !strings.Contains(js, `"price_age_days": 120`) || !strings.Contains(js, `"price_stale": true`) {
		t.Errorf("predict --json does not carry the age:\n%s", js)
	}
}

func TestPredictH100NVLDiffersFromGH200AndCitesItsSpecs(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	predict := func(machine string) PredictRow {
		code, out, errOut := runMachinesCLI(t, dbPath, "predict", "--json", "--model", "resnet50", "--machine", machine, "--batch", "256")
		if code != 0 {
			t.Fatalf("predict on %s: exit %d: %s", machine, code, errOut)
		}
		var rows []PredictRow
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("predict --json on %s: %v\n%s", machine, err, out)
		}
		return rows[0]
	}
	nvl, gh := predict("azure/Standard_NC40ads_H100_v5"), predict("lambda/gpu_1x_gh200")
	if nvl.GPU != "h100-nvl" || gh.GPU != "gh200" || nvl.IterMS == nil || gh.IterMS == nil || *nvl.IterMS == *gh.IterMS {
		t.Errorf("resnet50 at 256: %s %v ms, %s %v ms; want two different predictions", nvl.GPU, nvl.IterMS, gh.GPU, gh.IterMS)
	}
	if !strings.Contains(nvl.GPUSource, "NVIDIA H100 NVL GPU Product Brief") || !strings.Contains(gh.GPUSource, "NVIDIA GH200 Grace Hopper Superchip datasheet") {
		t.Errorf("spec sources: %q, %q; want NVIDIA's H100 NVL product brief and GH200 datasheet", nvl.GPUSource, gh.GPUSource)
	}
	_, table, _ := runMachinesCLI(t, dbPath, "predict", "--model", "resnet50", "--machine", "azure/Standard_NC40ads_H100_v5", "--batch", "256")
	if !strings.Contains(table, "h100-nvl specifications: NV-H100NVL-PB (NVIDIA H100 NVL GPU Product Brief") {
		t.Errorf("predict's table does not cite the H100 NVL's specifications:\n%s", table)
	}
}

func TestPricesUpdateCLI(t *testing.T) {
	failing := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cloud := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v7/"), "/vms.csv")
		if failing[cloud] {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		data, err := os.ReadFile(filepath.Join(fixtureCatalogs, cloud, "vms.csv"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	code, out, errOut := runMachinesCLI(t, dbPath, "prices", "update", "--url", srv.URL+"/v7", "--clouds", "aws,lambda", "--json")
	if code != 0 {
		t.Fatalf("prices update: exit %d: %s", code, errOut)
	}
	var rep struct {
		Clouds []struct{ Cloud, Status string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Clouds) != 2 || rep.Clouds[0].Status != "imported" {
		t.Fatalf("prices update --json: %v\n%s", err, out)
	}
	failing["aws"] = true
	code, out, errOut = runMachinesCLI(t, dbPath, "prices", "update", "--url", srv.URL+"/v7", "--clouds", "aws,lambda")
	if code != 1 || !strings.Contains(errOut, "the prices of aws") || !strings.Contains(errOut, "503 Service Unavailable") ||
		!strings.Contains(errOut, "stay as they were") || !strings.Contains(out, "failed") {
		t.Errorf("prices update with aws down: exit %d\n%s%s", code, out, errOut)
	}
	if got := listMachines(t, dbPath, "--provider", "aws"); !hasImported(got.Machines) {
		t.Errorf("aws's imported prices are gone after a failed update")
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v7"
	l.Close()
	code, _, errOut = runMachinesCLI(t, filepath.Join(t.TempDir(), "fresh.db"), "prices", "update", "--url", closed)
	if code != 1 || !strings.Contains(errOut, "seems to be offline") || !strings.Contains(errOut, "keeps using the prices shipped with cnntime") {
		t.Errorf("prices update offline: exit %d: %s", code, errOut)
	}
}

func hasImported(ms []hw.Machine) bool {
	for _, m := range ms {
		if len(m.Regions) > 0 {
			return true
		}
	}
	return false
}

func TestPricesUsageErrors(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"prices", "import"}, "give a PATH"},
		{[]string{"prices", "frobnicate"}, `unknown action "frobnicate"`},
		{[]string{"prices", "update", "--timeout", "-1s"}, "--timeout -1s: must be positive"},
		{[]string{"machines", "--max-price", "abc"}, `--max-price: price "abc" is not a number`},
		{[]string{"machines", "--region", "nowhere-1"}, `no machine has a price in region "nowhere-1"`},
		{[]string{"predict", "--model", "resnet18", "--machine", "aws/p3.2xlarge", "--batch", "32", "--region", "us-eats-1"}, `did you mean "us-east-1"?`},
	}
	for _, tc := range tests {
		code, _, errOut := runMachinesCLI(t, dbPath, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.wantErr) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", tc.args, code, errOut, tc.wantErr)
		}
	}
	// A bad file is a failure (exit 1) that names the line, and imports nothing.
	bad := filepath.Join(t.TempDir(), "aws", "vms.csv")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\np3.2xlarge,V100,1,8,61,abc,,us-east-1\n"), 0o644)
	code, _, errOut := runMachinesCLI(t, dbPath, "prices", "import", bad)
	if code != 1 || !strings.Contains(errOut, `line 2, field Price: "abc" is not a number (write it in decimal, e.g. 3.06); nothing was imported`) {
		t.Errorf("prices import of a bad file: exit %d: %s", code, errOut)
	}
}

// Offline, with nothing imported, spot costs come from the spot snapshot shipped with
// cnntime, dated; a machine it does not list says why it has none.
func TestBestSpotOfflineUsesTheShippedSnapshot(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	tests := []struct {
		name, region, machine string
		price                 float64 // 0: none
		where, note           string
	}{
		{"cheapest region", "", "aws/g6.xlarge", 0.2568, "us-east-2", ""},
		{"a chosen region", "us-west-2", "aws/p4d.24xlarge", 9.118, "us-west-2", ""},
		{"not listed", "", "lambda/gpu_1x_h100_sxm5", 0, "", "the shipped spot snapshot does not list it"},
	}
	for _, tc := range tests {
		args := []string{"best", "--json", "--model", "resnet18", "--batches", "32,64", "--machine", tc.machine, "--spot"}
		if tc.region != "" {
			args = append(args, "--region", tc.region)
		}
		code, out, errOut := runMachinesCLI(t, dbPath, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		var rows []BestRow
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Best == nil {
			t.Fatalf("%s: best --json: %v\n%s", tc.name, err, out)
		}
		b := rows[0].Best
		if tc.price == 0 {
			if b.CostUSD != nil || !strings.Contains(b.PriceNote, tc.note) {
				t.Errorf("%s: cost %v, note %q; want no cost and a note with %q", tc.name, b.CostUSD, b.PriceNote, tc.note)
			}
			continue
		}
		if b.PriceUSDPerHour == nil || *b.PriceUSDPerHour != tc.price || b.PriceKind != "spot" || b.PriceRegion != tc.where ||
			b.PriceDate != "2026-12-07" || b.PriceAgeDays == nil || b.CostUSD == nil {
			t.Errorf("%s: price %v %s in %s of %s (age %v), cost %v; want spot $%g in %s of 2026-12-07",
				tc.name, b.PriceUSDPerHour, b.PriceKind, b.PriceRegion, b.PriceDate, b.PriceAgeDays, b.CostUSD, tc.price, tc.where)
		}
	}
}
