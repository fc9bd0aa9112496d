package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/app"
	"cnntime/app/firstrun"
	"cnntime/db"
	"cnntime/gpu/cpu"
)

// smallSweepArgs is a CPU sweep of two small CNNs (zoo networks at 32×32 pixels).
var smallSweepArgs = []string{"sweep", "--device", "cpu", "--models", "resnet18,mobilenet_v2", "--input", "32", "--batches", "1-2", "--repeats", "1"}

func TestSweepChild(t *testing.T) {
	path := os.Getenv(childSweepEnv)
	if path == "" {
		t.Skip("runs only as the child process of TestSweepSurvivesKillAndResumes")
	}
	var out, errOut bytes.Buffer
	if code := RunCLI(context.Background(), append([]string{"--db", path}, smallSweepArgs...), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

func TestSweepCommandLine(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no models", []string{"sweep"}, 2, "--models is required"},
		{"bad batches", []string{"sweep", "--models", "resnet18", "--batches", "8-2"}, 2, "runs backwards: write 2-8"},
		{"bad device", []string{"sweep", "--models", "resnet18", "--device", "tpu"}, 2, `unknown device "tpu"`},
		{"bad cuda index", []string{"sweep", "--models", "resnet18", "--device", "cuda:x"}, 2, "write cuda:N"},
		{"amp on the cpu", []string{"sweep", "--models", "resnet18", "--precision", "amp"}, 2, "the CPU measures fp32 only"},
		{"unknown model", []string{"sweep", "--models", "resnet19"}, 2, `did you mean "resnet18"`},
		{"bad policy", []string{"sweep", "--models", "resnet18", "--policy", "random"}, 2, "use heuristic or fastest"},
		{"tiny sweep", []string{"sweep", "--models", "resnet18", "--input", "32", "--batches", "1", "--repeats", "1"}, 0, "kernels of"},
		{"devices", []string{"devices"}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			dbPath := filepath.Join(t.TempDir(), "cache.db")
			code := RunCLI(context.Background(), append([]string{"--db", dbPath}, tc.args...), nil, &out, &errOut)
			if code != tc.code || !strings.Contains(errOut.String(), tc.inStderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), tc.code, tc.inStderr)
			}
		})
	}
}

