package libfind

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The places a library is searched, in this order (Search):
const (
	FromFlag         = "flag"            // the worker's -cudnn/-cublas/-nvrtc flag: tried alone
	FromEnv          = "env"             // $CNNTIME_CUDNN and the like: tried alone
	FromLDPath       = "LD_LIBRARY_PATH" // each of its directories, in order
	FromVirtualEnv   = "VIRTUAL_ENV"     // an activated virtual environment's pip wheels
	FromConda        = "CONDA_PREFIX"    // an activated conda environment: its lib, then its pip wheels
	FromPython       = "python"          // the pip wheels in the site-packages of the Python on PATH (or CNNTIME_PYTHON)
	FromCUDAHome     = "CUDA_HOME"       // an NVIDIA install: $CUDA_HOME, else /usr/local/cuda
	FromLoader       = "loader"          // the sonames, through the loader's path (ld.so.cache, /lib, /usr/lib)
	FromSitePackages = "site-packages"   // the usual places of Python installs no variable names
)

// Verdicts of a candidate.
const (
	Load    = "load"    // the first library found: what the worker loads
	Found   = "found"   // there too, but after the one loaded: tried when those before fail to load
	Absent  = "absent"  // nothing of that name there
	Skipped = "skipped" // not searched, or not a library this machine can load: Why says why
)

// Candidate is one place a library was looked for and what was there.
type Candidate struct {
	Library string `json:"library"`        // e.g. "cuDNN"
	Source  string `json:"source"`         // which place of the search order (From*)
	Dir     string `json:"dir,omitempty"`  // the directory looked in ("" for the loader's path)
	Path    string `json:"path,omitempty"` // the file found, or the soname the loader resolves
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

// Loadable says whether the worker tries to open the candidate.
func (c Candidate) Loadable() bool { return c.Verdict == Load || c.Verdict == Found }

// PythonEnv names the Python interpreter whose site-packages the search looks in, for a
// machine where the one that trains is not the first python3 on PATH.
const PythonEnv = "CNNTIME_PYTHON"

// Host is what the search reads of this machine: its environment, the Python it asks
// for its site-packages, the loader's cache and its files. System is this machine;
// tests build fake layouts.
type Host struct {
	Getenv func(string) string
	// SitePackages returns the site-packages directories of the Python interpreter
	// python ("" for the one on PATH), and the interpreter asked.
	SitePackages func(python string) (dirs []string, interpreter string, err error)
	// LoaderCache maps sonames to the files the loader's cache (ldconfig -p) lists.
	LoaderCache func() map[string]string
	Home        string // the user's home directory, for ~/.local and ~/miniconda3
	Root        string // prefixed to the fixed system paths (/usr/local/cuda, /usr/lib/python3, ...): "" on a real machine
	Machine     elf.Machine
}

// System is this machine as it is. It asks Python and the loader once, however many
// libraries it is searched for.
func System() Host {
	home, _ := os.UserHomeDir()
	type sites struct {
		dirs []string
		py   string
		err  error
	}
	asked := map[string]sites{}
	var cache map[string]string
	var cacheOnce sync.Once
	var mu sync.Mutex
	return Host{
		Getenv: os.Getenv,
		SitePackages: func(python string) ([]string, string, error) {
			mu.Lock()
			defer mu.Unlock()
			r, ok := asked[python]
			if !ok {
				r.dirs, r.py, r.err = pythonSitePackages(python)
				asked[python] = r
			}
			return r.dirs, r.py, r.err
		},
		LoaderCache: func() map[string]string {
			cacheOnce.Do(func() { cache = ldconfigCache() })
			return cache
		},
		Home:    home,
		Machine: nativeMachine(),
	}
}

func nativeMachine() elf.Machine {
	switch runtime.GOARCH {
	case "arm64":
		return elf.EM_AARCH64
	case "ppc64le":
		return elf.EM_PPC64
	}
	return elf.EM_X86_64
}

// SearchOrder describes the order of the places, for help texts and reports.
const SearchOrder = "the -cudnn/-cublas/-nvrtc flag or $CNNTIME_CUDNN/$CNNTIME_CUBLAS/$CNNTIME_NVRTC alone when set; " +
	"else LD_LIBRARY_PATH's directories; $VIRTUAL_ENV's pip wheels; $CONDA_PREFIX/lib and its pip wheels; " +
	"the pip wheels of the Python on PATH ($CNNTIME_PYTHON names another); $CUDA_HOME (else /usr/local/cuda); " +
	"the loader's path (ld.so.cache); the usual site-packages (/usr/local/lib/python3*, ~/.local, /opt/conda, ~/miniconda3)"

// Search lists every place the library is looked for, in the order the worker tries
// them, and what each holds: the first loadable one has the verdict Load. explicit is
// the worker's flag ("" when not given); a flag or $Env names the library alone (a
// directory stands for the sonames in it).
func (l Library) Search(h Host, explicit string) []Candidate {
	s := searcher{lib: l, h: h, seen: map[string]string{}}
	if explicit != "" {
		s.named(FromFlag, explicit, "named by the worker's flag")
	} else if env := h.Getenv(l.Env); env != "" {
		s.named(FromEnv, env, "$"+l.Env+" names it")
	} else {
		s.everywhere()
	}
	for i := range s.out {
		if s.out[i].Loadable() {
			s.out[i].Verdict = Load
			for j := i + 1; j < len(s.out); j++ {
				if s.out[j].Verdict == Load {
					s.out[j].Verdict = Found
				}
			}
			break
		}
	}
	return s.out
}

// Chosen is the candidate the worker loads first, if any.
func Chosen(cands []Candidate) (Candidate, bool) {
	for _, c := range cands {
		if c.Verdict == Load {
			return c, true
		}
	}
	return Candidate{}, false
}

type searcher struct {
	lib  Library
	h    Host
	out  []Candidate
	seen map[string]string // directory → the source that looked in it first
}

func (s *searcher) add(c Candidate) {
	c.Library = s.lib.What
	s.out = append(s.out, c)
}

// named is the one candidate a flag or variable gives: a file, a directory (its
// sonames), or a bare name for the loader.
func (s *searcher) named(source, path, why string) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		if !s.dir(source, path, why) {
			s.add(Candidate{Source: source, Dir: path, Verdict: Absent, Why: why + ", but it holds none of " + strings.Join(s.lib.Names, ", ")})
		}
	case err == nil:
		s.file(source, filepath.Dir(path), path, why)
	case !strings.Contains(path, "/"):
		s.add(Candidate{Source: source, Path: path, Verdict: Load, Why: why + " (a name the loader resolves)"})
	default:
		s.add(Candidate{Source: source, Path: path, Verdict: Absent, Why: fmt.Sprintf("%s, but %v", why, err)})
	}
}

