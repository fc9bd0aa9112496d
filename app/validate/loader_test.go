package validate

import (
	"context"
	"math"
	"strings"
	"testing"

	"cnntime/app"
	"cnntime/assets"
	"cnntime/predictor/pipeline"
)

// The DataLoader table: at least four independent sources, whole sources held out
// (no source has rows in both sets), every row predicted with its error, and each CPU
// loader's speed-up the one its tuning row gives (within the constant's rounding).
func TestLoaderTableHoldsOutWholeSources(t *testing.T) {
	eng, err := app.NewEngine(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := Loader(eng)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]string{}
	for _, r := range acc.Rows {
		if s, ok := sets[r.Source]; ok && s != r.Set {
			t.Errorf("%s has rows in both %q and %q: hold out whole sources", r.Source, s, r.Set)
		}
		sets[r.Source] = r.Set
		if want := 100 * (r.Predicted - r.Measured) / r.Measured; !(r.Predicted > 0) || math.Abs(want-r.ErrorPct) > 1e-9 {
			t.Errorf("%s %s: predicted %v, error %v%% (want %v%%)", r.Source, r.Loader, r.Predicted, r.ErrorPct, want)
		}
		t.Logf("%-8s %-18s %-9s %d GPUs: measured %.0f predicted %.0f (%+.1f%%, %s)", r.Set, r.Source, r.Loader, r.GPUs, r.Measured, r.Predicted, r.ErrorPct, r.Bound)
	}
	held := 0
	for _, s := range sets {
		if s == "held out" {
			held++
		}
	}
	if len(sets) < 4 || held < len(sets)/3 {
		t.Errorf("%d sources, %d held out: want at least 4, a third held out", len(sets), held)
	}
	if len(acc.Sets) != 2 {
		t.Fatalf("sets %+v: want tuning and held out", acc.Sets)
	}
	for _, r := range acc.Rows {
		// The rows each speed-up is fitted on: the loader benchmarks and DLPerf's
		// one-thread-per-GPU DALI CPU row, loader-bound, within 10%.
		fitted := r.Metric == "loader_images_per_s" && r.Loader != string(pipeline.PyTorch) ||
			r.Source == "dlperf" && r.Loader == string(pipeline.DALICPU) && r.Workers == 1
		if fitted && math.Abs(r.ErrorPct) > 10 {
			t.Errorf("%s %s: %+.1f%% on the row its speed-up is fitted on", r.Source, r.Loader, r.ErrorPct)
		}
	}
}

func TestParseLoaderRunsRefusesBadRows(t *testing.T) {
	head := "source,where,gpu,model,precision,batch_per_gpu,gpus,loader,workers_per_gpu,vcpus,cpu,cpu_turbo_ghz,metric,value,set\n"
	for name, row := range map[string]string{
		"unknown loader": "a,b,,,,,1,webdataset,4,8,X,3,loader_images_per_s,100,tuning\n",
		"bad set":        "a,b,,,,,1,ffcv,4,8,X,3,loader_images_per_s,100,maybe\n",
		"no gpu":         "a,b,,resnet50,fp32,64,1,pytorch,4,8,X,3,train_images_per_s,100,tuning\n",
		"negative value": "a,b,,,,,1,ffcv,4,8,X,3,loader_images_per_s,-1,tuning\n",
	} {
		if _, err := ParseLoaderRuns([]byte(head + row)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParseLoaderRuns(assets.LoaderRuns); err != nil {
		t.Errorf("the embedded file: %v", err)
	}
	if _, err := ParseLoaderRuns([]byte("source,where\n")); err == nil || !strings.Contains(err.Error(), "lacks column") {
		t.Errorf("a short header: %v", err)
	}
}
