package cli

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestPyTorchSweepCUDABranches runs scripts/test_pytorch_sweep.py: the CUDA branches of
// scripts/pytorch_sweep.py on the CPU with the device calls stubbed (no host cost taken
// off event times, amp timing what autocast runs with no cast in convolutions and
// linear layers, one configuration built, timed, freed and written at a time, an
// out-of-memory inside the timed calls recorded, cuda:N made the current device).
func TestPyTorchSweepCUDABranches(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "test_pytorch_sweep.py")
	out, err := exec.Command(py, "-B", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}
