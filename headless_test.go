package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// graphicsLibraries are what the desktop build links (Fyne's OpenGL and windowing) and a
// server or container image lacks.
var graphicsLibraries = []string{"libGL", "libGLX", "libGLdispatch", "libEGL", "libX11", "libXcursor", "libXrandr", "libXi", "libXxf86vm", "libwayland", "libxkbcommon"}

// TestHeadlessBuildNeedsNoGraphicsLibrary builds cnntime-headless as make headless does
// and checks that it links no graphics library (it is static: no shared library at
// all), that it runs the commands, and that without one it points at the desktop build.
func TestHeadlessBuildNeedsNoGraphicsLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the headless binary")
	}
	bin := filepath.Join(t.TempDir(), "cnntime-headless")
	build := exec.Command("go", "build", "-tags", "headless", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags headless: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range libs {
		for _, g := range graphicsLibraries {
			if strings.HasPrefix(lib, g+".") || strings.HasPrefix(lib, g+"-") {
				t.Errorf("cnntime-headless needs %s", lib)
			}
		}
	}
	if len(libs) != 0 {
		t.Errorf("cnntime-headless links shared libraries %v: want a static binary", libs)
	}
	if ldd, err := exec.LookPath("ldd"); err == nil {
		out, _ := exec.Command(ldd, bin).CombinedOutput()
		for _, g := range graphicsLibraries {
			if strings.Contains(string(out), g+".so") || strings.Contains(string(out), g+"-") {
				t.Errorf("ldd cnntime-headless lists %s:\n%s", g, out)
			}
		}
	}
	out, err := exec.Command(bin, "models").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "resnet50") {
		t.Errorf("cnntime-headless models: %v\n%s", err, out)
	}
	out, err = exec.Command(bin).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "desktop build (cnntime)") {
		t.Errorf("cnntime-headless without a command: %v, %q; want a failure pointing at the desktop build", err, out)
	}
}