func TestDevicesJSON(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	var out, errOut bytes.Buffer
	if code := RunCLI(context.Background(), []string{"--json", "devices"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var list app.DeviceList
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Devices) != 1 || list.Devices[0].ID != "cpu" || list.Devices[0].Device.Key != cpu.New().Device().Key {
		t.Errorf("devices = %+v, want the CPU only", list.Devices)
	}
	if !strings.Contains(list.CUDA, "CUDA worker not found") {
		t.Errorf("cuda note %q, want why there are no CUDA devices", list.CUDA)
	}
}

func measurementsByKey(t *testing.T, path string) map[string]time.Time {
	t.Helper()
	cache, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	ms, err := cache.Measurements(context.Background(), cpu.New().Device().Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, m := range ms {
		out[fmt.Sprintf("%s|%s|%d", m.ConfigKey, m.Phase, m.Batch)] = m.At
	}
	return out
}

func TestSweepSurvivesKillAndResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^TestSweepChild$", "-test.count=1")
	child.Env = append(os.Environ(), childSweepEnv+"="+path)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the child (SIGKILL: no chance to clean up) once it has stored some results.
	deadline := time.Now().Add(40 * time.Second)
	var before map[string]time.Time
	for {
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(path); err == nil {
			if before = measurementsByKey(t, path); len(before) >= 40 {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			t.Fatalf("the child stored only %d measurements in 40 s", len(before))
		}
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	before = measurementsByKey(t, path)

	cache, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	ctx := context.Background()
	sw, err := app.OpenSweeper(ctx, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	req := app.DefaultSweepRequest()
	req.Models, req.Input, req.Batches, req.Repeats = []string{"resnet18", "mobilenet_v2"}, 32, []int{1, 2}, 1
	plan, err := app.PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	total := plan.Kernels.Cached + len(plan.Kernels.Items)
	if plan.Kernels.Cached != len(before) || len(before) >= total {
		t.Fatalf("after the kill the cache holds %d measurements, the plan counts %d cached of %d", len(before), plan.Kernels.Cached, total)
	}
	res, err := app.RunSweep(ctx, cache, sw, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != db.SweepDone || res.Done != total-len(before) {
		t.Errorf("resumed sweep %s with %d results, want done with %d", res.State, res.Done, total-len(before))
	}
	after := measurementsByKey(t, path)
	if len(after) != total {
		t.Errorf("cache holds %d measurements after resuming, want all %d", len(after), total)
	}
	for k, at := range before {
		if !after[k].Equal(at) {
			t.Errorf("%s was measured again after the resume (%v, then %v)", k, at, after[k])
		}
	}
	again, err := app.PlanSweep(ctx, cache, sw.Device(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Kernels.Items) != 0 {
		t.Errorf("a third sweep would measure %d kernels again", len(again.Kernels.Items))
	}
}

func TestDevicesCheckWithoutAGPU(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("CNNTIME_GPU_QUARANTINE", filepath.Join(t.TempDir(), "q.json"))
	// Without an NVIDIA GPU on the PCI bus that is the reason given first.
	reason := "cnntime devices: CUDA worker not found"
	if present, known := app.NVIDIAPresence(); known && !present {
		reason = "cnntime devices: this computer has no NVIDIA GPU"
	}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"text", []string{"devices", "--check"}, 1},
		{"json", []string{"--json", "devices", "--check"}, 1},
		{"bad device", []string{"devices", "--check", "--device", "-1"}, 2},
	} {
		var out, errOut bytes.Buffer
		code := RunCLI(context.Background(), append([]string{"--db", filepath.Join(t.TempDir(), "c.db")}, c.args...), nil, &out, &errOut)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errOut.String())
		}
		if c.code == 1 && (!strings.Contains(errOut.String(), reason) || strings.Count(strings.TrimSpace(errOut.String()), "\n") > 0) {
			t.Errorf("%s: stderr %q does not give the reason in one line", c.name, errOut.String())
		}
		if c.name == "json" {
			var res app.GPUCheck
			if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.NoGPU || res.Trusted || !strings.Contains(res.Reason, "CUDA worker not found") {
				t.Errorf("json: %+v, %v (%q)", res, err, out.String())
			}
		}
	}
}

// processAlive reports whether process pid runs: it exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return after != "" && after[0] != 'Z' && after[0] != 'X'
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		_, after, _ := strings.Cut(string(b), ") ")
		var state string
		var ppid, self int
		if _, err := fmt.Sscan(after, &state, &ppid); err == nil && ppid == pid {
			fmt.Sscan(strings.TrimPrefix(strings.TrimSuffix(s, "/stat"), "/proc/"), &self)
			out = append(out, self)
		}
	}
	return out
}

