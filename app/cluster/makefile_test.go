package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGPUWorkerAsksOnNonDebianHosts: where cuda.h is missing, `make gpu-worker` installs
// Debian's nvidia-cuda-dev on Debian only; on Ubuntu, RHEL or an unknown host (where that
// package is wrong, or would pull a libcuda that fights the driver) it says what to
// install and stops, installing nothing.
func TestGPUWorkerAsksOnNonDebianHosts(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, osRelease := range []string{"ID=ubuntu\nID_LIKE=debian\n", "ID=\"rhel\"\nID_LIKE=\"fedora\"\n", ""} {
		dir := t.TempDir()
		release := filepath.Join(dir, "os-release")
		if osRelease != "" {
			if err := os.WriteFile(release, []byte(osRelease), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(mk, "-s", "-C", root, "gpu-worker", "OS_RELEASE="+release, "CUDA_HOME="+dir, "CUDA_INCLUDE="+dir, "SUDO=false", "GO=false")
		out, err := cmd.CombinedOutput()
		text := string(out)
		if err == nil || !strings.Contains(text, "not Debian, so nothing is installed") || !strings.Contains(text, "Install the CUDA toolkit's headers") || strings.Contains(text, "installing Debian package") {
			t.Errorf("os-release %q: make gpu-worker exited %v saying %q; want a refusal saying what to install", osRelease, err, text)
		}
	}
}
