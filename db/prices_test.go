package db

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cnntime/predictor/hw"
)

func awsPrices(date string, price float64) CloudPrices {
	return CloudPrices{
		Catalog: PriceCatalog{Cloud: "aws", Source: "catalogs/v7/aws/vms.csv", PriceDate: date, Rows: 3, ETag: `"abc"`},
		Offers: []hw.CloudOffer{
			{Cloud: "aws", Instance: "p3.2xlarge", Region: "us-east-1", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSD: price, SpotUSD: 0.9, SpotZone: "use1-az4"},
			{Cloud: "aws", Instance: "p3.2xlarge", Region: "us-west-2", Accelerator: "V100", AcceleratorCount: 1, VCPUs: 8, MemoryGiB: 61, PriceUSD: price + 0.1},
		},
	}
}

func lambdaPrices() CloudPrices {
	return CloudPrices{
		Catalog: PriceCatalog{Cloud: "lambda", Source: "catalogs/v7/lambda/vms.csv", PriceDate: "2026-11-20", Rows: 1},
		Offers:  []hw.CloudOffer{{Cloud: "lambda", Instance: "gpu_1x_gh200", Region: "us-east-3", Accelerator: "GH200", AcceleratorCount: 1, VCPUs: 64, MemoryGiB: 432, PriceUSD: 1.49}},
	}
}

func TestReplacePricesRoundTripsAndReplacesWhole(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.ReplacePrices(ctx, []CloudPrices{awsPrices("2026-11-01", 3.06), lambdaPrices()}); err != nil {
		t.Fatal(err)
	}
	offers, err := d.CloudOffers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := append(awsPrices("", 3.06).Offers, lambdaPrices().Offers...)
	if !reflect.DeepEqual(offers, want) {
		t.Errorf("CloudOffers() =\n%+v\nwant\n%+v", offers, want)
	}
	// A new aws set replaces aws's offers whole (one region fewer) and keeps lambda's.
	next := awsPrices("2026-11-20", 2.5)
	next.Offers = next.Offers[:1]
	if err := d.ReplacePrices(ctx, []CloudPrices{next}); err != nil {
		t.Fatal(err)
	}
	cats, err := d.PriceCatalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 2 || cats[0].Cloud != "aws" || cats[0].PriceDate != "2026-11-20" || cats[0].Offers != 1 || cats[0].ETag != `"abc"` ||
		cats[1].Cloud != "lambda" || cats[1].Offers != 1 {
		t.Errorf("PriceCatalogs() = %+v; want aws (2026-11-20, 1 offer) and lambda (1 offer)", cats)
	}
	offers, _ = d.CloudOffers(ctx)
	if len(offers) != 2 || offers[0].PriceUSD != 2.5 || offers[1].Cloud != "lambda" {
		t.Errorf("offers after replacing aws = %+v", offers)
	}
}

func TestReplacePricesRefusesBadSetsAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	negative := awsPrices("2026-11-20", -1)
	nan := awsPrices("2026-11-20", math.NaN())
	foreign := awsPrices("2026-11-20", 2)
	foreign.Offers[1].Cloud = "gcp"
	undated := awsPrices("", 2)
	absurd := awsPrices("2026-11-20", 1.7e308)
	gpus := awsPrices("2026-11-20", 2)
	gpus.Offers[0].AcceleratorCount = 2e19
	wide := awsPrices("2026-11-20", 2)
	wide.Offers = nil
	for i := 0; i <= hw.MaxCloudOffers; i++ {
		wide.Offers = append(wide.Offers, hw.CloudOffer{Cloud: "aws", Instance: "p3.2xlarge", Region: fmt.Sprintf("r%d", i), Accelerator: "V100", AcceleratorCount: 1, PriceUSD: 3})
	}
	// A duplicate instance and region breaks the primary key half-way through the
	// transaction: nothing of it may stay.
	duplicate := awsPrices("2026-11-20", 2)
	duplicate.Offers = append(duplicate.Offers, duplicate.Offers[0])
	tests := []struct {
		name    string
		set     CloudPrices
		wantErr string
	}{
		{"negative price", negative, "p3.2xlarge in us-east-1: Price -1 is negative"},
		{"NaN price", nan, "p3.2xlarge in us-east-1: Price NaN is not a number"},
		{"absurd price", absurd, "Price 1.7e+308 is more than any instance has"},
		{"2e19 GPUs", gpus, "AcceleratorCount 2e+19 is more than any instance has"},
		{"more regions than any cloud has", wide, fmt.Sprintf("%d instance types × regions, more than cnntime keeps of a cloud (%d)", hw.MaxCloudOffers+1, hw.MaxCloudOffers)},
		{"offer of another cloud", foreign, "an offer of gcp"},
		{"no date", undated, "the source and the date are required"},
		{"duplicate offer", duplicate, "UNIQUE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := openTemp(t)
			if err := d.ReplacePrices(ctx, []CloudPrices{awsPrices("2026-11-01", 3.06)}); err != nil {
				t.Fatal(err)
			}
			before, _ := d.CloudOffers(ctx)
			err := d.ReplacePrices(ctx, []CloudPrices{lambdaPrices(), tc.set})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReplacePrices = %v, want an error with %q", err, tc.wantErr)
			}
			after, _ := d.CloudOffers(ctx)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("a refused replacement changed the offers:\nbefore %+v\nafter  %+v", before, after)
			}
			if cats, _ := d.PriceCatalogs(ctx); len(cats) != 1 || cats[0].PriceDate != "2026-11-01" {
				t.Errorf("a refused replacement changed the catalogs: %+v", cats)
			}
		})
	}
}

