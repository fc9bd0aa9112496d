package app

import (
	"context"
	"fmt"
	"testing"

	"cnntime/db"
	"cnntime/predictor/hw"
)

// BenchmarkEngineAtThePriceBounds builds the engine every predict builds over a cache
// holding as many prices as cnntime keeps (hw.MaxStoredOffers instance types × regions
// of A100 machines, hw.MaxCloudInstanceTypes per cloud): the worst a catalog can make
// later commands (issue 30: a predict under 1 s). With every other cloud's rows of an
// accelerator cnntime cannot predict (a TPU), which the engine does not read, it costs
// in proportion to the rest.
func BenchmarkEngineAtThePriceBounds(b *testing.B) {
	ctx := context.Background()
	for _, extra := range []bool{false, true} {
		d, err := db.Open(b.TempDir() + "/cache.db")
		if err != nil {
			b.Fatal(err)
		}
		var sets []db.CloudPrices
		left := hw.MaxStoredOffers
		for c := 0; left > 0; c++ {
			set := db.CloudPrices{Catalog: db.PriceCatalog{Cloud: fmt.Sprintf("cloud%d", c), Source: "vms.csv", PriceDate: "2026-11-20"}}
			accelerator := "A100"
			if extra && c%2 == 1 {
				accelerator = "tpu-v5p"
			}
			for i := 0; i < min(left, hw.MaxCloudOffers); i++ {
				set.Offers = append(set.Offers, hw.CloudOffer{Cloud: set.Catalog.Cloud, Instance: fmt.Sprintf("x%d", i%hw.MaxCloudInstanceTypes),
					Region: fmt.Sprintf("r%d", i/hw.MaxCloudInstanceTypes), Accelerator: accelerator, AcceleratorCount: 8, PriceUSD: 30})
			}
			left -= len(set.Offers)
			sets = append(sets, set)
		}
		if err := d.ReplacePrices(ctx, sets); err != nil {
			b.Fatal(err)
		}
		b.Run(map[bool]string{false: "all-a100", true: "every-other-cloud-tpu"}[extra], func(b *testing.B) {
			for b.Loop() {
				if _, err := NewEngine(ctx, d); err != nil {
					b.Fatal(err)
				}
			}
		})
		d.Close()
	}
}
