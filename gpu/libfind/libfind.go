package libfind

import (
	"os"
	"path/filepath"
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
// first, cuDNN 8's inference halves before their training halves.
var (
	cudnn9Subs = []string{"libcudnn_graph", "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled",
		"libcudnn_heuristic", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv"}
	cudnn8Subs = []string{"libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
		"libcudnn_adv_infer", "libcudnn_adv_train"}
)

// CuDNNSubLibraries returns the sub-libraries to preload, in order, for the cuDNN at
// path: the files beside it with its major version (from its name, libcudnn.so.9...;
// else whichever set is there). A bare soname (no directory) needs no preload: the
// loader finds the sub-libraries where it found cuDNN.
func CuDNNSubLibraries(path string) []string {
	if !strings.Contains(path, "/") {
		return nil
	}
	dir, base := filepath.Split(path)
	major := ""
	if i := strings.Index(base, ".so."); i >= 0 {
		major, _, _ = strings.Cut(base[i+4:], ".")
	}
	var sets [][]string
	switch major {
	case "9":
		sets = [][]string{cudnn9Subs}
	case "8":
		sets = [][]string{cudnn8Subs}
	default:
		sets = [][]string{cudnn9Subs, cudnn8Subs}
	}
	for _, set := range sets {
		var out []string
		for _, sub := range set {
			if p := findSoname(dir, sub, major); p != "" {
				out = append(out, p)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// findSoname finds dir/name.so.major (or name.so.<anything> when major is "").
func findSoname(dir, name, major string) string {
	if major != "" {
		p := filepath.Join(dir, name+".so."+major)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(dir, name+".so.*"))
	if len(m) > 0 {
		return m[0]
	}
	p := filepath.Join(dir, name+".so")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}
