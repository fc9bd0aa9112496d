package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/app/cli"
)

// cliEnv makes the test binary run as the cnntime command line, so scripts the tests
// start can call cnntime without building the GUI binary again.
const cliEnv = "CNNTIME_TEST_RUN_CLI"

func TestMain(m *testing.M) {
	// The window's and the CLI's date-dependent text (price ages) as on one fixed day.
	app.SetClock(app.FixedClock(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)))
	if os.Getenv(cliEnv) == "1" {
		os.Exit(cli.RunCLI(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	removeBuiltApp()
	os.Exit(code)
}

// pythonWithTorch is the Python that has PyTorch and torchvision (Debian's
// python3-torch, python3-torchvision), or the reason the test cannot run.
func pythonWithTorch() (string, string) {
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		return "", py + " is missing"
	}
	if out, err := exec.Command(py, "-c", "import torch, torchvision").CombinedOutput(); err != nil {
		return "", py + " has no torch/torchvision (make test-deps installs python3-torch python3-torchvision): " + strings.TrimSpace(string(out))
	}
	return py, ""
}

// parityModels is one model of each zoo family (and each op the others lack): the
// whole zoo takes tens of minutes and gigabytes on a small shared machine, so it runs
// only with CNNTIME_PARITY_ALL=1.
const parityModels = "alexnet,vgg11_bn,resnet18,resnext50_32x4d,squeezenet1_1,densenet121,inception_v3,googlenet," +
	"shufflenet_v2_x0_5,mobilenet_v2,mobilenet_v3_small,mnasnet0_5,efficientnet_b0,efficientnet_v2_s,regnet_x_400mf,regnet_y_400mf,convnext_tiny"

// TestTorchvisionParity runs scripts/torchvision_parity.py at 32×32 (the default size
// where torchvision refuses 32×32): every model checked must match its real module layer
// by layer (shapes, parameters, MACs, saved-for-backward bytes). One model per family by
// default; the whole zoo (at least 60 must match) with CNNTIME_PARITY_ALL=1.
func TestTorchvisionParity(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("builds and runs every torchvision model on the CPU (minutes); not with -short")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join("scripts", "torchvision_parity.py"), "--small-only", "--json", "--jobs", "2", "--cnntime", self}
	all := os.Getenv("CNNTIME_PARITY_ALL") == "1"
	if !all {
		args = append(args, "--models", parityModels)
	}
	cmd := exec.Command(py, args...)
	// Its own cache: the user's default one may belong to another cnntime build.
	cmd.Env = append(os.Environ(), cliEnv+"=1", "CNNTIME_DB="+filepath.Join(t.TempDir(), "cache.db"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var results []struct {
		Model       string   `json:"model"`
		Input       int      `json:"input"`
		Match       *bool    `json:"match"`
		Differences []string `json:"differences"`
		Skipped     string   `json:"skipped"`
	}
	if jerr := json.Unmarshal(out, &results); jerr != nil {
		t.Fatalf("parity script: %v (exit %v); stderr:\n%s", jerr, err, stderr.String())
	}
	matched := 0
	for _, r := range results {
		switch {
		case r.Match == nil:
			t.Logf("%s: %s", r.Model, r.Skipped)
		case *r.Match:
			matched++
		default:
			t.Errorf("%s at %d×%d differs from torchvision:\n  %s", r.Model, r.Input, r.Input, strings.Join(r.Differences, "\n  "))
		}
	}
	if want := len(strings.Split(parityModels, ",")); !all && matched < want {
		t.Errorf("%d of the %d models checked match torchvision", matched, want)
	}
	if all && matched < 60 {
		t.Errorf("%d zoo models match torchvision, want at least 60", matched)
	}
}