// A sweep runs alone on its device, and dies with its command: while `cnntime sweep`
// runs, the same sweep and a sweep of another plan are refused, naming it; after a kill -9 of cnntime (the
// supervising process) the command's process is gone within 2 s and nothing more is
// written; running the same sweep again to its end closes the interrupted one, so
// cache info no longer says one was interrupted.
func TestSweepDiesWithItsCommandAndRunsOncePerPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep in child processes")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	path := filepath.Join(t.TempDir(), "cache.db")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"sweep", "--device", "cpu", "--models", "resnet18", "--input", "32", "--batches", "1-2", "--repeats", "2"}
	cmd := exec.Command(self, append([]string{"--db", path}, args...)...)
	cmd.Env = append(os.Environ(), superviseTestEnv+"=none")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var measured map[string]time.Time
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			if measured = measurementsByKey(t, path); len(measured) >= 5 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep stored only %d measurements in 60 s", len(measured))
		}
	}

	var out, errOut bytes.Buffer
	code := RunCLI(context.Background(), append([]string{"--db", path}, args...), nil, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "of the same plan on "+cpu.New().Device().Key+", is running in process") {
		t.Errorf("the same sweep beside it: exit %d, stderr %q; want a refusal naming the running one", code, errOut.String())
	}
	// Another plan on the same device is refused too: two sweeps on one device spoil
	// each other's timings. The refusal says what the running sweep measures and how to
	// stop it.
	other := append(append([]string{}, args[:len(args)-4]...), "--batches", "3-4", "--repeats", "2")
	out.Reset()
	errOut.Reset()
	code = RunCLI(context.Background(), append([]string{"--db", path}, other...), nil, &out, &errOut)
	if want := "of another plan (resnet18 at 2 batch sizes from 1 to 2, fp32) on " + cpu.New().Device().Key + ", is running in process"; code != 1 || !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "kill ") {
		t.Errorf("another plan beside it: exit %d, stderr %q; want a refusal saying %q and how to stop it", code, errOut.String(), want)
	}

	children := childrenOf(cmd.Process.Pid)
	if len(children) == 0 {
		t.Fatal("the supervised command's process was not found")
	}
	cmd.Process.Kill() // kill -9 cnntime
	cmd.Wait()
	time.Sleep(2 * time.Second)
	for _, pid := range children {
		if processAlive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d, started by the killed cnntime, is alive 2 s later", pid)
		}
	}
	after := measurementsByKey(t, path)
	time.Sleep(time.Second)
	if later := measurementsByKey(t, path); len(later) != len(after) {
		t.Errorf("%d measurements 2 s after the kill, %d a second later: something still writes", len(after), len(later))
	}

	out.Reset()
	errOut.Reset()
	if code := RunCLI(context.Background(), []string{"--db", path, "cache", "info"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "1 sweeps were interrupted") {
		t.Fatalf("cache info after the kill: exit %d, %q %q", code, out.String(), errOut.String())
	}
	if code := RunCLI(context.Background(), append([]string{"--db", path}, args...), nil, &out, &errOut); code != 0 {
		t.Fatalf("the same sweep again: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := RunCLI(context.Background(), []string{"--db", path, "cache", "info"}, nil, &out, &errOut); code != 0 || strings.Contains(out.String(), "interrupted") {
		t.Errorf("cache info after the sweep was run again to its end: exit %d, %q; want no interrupted sweep", code, out.String())
	}
}

// A sweep stopped by a full disk says so: the command's error names the full disk, and
// cache info says the sweep failed because the disk was full, not that its process
// died. With space again, the same sweep continues it to the end. Needs a small file
// system of its own: it runs where this user may mount one (root).
func TestSweepStoppedByAFullDiskSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep")
	}
	dir := filepath.Join(t.TempDir(), "small")
	os.Mkdir(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a small file system to fill (%v): needs root", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	path := filepath.Join(dir, "cache.db")
	args := []string{"--db", path, "sweep", "--device", "cpu", "--models", "resnet18", "--input", "32", "--batches", "1-3", "--repeats", "2"}
	done := make(chan string, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := RunCLI(context.Background(), args, nil, &out, &errOut)
		done <- fmt.Sprintf("exit %d: %s", code, errOut.String())
	}()
	filler := filepath.Join(dir, "filler")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil && len(measurementsByKey(t, path)) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweep stored no measurements in 60 s")
		}
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, int64(fs.Bavail)*fs.Bsize)) // every free block
	f.Close()
	result := <-done
	if !strings.HasPrefix(result, "exit 1: ") || !strings.Contains(result, "the disk holding "+path+" is full") {
		t.Fatalf("the sweep on a full disk: %s; want exit 1 naming the full disk", result)
	}
	var out, errOut bytes.Buffer
	if code := RunCLI(context.Background(), []string{"--db", path, "cache", "info"}, nil, &out, &errOut); code != 0 ||
		!strings.Contains(out.String(), "failed: the disk holding the cache was full") || strings.Contains(out.String(), "interrupted") {
		t.Errorf("cache info on the full disk: exit %d, %q %q; want the sweep failed for a full disk, none interrupted", code, out.String(), errOut.String())
	}

	os.Remove(filler)
	if code := RunCLI(context.Background(), args[:len(args)], nil, &out, &errOut); code != 0 {
		t.Fatalf("the same sweep with space again: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := RunCLI(context.Background(), []string{"--db", path, "cache", "info"}, nil, &out, &errOut); code != 0 || strings.Contains(out.String(), "interrupted") || strings.Contains(out.String(), "was full") {
		t.Errorf("cache info once the sweep was done: exit %d, %q", code, out.String())
	}
}

