package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/predictor/cnn"
)

// zooByCatalog is --model and --machine naming every zoo CNN and every catalog machine.
func zooByCatalog(b *testing.B) []string {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var machines []string
	for _, m := range eng.Catalog().Machines() {
		machines = append(machines, m.ID)
	}
	return []string{"--model", strings.Join(cnn.Names(), ","), "--machine", strings.Join(machines, ",")}
}

// BenchmarkPredictCSVZooByCatalog is `cnntime predict --csv` of every zoo CNN on every
// catalog machine at 1–1024 (4.7 million rows), written to nowhere: the issue-26 goal
// is 5 s and 300 MB on a 2-core machine (measured on the binary with /usr/bin/time).
func BenchmarkPredictCSVZooByCatalog(b *testing.B) {
	args := append([]string{"--db", filepath.Join(b.TempDir(), "cache.db"), "predict", "--batches", "1-1024", "--csv"}, zooByCatalog(b)...)
	for b.Loop() {
		var errOut strings.Builder
		if code := RunCLI(context.Background(), args, strings.NewReader(""), io.Discard, &errOut); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
}
