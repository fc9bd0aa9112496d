package db

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoaderRateCSV(t *testing.T) {
	head := "loader,images_per_s_per_worker,workers,cpu,host,measured_at\n"
	for name, row := range map[string]string{
		"no loader":     ",100,1,X,h,1700000000\n",
		"NaN rate":      "pytorch,NaN,1,X,h,1700000000\n",
		"negative rate": "pytorch,-5,1,X,h,1700000000\n",
		"zero workers":  "pytorch,100,0,X,h,1700000000\n",
		"no time":       "pytorch,100,1,X,h,\n",
	} {
		if _, err := ParseLoaderRateCSV(strings.NewReader(head+row), "f.csv"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParseLoaderRateCSV(strings.NewReader("loader,images_per_s_per_worker\npytorch,1\n"), "f.csv"); err == nil || !strings.Contains(err.Error(), "lacks column") {
		t.Errorf("a short header: %v", err)
	}

	d, err := Open(filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		csv  string
		want Merged
		rate float64
	}{
		{head + "PyTorch,120.5,1,CPU A,h,1700000000\n", Merged{Added: 1}, 120.5},
		{head + "pytorch,90,2,CPU A,h,1600000000\n", Merged{Kept: 1}, 120.5},    // older: kept out
		{head + "pytorch,150,1,CPU B,h,1750000000\n", Merged{Replaced: 1}, 150}, // newer: replaces
	} {
		rep, err := d.ImportCSV(ctx, strings.NewReader(tc.csv), "rate.csv")
		if err != nil || rep.Kind != "loader-csv" || rep.LoaderRates != tc.want {
			t.Errorf("import %q: %+v, %v; want loader-csv %+v", tc.csv, rep, err, tc.want)
		}
		rates, err := d.LoaderRates(ctx)
		if err != nil || len(rates) != 1 || rates[0].Loader != "pytorch" || rates[0].ImagesPerS != tc.rate {
			t.Errorf("after %q: %+v, %v; want pytorch at %v", tc.csv, rates, err, tc.rate)
		}
	}
}