// file adds an existing file, loadable when it is a shared library for this machine.
func (s *searcher) file(source, dir, path, why string) {
	c := Candidate{Source: source, Dir: dir, Path: path, Verdict: Load, Why: why}
	if bad := s.notALibrary(path); bad != "" {
		c.Verdict, c.Why = Skipped, why+", but "+bad
	}
	s.add(c)
}

// dir adds the library's sonames found in dir (newest first); false when none is there.
// A directory searched before is named once, skipped.
func (s *searcher) dir(source, dir, why string) bool {
	clean := filepath.Clean(dir)
	if first, ok := s.seen[clean]; ok {
		s.add(Candidate{Source: source, Dir: dir, Verdict: Skipped, Why: fmt.Sprintf("%s; looked in already (%s)", why, first)})
		return true
	}
	s.seen[clean] = source
	found := false
	for _, n := range s.lib.Names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			s.file(source, dir, p, why)
			found = true
		}
	}
	return found
}

// look adds dir's sonames, or one absent candidate saying what was missing.
func (s *searcher) look(source, dir, why string) {
	if !s.dir(source, dir, why) {
		s.add(Candidate{Source: source, Dir: dir, Verdict: Absent, Why: why + ": none of " + strings.Join(s.lib.Names, ", ")})
	}
}

