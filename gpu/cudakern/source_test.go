package cudakern_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cnntime/gpu/cudakern"
	"cnntime/gpu/libfind"
)

// nvrtcScript compiles kernels.cu with the first NVRTC in argv[3:] that loads, through
// Python's ctypes (no cgo, no GPU: NVRTC is a compiler), with the options in argv[2] (a
// JSON list of option lists); argv[1] "version" only reports NVRTC's version. It prints
// JSON: {"found": false} or {"version": [major, minor], "results": [{"status", "log",
// "ptx"}]}.
const nvrtcScript = `
import ctypes, json, sys
lib = None
for name in sys.argv[3:]:
    try:
        lib = ctypes.CDLL(name)
        break
    except OSError:
        pass
if lib is None:
    print(json.dumps({"found": False}))
    sys.exit(0)
major, minor = ctypes.c_int(), ctypes.c_int()
lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
out = {"found": True, "version": [major.value, minor.value], "results": []}
if sys.argv[1] != "version":
    src = open(sys.argv[1], "rb").read()
    for opts in json.loads(sys.argv[2]):
        prog = ctypes.c_void_p()
        lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None)
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        status = lib.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value + 1)
        lib.nvrtcGetProgramLog(prog, log)
        ptx = ""
        if status == 0 and not any(o.startswith("--gpu-architecture=sm_") for o in opts):
            lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
            buf = ctypes.create_string_buffer(size.value + 1)
            lib.nvrtcGetPTX(prog, buf)
            ptx = buf.value.decode(errors="replace")
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        out["results"].append({"status": status, "log": log.value.decode(errors="replace"), "ptx": ptx})
print(json.dumps(out))
`

type nvrtcResult struct {
	Found   bool   `json:"found"`
	Version [2]int `json:"version"`
	Results []struct {
		Status int    `json:"status"`
		Log    string `json:"log"`
		PTX    string `json:"ptx"`
	} `json:"results"`
}

func runNVRTC(t *testing.T, py, src string, opts [][]string) nvrtcResult {
	t.Helper()
	optJSON, _ := json.Marshal(opts)
	args := []string{"-c", nvrtcScript, src, string(optJSON)}
	for _, c := range libfind.NVRTC.Search(libfind.System(), "") {
		if c.Loadable() {
			args = append(args, c.Path)
		}
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 calling NVRTC: %v\n%s", err, out)
	}
	var r nvrtcResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("python3 calling NVRTC printed %s: %v", out, err)
	}
	return r
}

// TestKernelSourceCompilesWithNVRTC compiles kernels.cu as the worker does (a CUBIN for
// an A100 and an H100, and the PTX fallback; FP32 and FP16 data) with the NVRTC that
// Debian's nvidia-cuda-dev installs (make gpu-worker), and checks the PTX defines every
// kernel the worker looks up. Skipped where no NVRTC is installed.
func TestKernelSourceCompilesWithNVRTC(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to call NVRTC through ctypes")
	}
	src, _ := filepath.Abs("kernels.cu")
	probe := runNVRTC(t, py, "version", nil)
	if !probe.Found {
		t.Skip("no NVRTC installed (make gpu-worker installs Debian's nvidia-cuda-dev, which has it); the source is still compiled by the CPU emulator's test")
	}
	var opts [][]string
	for _, cc := range [][2]int{{8, 0}, {9, 0}} {
		for _, target := range libfind.KernelTargets(cc[0], cc[1], probe.Version[0]) {
			for _, half := range []bool{false, true} {
				o := []string{target.Option, "--use_fast_math"}
				if half {
					o = append(o, "-DUSE_HALF")
				}
				if !slices.ContainsFunc(opts, func(x []string) bool { return slices.Equal(x, o) }) {
					opts = append(opts, o)
				}
			}
		}
	}
	if len(opts) == 0 {
		t.Fatalf("NVRTC %d.%d compiles for neither an A100 nor an H100", probe.Version[0], probe.Version[1])
	}
	r := runNVRTC(t, py, src, opts)
	sawPTX := false
	for i, res := range r.Results {
		if res.Status != 0 {
			t.Errorf("NVRTC %d.%d %v: status %d\n%s", r.Version[0], r.Version[1], opts[i], res.Status, res.Log)
			continue
		}
		if res.PTX == "" {
			continue
		}
		sawPTX = true
		for _, name := range cudakern.Names {
			if !strings.Contains(res.PTX, ".entry "+name+"(") {
				t.Errorf("NVRTC %v: the PTX has no kernel %s", opts[i], name)
			}
		}
		// No kernel divides in 64 bits: a div.s64 or rem.s64 is a long software routine
		// per element (transpose had 15 and 5 of them), where PyTorch's kernels divide
		// indices in 32 bits by a multiply and a shift.
		for name, body := range ptxEntries(res.PTX) {
			for _, op := range []string{"div.s64", "rem.s64", "div.u64", "rem.u64"} {
				if n := strings.Count(body, op+" "); n > 0 {
					t.Errorf("NVRTC %v: kernel %s has %d %s", opts[i], name, n, op)
				}
			}
		}
	}
	if !sawPTX && !t.Failed() {
		t.Error("no PTX target was compiled: the kernel names went unchecked")
	}
}

// TestKernelSourceCompilesOnTheCPU compiles kernels.cu as C++20 against host_cuda.h,
// with FP32, FP16 and bfloat16 data, warnings as errors: the parse check that runs where
// NVRTC is not installed.
func TestKernelSourceCompilesOnTheCPU(t *testing.T) {
	for _, half := range []format{f32, f16, bf16} {
		harnessFor(t, half)
	}
}

// ptxEntries splits PTX into its kernels' bodies, by name.
func ptxEntries(ptx string) map[string]string {
	out := map[string]string{}
	parts := strings.Split(ptx, ".entry ")
	for _, p := range parts[1:] {
		name, _, _ := strings.Cut(p, "(")
		out[strings.TrimSpace(name)] = p
	}
	return out
}
