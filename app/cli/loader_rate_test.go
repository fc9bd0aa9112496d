package cli

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cnntime/predictor/pipeline"
)

// TestLoaderRateImportFeedsThisComputer imports a loader-rate CSV as
// scripts/dataloader_rate.py --csv writes it and checks that this computer's machine
// (user/workstation) scales its DataLoader by the measured rate and says so, that a
// catalog machine does not, and that a bad file changes nothing.
func TestLoaderRateImportFeedsThisComputer(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "cache.db")
	csvPath := filepath.Join(dir, "rate.csv")
	rate := pipeline.WorkerImagesPerS / 2 // half the reference CPU's worker
	if err := os.WriteFile(csvPath, []byte("loader,images_per_s_per_worker,workers,cpu,host,measured_at\n"+
		"pytorch,"+strconv.FormatFloat(rate, 'f', -1, 64)+",1,Test CPU 9000,box,1700000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "machine", "add", "--name", "workstation", "--gpu", "a100-sxm4-80gb", "--price", "1", "--vcpus", "8"); code != 0 {
		t.Fatalf("machine add: %s", errOut)
	}
	args := []string{"--model", "resnet50", "--machine", "user/workstation,aws/p3.2xlarge", "--batch", "256", "--precision", "amp"}
	before := predictRows(t, dbPath, args...)

	// A bad rate is refused and nothing is stored.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("loader,images_per_s_per_worker,workers,cpu,host,measured_at\npytorch,abc,1,X,box,1700000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLIWithDB(t, dbPath, "cache", "import", bad); code == 0 || !strings.Contains(errOut, "images_per_s_per_worker") {
		t.Errorf("a bad rate: exit %d, %q; want a refusal naming the column", code, errOut)
	}
	if rows := predictRows(t, dbPath, args...); *rows[0].LoaderImagesPerS != *before[0].LoaderImagesPerS {
		t.Errorf("a refused file changed the prediction: %v, was %v", *rows[0].LoaderImagesPerS, *before[0].LoaderImagesPerS)
	}

	code, out, errOut := runCLIWithDB(t, dbPath, "cache", "import", csvPath)
	if code != 0 || !strings.Contains(out, "loader-rate CSV") {
		t.Fatalf("cache import: exit %d, %q %q", code, out, errOut)
	}
	after := predictRows(t, dbPath, args...)
	ws, cloud := after[0], after[1]
	if ws.Host == nil || ws.Host.CPUAssumed || math.Abs(ws.Host.CPU.MeasuredSpeed-0.5) > 1e-9 || ws.Host.CPU.Model != "Test CPU 9000" ||
		!strings.Contains(ws.Host.CPU.Source, "MEASURED: scripts/dataloader_rate.py") {
		t.Errorf("the workstation's host after the import: %+v, want the measured CPU at half the reference speed", ws.Host)
	}
	if got, want := *ws.LoaderImagesPerS, *before[0].LoaderImagesPerS*0.5; math.Abs(got-want) > 0.1 { // rows round to 0.1 images/s
		t.Errorf("the workstation's loader: %.1f images/s, want half of %.1f", got, *before[0].LoaderImagesPerS)
	}
	if *cloud.LoaderImagesPerS != *before[1].LoaderImagesPerS || cloud.Host == nil || cloud.Host.CPU.MeasuredSpeed != 0 {
		t.Errorf("a catalog machine took this computer's rate: %+v", cloud.Host)
	}
	// Importing the same file again keeps the stored rate.
	if code, out, _ := runCLIWithDB(t, dbPath, "cache", "import", csvPath); code != 0 || !strings.Contains(out, "1 left out") {
		t.Errorf("re-import: exit %d, %q; want the row kept", code, out)
	}
}
