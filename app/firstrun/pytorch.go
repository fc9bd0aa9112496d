package firstrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"cnntime/app/outfile"
	"cnntime/gpu/libfind"
	"cnntime/gpu/lifeline"
)

// ScriptsEnv names the folder of cnntime's scripts (pytorch_sweep.py), where it is not
// beside cnntime.
const ScriptsEnv = "CNNTIME_SCRIPTS"

// FindScript finds one of cnntime's scripts: in $CNNTIME_SCRIPTS, in scripts beside the
// executable, in share/cnntime/scripts above it (the container image's
// /usr/local/share/cnntime/scripts), or in ./scripts (a checkout).
func FindScript(name string) (string, error) {
	var dirs []string
	if d := os.Getenv(ScriptsEnv); d != "" {
		dirs = append(dirs, d)
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		dirs = append(dirs, filepath.Join(dir, "scripts"), filepath.Join(dir, "..", "share", "cnntime", "scripts"))
	}
	dirs = append(dirs, "scripts")
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("%s is in none of %s: name cnntime's scripts folder with %s", name, strings.Join(dirs, ", "), ScriptsEnv)
}

// pyTorchProbe prints PyTorch's and torchvision's versions and exits 3 when PyTorch
// sees no CUDA GPU.
const pyTorchProbe = `import sys
import torch, torchvision
print("torch %s (CUDA %s, cuDNN %s), torchvision %s" % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torchvision.__version__))
sys.exit(0 if torch.cuda.is_available() else 3)`

// runPyTorch runs scripts/pytorch_sweep.py with the Python of $CNNTIME_PYTHON (else
// python3 on PATH): the layers, then the steps.
func runPyTorch(ctx context.Context, job PyTorchJob) (string, error) {
	python := os.Getenv(libfind.PythonEnv)
	if python == "" {
		python = "python3"
	}
	exe, err := exec.LookPath(python)
	if err != nil {
		return "", fmt.Errorf("%w: no %s on PATH ($%s names another Python)", ErrNoPyTorch, python, libfind.PythonEnv)
	}
	var out, errOut bytes.Buffer
	probe := exec.CommandContext(ctx, exe, "-c", pyTorchProbe)
	probe.Stdout, probe.Stderr = &out, &errOut
	err = probe.Run()
	version := strings.TrimSpace(out.String())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		return version, fmt.Errorf("%w: %s in %s sees no CUDA GPU", ErrNoPyTorch, version, exe)
	case err != nil:
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		return "", fmt.Errorf("%w: %s has no PyTorch with torchvision (%s)", ErrNoPyTorch, exe, lines[len(lines)-1])
	}
	version += " in " + exe
	script, err := FindScript("pytorch_sweep.py")
	if err != nil {
		return version, err
	}
	self, err := os.Executable()
	if err != nil {
		return version, fmt.Errorf("find this cnntime for pytorch_sweep.py --layers: %w", err)
	}
	log, err := outfile.CreateFixed(job.Log, 0o666)
	if err != nil {
		return version, fmt.Errorf("create %s: %w", job.Log, err)
	}
	defer log.Close()
	var batches, precisions []string
	for _, b := range job.Batches {
		batches = append(batches, strconv.Itoa(b))
	}
	for _, p := range job.Precisions {
		precisions = append(precisions, string(p))
	}
	common := []string{"--models", strings.Join(job.Models, ","), "--batches", strings.Join(batches, ","),
		"--precision", strings.Join(precisions, ","), "--device", fmt.Sprintf("cuda:%d", job.Device)}
	if job.Input > 0 {
		common = append(common, "--input", strconv.Itoa(job.Input))
	}
	for _, args := range [][]string{
		append([]string{script, "--layers", "--cnntime", shellQuote(self), "--rounds", "1", "--repeats", "5", "--warmup", "2", "--out", job.LayersCSV}, common...),
		append([]string{script, "--repeats", "10", "--warmup", "3", "--out", job.StepsCSV}, common...),
	} {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stdout, cmd.Stderr = log, log
		lifeline.Tie(cmd) // a kill -9 of cnntime leaves no PyTorch sweep running on the GPU
		fmt.Fprintf(log, "$ %s %s\n", exe, strings.Join(args, " "))
		if err := cmd.Run(); err != nil {
			return version, fmt.Errorf("%s %s: %w", filepath.Base(script), args[1], err)
		}
	}
	return version, nil
}

// shellQuote quotes a path for pytorch_sweep.py's --cnntime, which it splits as a shell
// command line.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
