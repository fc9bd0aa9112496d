package scripts

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// pythonWithTorch is the Python that has PyTorch and torchvision (Debian's
// python3-torch, python3-torchvision, which make test-deps installs), or why there is none.
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

// TestTrainScriptUnits runs scripts/test_cnntime_train.py: the training script's
// learning-rate schedules, resumable sampler, mixup and cutmix, LARS, bounded timings,
// CSV cells, and a run on a tiny ImageFolder cut short, resumed and measured.
func TestTrainScriptUnits(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	out, err := exec.Command(py, "-B", "test_cnntime_train.py").CombinedOutput()
	if err != nil {
		t.Fatalf("test_cnntime_train.py: %v\n%s", err, out)
	}
}

// The embedded script is the file beside this one, and it says how it is run.
func TestTrainScriptIsEmbedded(t *testing.T) {
	file, err := os.ReadFile(TrainScriptName)
	if err != nil {
		t.Fatal(err)
	}
	if TrainScript() != string(file) || !strings.HasPrefix(TrainScript(), "#!/usr/bin/env python3\n") {
		t.Errorf("the embedded script (%d bytes) is not %s (%d bytes)", len(TrainScript()), TrainScriptName, len(file))
	}
}
