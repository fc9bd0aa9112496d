//go:build !headless

package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// noDisplayHint is what to do instead on a machine without a display.
const noDisplayHint = "run a command instead (cnntime help lists them; cnntime-headless is the build for servers)"

// checkDisplay reports why the window cannot open here, or nil: on Linux and the BSDs
// the window needs an X server (DISPLAY) or a Wayland compositor (WAYLAND_DISPLAY)
// that answers. Without one GLFW would fail in its init with a stack trace; this
// says it in one line instead. Other systems always have a desktop.
func checkDisplay(getenv func(string) string) error {
	switch runtime.GOOS {
	case "darwin", "windows", "android", "ios":
		return nil
	}
	wayland, x := getenv("WAYLAND_DISPLAY"), getenv("DISPLAY")
	if wayland == "" && x == "" {
		return fmt.Errorf("no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set): %s", noDisplayHint)
	}
	if wayland != "" {
		sock := wayland
		if !filepath.IsAbs(sock) {
			sock = filepath.Join(getenv("XDG_RUNTIME_DIR"), wayland)
		}
		if reachable("unix", sock) {
			return nil
		}
		if x == "" {
			return fmt.Errorf("no display to open the window on (the Wayland display %q does not answer at %s): %s", wayland, sock, noDisplayHint)
		}
	}
	network, addr, ok := xServerAddress(x)
	if !ok || reachable(network, addr) {
		return nil // a DISPLAY this does not know how to reach: let the toolkit try
	}
	return fmt.Errorf("no display to open the window on (the X display %q does not answer at %s): %s", x, addr, noDisplayHint)
}

// xServerAddress is where the X server of a DISPLAY value listens: ":N" and
// "unix:N" on the socket /tmp/.X11-unix/XN, "host:N" on TCP port 6000+N.
func xServerAddress(display string) (network, addr string, ok bool) {
	host, rest, found := strings.Cut(display, ":")
	if !found || strings.Contains(host, "/") { // a launchd socket path (XQuartz) or other forms
		return "", "", false
	}
	num, _, _ := strings.Cut(rest, ".") // :N.screen
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return "", "", false
	}
	if host == "" || host == "unix" {
		return "unix", "/tmp/.X11-unix/X" + strconv.Itoa(n), true
	}
	return "tcp", net.JoinHostPort(host, strconv.Itoa(6000+n)), true
}

// reachable reports whether something accepts a connection at addr. An X server on
// Linux also listens on the abstract socket of its path's name, which a container
// that does not share /tmp still reaches.
func reachable(network, addr string) bool {
	addrs := []string{addr}
	if network == "unix" && runtime.GOOS == "linux" {
		addrs = append(addrs, "@"+addr)
	}
	for _, a := range addrs {
		if network == "unix" && !strings.HasPrefix(a, "@") {
			if _, err := os.Stat(a); err != nil {
				continue
			}
		}
		if c, err := net.DialTimeout(network, a, 2*time.Second); err == nil {
			c.Close()
			return true
		}
	}
	return false
}
