//go:build !headless

package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestXServerAddress(t *testing.T) {
	for _, tc := range []struct {
		display, network, addr string
		ok                     bool
	}{
		{":0", "unix", "/tmp/.X11-unix/X0", true},
		{":99.0", "unix", "/tmp/.X11-unix/X99", true},
		{"unix:3", "unix", "/tmp/.X11-unix/X3", true},
		{"localhost:10.0", "tcp", "localhost:6010", true},
		{"10.0.0.5:1", "tcp", "10.0.0.5:6001", true},
		{"/private/tmp/com.apple.launchd.x/org.xquartz:0", "", "", false},
		{"nonsense", "", "", false},
		{":x", "", "", false},
	} {
		network, addr, ok := xServerAddress(tc.display)
		if network != tc.network || addr != tc.addr || ok != tc.ok {
			t.Errorf("xServerAddress(%q) = %q, %q, %v; want %q, %q, %v", tc.display, network, addr, ok, tc.network, tc.addr, tc.ok)
		}
	}
}

// TestCheckDisplay: no display set, or one that does not answer, is one sentence
// naming what to do; a listening socket is a display.
func TestCheckDisplay(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "wayland-test")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" for no error
	}{
		{"nothing set", nil, "neither DISPLAY nor WAYLAND_DISPLAY is set"},
		{"a dead X display", map[string]string{"DISPLAY": ":4242"}, `the X display ":4242" does not answer at /tmp/.X11-unix/X4242`},
		{"a dead Wayland display", map[string]string{"WAYLAND_DISPLAY": "wayland-gone", "XDG_RUNTIME_DIR": dir}, `the Wayland display "wayland-gone" does not answer`},
		{"a live Wayland display", map[string]string{"WAYLAND_DISPLAY": "wayland-test", "XDG_RUNTIME_DIR": dir}, ""},
		{"a live Wayland display by path", map[string]string{"WAYLAND_DISPLAY": sock}, ""},
		{"an X display this cannot check", map[string]string{"DISPLAY": "/tmp/launchd:0"}, ""},
	} {
		err := checkDisplay(env(tc.env))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cnntime help")):
			t.Errorf("%s: %v, want an error saying %q and what to run instead", tc.name, err, tc.want)
		}
	}
}

// TestNoDisplayIsOneLine: the real binary started without a display says so in one
// line and exits 1, where GLFW used to panic with a stack trace (exit 2).
func TestNoDisplayIsOneLine(t *testing.T) {
	bin := buildApp(t)
	cmd := exec.Command(bin, "--db", filepath.Join(t.TempDir(), "cache.db"))
	cmd.Env = append(os.Environ(), "DISPLAY=", "WAYLAND_DISPLAY=")
	out, err := cmd.CombinedOutput()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "cnntime: no display") {
		t.Errorf("cnntime with no display: exit %d (%v), want 1 and one line; printed:\n%s", code, err, out)
	}
}

// A panic of GLFW's start-up becomes one line that says what failed and what to do;
// any other panic is not the graphics library's and is left to go on up.
func TestWindowError(t *testing.T) {
	for _, tc := range []struct {
		panic any
		want  string // "" for none: the panic is re-raised
	}{
		{errors.New("NotInitialized: The GLFW library is not initialized"), "could not open the window: the graphics library (GLFW) did not start"},
		{"PlatformUnavailable: Failed to detect any supported platform", "cnntime-headless"},
		{errors.New("runtime error: index out of range [3] with length 3"), ""},
		{nil, ""},
	} {
		err := windowError(tc.panic)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("windowError(%v) = %v, want the panic to go on up", tc.panic, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("windowError(%v) = %v, want one line with %q", tc.panic, err, tc.want)
		}
	}
}