// wheels looks for the library where pip wheels put it under each site-packages
// directory; a site-packages directory without any of them is one absent candidate.
func (s *searcher) wheels(source string, sites []string, why string) {
	if len(s.lib.Wheels) == 0 {
		s.add(Candidate{Source: source, Verdict: Skipped, Why: s.lib.What + " comes with the NVIDIA driver: no pip wheel has it"})
		return
	}
	for _, site := range sites {
		any := false
		for _, sub := range s.lib.Wheels {
			d := filepath.Join(site, sub)
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				any = true
				s.look(source, d, why+": "+wheelNote(sub))
			}
		}
		if !any {
			s.add(Candidate{Source: source, Dir: site, Verdict: Absent, Why: why + ": no pip wheel of " + s.lib.What + " (" + strings.Join(s.lib.Wheels, ", ") + ")"})
		}
	}
}

// wheelNote says which wheel layout a directory under site-packages is.
func wheelNote(sub string) string {
	switch {
	case strings.HasPrefix(sub, "nvidia/cu13/"):
		return "CUDA 13 wheels (nvidia/cu13/lib)"
	case strings.HasPrefix(sub, "torch/"):
		return "PyTorch's own copy (torch/lib)"
	case strings.HasPrefix(sub, "nvidia/"):
		return "the " + strings.Split(sub, "/")[1] + " wheel (" + sub + ")"
	}
	return sub
}

// everywhere searches the places of the search order.
func (s *searcher) everywhere() {
	h := s.h
	if ld := h.Getenv("LD_LIBRARY_PATH"); ld != "" {
		for _, d := range filepath.SplitList(ld) {
			if d != "" {
				s.look(FromLDPath, d, "a directory of LD_LIBRARY_PATH")
			}
		}
	} else {
		s.add(Candidate{Source: FromLDPath, Verdict: Skipped, Why: "LD_LIBRARY_PATH is not set"})
	}
	if venv := h.Getenv("VIRTUAL_ENV"); venv != "" {
		sites := globSites(venv)
		if len(sites) == 0 {
			s.add(Candidate{Source: FromVirtualEnv, Dir: venv, Verdict: Absent, Why: "the activated virtual environment has no lib/python3*/site-packages"})
		}
		s.wheels(FromVirtualEnv, sites, "the activated virtual environment")
	} else {
		s.add(Candidate{Source: FromVirtualEnv, Verdict: Skipped, Why: "no virtual environment is activated (VIRTUAL_ENV is not set)"})
	}
	if conda := h.Getenv("CONDA_PREFIX"); conda != "" {
		s.look(FromConda, filepath.Join(conda, "lib"), "the activated conda environment's lib (conda's cudnn and cuda-libraries packages)")
		s.wheels(FromConda, globSites(conda), "the activated conda environment's pip wheels")
	} else {
		s.add(Candidate{Source: FromConda, Verdict: Skipped, Why: "no conda environment is activated (CONDA_PREFIX is not set)"})
	}
	if len(s.lib.Wheels) == 0 {
		s.wheels(FromPython, nil, "")
	} else if h.SitePackages != nil {
		sites, py, err := h.SitePackages(h.Getenv(PythonEnv))
		switch {
		case err != nil:
			s.add(Candidate{Source: FromPython, Verdict: Skipped, Why: err.Error()})
		case len(sites) == 0:
			s.add(Candidate{Source: FromPython, Verdict: Skipped, Why: py + " names no site-packages directory"})
		default:
			s.wheels(FromPython, sites, "site-packages of "+py)
		}
	}
	home := h.Getenv("CUDA_HOME")
	why := "$CUDA_HOME"
	if home == "" {
		home, why = filepath.Join(h.Root, "/usr/local/cuda"), "/usr/local/cuda (CUDA_HOME is not set)"
	}
	for _, d := range []string{"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"} {
		dir := filepath.Join(home, d)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			s.look(FromCUDAHome, dir, "an NVIDIA install, "+why)
		} else if d == "lib64" {
			s.add(Candidate{Source: FromCUDAHome, Dir: dir, Verdict: Absent, Why: "an NVIDIA install, " + why + ": not there"})
		}
	}
	s.loader()
	for _, site := range s.usualSites() {
		if _, ok := s.seen[filepath.Clean(site)]; ok {
			continue
		}
		for _, sub := range s.lib.Wheels {
			d := filepath.Join(site, sub)
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				s.look(FromSitePackages, d, "a usual site-packages, "+site+": "+wheelNote(sub))
			}
		}
	}
	for _, d := range s.usualCondaLibs() {
		s.look(FromSitePackages, d, "a usual conda install's lib")
	}
}

