package views

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"cnntime/app"
	"cnntime/app/prices"
	"cnntime/db"
	"cnntime/predictor/hw"
)

// openWindowWithImportedPrices opens the app's window over a cache holding the
// SkyPilot fixture catalog (app/prices/testdata): five clouds' regional and spot prices.
func openWindowWithImportedPrices(t *testing.T) *MainWindow {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cache.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join("..", "app", "prices", "testdata", "skypilot-catalog", "catalogs", "v7")
	if _, err := prices.Import(context.Background(), d, fixtures, prices.ImportOptions{Date: "2026-11-20"}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	a := newTestApp(t)
	mw := onUIThread(func() *MainWindow {
		mw := OpenMainWindow(a, Options{DBPath: path})
		mw.Window.Resize(fyne.NewSize(1280, 800))
		mw.Window.Show()
		return mw
	})
	t.Cleanup(func() { mw.Session.Close(); mw.Backend.Close() })
	return mw
}

// shownMachines are the machine list's visible rows that are not ticked (a ticked
// machine stays listed whatever the filters say).
func shownMachines(mw *MainWindow) []hw.Machine {
	p := mw.Selection
	var out []hw.Machine
	for _, ids := range p.machines.shown {
		for _, id := range ids {
			if !p.machines.checked[id] {
				out = append(out, p.byID[id])
			}
		}
	}
	return out
}

func TestMachineListFiltersByProviderSpotAndPrice(t *testing.T) {
	mw := openWindowWithImportedPrices(t)
	settle(t, mw)
	p := mw.Selection
	if _, ok := p.byID["runpod/1x_H100-NVL_SECURE"]; !ok {
		t.Fatal("the imported RunPod H100 NVL instance is not in the machine list")
	}
	onUI(mw, func() { p.older.SetChecked(true) })
	all := len(shownMachines(mw))
	onUI(mw, func() { p.Filters.Provider.SetSelected("RunPod") })
	runpod := shownMachines(mw)
	if len(runpod) == 0 || len(runpod) >= all {
		t.Errorf("the RunPod filter shows %d of %d machines", len(runpod), all)
	}
	for _, m := range runpod {
		if m.Provider != "runpod" {
			t.Errorf("the RunPod filter shows %s", m.ID)
		}
	}
	onUI(mw, func() {
		p.Filters.Provider.SetSelected(allProviders)
		p.Filters.SpotOnly.SetChecked(true)
	})
	spot := shownMachines(mw)
	if len(spot) == 0 {
		t.Error("no machine with a spot price is shown")
	}
	for _, m := range spot {
		if !m.HasSpot() {
			t.Errorf("'Spot available' shows %s, which has no spot price", m.ID)
		}
	}
	onUI(mw, func() {
		p.Filters.SpotOnly.SetChecked(false)
		p.Filters.MaxPrice.SetText("1")
	})
	cheap := shownMachines(mw)
	if len(cheap) == 0 || len(cheap) >= all {
		t.Errorf("a $1/h ceiling shows %d of %d machines", len(cheap), all)
	}
	for _, m := range cheap {
		if m.PriceUSDPerHour <= 0 || m.PriceUSDPerHour > 1 {
			t.Errorf("a $1/h ceiling shows %s at $%g", m.ID, m.PriceUSDPerHour)
		}
	}
}

func TestRunTabPricesAreSpotOrOnDemandInARegion(t *testing.T) {
	mw := openWindowWithImportedPrices(t)
	settle(t, mw)
	p := mw.Selection
	const a2 = "gcp/a2-highgpu-1g" // in the first launch's selection; imported with on-demand and spot prices
	if !slices.Contains(mw.Session.Settings().Machines, a2) {
		t.Fatalf("the first launch does not select %s: %v", a2, mw.Session.Settings().Machines)
	}
	priceCell := func() string {
		for _, r := range mw.Results.Rows() {
			if r.Machine == a2 {
				return r.Cell(app.ColumnPrice)
			}
		}
		return ""
	}
	if got := priceCell(); !strings.Contains(got, "on-demand us-central1, 2026-11-20") {
		t.Errorf("price of %s on-demand: %q", a2, got)
	}
	onUI(mw, func() { p.Prices.Kind.SetSelected(spotPriceChoice) })
	settle(t, mw)
	if !mw.Session.Settings().Price.Spot {
		t.Error("choosing spot prices did not reach the session")
	}
	if got := priceCell(); !strings.Contains(got, "$1.105/h spot us-central1") {
		t.Errorf("price of %s with spot prices: %q", a2, got)
	}
	onUI(mw, func() { p.Prices.Region.SetSelected("eastus") })
	settle(t, mw)
	if got := mw.Session.Settings().Price.Region; got != "eastus" {
		t.Errorf("the session's region is %q, want eastus", got)
	}
	if got := priceCell(); !strings.Contains(got, "none: not offered in region eastus") {
		t.Errorf("price of %s in eastus: %q", a2, got)
	}
	// The machine's tooltip says which price and how old; the shipped AWS prices of
	// 2026-01-21 are flagged OLD.
	onUI(mw, func() { p.Prices.Region.SetSelected(cheapestRegion); p.Prices.Kind.SetSelected(onDemandChoice) })
	if tip := p.machineTooltip("aws/p2.xlarge"); !strings.Contains(tip, "on-demand, us-east-1 (2026-01-21") || !strings.Contains(tip, "OLD") {
		t.Errorf("tooltip of aws/p2.xlarge:\n%s", tip)
	}
}

func TestSpecTableFlagsOldPricesAndShowsSpot(t *testing.T) {
	newTestApp(t)
	age := 120
	m := hw.Machine{ID: "aws/p3.2xlarge", Provider: "aws", GPUID: "v100-sxm2-16gb", GPUCount: 1, PriceUSDPerHour: 3.06,
		SpotPriceUSDPerHour: 0.918, PriceDate: "2026-07-28", PriceAgeDays: &age, PriceStale: true, Listing: hw.ListingCurrent}
	st := NewSpecTable()
	st.SetMachines([]hw.Machine{m}, specGPUs)
	if got := st.Cell(0, SpecColumnPriceDate); got != "2026-07-28 (120d) OLD" {
		t.Errorf("price date cell = %q", got)
	}
	if got := st.Cell(0, SpecColumnSpot); got != "$0.918" {
		t.Errorf("spot cell = %q", got)
	}
}
