package cli

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/app"
)

func TestRunDataFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    app.RunData
		wantErr string
	}{
		// Left out, --framework is the software's own stack ("": pytorch2 on the current release).
		{nil, app.RunData{Dataset: "imagenet-1k", Loader: "pytorch", MemoryFormat: "nchw", Script: "reference"}, ""},
		{[]string{"--software", "PyTorch-1.13"}, app.RunData{Dataset: "imagenet-1k", Loader: "pytorch", MemoryFormat: "nchw", Script: "reference", Software: "pytorch-1.13"}, ""},
		{[]string{"--software", "ngc-22.10", "--framework", "graph"}, app.RunData{Dataset: "imagenet-1k", Loader: "pytorch", MemoryFormat: "nchw", Script: "reference", Framework: "graph", Software: "ngc-22.10"}, ""},
		{[]string{"--software", "pytorch-1.13", "--framework", "compiled"}, app.RunData{}, "--software: software: pytorch-1.13 cannot run the compiled stack"},
		{[]string{"--software", "pytorch-3.0"}, app.RunData{}, `invalid value "pytorch-3.0" for flag -software: unknown software`},
		{[]string{"--software", "2031-01"}, app.RunData{}, "after the newest release cnntime knows (pytorch-2.11, 2026-03)"},
		{[]string{"--dataset", "CIFAR-10", "--loader", "synthetic", "--memory-format", "nhwc", "--script", "Lean", "--framework", "PyTorch1"}, app.RunData{Dataset: "cifar-10", Loader: "synthetic", MemoryFormat: "nhwc", Script: "lean", Framework: "pytorch1"}, ""},
		{[]string{"--input", "160", "--classes", "200", "--workers", "6", "--loader", "dali-cpu", "--script", "examples"}, app.RunData{Dataset: "imagenet-1k", Input: 160, Classes: 200, Loader: "dali-cpu", Workers: 6, MemoryFormat: "nchw", Script: "examples"}, ""},
		{[]string{"--framework", "keras"}, app.RunData{}, "--framework: unknown framework"},
		{[]string{"--dataset", "mnist"}, app.RunData{}, "--dataset: unknown dataset \"mnist\""},
		{[]string{"--loader", "webdataset"}, app.RunData{}, "--loader: unknown loader"},
		{[]string{"--script", "keras"}, app.RunData{}, "--script: unknown script"},
		{[]string{"--memory-format", "chwn"}, app.RunData{}, "--memory-format: unknown memory format"},
		{[]string{"--input", "-3"}, app.RunData{}, "--input -3"},
		{[]string{"--workers", "-1"}, app.RunData{}, "--workers -1"},
		{[]string{"--input", "9000"}, app.RunData{}, "--input: input size 9000"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var rf runDataFlags
		rf.register(fs)
		err := fs.Parse(tc.args)
		if err != nil && tc.wantErr != "" && strings.Contains(err.Error(), tc.wantErr) {
			continue // refused by the flag itself
		}
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		got, err := rf.runData(set["framework"])
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

// TestPredictWithRunData runs the commands through the CLI and checks what
// each row says.
func TestPredictWithRunData(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cache.db")
	rows := predictRows(t, dbPath, "--model", "efficientnet_b4", "--gpu", "a100-sxm4-80gb", "--batch", "64")
	if len(rows) != 1 || rows[0].Input != 380 || rows[0].Loader != "pytorch" || rows[0].Workers != 8 || rows[0].Bound == "" {
		t.Errorf("efficientnet_b4 on a bare A100: %+v, want input 380, the pytorch loader with 8 workers and a bound", rows)
	}
	rows = predictRows(t, dbPath, "--model", "resnet50", "--machine", "aws/g4dn.xlarge", "--batch", "256", "--precision", "amp")
	if r := rows[0]; r.Bound != "input" || r.LoaderImagesPerS == nil || r.Workers != 3 || *r.ImagesPerS != *r.LoaderImagesPerS {
		t.Errorf("resnet50 amp on g4dn.xlarge: %+v, want bound by its 3 workers' loader", r)
	}
	cifar := predictRows(t, dbPath, "--dataset", "cifar-10", "--model", "resnet18", "--machine", "aws/g4dn.xlarge", "--batches", "1-1024")
	imagenet := predictRows(t, dbPath, "--model", "resnet18", "--machine", "aws/g4dn.xlarge", "--batches", "1-1024")
	if len(cifar) != 1024 || len(imagenet) != 1024 {
		t.Fatalf("%d and %d rows, want 1024 each", len(cifar), len(imagenet))
	}
	for _, b := range []int{64, 256} {
		c, i := cifar[b-1], imagenet[b-1]
		if c.Input != 32 || i.Input != 224 || !c.Fits || !i.Fits {
			t.Fatalf("batch %d: inputs %d and %d, want 32 and 224", b, c.Input, i.Input)
		}
		if *c.EpochS > *i.EpochS/50 {
			t.Errorf("batch %d: a CIFAR-10 epoch takes %.1f s, an ImageNet one %.1f s: want a small fraction", b, *c.EpochS, *i.EpochS)
		}
	}
	syn := predictRows(t, dbPath, "--model", "resnet50", "--gpu", "v100-sxm2-16gb", "--batch", "256", "--precision", "amp", "--loader", "synthetic", "--memory-format", "nhwc")
	nchw := predictRows(t, dbPath, "--model", "resnet50", "--gpu", "v100-sxm2-16gb", "--batch", "256", "--precision", "amp", "--loader", "synthetic")
	if syn[0].LoaderImagesPerS != nil || syn[0].Bound != "gpu" || !(*nchw[0].IterMS > *syn[0].IterMS*1.05) {
		t.Errorf("V100 amp: nhwc %+v vs nchw %+v: want synthetic data, and NCHW's transposes to cost more than 5%%", syn[0], nchw[0])
	}
	code, _, errOut := runCLIWithDB(t, dbPath, "predict", "--model", "resnet18", "--gpu", "t4", "--batch", "8", "--dataset", "cifar-10", "--loader", "dali")
	if code != 2 || !strings.Contains(errOut, "held in memory") {
		t.Errorf("dali on cifar-10: exit %d, %q; want a refusal naming the reason", code, errOut)
	}
}