// loader adds the sonames as the loader resolves them: through its cache when it lists
// them, else by name (dlopen also searches directories the cache does not list).
func (s *searcher) loader() {
	var cache map[string]string
	if s.h.LoaderCache != nil {
		cache = s.h.LoaderCache()
	}
	if cache == nil {
		for _, n := range s.lib.Names {
			s.add(Candidate{Source: FromLoader, Path: n, Verdict: Load, Why: "the loader resolves the name itself (ldconfig -p is not available to list its cache)"})
		}
		return
	}
	found := false
	for _, n := range s.lib.Names {
		if p, ok := cache[n]; ok {
			found = true
			c := Candidate{Source: FromLoader, Dir: filepath.Dir(p), Path: n, Verdict: Load, Why: "the loader's cache lists " + n + " as " + p}
			if _, ok := s.seen[filepath.Clean(filepath.Dir(p))]; ok {
				c.Verdict, c.Why = Skipped, c.Why+"; looked in already"
			} else if bad := s.notALibrary(p); bad != "" {
				c.Verdict, c.Why = Skipped, c.Why+", but "+bad
			}
			s.add(c)
		}
	}
	if !found {
		s.add(Candidate{Source: FromLoader, Path: s.lib.Names[0], Verdict: Absent,
			Why: "the loader's cache (ldconfig -p) lists none of " + strings.Join(s.lib.Names, ", ")})
	}
}

// usualSites are the site-packages of Python installs that no variable names.
func (s *searcher) usualSites() []string {
	var out []string
	patterns := []string{
		"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages", "/usr/lib/python3/dist-packages",
		"/opt/conda/lib/python3*/site-packages",
	}
	for _, p := range patterns {
		out = append(out, glob(filepath.Join(s.h.Root, p))...)
	}
	if s.h.Home != "" {
		for _, p := range []string{".local/lib/python3*/site-packages", "miniconda3/lib/python3*/site-packages", "miniforge3/lib/python3*/site-packages", "anaconda3/lib/python3*/site-packages"} {
			out = append(out, glob(filepath.Join(s.h.Home, p))...)
		}
	}
	return out
}

// usualCondaLibs are the lib directories of conda installs no variable names.
func (s *searcher) usualCondaLibs() []string {
	var out []string
	cands := []string{filepath.Join(s.h.Root, "/opt/conda/lib")}
	if s.h.Home != "" {
		for _, d := range []string{"miniconda3", "miniforge3", "anaconda3"} {
			cands = append(cands, filepath.Join(s.h.Home, d, "lib"))
		}
	}
	for _, d := range cands {
		if _, ok := s.seen[filepath.Clean(d)]; ok {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// globSites are an environment's site-packages directories (lib and lib64).
func globSites(prefix string) []string {
	var out []string
	for _, p := range []string{"lib/python3*/site-packages", "lib64/python3*/site-packages"} {
		for _, d := range glob(filepath.Join(prefix, p)) {
			if real, err := filepath.EvalSymlinks(d); err == nil && slices.ContainsFunc(out, func(o string) bool {
				r, _ := filepath.EvalSymlinks(o)
				return r == real
			}) {
				continue // lib64 is often a link to lib
			}
			out = append(out, d)
		}
	}
	return out
}

func glob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	sort.Strings(m)
	var out []string
	for _, d := range m {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// notALibrary says why the file at path cannot be loaded here ("" when it can): it is
// not an ELF shared library, or one for another processor.
func (s *searcher) notALibrary(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Sprintf("it is not a shared library (%v)", err)
	}
	defer f.Close()
	if f.Type != elf.ET_DYN {
		return fmt.Sprintf("it is an ELF %s, not a shared library", f.Type)
	}
	if s.h.Machine != 0 && f.Machine != s.h.Machine {
		return fmt.Sprintf("it is built for %s, not this machine's %s", f.Machine, s.h.Machine)
	}
	return ""
}
