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
	// A duplicate instance and region breaks the primary key half-way through the
	// transaction: nothing of it may stay.
	duplicate := awsPrices("2026-11-20", 2)
	duplicate.Offers = append(duplicate.Offers, duplicate.Offers[0])
	tests := []struct {
		name    string
		set     CloudPrices
		wantErr string
	}{
		{"negative price", negative, "not a finite number of zero or more"},
		{"NaN price", nan, "not a finite number of zero or more"},
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
	old.sql.Close()
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