// TestDevicesCheckListsThePipWheelsOfAVirtualEnvironment: with no GPU, devices --check
// --json still lists where each CUDA library was looked for and which file the worker
// would load: here the cuDNN of PyTorch's pip wheel in the activated virtual environment.
func TestDevicesCheckListsThePipWheelsOfAVirtualEnvironment(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fake library is an x86-64 one")
	}
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("CNNTIME_GPU_QUARANTINE", filepath.Join(t.TempDir(), "q.json"))
	t.Setenv("CNNTIME_CUDNN", "")
	t.Setenv("LD_LIBRARY_PATH", "")
	venv := t.TempDir()
	lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "cudnn", "lib", "libcudnn.so.9")
	elf, err := os.ReadFile(filepath.Join("testdata", "elf-x86-64.so")) // an x86-64 shared library's ELF header
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, elf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	var out, errOut bytes.Buffer
	code := RunCLI(context.Background(), []string{"--db", filepath.Join(t.TempDir(), "c.db"), "--json", "devices", "--check"}, nil, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1 without a GPU (stderr %q)", code, errOut.String())
	}
	var res app.GPUCheck
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	sources := map[string]map[string]bool{} // library -> sources listed
	var loads []string
	for _, c := range res.Libraries {
		if sources[c.Library] == nil {
			sources[c.Library] = map[string]bool{}
		}
		sources[c.Library][c.Source] = true
		if c.Verdict == "load" {
			loads = append(loads, c.Library+" "+c.Path)
		}
	}
	for _, l := range []string{"cuDNN", "cuBLAS", "NVRTC", "NVML"} {
		for _, src := range []string{"LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CUDA_HOME", "loader"} {
			if !sources[l][src] {
				t.Errorf("%s: no candidate from %s in %v", l, src, sources[l])
			}
		}
	}
	if !slices.Contains(loads, "cuDNN "+lib) {
		t.Errorf("would load %q, want cuDNN from %s", loads, lib)
	}
	var text bytes.Buffer
	RunCLI(context.Background(), []string{"--db", filepath.Join(t.TempDir(), "c.db"), "devices", "--check"}, nil, &text, &errOut)
	if !strings.Contains(text.String(), "cuDNN: would load "+lib) {
		t.Errorf("the text lacks the cuDNN it would load:\n%s", text.String())
	}
}

// TestFirstRunWithoutAGPU: on a machine with no usable GPU, devices --first-run DIR
// exits 3 with the reason and writes its report there saying so.
func TestFirstRunWithoutAGPU(t *testing.T) {
	t.Setenv("CNNTIME_GPU_WORKER", filepath.Join(t.TempDir(), "absent"))
	dir := filepath.Join(t.TempDir(), "first-run")
	var out, errOut bytes.Buffer
	code := RunCLI(context.Background(), []string{"devices", "--first-run", dir}, nil, &out, &errOut)
	if code != 3 || !strings.Contains(errOut.String(), "CUDA worker not found") {
		t.Fatalf("exit %d, stderr %q: want 3 and the reason", code, errOut.String())
	}
	var rep firstrun.Report
	data, err := os.ReadFile(filepath.Join(dir, firstrun.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Verdict != firstrun.NoGPU || !strings.Contains(rep.Reason, "CUDA worker not found") || len(rep.Libraries) == 0 {
		t.Errorf("first-run.json: verdict %q, reason %q, %d library candidates, %v", rep.Verdict, rep.Reason, len(rep.Libraries), err)
	}
	text, err := os.ReadFile(filepath.Join(dir, firstrun.TextFile))
	if err != nil || !strings.Contains(string(text), "NO GPU") || !strings.Contains(out.String(), "NO GPU") {
		t.Errorf("first-run.txt %q (%v), stdout %q: want the report saying there is no GPU", text, err, out.String())
	}
	if code := RunCLI(context.Background(), []string{"devices", "--check", "--first-run", dir}, nil, &out, &errOut); code != 2 {
		t.Errorf("--check with --first-run: exit %d, want 2", code)
	}
}
