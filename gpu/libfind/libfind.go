package libfind

import (
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
	// Wheels are the directories under site-packages where pip wheels put it: PyTorch's
	// CUDA 12 wheels depend on nvidia-cudnn-cu12, nvidia-cublas-cu12 and
	// nvidia-cuda-nvrtc-cu12 (nvidia/<name>/lib each), its CUDA 13 wheels on
	// nvidia-cudnn-cu13 (nvidia/cudnn/lib) and the CUDA 13 component wheels, which all
	// share nvidia/cu13/lib; PyTorch 1.x's CUDA wheels carried cuDNN and cuBLAS in
	// torch/lib.
	Wheels []string
}

var (
	CuDNN = Library{"cuDNN", "CNNTIME_CUDNN", []string{"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"},
		[]string{"nvidia/cudnn/lib", "torch/lib"}}
	CuBLAS = Library{"cuBLAS", "CNNTIME_CUBLAS", []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"},
		[]string{"nvidia/cu13/lib", "nvidia/cublas/lib", "torch/lib"}}
	// CuBLASLt is cuBLAS's matmul library, beside it in every layout; the worker loads
	// the one of cuBLAS's directory (CompanionOf), for the bias epilogue.
	CuBLASLt = Library{"cuBLASLt", "CNNTIME_CUBLASLT", []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"},
		[]string{"nvidia/cu13/lib", "nvidia/cublas/lib", "torch/lib"}}
	NVRTC = Library{"NVRTC", "CNNTIME_NVRTC", []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"},
		[]string{"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"}}
	// NVML comes with the driver, never in a wheel.
	NVML = Library{"NVML", "CNNTIME_NVML", []string{"libnvidia-ml.so.1", "libnvidia-ml.so"}, nil}
)

// Libraries are the ones the worker loads, in the order it loads them.
var Libraries = []Library{CuDNN, CuBLAS, NVRTC, NVML}

// CompanionOf is the file of library l that goes with the loaded file path of another
// (cuBLASLt with cuBLAS): the same major version in the same directory, or the bare
// soname when path is one.
func (l Library) CompanionOf(path string) string {
	major := soMajor(filepath.Base(path))
	for _, n := range l.Names {
		if soMajor(n) == major {
			if !strings.Contains(path, "/") {
				return n
			}
			return filepath.Join(filepath.Dir(path), n)
		}
	}
	if !strings.Contains(path, "/") {
		return l.Names[len(l.Names)-1]
	}
	return filepath.Join(filepath.Dir(path), l.Names[len(l.Names)-1])
}

// Preloads are the files to open before the library at path so that it finds them by
// name (a directory outside the loader's path has them beside it): cuDNN's
// sub-libraries (CuDNNSubLibraries), cuBLAS's cuBLASLt, NVRTC's builtins. None for a bare
// soname: the loader finds them where it found the library.
func (l Library) Preloads(path string) []string {
	if !strings.Contains(path, "/") {
		return nil
	}
	switch l.What {
	case CuDNN.What:
		return CuDNNSubLibraries(path)
	case CuBLAS.What:
		return []string{CuBLASLt.CompanionOf(path)}
	case NVRTC.What:
		major := soMajor(filepath.Base(path))
		if major == "" {
			return nil
		}
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "libnvrtc-builtins.so."+major+"*"))
		sort.Slice(m, func(i, j int) bool { return len(m[i]) < len(m[j]) || (len(m[i]) == len(m[j]) && m[i] < m[j]) })
		if len(m) > 1 {
			m = m[:1]
		}
		return m
	}
	return nil
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