func TestMarkPricesChecked(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	if err := d.MarkPricesChecked(ctx, "aws", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Errorf("MarkPricesChecked of a cloud without prices = %v, want ErrNotFound", err)
	}
	imported := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	set := awsPrices("2026-11-01", 3.06)
	set.Catalog.ImportedAt = imported
	if err := d.ReplacePrices(ctx, []CloudPrices{set}); err != nil {
		t.Fatal(err)
	}
	checked := imported.Add(48 * time.Hour)
	if err := d.MarkPricesChecked(ctx, "aws", checked); err != nil {
		t.Fatal(err)
	}
	c, err := d.PriceCatalog(ctx, "aws")
	if err != nil {
		t.Fatal(err)
	}
	if !c.ImportedAt.Equal(imported) || !c.CheckedAt.Equal(checked) || c.PriceDate != "2026-11-01" {
		t.Errorf("after a check: imported %v, checked %v, date %s; want %v, %v, 2026-11-01", c.ImportedAt, c.CheckedAt, c.PriceDate, imported, checked)
	}
}

func TestPricesSurviveMigrationAndExport(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	old, err := openUnmigrated(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.migrateTo(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := old.ReplacePrices(ctx, []CloudPrices{lambdaPrices()}); err == nil {
		t.Fatal("a version-4 cache already has price tables")
	}
	old.sqldb().Close()
	d, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a version-4 cache: %v", err)
	}
	defer d.Close()
	if err := d.ReplacePrices(ctx, []CloudPrices{lambdaPrices()}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy.db")
	if _, err := d.ExportCache(ctx, out, ExportFilter{}); err != nil {
		t.Fatal(err)
	}
	c, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if offers, err := c.CloudOffers(ctx); err != nil || !reflect.DeepEqual(offers, lambdaPrices().Offers) {
		t.Errorf("exported cache's offers = %+v, %v; want lambda's", offers, err)
	}
	if problems, err := c.Check(ctx); err != nil || len(problems) != 0 {
		t.Errorf("Check of the exported cache = %v, %v", problems, err)
	}
}

// TestImportCacheTakesNewerPrices imports another cache's prices cloud by cloud: a
// cloud this cache lacks is added, one of a later day replaces this cache's whole, one
// of an earlier day (or the same import) is left out; importing it again changes nothing.
func TestImportCacheTakesNewerPrices(t *testing.T) {
	ctx := context.Background()
	otherPath := filepath.Join(t.TempDir(), "other.db")
	other, err := Open(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	gcp := CloudPrices{
		Catalog: PriceCatalog{Cloud: "gcp", Source: "catalogs/v7/gcp/vms.csv", PriceDate: "2026-11-22", Rows: 1},
		Offers:  []hw.CloudOffer{{Cloud: "gcp", Instance: "a2-highgpu-1g", Region: "us-central1", Accelerator: "A100", AcceleratorCount: 1, VCPUs: 12, MemoryGiB: 85, PriceUSD: 3.67, SpotUSD: 1.1}},
	}
	newerAWS := awsPrices("2026-11-25", 2.0)
	newerAWS.Offers = newerAWS.Offers[:1]
	olderLambda := lambdaPrices()
	olderLambda.Catalog.PriceDate = "2026-10-01"
	olderLambda.Offers[0].PriceUSD = 9.99
	if err := other.ReplacePrices(ctx, []CloudPrices{newerAWS, olderLambda, gcp}); err != nil {
		t.Fatal(err)
	}
	other.Close()

	d := openTemp(t)
	if err := d.ReplacePrices(ctx, []CloudPrices{awsPrices("2026-11-01", 3.06), lambdaPrices()}); err != nil {
		t.Fatal(err)
	}
	rep, err := d.ImportCache(ctx, otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Merged{Added: 1, Replaced: 1, Kept: 1}); rep.Prices != want {
		t.Errorf("prices merged %+v, want %+v (gcp added, aws newer, lambda older)", rep.Prices, want)
	}
	cats, err := d.PriceCatalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dates := map[string]string{}
	for _, c := range cats {
		dates[c.Cloud] = fmt.Sprintf("%s/%d", c.PriceDate, c.Offers)
	}
	if want := map[string]string{"aws": "2026-11-25/1", "gcp": "2026-11-22/1", "lambda": "2026-11-20/1"}; !reflect.DeepEqual(dates, want) {
		t.Errorf("price catalogs after the import %v, want %v", dates, want)
	}
	offers, _ := d.CloudOffers(ctx)
	for _, o := range offers {
		if (o.Cloud == "aws" && o.PriceUSD != 2.0) || (o.Cloud == "lambda" && o.PriceUSD != 1.49) {
			t.Errorf("offer %+v: want aws at the imported 2.0 and lambda at its own 1.49", o)
		}
	}
	again, err := d.ImportCache(ctx, otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Merged{Kept: 3}); again.Prices != want {
		t.Errorf("importing the same cache again merged prices %+v, want %+v", again.Prices, want)
	}
}

// manyOffers stores n offers of cloud (one instance type, a region each) straight into
// the cache, as a hostile or damaged cache could hold them.
func manyOffers(t *testing.T, d *DB, cloud, date string, n int, price float64) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.sqldb().ExecContext(ctx, `INSERT INTO price_catalogs (cloud, source, price_date, imported_at, checked_at) VALUES (?, 'hostile', ?, 1, 1)`, cloud, date); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sqldb().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
		INSERT INTO cloud_offers (cloud, instance, region, accelerator, accelerator_count, price_usd) SELECT ?, 'x' || (i % 100), 'r' || i, 'A100', 8, ? FROM n`,
		n, cloud, price); err != nil {
		t.Fatal(err)
	}
}

// A cache brings prices no catalog holds: they are left out, named with why, and the
// rest of the import (here a sound cloud) goes in (issue 30).
func TestImportCacheRefusesHostilePrices(t *testing.T) {
	ctx := context.Background()
	otherPath := filepath.Join(t.TempDir(), "hostile.db")
	other, err := Open(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	manyOffers(t, other, "aws", "2026-11-20", hw.MaxCloudOffers+1, 30.5)
	manyOffers(t, other, "gcp", "9999-12-31", 1, 3)
	manyOffers(t, other, "azure", "2026-11-20", 2, 1.7e308)
	manyOffers(t, other, "Evil\x1b[2J", "2026-11-20", 1, 3)
	if err := other.ReplacePrices(ctx, []CloudPrices{lambdaPrices()}); err != nil {
		t.Fatal(err)
	}
	other.Close()

	d := openTemp(t)
	rep, err := d.ImportCache(ctx, otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Merged{Added: 1}); rep.Prices != want {
		t.Errorf("prices merged %+v, want %+v (lambda alone)", rep.Prices, want)
	}
	refused := strings.Join(rep.PricesRefused, "\n")
	for _, want := range []string{
		fmt.Sprintf(`"aws" (%d instance types × regions, more than any cloud's catalog holds`, hw.MaxCloudOffers+1),
		`"gcp" (their date 9999-12-31 is in the future)`,
		`"azure" (2 of their instance types × regions have a price, GPU count, vCPU count or memory no instance has)`,
		`"Evil\x1b[2J" ("Evil\x1b[2J" is not a cloud name`,
	} {
		if !strings.Contains(refused, want) {
			t.Errorf("refused prices:\n%s\nwant a line with %s", refused, want)
		}
	}
	cats, err := d.PriceCatalogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 1 || cats[0].Cloud != "lambda" || cats[0].Offers != 1 {
		t.Errorf("the cache took %+v; want lambda's one offer", cats)
	}
}

// Together, the clouds of a cache hold at most hw.MaxStoredOffers: neither a price
// import nor a cache import goes beyond it.
func TestStoredPricesAreBoundedAcrossClouds(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	clouds := 0
	for left := hw.MaxStoredOffers; left > 0; left -= hw.MaxCloudOffers {
		manyOffers(t, d, fmt.Sprintf("cloud%d", clouds), "2026-11-20", min(left, hw.MaxCloudOffers), 1)
		clouds++
	}
	err := d.ReplacePrices(ctx, []CloudPrices{lambdaPrices()})
	if want := fmt.Sprintf("the cache would hold %d instance types × regions across its clouds, more than cnntime keeps (%d)", hw.MaxStoredOffers+1, hw.MaxStoredOffers); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ReplacePrices beyond the bound = %v, want an error with %q", err, want)
	}
	if cats, _ := d.PriceCatalogs(ctx); len(cats) != clouds {
		t.Errorf("a refused replacement left %d clouds", len(cats))
	}
	otherPath := filepath.Join(t.TempDir(), "other.db")
	other, err := Open(otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.ReplacePrices(ctx, []CloudPrices{lambdaPrices()}); err != nil {
		t.Fatal(err)
	}
	other.Close()
	rep, err := d.ImportCache(ctx, otherPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.PricesRefused) != 1 || !strings.Contains(rep.PricesRefused[0], fmt.Sprintf("more than cnntime keeps (%d)", hw.MaxStoredOffers)) || rep.Prices != (Merged{}) {
		t.Errorf("a cache import beyond the bound: merged %+v, refused %q", rep.Prices, rep.PricesRefused)
	}
}

// CloudOffersOf reads the offers of the accelerators asked for, whatever their case, and
// nothing of the others: the machines' list does not pay for rows it cannot predict.
func TestCloudOffersOfReadsOnlyTheAcceleratorsAsked(t *testing.T) {
	ctx := context.Background()
	d := openTemp(t)
	tpus := CloudPrices{Catalog: PriceCatalog{Cloud: "gcp", Source: "gcp/vms.csv", PriceDate: "2026-11-20"}}
	for i := 0; i < 1000; i++ {
		tpus.Offers = append(tpus.Offers, hw.CloudOffer{Cloud: "gcp", Instance: fmt.Sprintf("tpu-v5-%d", i), Region: "us-central1", Accelerator: "tpu-v5p", AcceleratorCount: 1, PriceUSD: 4})
	}
	if err := d.ReplacePrices(ctx, []CloudPrices{awsPrices("2026-11-20", 3.06), lambdaPrices(), tpus}); err != nil {
		t.Fatal(err)
	}
	got, err := d.CloudOffersOf(ctx, []string{"v100", "gh200"})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(awsPrices("", 3.06).Offers, lambdaPrices().Offers...); !reflect.DeepEqual(got, want) {
		t.Errorf("CloudOffersOf(v100, gh200) =\n%+v\nwant\n%+v", got, want)
	}
	if all, _ := d.CloudOffers(ctx); len(all) != 1003 {
		t.Errorf("CloudOffers() = %d offers, want all 1003", len(all))
	}
}

// A cache whose names hold a control character (a region with ESC, an instance type with
// a line break) or are far too long is not imported, or, for a cloud's prices, that
// cloud's are left out, named: its text would reach the terminal, job files and CSVs.
func TestImportRefusesACacheWithUnprintableNames(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ update, says string }{
		{"UPDATE cloud_offers SET region = 'us-east-1' || char(27) || '[2J' WHERE region = 'us-east-1'", `"aws" (1 of their names hold a control character`},
		{"UPDATE cloud_offers SET instance = instance || char(10) || '#SBATCH --partition=evil' WHERE region = 'us-east-1'", `"aws" (1 of their names hold a control character`},
		{"UPDATE price_catalogs SET source = source || char(7)", `"aws" (1 of their names hold a control character`},
		{"INSERT INTO user_machines (id, region) VALUES ('user/x', 'eu' || char(8238))", "user_machines holds the region"},
		{"INSERT INTO user_machines (id, notes, region) VALUES ('user/y', '', printf('%.2000c', 'r'))", "user_machines holds a region 2000 bytes long"},
	} {
		other := openTemp(t)
		if err := other.ReplacePrices(ctx, []CloudPrices{awsPrices("2026-11-01", 3.06)}); err != nil {
			t.Fatal(err)
		}
		if _, err := other.sqldb().Exec(c.update); err != nil {
			t.Fatal(err)
		}
		d := openTemp(t)
		rep, err := d.Import(ctx, other.Path())
		if got := fmt.Sprint(err, rep.PricesRefused); !strings.Contains(got, c.says) {
			t.Errorf("%s: import %s; want it refused: %s", c.update, got, c.says)
		}
		if prices, err := d.PriceCatalogs(ctx); err != nil || len(prices) != 0 {
			t.Errorf("%s: the cache holds %d clouds of prices after the refused import (%v)", c.update, len(prices), err)
		}
	}
	d := openTemp(t)
	bad := awsPrices("2026-11-01", 3.06)
	bad.Offers[0].Region = "us-east-1\n#SBATCH --partition=evil"
	if err := d.ReplacePrices(ctx, []CloudPrices{bad}); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("storing a region with a line break: %v", err)
	}
}
