package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// xSession is a virtual X server for end-to-end tests of the real window.
type xSession struct {
	display string
	cmd     *exec.Cmd
}

// startX starts Xvfb on a free display, or skips the test when Xvfb is not installed.
func startX(t *testing.T, width, height int) *xSession {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Skip("Xvfb is not installed (make test installs it)")
	}
	for _, tool := range []string{"xdotool", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make test installs it)", tool)
		}
	}
	for n := 90; n < 140; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n)); err == nil {
			continue
		}
		display := fmt.Sprintf(":%d", n)
		cmd := exec.Command("Xvfb", display, "-screen", "0", fmt.Sprintf("%dx%dx24", width, height), "-nolisten", "tcp")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start Xvfb: %v", err)
		}
		x := &xSession{display: display, cmd: cmd}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if waitFor(10*time.Second, func() bool {
			_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n))
			return err == nil
		}) {
			return x
		}
		t.Fatalf("Xvfb on %s did not start", display)
	}
	t.Fatal("no free X display between :90 and :139")
	return nil
}

func waitFor(limit time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if ok() {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return ok()
}

// run runs a tool on the virtual display and returns its standard output.
func (x *xSession) run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+x.display)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// screenshot grabs the whole screen.
func (x *xSession) screenshot(t *testing.T) image.Image {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "import", "-display", x.display, "-window", "root", "png:-")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("screenshot with import: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// buildApp builds the real cnntime binary into a temporary directory.
func buildApp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cnntime")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cnntime: %v\n%s", err, out)
	}
	return bin
}

// startApp starts the GUI on the display with its own configuration directory and
// cache, and returns the id of its window once it is mapped.
func startApp(t *testing.T, x *xSession, bin string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, "--db", filepath.Join(home, "cache.db"))
	cmd.Env = append(os.Environ(), "DISPLAY="+x.display, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start cnntime: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var win string
	if !waitFor(60*time.Second, func() bool {
		out, err := x.run(t, "xdotool", "search", "--onlyvisible", "--name", "^cnntime$")
		if err != nil || out == "" {
			return false
		}
		win = strings.Fields(out)[0]
		return true
	}) {
		t.Fatalf("no cnntime window appeared in 60 s; the app printed:\n%s", logs.String())
	}
	return win
}

// distinctColours counts the colours in img, up to limit.
func distinctColours(img image.Image, limit int) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

func TestGUIWindowOpensAndDraws(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end GUI test skipped in -short mode")
	}
	x := startX(t, 1280, 800)
	bin := buildApp(t)
	win := startApp(t, x, bin)

	geometry, err := x.run(t, "xdotool", "getwindowgeometry", win)
	if err != nil {
		t.Fatalf("window geometry: %v", err)
	}
	if !strings.Contains(geometry, "Geometry:") {
		t.Fatalf("unexpected window geometry %q", geometry)
	}
	// Give the first frame time to render, then look at it.
	var colours int
	waitFor(20*time.Second, func() bool {
		colours = distinctColours(x.screenshot(t), 64)
		return colours >= 16
	})
	if colours < 16 {
		t.Fatalf("the screen shows %d colours: the window drew nothing (want a rendered window, not one flat colour)", colours)
	}
	if dir := os.Getenv("CNNTIME_SCREENSHOT_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, "window.png"))
		if err == nil {
			_ = png.Encode(f, x.screenshot(t))
			_ = f.Close()
		}
	}
}
