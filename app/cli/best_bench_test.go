package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// bestTenByTen is `cnntime best` of ten CNNs of every family's size on ten GPUs of
// every generation over every batch 1–1024, as the issue-40 goal times it (0.25 s for
// the whole process on a 2-core machine).
var bestTenByTen = []string{"best", "--batches", "1-1024",
	"--model", "resnet18,resnet50,resnet152,vgg16,densenet121,mobilenet_v2,efficientnet_b0,inception_v3,convnext_tiny,regnet_y_1_6gf",
	"--gpu", "t4,a10g,l4,a100-sxm4-80gb,h100-sxm,v100-sxm2-16gb,rtx-4090,l40s,h200,b200"}

// BenchmarkBest10x10 is bestTenByTen through RunCLI, written to nowhere.
func BenchmarkBest10x10(b *testing.B) {
	args := append([]string{"--db", filepath.Join(b.TempDir(), "cache.db")}, bestTenByTen...)
	for b.Loop() {
		var errOut strings.Builder
		if code := RunCLI(context.Background(), args, strings.NewReader(""), io.Discard, &errOut); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
}

// BenchmarkPredictCSVTenZooByCatalog is predict --csv of every seventh zoo CNN (ten) on
// every catalog machine at 1–1024, about 800 thousand rows: a tenth of
// BenchmarkPredictCSVZooByCatalog, for profiles.
func BenchmarkPredictCSVTenZooByCatalog(b *testing.B) {
	args := zooByCatalog(b)
	var ten []string
	for i, m := range strings.Split(args[1], ",") {
		if i%7 == 0 {
			ten = append(ten, m)
		}
	}
	args[1] = strings.Join(ten, ",")
	args = append([]string{"--db", filepath.Join(b.TempDir(), "cache.db"), "predict", "--batches", "1-1024", "--csv"}, args...)
	for b.Loop() {
		var errOut strings.Builder
		if code := RunCLI(context.Background(), args, strings.NewReader(""), io.Discard, &errOut); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
}
