package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/predictor"
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

// BenchmarkPredictJSONZooByCatalog is BenchmarkPredictCSVZooByCatalog with --json: the
// issue-30 goal is the CSV's time within 2× (encoding/json took 10×).
func BenchmarkPredictJSONZooByCatalog(b *testing.B) {
	args := append([]string{"--db", filepath.Join(b.TempDir(), "cache.db"), "predict", "--batches", "1-1024", "--json"}, zooByCatalog(b)...)
	for b.Loop() {
		var errOut strings.Builder
		if code := RunCLI(context.Background(), args, strings.NewReader(""), io.Discard, &errOut); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
}

// BenchmarkPredictRowText turns the same predicted curves (resnet50 on every catalog
// machine at 1–1024, about 200 thousand rows) into predict's CSV and JSON, and into JSON
// by encoding/json as predict --json wrote it before: the writers alone, without the
// prediction.
func BenchmarkPredictRowText(b *testing.B) {
	args := zooByCatalog(b)
	args[1] = "resnet50"
	env := &Env{Ctx: context.Background(), Stdout: io.Discard, Stderr: io.Discard, DBPath: filepath.Join(b.TempDir(), "cache.db")}
	defer env.closeCache()
	_, q, eng, err := predictSetup(env, commandIndex()["predict"], append(args, "--batches", "1-1024"), true)
	if err != nil {
		b.Fatal(err)
	}
	var curves []predictor.Curve
	if err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) (*predictor.Curve, error) { return c, nil },
		func(c *predictor.Curve) error { curves = append(curves, *c); return nil }); err != nil {
		b.Fatal(err)
	}
	rows := 0
	for i := range curves {
		rows += len(curves[i].Points)
	}
	for _, w := range []struct {
		name string
		text func([]byte, *predictor.Curve) ([]byte, error)
	}{
		{"csv", predictCSV{}.curve},
		{"json", jsonRows{}.curve},
		{"encoding-json", func(b []byte, c *predictor.Curve) ([]byte, error) {
			text, err := encodingJSONCurve(c)
			return append(b, text...), err
		}},
	} {
		b.Run(w.name, func(b *testing.B) {
			var buf []byte
			for b.Loop() {
				for i := range curves {
					var err error
					if buf, err = w.text(buf[:0], &curves[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
