package libfind

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sharedObject writes the 64 bytes of an ELF header: a shared library for machine m,
// which is all the search reads of a library.
func sharedObject(t *testing.T, path string, m elf.Machine) {
	t.Helper()
	h := make([]byte, 64)
	copy(h, []byte{0x7f, 'E', 'L', 'F', 2, 1, 1})
	binary.LittleEndian.PutUint16(h[16:], uint16(elf.ET_DYN))
	binary.LittleEndian.PutUint16(h[18:], uint16(m))
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint16(h[52:], 64)
	binary.LittleEndian.PutUint16(h[54:], 56)
	binary.LittleEndian.PutUint16(h[58:], 64)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, h, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeHost is a machine with the environment env, a Python whose site-packages are
// sites, a loader cache and its fixed system paths under root.
func fakeHost(env map[string]string, sites []string, cache map[string]string, root string) Host {
	return Host{
		Getenv: func(k string) string { return env[k] },
		SitePackages: func(python string) ([]string, string, error) {
			if python == "" {
				python = "/usr/bin/python3"
			}
			return sites, python, nil
		},
		LoaderCache: func() map[string]string { return cache },
		Root:        root,
		Home:        filepath.Join(root, "home"),
		Machine:     elf.EM_X86_64,
	}
}

func verdicts(cands []Candidate) []string {
	var out []string
	for _, c := range cands {
		where := c.Path
		if where == "" {
			where = c.Dir
		}
		out = append(out, c.Source+" "+c.Verdict+" "+where)
	}
	return out
}

// TestSearchFindsPipWheelsOfEachKind builds the layouts the libraries really come in
// and checks which file the worker loads: the wheels of PyTorch for CUDA 12
// (nvidia/<name>/lib) and CUDA 13 (nvidia/cu13/lib, cuDNN in nvidia/cudnn/lib) in an
// activated virtual environment, a conda environment, the Python on PATH, PyTorch 1.x's
// own copy in torch/lib, LD_LIBRARY_PATH, an NVIDIA install, the loader's cache and the
// usual site-packages, each in the stated order.
func TestSearchFindsPipWheelsOfEachKind(t *testing.T) {
	root := t.TempDir()
	at := func(p string) string { return filepath.Join(root, p) }
	venv12 := at("venv12/lib/python3.12/site-packages")
	sharedObject(t, filepath.Join(venv12, "nvidia/cudnn/lib/libcudnn.so.9"), elf.EM_X86_64)
	sharedObject(t, filepath.Join(venv12, "nvidia/cublas/lib/libcublas.so.12"), elf.EM_X86_64)
	sharedObject(t, filepath.Join(venv12, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), elf.EM_X86_64)
	venv13 := at("venv13/lib/python3.12/site-packages")
	sharedObject(t, filepath.Join(venv13, "nvidia/cudnn/lib/libcudnn.so.9"), elf.EM_X86_64)
	sharedObject(t, filepath.Join(venv13, "nvidia/cu13/lib/libcublas.so.13"), elf.EM_X86_64)
	sharedObject(t, filepath.Join(venv13, "nvidia/cu13/lib/libnvrtc.so.13"), elf.EM_X86_64)
	conda := at("conda/envs/train")
	sharedObject(t, filepath.Join(conda, "lib/libcudnn.so.8"), elf.EM_X86_64)
	pySite := at("usr/local/lib/python3.11/dist-packages")
	sharedObject(t, filepath.Join(pySite, "torch/lib/libcudnn.so.8"), elf.EM_X86_64) // PyTorch 1.13's bundled copy
	ldDir := at("opt/cudnn-9.1/lib")
	sharedObject(t, filepath.Join(ldDir, "libcudnn.so.9"), elf.EM_X86_64)
	cudaHome := at("usr/local/cuda")
	sharedObject(t, filepath.Join(cudaHome, "lib64/libcublas.so.12"), elf.EM_X86_64)
	sharedObject(t, filepath.Join(cudaHome, "lib64/libnvrtc.so.12"), elf.EM_X86_64)
	system := at("usr/lib/x86_64-linux-gnu")
	sharedObject(t, filepath.Join(system, "libcudnn.so.9"), elf.EM_X86_64)
	userSite := at("home/.local/lib/python3.11/site-packages")
	sharedObject(t, filepath.Join(userSite, "nvidia/cudnn/lib/libcudnn.so.9"), elf.EM_X86_64)
	cache := map[string]string{"libcudnn.so.9": filepath.Join(system, "libcudnn.so.9")}

	for _, c := range []struct {
		name  string
		env   map[string]string
		sites []string
		lib   Library
		want  string // the path loaded
		order []string
	}{
		{"CUDA 12 wheels in $VIRTUAL_ENV", map[string]string{"VIRTUAL_ENV": at("venv12")}, nil, CuDNN,
			filepath.Join(venv12, "nvidia/cudnn/lib/libcudnn.so.9"), nil},
		{"CUDA 12 cuBLAS wheel", map[string]string{"VIRTUAL_ENV": at("venv12")}, nil, CuBLAS,
			filepath.Join(venv12, "nvidia/cublas/lib/libcublas.so.12"), nil},
		{"CUDA 12 NVRTC wheel", map[string]string{"VIRTUAL_ENV": at("venv12")}, nil, NVRTC,
			filepath.Join(venv12, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), nil},
		{"CUDA 13 wheels: cuDNN in nvidia/cudnn/lib", map[string]string{"VIRTUAL_ENV": at("venv13")}, nil, CuDNN,
			filepath.Join(venv13, "nvidia/cudnn/lib/libcudnn.so.9"), nil},
		{"CUDA 13 wheels: cuBLAS in nvidia/cu13/lib", map[string]string{"VIRTUAL_ENV": at("venv13")}, nil, CuBLAS,
			filepath.Join(venv13, "nvidia/cu13/lib/libcublas.so.13"), nil},
		{"CUDA 13 wheels: NVRTC in nvidia/cu13/lib", map[string]string{"VIRTUAL_ENV": at("venv13")}, nil, NVRTC,
			filepath.Join(venv13, "nvidia/cu13/lib/libnvrtc.so.13"), nil},
		{"conda's lib", map[string]string{"CONDA_PREFIX": conda}, nil, CuDNN, filepath.Join(conda, "lib/libcudnn.so.8"), nil},
		{"the Python on PATH: PyTorch 1.x's torch/lib", nil, []string{pySite}, CuDNN, filepath.Join(pySite, "torch/lib/libcudnn.so.8"), nil},
		{"the wheels of the Python on PATH", nil, []string{venv13}, CuBLAS, filepath.Join(venv13, "nvidia/cu13/lib/libcublas.so.13"), nil},
		{"$CUDA_HOME", map[string]string{"CUDA_HOME": cudaHome}, nil, NVRTC, filepath.Join(cudaHome, "lib64/libnvrtc.so.12"), nil},
		{"/usr/local/cuda without CUDA_HOME", nil, nil, CuBLAS, filepath.Join(cudaHome, "lib64/libcublas.so.12"), nil},
		{"the loader's cache", nil, nil, CuDNN, "libcudnn.so.9", nil},
		{"LD_LIBRARY_PATH comes first", map[string]string{"LD_LIBRARY_PATH": ldDir, "VIRTUAL_ENV": at("venv12"), "CONDA_PREFIX": conda},
			[]string{pySite}, CuDNN, filepath.Join(ldDir, "libcudnn.so.9"),
			[]string{FromLDPath, FromVirtualEnv, FromConda, FromPython, FromLoader, FromSitePackages}},
		{"the virtual environment before conda and the Python on PATH", map[string]string{"VIRTUAL_ENV": at("venv12"), "CONDA_PREFIX": conda},
			[]string{pySite}, CuDNN, filepath.Join(venv12, "nvidia/cudnn/lib/libcudnn.so.9"),
			[]string{FromVirtualEnv, FromConda, FromPython, FromLoader, FromSitePackages}},
		{"a flag names the library alone", map[string]string{"VIRTUAL_ENV": at("venv12")}, nil, CuDNN, filepath.Join(conda, "lib/libcudnn.so.8"),
			[]string{FromFlag}},
		{"$CNNTIME_CUDNN names a directory", map[string]string{"CNNTIME_CUDNN": ldDir, "VIRTUAL_ENV": at("venv12")}, nil, CuDNN,
			filepath.Join(ldDir, "libcudnn.so.9"), []string{FromEnv}},
	} {
		t.Run(c.name, func(t *testing.T) {
			explicit := ""
			if c.name == "a flag names the library alone" {
				explicit = filepath.Join(conda, "lib/libcudnn.so.8")
			}
			cands := c.lib.Search(fakeHost(c.env, c.sites, cache, root), explicit)
			got, ok := Chosen(cands)
			path := got.Path
			if ok && got.Source == FromLoader {
				path = got.Path // the soname: the loader resolves it
			}
			if !ok || path != c.want {
				t.Fatalf("loads %q (ok %v), want %q; candidates:\n%s", path, ok, c.want, strings.Join(verdicts(cands), "\n"))
			}
			var sources []string
			for _, cand := range cands {
				if cand.Loadable() && (len(sources) == 0 || sources[len(sources)-1] != cand.Source) {
					sources = append(sources, cand.Source)
				}
			}
			if c.order != nil && !slices.Equal(sources, c.order) {
				t.Errorf("found in the order %v, want %v; candidates:\n%s", sources, c.order, strings.Join(verdicts(cands), "\n"))
			}
			for _, cand := range cands {
				if cand.Why == "" || cand.Library != c.lib.What {
					t.Errorf("candidate %+v does not say what it is or why", cand)
				}
			}
		})
	}
}

// TestSearchSaysWhyEachPlaceWasSkipped: every place of the order is listed, those not
// searched and the files that cannot be loaded with the reason.
func TestSearchSaysWhyEachPlaceWasSkipped(t *testing.T) {
	root := t.TempDir()
	venv := filepath.Join(root, "venv/lib/python3.12/site-packages")
	if err := os.MkdirAll(filepath.Join(venv, "nvidia/cudnn/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A text file by the right name (a broken download), and a library for Arm.
	if err := os.WriteFile(filepath.Join(venv, "nvidia/cudnn/lib/libcudnn.so.9"), []byte("version https://git-lfs.github.com/spec/v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sharedObject(t, filepath.Join(venv, "nvidia/cudnn/lib/libcudnn.so.8"), elf.EM_AARCH64)
	h := fakeHost(map[string]string{"VIRTUAL_ENV": filepath.Join(root, "venv")}, nil, map[string]string{}, root)
	h.SitePackages = func(string) ([]string, string, error) { return []string{venv}, "/usr/bin/python3", nil }
	cands := CuDNN.Search(h, "")
	text := strings.Join(verdicts(cands), "\n")
	for _, want := range []struct{ source, verdict, why string }{
		{FromLDPath, Skipped, "LD_LIBRARY_PATH is not set"},
		{FromVirtualEnv, Skipped, "not a shared library"},
		{FromVirtualEnv, Skipped, "built for EM_AARCH64, not this machine's EM_X86_64"},
		{FromConda, Skipped, "CONDA_PREFIX is not set"},
		{FromPython, Skipped, "looked in already (VIRTUAL_ENV)"},
		{FromCUDAHome, Absent, "not there"},
		{FromLoader, Absent, "lists none of libcudnn.so.9"},
	} {
		if !slices.ContainsFunc(cands, func(c Candidate) bool {
			return c.Source == want.source && c.Verdict == want.verdict && strings.Contains(c.Why, want.why)
		}) {
			t.Errorf("no %s candidate %s saying %q:\n%s", want.source, want.verdict, want.why, text)
		}
	}
	if c, ok := Chosen(cands); ok {
		t.Errorf("loads %+v, though nothing here can be loaded", c)
	}
}

func TestParseLoaderCache(t *testing.T) {
	out := []byte(`1234 libs found in cache ` + "`/etc/ld.so.cache'" + `
	libcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9
	libcublas.so.12 (libc6) => /usr/lib/i386-linux-gnu/libcublas.so.12
	libcublas.so.12 (libc6,x86-64) => /usr/local/cuda-12.4/lib64/libcublas.so.12
	libnvrtc.so.12 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libnvrtc.so.12
`)
	got := ParseLoaderCache(out, "amd64")
	want := map[string]string{"libcudnn.so.9": "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcublas.so.12": "/usr/local/cuda-12.4/lib64/libcublas.so.12"}
	if len(got) != len(want) || got["libcudnn.so.9"] != want["libcudnn.so.9"] || got["libcublas.so.12"] != want["libcublas.so.12"] {
		t.Errorf("ParseLoaderCache = %v, want %v", got, want)
	}
}

func TestCompanionOf(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12", "/venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.12"},
		{"/x/nvidia/cu13/lib/libcublas.so.13", "/x/nvidia/cu13/lib/libcublasLt.so.13"},
		{"libcublas.so.11", "libcublasLt.so.11"},
		{"/usr/lib/libcublas.so", "/usr/lib/libcublasLt.so"},
	} {
		if got := CuBLASLt.CompanionOf(c.path); got != c.want {
			t.Errorf("CompanionOf(%s) = %s, want %s", c.path, got, c.want)
		}
	}
}
