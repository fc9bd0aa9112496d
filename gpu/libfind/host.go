package libfind

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// pythonQuery prints the interpreter's site-packages directories (its environment's,
// then the user's) as JSON; it imports nothing but the standard library.
const pythonQuery = `import json, site, sys
dirs = list(getattr(site, "getsitepackages", lambda: [])())
try:
    dirs.append(site.getusersitepackages())
except Exception:
    pass
print(json.dumps({"exe": sys.executable, "dirs": dirs}))`

// pythonSitePackages asks the interpreter python (else python3, then python, on PATH)
// for its site-packages directories, within a few seconds.
func pythonSitePackages(python string) ([]string, string, error) {
	names := []string{python}
	if python == "" {
		names = []string{"python3", "python"}
	}
	var exe string
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		if python != "" {
			return nil, python, fmt.Errorf("$%s names %s, which is not an executable", PythonEnv, python)
		}
		return nil, "", errors.New("no python3 on PATH: pip wheels of an interpreter there are not searched ($" + PythonEnv + " names one)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-I", "-c", pythonQuery).Output()
	if err != nil {
		return nil, exe, fmt.Errorf("%s did not name its site-packages: %v", exe, err)
	}
	var r struct {
		Exe  string   `json:"exe"`
		Dirs []string `json:"dirs"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		return nil, exe, fmt.Errorf("%s printed %q for its site-packages: %v", exe, out, err)
	}
	if r.Exe != "" {
		exe = r.Exe
	}
	return r.Dirs, exe, nil
}

// ldconfigCache is the loader's cache as `ldconfig -p` prints it: soname → file, for
// this machine's processor; nil when ldconfig is not there.
func ldconfigCache() map[string]string {
	var out []byte
	for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"} {
		if b, err := exec.Command(p, "-p").Output(); err == nil {
			out = b
			break
		}
	}
	if out == nil {
		return nil
	}
	return ParseLoaderCache(out, runtime.GOARCH)
}

// ParseLoaderCache reads `ldconfig -p`'s lines ("\tlibcudnn.so.9 (libc6,x86-64) =>
// /usr/lib/x86_64-linux-gnu/libcudnn.so.9"), keeping the entries for goarch's processor.
func ParseLoaderCache(out []byte, goarch string) map[string]string {
	tag := map[string]string{"amd64": "x86-64", "arm64": "AArch64", "ppc64le": "64bit"}[goarch]
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, rest, ok := strings.Cut(line, " (")
		if !ok {
			continue
		}
		flags, path, ok := strings.Cut(rest, ") => ")
		if !ok || (tag != "" && !strings.Contains(flags, tag)) {
			continue
		}
		if _, dup := m[name]; !dup {
			m[name] = strings.TrimSpace(path)
		}
	}
	return m
}
