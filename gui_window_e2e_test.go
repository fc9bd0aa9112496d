package main

import (
	"image"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The window at 1280×800 in three states issue 43 found wrong, one Xvfb and one build
// for all three, each a short run of the real window: spot prices offline (the scatter
// was empty: the shipped catalog had no spot prices), fifteen series (the legend took
// the curves' height), and Ctrl+W during a sweep (the window closed without a word).

// Where things are in the 1280×800 window at scale 1 (read off its screenshots).
var (
	scatter1280 = image.Rect(280, 60, 660, 400)   // the min-time vs cost chart's plot
	curves1280  = image.Rect(760, 60, 1065, 440)  // the curves' plot, the legend beside it
	legend1280  = image.Rect(1080, 60, 1120, 440) // the legend's line-and-marker thumbnails
	closeDialog = image.Rect(395, 312, 886, 487)  // "Quit while a sweep runs?"
	keepRunning = image.Pt(579, 457)
	stopAndQuit = image.Pt(701, 457)
	window1280  = image.Rect(0, 0, 1280, 800)
)

func TestGUIWindowAt1280(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end GUI test skipped in -short mode")
	}
	x := startX(t, 1280, 800)
	bin := buildApp(t)
	prefs := func(extra string) string {
		return `{"window.width":1280,"window.height":800,"session.saved":"1"` + extra + `}`
	}
	// settled waits for the window's first prediction, drawn and holding still.
	settled := func(what string, enough func(*image.RGBA) bool) *image.RGBA {
		var last *image.RGBA
		return x.waitScreen(t, what, 40*time.Second, func(img *image.RGBA) bool {
			ok := last != nil && changedPixels(last, img, window1280) <= blinkPixels
			last = img
			return ok && enough(img)
		})
	}
	quit := func(g *guiApp) {
		g.key(t, x, "ctrl+w")
		select {
		case <-g.done:
		case <-time.After(20 * time.Second):
			t.Fatal("Ctrl+W with no sweep running did not close the window")
		}
	}

	t.Run("spot prices offline", func(t *testing.T) {
		g := startAppPrefs(t, x, bin, prefs(`,"session.models":"resnet50","session.machines":"aws/g4dn.xlarge,aws/p3.2xlarge,aws/p4d.24xlarge","session.spot_prices":"true"`))
		img := settled("three AWS machines at spot prices", func(img *image.RGBA) bool { return len(markers(img, scatter1280)) >= 3 })
		x.save(t, "spot", img)
		if g.pref("session.spot_prices") != "true" {
			t.Errorf("the window did not keep spot prices on (%q): the scatter shows on-demand prices", g.pref("session.spot_prices"))
		}
		quit(g)
		// The command line answers from the same shipped snapshot, dated.
		out, err := exec.Command(bin, "--db", filepath.Join(t.TempDir(), "c.db"), "best", "--spot", "--model", "resnet50", "--machine", "aws/g4dn.xlarge").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "aws/g4dn.xlarge: spot price of 20") {
			t.Errorf("best --spot offline: %v\n%s", err, out)
		}
	})

	t.Run("fifteen series", func(t *testing.T) {
		g := startAppPrefs(t, x, bin, prefs(`,"session.models":"resnet50,vgg16,mobilenet_v2","session.machines":"aws/g4dn.xlarge,aws/p3.2xlarge,aws/p4d.24xlarge,gcp/a2-highgpu-1g,lambda/gpu_1x_a10"`))
		img := settled("fifteen curves", func(img *image.RGBA) bool { return colourfulPixels(img, curves1280) > 3000 })
		x.save(t, "fifteen", img)
		// The curves keep at least half the chart's height: the legend is beside them.
		var top, bottom int = curves1280.Max.Y, curves1280.Min.Y
		for y := curves1280.Min.Y; y < curves1280.Max.Y; y++ {
			if colourfulPixels(img, image.Rect(curves1280.Min.X, y, curves1280.Max.X, y+1)) > 0 {
				top, bottom = min(top, y), max(bottom, y)
			}
		}
		if bottom-top < curves1280.Dy()/2 {
			t.Errorf("the curves span %d px of the chart's %d (y %d to %d); want at least half", bottom-top, curves1280.Dy(), top, bottom)
		}
		if n := len(markers(img, legend1280)); n < 8 {
			t.Errorf("%d legend entries beside the curves, want the legend beside them with most of its 15 entries shown", n)
		}
		quit(g)
	})

	t.Run("closing during a sweep", func(t *testing.T) {
		g := startAppSized(t, x, bin, 1280, 800) // the first launch's example selected, as the sweep test's
		settled("the window", func(*image.RGBA) bool { return true })
		x.click(t, benchTab) // gui_sweep_e2e_test.go's points
		time.Sleep(time.Second)
		x.click(t, startButton)
		cache := filepath.Join(g.home, "cache.db")
		waitCount(t, cache, 0, 60*time.Second, "the sweep started")
		before := x.screenshot(t)
		g.key(t, x, "ctrl+w")
		asked := x.waitChange(t, "Ctrl+W asks", before, closeDialog)
		x.save(t, "close-asks", asked)
		g.key(t, x, "ctrl+w") // asked once, however often
		time.Sleep(time.Second)
		select {
		case <-g.done:
			t.Fatal("Ctrl+W during a sweep closed the window")
		default:
		}
		x.click(t, keepRunning)
		x.waitChange(t, "Keep running closes the question", asked, closeDialog)
		n := cacheCount(t, cache)
		waitCount(t, cache, n, 60*time.Second, "the sweep runs on after Keep running")
		before = x.screenshot(t)
		g.key(t, x, "ctrl+w")
		x.waitChange(t, "Ctrl+W asks again", before, closeDialog)
		x.click(t, stopAndQuit)
		select {
		case <-g.done:
		case <-time.After(60 * time.Second):
			t.Fatal("Stop and quit: the window is still open after 60 s")
		}
		if states := sweepStates(t, cache); states["paused"] != 1 {
			t.Errorf("the cache's sweeps by state after Stop and quit: %v, want one paused (Start resumes it)", states)
		}
	})
}
