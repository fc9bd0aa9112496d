package libfind

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Library is one run-time library the worker loads.
type Library struct {
	What  string   // e.g. "cuDNN"
	Env   string   // the environment variable that names its path
	Names []string // sonames, newest first
}

var (
	CuDNN  = Library{"cuDNN", "CNNTIME_CUDNN", []string{"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"}}
	CuBLAS = Library{"cuBLAS", "CNNTIME_CUBLAS", []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}}
	NVRTC  = Library{"NVRTC", "CNNTIME_NVRTC", []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}}
	NVML   = Library{"NVML", "CNNTIME_NVML", []string{"libnvidia-ml.so.1", "libnvidia-ml.so"}}
)

// CUDAHome is where NVIDIA's installers put the toolkit, or $CUDA_HOME.
func CUDAHome() string {
	if h := os.Getenv("CUDA_HOME"); h != "" {
		return h
	}
	return "/usr/local/cuda"
}

// Candidates lists what to try to open, in order: explicit (a flag, else $Env) alone
// when set (a directory stands for the sonames in it), else every soname through the loader's path, then under home's library
// directories (lib64, lib and targets/<arch>-linux/lib), where an NVIDIA install that
// is not in ld.so.conf keeps them.
func (l Library) Candidates(explicit, home string) []string {
	if explicit == "" {
		explicit = os.Getenv(l.Env)
	}
	if explicit != "" {
		if st, err := os.Stat(explicit); err == nil && st.IsDir() { // a directory: its sonames
			var out []string
			for _, n := range l.Names {
				out = append(out, filepath.Join(explicit, n))
			}
			return out
		}
		return []string{explicit}
	}
	out := append([]string(nil), l.Names...)
	if home == "" {
		return out
	}
	for _, dir := range []string{"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"} {
		for _, n := range l.Names {
			out = append(out, filepath.Join(home, dir, n))
		}
	}
	return out
}

// cuDNN's sub-libraries in the order their dependencies need: cuDNN 9's graph library
// first, cuDNN 8's inference halves before their training halves. Others found beside
// cuDNN (newer releases add some) follow these, in name order.
var cudnnSubOrder = []string{
	"libcudnn_graph", "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled", "libcudnn_heuristic",
	"libcudnn_ops", "libcudnn_cnn", "libcudnn_adv",
	"libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train", "libcudnn_adv_infer", "libcudnn_adv_train",
}

// CuDNNSubLibraries returns the sub-libraries to preload, in order, for the cuDNN at
// path: every libcudnn_*.so.<major>* file beside it (one per sub-library, its shortest
// name: the soname over the full version), major being the one in cuDNN's file name
// (through a symbolic link such as libcudnn.so, else the highest present). A bare
// soname (no directory) needs no preload: the loader finds the sub-libraries where it
// found cuDNN.
func CuDNNSubLibraries(path string) []string {
	if !strings.Contains(path, "/") {
		return nil
	}
	dir := filepath.Dir(path)
	major := soMajor(filepath.Base(path))
	if major == "" {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			major = soMajor(filepath.Base(real))
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "libcudnn_*.so.*"))
	byMajor := map[string]map[string]string{} // major -> sub-library -> file
	for _, f := range files {
		base := filepath.Base(f)
		m := soMajor(base)
		if m == "" {
			continue
		}
		name := base[:strings.Index(base, ".so.")]
		if byMajor[m] == nil {
			byMajor[m] = map[string]string{}
		}
		if old, ok := byMajor[m][name]; !ok || len(base) < len(filepath.Base(old)) {
			byMajor[m][name] = f
		}
	}
	if major == "" {
		for m := range byMajor {
			if n, _ := strconv.Atoi(m); major == "" || n > mustAtoi(major) {
				major = m
			}
		}
	}
	subs := byMajor[major]
	var out, rest []string
	for _, name := range cudnnSubOrder {
		if f, ok := subs[name]; ok {
			out = append(out, f)
			delete(subs, name)
		}
	}
	for _, f := range subs {
		rest = append(rest, f)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// soMajor returns the major version in a library's file name (libx.so.9.1.0 → "9"), or
// "" when it has none.
func soMajor(base string) string {
	i := strings.Index(base, ".so.")
	if i < 0 {
		return ""
	}
	m, _, _ := strings.Cut(base[i+4:], ".")
	if _, err := strconv.Atoi(m); err != nil {
		return ""
	}
	return m
}

func mustAtoi(s string) int { n, _ := strconv.Atoi(s); return n }
