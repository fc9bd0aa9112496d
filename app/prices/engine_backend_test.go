package prices_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/app/prices"
)

// TestPricesReportSummary checks the one sentence the window's status line shows.
func TestPricesReportSummary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rep     prices.Report
		want    string
		changed bool
	}{
		{"nothing", prices.Report{}, "Prices: no cloud was read.", false},
		{"each status", prices.Report{Clouds: []prices.CloudReport{
			{Cloud: "aws", Status: "imported", Date: "2026-11-20", Machines: 212},
			{Cloud: "gcp", Status: "unchanged", Date: "2026-11-19"},
			{Cloud: "lambda", Status: "failed", Error: "the server answered 500 Internal Server Error"},
		}}, "Prices: aws as of 2026-11-20 (212 machines), gcp unchanged (as of 2026-11-19), lambda failed (the server answered 500 Internal Server Error).", true},
		{"none stored", prices.Report{Clouds: []prices.CloudReport{
			{Cloud: "gcp", Status: "unchanged", Date: "2026-11-19"},
			{Cloud: "aws", Status: "failed", Error: "timed out"},
		}}, "Prices: gcp unchanged (as of 2026-11-19), aws failed (timed out).", false},
	} {
		if got := tc.rep.Summary(); got != tc.want {
			t.Errorf("%s: Summary() = %q, want %q", tc.name, got, tc.want)
		}
		if got := tc.rep.Changed(); got != tc.changed {
			t.Errorf("%s: Changed() = %v, want %v", tc.name, got, tc.changed)
		}
	}
}

// TestEngineBackendPrices updates the window's prices from a SkyPilot catalog served
// here (CNNTIME_PRICES_URL, as a user behind a mirror would) and imports one cloud's
// file: each reloads the engine, so the machines the window lists carry the new
// prices, and a file that is not a catalog changes nothing.
func TestEngineBackendPrices(t *testing.T) {
	ctx := context.Background()
	cs := newCatalogServer(t)
	t.Setenv(prices.URLEnv, cs.URL+"/catalogs/v7")
	b, err := app.OpenEngineBackend(ctx, filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	before, err := b.MachineChoices(ctx)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := b.UpdatePrices(ctx)
	msg := rep.Summary()
	if err != nil {
		t.Fatalf("update from the fixture catalog: %v (%s)", err, msg)
	}
	for _, cl := range prices.DefaultClouds {
		if !strings.Contains(msg, cl+" as of 2026-11-20") {
			t.Errorf("update said %q; want %s as of 2026-11-20", msg, cl)
		}
	}
	after, err := b.MachineChoices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) <= len(before) {
		t.Errorf("machines after the update: %d, before %d; want the catalog's new instance types added", len(after), len(before))
	}
	if rep, err = b.UpdatePrices(ctx); err != nil || !strings.Contains(rep.Summary(), "aws unchanged") || rep.Changed() {
		t.Errorf("second update = %q, %v; want aws unchanged (a conditional request), nothing changed", rep.Summary(), err)
	}

	notCatalog := filepath.Join(t.TempDir(), "aws", "vms.csv")
	writeFile(t, notCatalog, "name,price\nx,abc\n")
	if _, err := b.ImportPrices(ctx, notCatalog); err == nil {
		t.Error("importing a file that is not a SkyPilot catalog succeeded")
	}
	if again, err := b.MachineChoices(ctx); err != nil || len(again) != len(after) {
		t.Errorf("a refused import changed the machines: %d, %v; want %d", len(again), err, len(after))
	}
	rep, err = b.ImportPrices(ctx, filepath.Join(fixtureCatalogs, "lambda", "vms.csv"))
	msg = rep.Summary()
	if err != nil || !strings.HasPrefix(msg, "Prices: lambda as of ") {
		t.Errorf("import of lambda's vms.csv = %q, %v; want lambda imported", msg, err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
