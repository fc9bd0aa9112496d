package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// The end-to-end test drives the real cnntime window (GLFW on a virtual X server) the
// way a person does: it types into the search fields, clicks checkboxes, hovers the
// scatter, and exports through File → Export (Ctrl+E) and Fyne's save dialog, with
// xdotool. It reads what happened from screenshots, from the preferences file the app
// writes its selection to, and from the exported files.
//
// Clicks go to fixed points of the window, so the test pins what decides the layout:
// the screen and window size (the window size is seeded in the preferences file; the
// selection never is), Fyne's scale and theme. The points were read off screenshots
// of that window; when the layout changes, run the test with CNNTIME_SCREENSHOT_DIR set
// and read the new points off the saved steps.

const (
	screenWidth, screenHeight = 1440, 960
	guiAppID                  = "io.github.cnntime" // gui.go's appID
)

// Where things are in the 1440×960 window at scale 1.
var (
	firstChip      = image.Pt(34, 40)   // the first chip above the lists: the first CNN selected
	cnnTab         = image.Pt(35, 147)  // the CNNs tab of the selection panel
	machineTab     = image.Pt(117, 147) // the Machines tab
	runTab         = image.Pt(183, 147) // the Run tab
	toTargetRadio  = image.Pt(110, 205) // the Run tab's "to target accuracy"
	cnnTree        = image.Rect(0, 192, 300, 860)
	fastestPick    = image.Pt(133, 300) // the "Fastest GPU" quick pick, under the filters
	clearPicks     = image.Pt(35, 330)  // Clear, on its own row under the quick picks
	awsHeading     = image.Pt(45, 361)  // the AWS heading, first under Clear
	awsFirstRow    = image.Pt(150, 392) // the first AWS machine's row once AWS is open
	machineTree    = image.Rect(0, 345, 300, 860)
	scatterArea    = image.Rect(310, 58, 752, 505) // the min-time vs cost chart
	curvesArea     = image.Rect(762, 60, 1436, 458)
	resultsArea    = image.Rect(305, 580, 1436, 925)
	resultsCNNs    = image.Rect(310, 610, 418, 925) // the results table's CNN column, below its header
	resultsFirst   = image.Pt(700, 623)             // the first results row
	resultsTab     = image.Pt(411, 564)             // the Results tab
	statusBar      = image.Rect(0, 930, 1300, 956)
	exportDialog   = image.Rect(410, 330, 1030, 630)
	exportWhat     = image.Pt(760, 388) // the "Export" select
	exportFile     = image.Pt(725, 418)
	exportBrowse   = image.Pt(978, 418)
	exportWidth    = image.Pt(760, 449)
	exportHeight   = image.Pt(760, 480)
	exportButton   = image.Pt(758, 600)
	saveDialog     = image.Rect(478, 310, 962, 650) // Fyne's save dialog over the export dialog
	saveFileName   = image.Pt(663, 632)
	saveButton     = image.Pt(931, 632)
	exportOptionAt = func(i int) image.Point { return image.Pt(760, 414+31*i) } // the select's i-th choice
)

// The export dialog's choices, in order (views/export.go).
const (
	choiceCurves = iota
	choiceScatter
	choiceResultsCSV
	choiceCurvesCSV
	choiceWhyChart
	choiceWhyCSV
)

// xSession is a virtual X server for end-to-end tests of the real window.
type xSession struct {
	display       string
	width, height int
	cmd           *exec.Cmd
	screen        *xScreen // the connection screenshots are read through
	shots         string   // where step screenshots go ("" for nowhere)
	step          int
}

// startX starts Xvfb on a free display, or skips the test when Xvfb or the tools that
// drive it are not installed.
func startX(t *testing.T, width, height int) *xSession {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		t.Skip("Xvfb is not installed (make test installs it)")
	}
	for _, tool := range []string{"xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make test installs it)", tool)
		}
	}
	for n := 90; n < 140; n++ {
		if displayInUse(n) {
			continue
		}
		display := fmt.Sprintf(":%d", n)
		cmd := exec.Command("Xvfb", display, "-screen", "0", fmt.Sprintf("%dx%dx24", width, height), "-nolisten", "tcp")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start Xvfb: %v", err)
		}
		x := &xSession{display: display, width: width, height: height, cmd: cmd, shots: os.Getenv("CNNTIME_SCREENSHOT_DIR")}
		t.Cleanup(func() { stopX(cmd) })
		if waitFor(10*time.Second, func() bool {
			_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n))
			return err == nil
		}) {
			screen, err := dialXScreen(display)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { screen.Close() })
			if screen.width != width || screen.height != height {
				t.Fatalf("Xvfb on %s is %dx%d, want %dx%d", display, screen.width, screen.height, width, height)
			}
			x.screen = screen
			return x
		}
		t.Fatalf("Xvfb on %s did not start", display)
	}
	t.Fatal("no free X display between :90 and :139")
	return nil
}

// displayInUse reports whether X display :n is taken: its lock file names a process
// that is alive, or it has a socket but no lock. A lock left by a killed server (its
// process gone) does not count: Xvfb removes such a stale lock itself when it starts.
func displayInUse(n int) bool {
	lock, err := os.ReadFile(fmt.Sprintf("/tmp/.X%d-lock", n))
	if err != nil {
		_, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n))
		return err == nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(lock)))
	if err != nil || pid <= 0 {
		return true // not a lock we can read: leave it alone
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// stopX ends Xvfb with SIGTERM so that it removes its lock and socket (a SIGKILL left
// them behind, and enough of them filled every display the tests may use), and kills it
// only if it has not ended within five seconds.
func stopX(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
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

// xdotool runs an xdotool command and fails the test when it fails.
func (x *xSession) xdotool(t *testing.T, args ...string) {
	t.Helper()
	if _, err := x.run(t, "xdotool", args...); err != nil {
		t.Fatalf("xdotool %s: %v", strings.Join(args, " "), err)
	}
}

func (x *xSession) click(t *testing.T, p image.Point) {
	t.Helper()
	x.xdotool(t, "mousemove", strconv.Itoa(p.X), strconv.Itoa(p.Y), "click", "1")
}

// replaceText selects all of the focused entry's text and types s over it.
func (x *xSession) replaceText(t *testing.T, s string) {
	t.Helper()
	x.xdotool(t, "key", "ctrl+a")
	x.xdotool(t, "type", "--delay", "15", s)
}

// screenshot grabs the whole screen: the root window's pixels as the X server gives
// them (xScreen), the image ImageMagick's import -window root took.
func (x *xSession) screenshot(t *testing.T) *image.RGBA {
	t.Helper()
	img, err := x.screen.rootImage()
	if err != nil {
		t.Fatalf("screenshot of %s: %v", x.display, err)
	}
	return img
}

// save writes a step's screenshot to CNNTIME_SCREENSHOT_DIR, numbered in order.
func (x *xSession) save(t *testing.T, name string, img image.Image) {
	t.Helper()
	if x.shots == "" {
		return
	}
	x.step++
	path := filepath.Join(x.shots, fmt.Sprintf("%02d-%s.png", x.step, name))
	f, err := os.Create(path)
	if err != nil {
		t.Logf("save screenshot: %v", err)
		return
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Logf("save screenshot %s: %v", path, err)
	}
}

// waitScreen takes screenshots until ok accepts one and returns it. On time-out it
// fails, keeping the last screenshot where CNNTIME_SCREENSHOT_DIR (or the test's
// temporary directory) says.
func (x *xSession) waitScreen(t *testing.T, what string, limit time.Duration, ok func(*image.RGBA) bool) *image.RGBA {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		img := x.screenshot(t)
		if ok(img) {
			return img
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen in %s (last screenshot: %s)", what, limit, x.keep(t, "timeout", img))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// keep saves a screenshot that explains a failure, in CNNTIME_SCREENSHOT_DIR or else a
// new temporary directory that outlives the test, and returns its path.
func (x *xSession) keep(t *testing.T, name string, img image.Image) string {
	t.Helper()
	dir := x.shots
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "cnntime-e2e-"); err != nil {
			return "not saved: " + err.Error()
		}
	}
	path := filepath.Join(dir, name+".png")
	f, err := os.Create(path)
	if err != nil {
		return "not saved: " + err.Error()
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		return "not saved: " + err.Error()
	}
	return path
}

// blinkPixels is how many pixels may change on a screen that holds still: a focused
// entry's cursor blinks.
const blinkPixels = 120

// waitChange waits until region r differs from before and then holds still across
// two screenshots (so a render in flight is not taken for the result), and returns
// the last one.
func (x *xSession) waitChange(t *testing.T, what string, before *image.RGBA, r image.Rectangle) *image.RGBA {
	t.Helper()
	return x.waitStill(t, what, before, r, 1)
}

// waitStill waits until region r differs from before and then holds still across
// holds more screenshots, and returns the last one.
func (x *xSession) waitStill(t *testing.T, what string, before *image.RGBA, r image.Rectangle, holds int) *image.RGBA {
	t.Helper()
	return x.waitStillWithin(t, what, before, r, holds, 10*time.Second)
}

// waitStillWithin is waitStill with a time limit.
func (x *xSession) waitStillWithin(t *testing.T, what string, before *image.RGBA, r image.Rectangle, holds int, limit time.Duration) *image.RGBA {
	t.Helper()
	var last *image.RGBA
	still := 0
	return x.waitScreen(t, what, limit, func(img *image.RGBA) bool {
		if last != nil && changedPixels(last, img, r) <= blinkPixels {
			still++
		} else {
			still = 0
		}
		last = img
		return still >= holds && changedPixels(before, img, r) > 4*blinkPixels
	})
}

// builtApp is the real cnntime binary, built once for every test of the package that
// runs it (go build of the desktop app links cgo and Fyne: tens of seconds each time
// on a 2-core machine); TestMain removes its directory.
var builtApp struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildApp builds the real cnntime binary (go build ., as make build does) the first
// time a test asks for it, and returns its path.
func buildApp(t *testing.T) string {
	t.Helper()
	b := &builtApp
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "cnntime-test-build-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "cnntime")
		if out, err := exec.Command("go", "build", "-o", b.bin, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("build cnntime: %v", b.err)
	}
	return b.bin
}

// removeBuiltApp removes the binary buildApp built, if any.
func removeBuiltApp() {
	if builtApp.dir != "" {
		os.RemoveAll(builtApp.dir)
	}
}

// guiApp is a running cnntime window.
type guiApp struct {
	win   string
	home  string // its HOME, where the save dialog opens
	prefs string // its preferences file
	logs  *bytes.Buffer
	done  chan struct{} // closed when the process has exited
	err   error         // how it exited, once done is closed
}

// startApp starts the GUI on the display with its own home, configuration directory
// and cache, the window size seeded in its preferences, and returns once its window
// is mapped.
func startApp(t *testing.T, x *xSession, bin string) *guiApp {
	t.Helper()
	return startAppPrefs(t, x, bin, fmt.Sprintf(`{"window.width":%d,"window.height":%d}`, screenWidth, screenHeight))
}

// startAppPrefs starts the GUI with a preferences file holding prefs (JSON).
func startAppPrefs(t *testing.T, x *xSession, bin, prefs string) *guiApp {
	t.Helper()
	home := t.TempDir()
	config := filepath.Join(home, ".config")
	prefsDir := filepath.Join(config, "fyne", guiAppID)
	for _, dir := range []string{prefsDir, filepath.Join(home, ".cache")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	g := &guiApp{home: home, prefs: filepath.Join(prefsDir, "preferences.json"), logs: &bytes.Buffer{}, done: make(chan struct{})}
	if err := os.WriteFile(g.prefs, []byte(prefs), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(bin, "--db", filepath.Join(home, "cache.db"))
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "DISPLAY="+x.display, "HOME="+home, "XDG_CONFIG_HOME="+config,
			"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "FYNE_SCALE=1", "FYNE_THEME=dark")
		cmd.Stdout, cmd.Stderr = g.logs, g.logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("start cnntime: %v", err)
		}
		done := g.done
		go func() { g.err = cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-done
		})
		ended := false
		if waitFor(60*time.Second, func() bool {
			select {
			case <-done:
				ended = true
				return true
			default:
			}
			out, err := x.run(t, "xdotool", "search", "--onlyvisible", "--name", "^cnntime$")
			if err != nil || out == "" {
				return false
			}
			g.win = strings.Fields(out)[0]
			return true
		}) && !ended {
			return g
		}
		// GLFW now and then finds no platform on a display that answers (about one
		// start in forty under Xvfb); the app says so and exits: start it once more.
		if ended && attempt == 1 && strings.Contains(g.logs.String(), "graphics library (GLFW) did not start") {
			t.Logf("the app's first start failed, starting it again: %s", g.logs.String())
			g.logs.Reset()
			g.done = make(chan struct{})
			continue
		}
		t.Fatalf("no cnntime window appeared in 60 s; the app printed:\n%s", g.logs.String())
	}
}

// key types keys into the app's window as a keyboard does (XTEST, to the window with
// the focus: the app's, the only one on this X server), as the other tests type.
// Sending them to the window itself (xdotool key --window, XSendEvent) lost some: the
// window found at start-up is not always the one GLFW reads keys from, and a key that
// closes the window on its press had its release refused (xdotool exit 1).
func (g *guiApp) key(t *testing.T, x *xSession, keys string) {
	t.Helper()
	select {
	case <-g.done:
		t.Fatalf("the app ended before it got %s (%v); it printed:\n%s", keys, g.err, g.logs.String())
	default:
	}
	x.xdotool(t, "key", keys)
}

// pref reads one setting from the app's preferences file ("" when it is not there).
// Fyne rewrites the file in place whenever a setting changes (an export's folder, a
// split's position), so a read may catch it empty or half written: it is read again
// until it parses, for up to five seconds.
func (g *guiApp) pref(key string) string {
	var prefs map[string]any
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		data, err := os.ReadFile(g.prefs)
		if err == nil && json.Unmarshal(data, &prefs) == nil {
			break
		}
		if time.Now().After(deadline) {
			return ""
		}
	}
	switch v := prefs[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// hasItem reports whether a comma-separated preference lists id.
func (g *guiApp) hasItem(key, id string) bool {
	for _, item := range strings.Split(g.pref(key), ",") {
		if item == id {
			return true
		}
	}
	return false
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

// changedPixels counts the pixels of r that differ between a and b.
func changedPixels(a, b *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.RGBAAt(x, y) != b.RGBAAt(x, y) {
				n++
			}
		}
	}
	return n
}

// changedBounds is the smallest rectangle holding the pixels of r that differ.
func changedBounds(a, b *image.RGBA, r image.Rectangle) image.Rectangle {
	var out image.Rectangle
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.RGBAAt(x, y) != b.RGBAAt(x, y) {
				out = out.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return out
}

// colourful tells a series colour (the chart palette's blue, orange, green, red,
// purple, brown) from the greys of text, axes, grid and theme.
func colourful(c color.RGBA) bool {
	hi := max(c.R, c.G, c.B)
	lo := min(c.R, c.G, c.B)
	return hi >= 70 && int(hi)-int(lo) >= 55
}

// colourfulPixels counts the colourful pixels of r.
func colourfulPixels(img *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if colourful(img.RGBAAt(x, y)) {
				n++
			}
		}
	}
	return n
}

// textLines counts the lines of light text in r (the dark theme's text): bands of
// pixel rows holding a light grey pixel, apart from each other.
func textLines(img *image.RGBA, r image.Rectangle) int {
	lines, inText := 0, false
	for y := r.Min.Y; y < r.Max.Y; y++ {
		text := false
		for x := r.Min.X; x < r.Max.X && !text; x++ {
			c := img.RGBAAt(x, y)
			text = min(c.R, c.G, c.B) >= 150 && !colourful(c)
		}
		if text && !inText {
			lines++
		}
		inText = text
	}
	return lines
}

// blob is a connected patch of colourful pixels: a marker.
type blob struct {
	centre image.Point
	pixels int
}

// markers finds the marker-sized patches of colourful pixels in r.
func markers(img *image.RGBA, r image.Rectangle) []blob {
	seen := map[image.Point]bool{}
	var out []blob
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := image.Pt(x, y)
			if seen[p] || !colourful(img.RGBAAt(x, y)) {
				continue
			}
			stack, n, sum := []image.Point{p}, 0, image.Point{}
			seen[p] = true
			for len(stack) > 0 {
				q := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				n++
				sum = sum.Add(q)
				for _, d := range []image.Point{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
					nq := q.Add(d)
					if nq.In(r) && !seen[nq] && colourful(img.RGBAAt(nq.X, nq.Y)) {
						seen[nq] = true
						stack = append(stack, nq)
					}
				}
			}
			if n >= 20 && n <= 1500 {
				out = append(out, blob{centre: image.Pt(sum.X/n, sum.Y/n), pixels: n})
			}
		}
	}
	return out
}

func TestGUISelectHoverAndExport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end GUI test skipped in -short mode")
	}
	start := time.Now()
	phase := func(what string) { t.Logf("%5.1f s  %s", time.Since(start).Seconds(), what) }
	x := startX(t, screenWidth, screenHeight)
	bin := buildApp(t)
	phase("built cnntime")
	g := startApp(t, x, bin)

	geometry, err := x.run(t, "xdotool", "getwindowgeometry", g.win)
	if err != nil {
		t.Fatalf("window geometry: %v", err)
	}
	if want := fmt.Sprintf("Geometry: %dx%d", screenWidth, screenHeight); !strings.Contains(geometry, want) {
		t.Fatalf("window geometry %q, want %q: the window size seeded in %s was not used, so the test's click points are off", geometry, want, g.prefs)
	}

	// A first launch (fresh home, fresh cache) shows an example with no clicks: a
	// results row and a scatter marker per machine of resnet50 on five current
	// machines, their curves, and a hint in the status bar.
	const exampleRows = 5
	var points []blob
	var rowsShown int
	var last *image.RGBA
	settled := func(img *image.RGBA) bool {
		ok := last != nil && changedPixels(last, img, scatterArea.Union(curvesArea).Union(resultsArea)) <= blinkPixels
		last = img
		return ok
	}
	first := x.waitScreen(t, "the first launch's example: results rows, scatter markers and curves", 40*time.Second, func(img *image.RGBA) bool {
		points, rowsShown = markers(img, scatterArea), textLines(img, resultsCNNs)
		return settled(img) && rowsShown == exampleRows && len(points) >= 3 && colourfulPixels(img, curvesArea) > 2000
	})
	x.save(t, "first-launch", first)
	phase("the first launch shows the example")
	if got := strings.Split(g.pref("session.models"), ","); len(got) != 1 || got[0] != "resnet50" {
		t.Errorf("the example's CNNs are %q, want resnet50", got)
	}

	out := t.TempDir()
	exportOpen := func(choice int) *image.RGBA {
		t.Helper()
		before := x.screenshot(t)
		x.xdotool(t, "key", "ctrl+e")
		open := x.waitChange(t, "the export dialog (Ctrl+E)", before, exportDialog)
		x.click(t, exportWhat)
		menu := x.waitChange(t, "the export dialog's choices", open, exportDialog)
		x.click(t, exportOptionAt(choice))
		return x.waitChange(t, "the export choice made", menu, exportDialog)
	}
	typeInto := func(field image.Point, text string) {
		t.Helper()
		x.click(t, field)
		x.replaceText(t, text)
	}
	exportAndWait := func(path string, valid func([]byte) error) {
		t.Helper()
		x.save(t, "export-"+strings.ReplaceAll(filepath.Base(path), ".", "-"), x.screenshot(t))
		x.click(t, exportButton)
		var err error
		if !waitFor(15*time.Second, func() bool {
			data, rerr := os.ReadFile(path)
			if rerr != nil {
				err = rerr
				return false
			}
			err = valid(data)
			return err == nil
		}) {
			t.Fatalf("export to %s: %v (screenshot: %s); the app printed:\n%s", path, err, x.keep(t, "export-failed", x.screenshot(t)), g.logs.String())
		}
	}

	// Esc closes the export dialog, as it closes every dialog of the window.
	beforeEsc := x.screenshot(t)
	x.xdotool(t, "key", "ctrl+e")
	escOpened := x.waitChange(t, "the export dialog (Ctrl+E)", beforeEsc, exportDialog)
	x.xdotool(t, "key", "Escape")
	x.waitScreen(t, "the export dialog closed by Esc", 10*time.Second, func(img *image.RGBA) bool {
		return changedPixels(escOpened, img, exportDialog) > 4*blinkPixels && changedPixels(beforeEsc, img, exportDialog) <= 4*blinkPixels
	})
	phase("Esc closes the export dialog")

	// The example's 8-GPU machine runs its curve past a batch of 1024: its largest
	// batch that fits and its best batch, as the results CSV says, are global batches.
	exampleCSV := filepath.Join(out, "example.csv")
	exportOpen(choiceResultsCSV)
	typeInto(exportFile, exampleCSV)
	var example map[[2]string]map[string]string
	exportAndWait(exampleCSV, func(data []byte) error {
		example, err = readCSVRows(data)
		return err
	})
	multi, ok := example[[2]string{"resnet50", "aws/p4d.24xlarge"}]
	if !ok || len(example) != exampleRows {
		t.Fatalf("the example's results CSV has %d rows and no aws/p4d.24xlarge: %v", len(example), example)
	}
	best, _ := strconv.Atoi(multi["best_batch"])
	largest, _ := strconv.Atoi(multi["max_batch"])
	if best <= 1024 || largest <= 1024 || best > largest {
		t.Errorf("8× A100 (aws/p4d.24xlarge): best batch %d, largest that fits %d; want both past 1024", best, largest)
	}
	phase("the 8-GPU curve runs past 1024")
	// The results CSV is a record of the run: its settings are columns of every row.
	for _, col := range []string{"precision", "dataset", "train_mode", "epochs", "framework", "loader", "script", "price_date", "recommended_batch", "within_1pct_min", "within_1pct_max"} {
		if _, ok := multi[col]; !ok {
			t.Errorf("the results CSV has no %s column", col)
		}
	}
	if multi["precision"] != "fp32" || multi["dataset"] != "imagenet-1k" || multi["train_mode"] != "epochs" {
		t.Errorf("the results CSV's settings: precision %q, dataset %q, train mode %q", multi["precision"], multi["dataset"], multi["train_mode"])
	}
	// For the example's five machines the window's best batch is `cnntime best`'s for
	// the same settings: the same batch sizes (the window's grid), the same verdict.
	var exampleMachines []string
	for key := range example {
		exampleMachines = append(exampleMachines, key[1])
	}
	for key, cli := range cliBestJSON(t, bin, g, []string{"resnet50"}, exampleMachines) {
		row := example[key]
		if row["best_batch"] != cli.best || row["recommended_batch"] != cli.recommended || row["bound"] != cli.bound {
			t.Errorf("%s on %s: the window's best batch %s (recommended %s, bound %s), cnntime best's %s (recommended %s, bound %s)",
				key[0], key[1], row["best_batch"], row["recommended_batch"], row["bound"], cli.best, cli.recommended, cli.bound)
		}
		if row["within_1pct_min"] != cli.lo || row["within_1pct_max"] != cli.hi {
			t.Errorf("%s on %s: the window's 1%% range %s–%s, cnntime best's %s–%s", key[0], key[1], row["within_1pct_min"], row["within_1pct_max"], cli.lo, cli.hi)
		}
	}
	phase("the window's best batches are cnntime best's")

	// Why this number? A click on a results row opens the Why tab for that row; its
	// layers export as CSV, one row per layer of the CNN.
	beforeWhy := x.screenshot(t)
	x.click(t, resultsFirst)
	why := x.waitStill(t, "the Why tab for the first results row", beforeWhy, resultsArea, 2)
	x.save(t, "why", why)
	if changedPixels(beforeWhy, why, resultsArea) < 20000 {
		t.Errorf("clicking a results row changed only %d pixels of the tab area: no Why tab", changedPixels(beforeWhy, why, resultsArea))
	}
	whyCSV := filepath.Join(out, "why.csv")
	exportOpen(choiceWhyCSV)
	typeInto(exportFile, whyCSV)
	exportAndWait(whyCSV, func(data []byte) error {
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			return err
		}
		if want := cliLayers(t, bin, "resnet50") + 1; len(recs) != want || recs[0][1] != "name" {
			return fmt.Errorf("%d lines, want a header and one row per layer (%d)", len(recs), want-1)
		}
		return nil
	})
	phase("the Why tab explains a row and exports its layers")
	// The Why tab's verdict is the results table's: its chart, exported, says what bounds
	// the step in the words the Why tab uses, and they are the row's Bound.
	firstRow := firstCSVRow(t, exampleCSV)
	whySVG := filepath.Join(out, "why.svg")
	exportOpen(choiceWhyChart)
	typeInto(exportFile, whySVG)
	exportAndWait(whySVG, func(data []byte) error {
		text, err := svgText(data)
		if err != nil {
			return err
		}
		want := map[string]string{"gpu": "bound by the GPU", "input": "bound by the input pipeline", "cpu": "bound by the CPU"}[firstRow["bound"]]
		if want == "" || !strings.Contains(text, want) || !strings.Contains(text, firstRow["model"]+" on "+firstRow["machine"]) {
			return fmt.Errorf("the Why chart of %s on %s (results: bound %q) says %q", firstRow["model"], firstRow["machine"], firstRow["bound"], text)
		}
		return nil
	})
	phase("the Why tab's bound is the results table's")

	// Ctrl+F finds a CNN: typing and Enter ticks the first match; Esc clears the search.
	x.xdotool(t, "key", "ctrl+f")
	x.xdotool(t, "type", "--delay", "15", "vgg16")
	typed := x.waitStill(t, "the CNN list filtered by vgg16", first, cnnTree, 2)
	x.save(t, "search-vgg16", typed)
	x.xdotool(t, "key", "Return")
	if !waitFor(5*time.Second, func() bool { return g.hasItem("session.models", "vgg16") }) {
		t.Fatalf("Enter in the CNN search did not tick vgg16: session.models is %q (screenshot: %s)", g.pref("session.models"), x.keep(t, "enter", x.screenshot(t)))
	}
	x.xdotool(t, "key", "Escape")
	cleared := x.waitChange(t, "the CNN search cleared by Esc", typed, cnnTree)
	if textLines(cleared, cnnTree) <= textLines(typed, cnnTree) {
		t.Errorf("after Esc the CNN list shows %d lines, no more than the %d of the search", textLines(cleared, cnnTree), textLines(typed, cnnTree))
	}
	// A chip removes what it names: the first chip is resnet50.
	x.click(t, firstChip)
	if !waitFor(5*time.Second, func() bool { return g.pref("session.models") == "vgg16" }) {
		t.Fatalf("clicking resnet50's chip left session.models %q", g.pref("session.models"))
	}
	phase("Ctrl+F, Enter, Esc and a chip")

	// The machine list: a tap on a heading opens it, a row's tooltip names the machine
	// in full, and Clear then a quick pick selects the pick's machines alone.
	x.click(t, machineTab)
	tab := x.waitChange(t, "the Machines tab", cleared, machineTree)
	x.click(t, awsHeading)
	opened := x.waitChange(t, "the AWS heading opened by a tap", tab, machineTree)
	x.xdotool(t, "mousemove", strconv.Itoa(awsFirstRow.X), strconv.Itoa(awsFirstRow.Y))
	tipped := x.waitScreen(t, "a machine row's tooltip", 10*time.Second, func(img *image.RGBA) bool {
		return changedPixels(opened, img, machineTree.Union(scatterArea)) > 3000
	})
	x.save(t, "machine-tooltip", tipped)
	x.click(t, clearPicks)
	if !waitFor(5*time.Second, func() bool { return g.pref("session.machines") == "" }) {
		t.Fatalf("Clear left session.machines %q", g.pref("session.machines"))
	}
	x.click(t, fastestPick)
	if !waitFor(5*time.Second, func() bool {
		return len(strings.Split(g.pref("session.machines"), ",")) >= 4 && g.hasItem("session.machines", "aws/p5.4xlarge")
	}) {
		t.Fatalf("the Fastest GPU quick pick chose %q", g.pref("session.machines"))
	}
	if g.hasItem("session.machines", "aws/p4d.24xlarge") { // the example's, no one-GPU pick's
		t.Fatalf("Clear, then Fastest GPU, kept the first launch's aws/p4d.24xlarge: %q", g.pref("session.machines"))
	}
	machines := strings.Split(g.pref("session.machines"), ",")
	models := []string{"vgg16"}
	phase("heading, tooltip and quick pick")
	x.click(t, resultsTab) // the Why tab is still shown

	// The prediction shows: a results row per CNN × machine, markers on the scatter.
	pairs := len(models) * len(machines)
	shown := x.waitScreen(t, fmt.Sprintf("%d results rows, the scatter's markers and the curves", pairs), 30*time.Second, func(img *image.RGBA) bool {
		points, rowsShown = markers(img, scatterArea), textLines(img, resultsCNNs)
		return settled(img) && rowsShown == pairs && len(points) >= 3 && colourfulPixels(img, curvesArea) > 500
	})
	x.save(t, "predicted", shown)
	phase("the charts and results show")
	if len(points) > 2*pairs {
		t.Errorf("the scatter shows %d markers; want at most one per CNN × machine (%d) and its whiskers", len(points), pairs)
	}

	// Hovering a marker shows its tooltip next to it.
	target := points[0]
	centre := image.Pt((scatterArea.Min.X+scatterArea.Max.X)/2, (scatterArea.Min.Y+scatterArea.Max.Y)/2)
	for _, p := range points {
		if dist2(p.centre, centre) < dist2(target.centre, centre) {
			target = p
		}
	}
	x.xdotool(t, "mousemove", strconv.Itoa(target.centre.X), strconv.Itoa(target.centre.Y))
	hover := x.waitScreen(t, "a tooltip over the hovered marker", 10*time.Second, func(img *image.RGBA) bool {
		return changedPixels(shown, img, scatterArea) > 2000
	})
	x.save(t, "hover-scatter", hover)
	phase("the tooltip shows")
	tip := changedBounds(shown, hover, scatterArea)
	if tip.Dx() < 100 || tip.Dy() < 60 {
		t.Errorf("hovering the marker at %v changed only %v of the scatter; want a tooltip of several lines", target.centre, tip)
	}
	if near := tip.Inset(-30); !target.centre.In(near) {
		t.Errorf("the tooltip %v is not next to the hovered marker at %v", tip, target.centre)
	}

	// Export both charts and the results table through File → Export (Ctrl+E).
	curvesPNG := filepath.Join(out, "curves.png")
	scatterSVG := filepath.Join(out, "scatter.svg")
	resultsCSV := filepath.Join(out, "results.csv") // the save dialog opens in the last export's folder

	// The curves as a PNG of a chosen size.
	exportOpen(choiceCurves)
	typeInto(exportFile, curvesPNG)
	typeInto(exportWidth, "1000")
	typeInto(exportHeight, "640")
	exportAndWait(curvesPNG, func(data []byte) error {
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("not a PNG: %w", err)
		}
		if b := img.Bounds(); b.Dx() != 1000 || b.Dy() != 640 {
			return fmt.Errorf("the PNG is %dx%d, want the 1000x640 typed in the dialog", b.Dx(), b.Dy())
		}
		if n := distinctColours(img, 32); n < 8 {
			return fmt.Errorf("the PNG has %d colours: no chart drawn", n)
		}
		return nil
	})
	phase("exported the curves (PNG)")

	// The scatter as an SVG.
	exportOpen(choiceScatter)
	typeInto(exportFile, scatterSVG)
	exportAndWait(scatterSVG, func(data []byte) error { return checkSVG(data, models) })
	phase("exported the scatter (SVG)")

	// The results as CSV, its file named in Fyne's save dialog (Browse…).
	dialogShown := exportOpen(choiceResultsCSV)
	x.click(t, exportBrowse)
	saving := x.waitChange(t, "the save dialog", dialogShown, saveDialog)
	x.save(t, "save-dialog", saving)
	x.click(t, saveFileName)
	x.replaceText(t, filepath.Base(resultsCSV))
	x.click(t, saveButton)
	x.waitChange(t, "the save dialog closed", saving, saveDialog)
	var rows map[[2]string]map[string]string
	exportAndWait(resultsCSV, func(data []byte) error {
		rows, err = readCSVRows(data)
		return err
	})
	x.save(t, "exported", x.screenshot(t))
	phase("exported the results (CSV)")
	largestOfAll := 0
	for _, m := range models {
		for _, mc := range machines {
			row, ok := rows[[2]string{m, mc}]
			if !ok {
				t.Errorf("the results CSV has no row for %s on %s", m, mc)
				continue
			}
			best, err1 := strconv.Atoi(row["best_batch"])
			largest, err2 := strconv.Atoi(row["max_batch"])
			if err1 != nil || err2 != nil || best < 1 || best > largest {
				t.Errorf("%s on %s: best batch %q, largest that fits %q; want 1 ≤ best ≤ largest", m, mc, row["best_batch"], row["max_batch"])
			}
			largestOfAll = max(largestOfAll, largest)
		}
	}
	if len(rows) != pairs {
		t.Errorf("the results CSV has %d rows, want %d (one per CNN × machine)", len(rows), pairs)
	}

	// To a target accuracy (the Run tab), an exported chart says so: a PDF whose title
	// names the mode, the CNN and the machines, with its — and × intact.
	before := x.screenshot(t)
	x.click(t, runTab)
	x.waitChange(t, "the Run tab", before, cnnTree)
	x.click(t, toTargetRadio)
	if !waitFor(10*time.Second, func() bool { return g.pref("session.train") == "to-target" }) {
		t.Fatalf("the to-target choice did not reach the session: train mode %q (screenshot: %s)", g.pref("session.train"), x.keep(t, "to-target", x.screenshot(t)))
	}
	// vgg16's own recipe trains 90 epochs at every batch its linear scaling holds to, so
	// its curves and results may look as they did: the status line says the new run.
	x.waitStill(t, "the prediction to the target", before, statusBar, 2)
	targetPDF := filepath.Join(out, "to-target.pdf")
	exportOpen(choiceCurves)
	typeInto(exportFile, targetPDF)
	exportAndWait(targetPDF, func(data []byte) error {
		text := pdfText(data)
		for _, want := range []string{"Time to target vs batch size —", "to 71.59% top-1 on imagenet-1k, recipe torchvision-v1/vgg16", "vgg16", machines[0], "1 CNN × " + strconv.Itoa(len(machines)) + " machines"} {
			if !strings.Contains(text, want) {
				return fmt.Errorf("the PDF's text lacks %q: %.600q", want, text)
			}
		}
		return nil
	})
	phase("an export to a target says so")

	// A machine added on the command line while the window runs appears in its list
	// within seconds — a "My machines" heading above AWS — and can be ticked.
	shown = x.screenshot(t)
	x.click(t, machineTab)
	listed := x.waitStill(t, "the Machines tab", shown, machineTree, 2)
	addOut, err := exec.Command(bin, "--db", filepath.Join(g.home, "cache.db"), "machine", "add", "--name", "e2e-box", "--gpu", "t4", "--price", "0.4").CombinedOutput()
	if err != nil {
		t.Fatalf("cnntime machine add: %v\n%s", err, addOut)
	}
	firstHeading := image.Rect(0, awsHeading.Y-14, 280, awsHeading.Y+14)
	mine := x.waitScreen(t, "the added machine's group heading in the machine list", 15*time.Second, func(img *image.RGBA) bool {
		return changedPixels(listed, img, firstHeading) > 100
	})
	x.save(t, "machine-added", mine)
	x.click(t, awsHeading) // the first heading: My machines
	x.waitChange(t, "My machines opened", mine, machineTree)
	x.click(t, awsFirstRow)
	if !waitFor(10*time.Second, func() bool { return g.hasItem("session.machines", "user/e2e-box") }) {
		t.Fatalf("the machine added while the window ran could not be ticked: session.machines %q (screenshot: %s)", g.pref("session.machines"), x.keep(t, "machine-add", x.screenshot(t)))
	}
	phase("cnntime machine add shows in the running window")

	// Ctrl+Q quits.
	x.xdotool(t, "key", "ctrl+q")
	select {
	case <-g.done:
		if g.err != nil {
			t.Errorf("cnntime exited with %v after Ctrl+Q; it printed:\n%s", g.err, g.logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("cnntime still runs 10 s after Ctrl+Q")
	}

	// The window's results agree with the CLI's for the same settings (fixed epochs, as
	// they were exported): the same largest batch that fits, the same best batch on the
	// same batch sizes, and its total time.
	phase("quit")
	_ = largestOfAll
	cliRows := cliBest(t, bin, g, models, machines...)
	phase("ran cnntime best")
	for key, row := range rows {
		cli, ok := cliRows[key]
		if !ok {
			t.Errorf("the CLI printed no row for %s on %s", key[0], key[1])
			continue
		}
		if row["max_batch"] != cli["max_batch"] || row["best_batch"] != cli["best_batch"] {
			t.Errorf("%s on %s: the window's largest batch %s and best batch %s, the CLI's %s and %s", key[0], key[1], row["max_batch"], row["best_batch"], cli["max_batch"], cli["best_batch"])
		}
		gui, err1 := strconv.ParseFloat(row["total_s"], 64)
		best, err2 := strconv.ParseFloat(cli["total_s"], 64)
		if err1 != nil || err2 != nil || math.Abs(gui-best) > 0.001*best {
			t.Errorf("%s on %s: the window's best total time %s s, the CLI's %s s", key[0], key[1], row["total_s"], cli["total_s"])
		}
	}
}

// cliLayers is the number of layers of a CNN, as `cnntime model NAME --json` lists them.
func cliLayers(t *testing.T, bin, model string) int {
	t.Helper()
	out, err := exec.Command(bin, "--db", filepath.Join(t.TempDir(), "cli.db"), "model", model, "--json").Output()
	if err != nil {
		t.Fatalf("cnntime model %s --json: %v", model, err)
	}
	var m struct {
		Layers []json.RawMessage `json:"layers"`
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("cnntime model %s --json: %v", model, err)
	}
	return len(m.Layers)
}

func dist2(a, b image.Point) int {
	d := a.Sub(b)
	return d.X*d.X + d.Y*d.Y
}

// checkSVG checks that data is well-formed SVG that names every model (the legend).
func checkSVG(data []byte, models []string) error {
	dec := xml.NewDecoder(bytes.NewReader(data))
	root, text := "", ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %w", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text += string(tok)
		}
	}
	if root != "svg" {
		return fmt.Errorf("the root element is <%s>, want <svg>", root)
	}
	for _, m := range models {
		if !strings.Contains(text, m) {
			return fmt.Errorf("the SVG's text does not mention %s", m)
		}
	}
	return nil
}

// readCSVRows reads a results CSV into its rows by (model, machine), each a map from
// the header's column names.
func readCSVRows(data []byte) (map[[2]string]map[string]string, error) {
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("not CSV: %w", err)
	}
	if len(records) < 2 {
		return nil, fmt.Errorf("%d lines, want a header and rows", len(records))
	}
	header := records[0]
	for _, col := range []string{"model", "machine", "best_batch", "max_batch", "total_s"} {
		if !strings.Contains(","+strings.Join(header, ",")+",", ","+col+",") {
			return nil, fmt.Errorf("the header %q has no %s column", header, col)
		}
	}
	rows := map[[2]string]map[string]string{}
	for _, rec := range records[1:] {
		row := map[string]string{}
		for i, col := range header {
			row[col] = rec[i]
		}
		rows[[2]string{row["model"], row["machine"]}] = row
	}
	return rows, nil
}

// cliRunArgs are the CLI flags of the window's fixed-epoch run settings, read from its
// preferences; the batch sizes are left to the CLI's default, the window's grid.
func cliRunArgs(g *guiApp) []string {
	return []string{"--epochs", g.pref("session.epochs"), "--images", g.pref("session.images"),
		"--precision", g.pref("session.precision"), "--policy", g.pref("session.policy")}
}

// bestOfCLI is one row of `cnntime best --json`: its best and recommended batch, the
// range within 1% and the bound, as the results CSV writes them.
type bestOfCLI struct{ best, recommended, lo, hi, bound string }

// cliBestJSON runs `cnntime best --json` with the window's run settings and returns its
// rows by (model, machine).
func cliBestJSON(t *testing.T, bin string, g *guiApp, models, machines []string) map[[2]string]bestOfCLI {
	t.Helper()
	args := append([]string{"--db", filepath.Join(t.TempDir(), "cli.db"), "--json", "best",
		"--model", strings.Join(models, ","), "--machine", strings.Join(machines, ",")}, cliRunArgs(g)...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("cnntime %s: %v", strings.Join(args, " "), err)
	}
	var rows []struct {
		Model, Machine string
		Best           struct {
			Batch int
			Bound string
		}
		Recommended int                    `json:"recommended_batch"`
		Within      struct{ Min, Max int } `json:"within_1pct"`
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("cnntime best --json: %v\n%s", err, out)
	}
	got := map[[2]string]bestOfCLI{}
	for _, r := range rows {
		got[[2]string{r.Model, r.Machine}] = bestOfCLI{strconv.Itoa(r.Best.Batch), strconv.Itoa(r.Recommended), strconv.Itoa(r.Within.Min), strconv.Itoa(r.Within.Max), r.Best.Bound}
	}
	if len(got) != len(models)*len(machines) {
		t.Fatalf("cnntime best --json gave %d rows for %d × %d", len(got), len(models), len(machines))
	}
	return got
}

// firstCSVRow is the first row of a results CSV file, by column.
func firstCSVRow(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %v (%d lines)", path, err, len(recs))
	}
	row := map[string]string{}
	for i, col := range recs[0] {
		row[col] = recs[1][i]
	}
	return row
}

// svgText is the text an SVG draws, its pieces joined by spaces.
func svgText(data []byte) (string, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var parts []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return strings.Join(parts, " "), nil
		}
		if err != nil {
			return "", fmt.Errorf("not well-formed XML: %w", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			if s := strings.TrimSpace(string(cd)); s != "" {
				parts = append(parts, s)
			}
		}
	}
}

// pdfText is the text a PDF of cnntime's charts draws: the strings its content streams
// show, decoded from the code page its fonts are embedded in (the charts' PDF canvas
// writes code page 1252), joined by spaces.
func pdfText(data []byte) string {
	var parts []string
	// A stream is as long as its dictionary's /Length says (its bytes may end in a
	// line break of their own).
	streams := regexp.MustCompile(`/Length (\d+)[^>]*>>\s*stream\r?\n`)
	shown := regexp.MustCompile(`\(((?:[^()\\]|\\.)*)\)\s*Tj`)
	for _, m := range streams.FindAllSubmatchIndex(data, -1) {
		n, _ := strconv.Atoi(string(data[m[2]:m[3]]))
		if m[1]+n > len(data) {
			continue
		}
		content := data[m[1] : m[1]+n]
		if r, err := zlib.NewReader(bytes.NewReader(content)); err == nil {
			if inflated, err := io.ReadAll(r); err == nil {
				content = inflated
			}
		}
		for _, s := range shown.FindAllSubmatch(content, -1) {
			raw := strings.NewReplacer(`\(`, "(", `\)`, ")", `\\`, `\`).Replace(string(s[1]))
			text, err := charmap.Windows1252.NewDecoder().String(raw)
			if err == nil {
				parts = append(parts, text)
			}
		}
	}
	return strings.Join(parts, " ")
}

// cliBest runs "cnntime best" with the window's run settings (read from its
// preferences) on the CLI's default batch sizes, the window's grid, and returns its rows.
func cliBest(t *testing.T, bin string, g *guiApp, models []string, machines ...string) map[[2]string]map[string]string {
	t.Helper()
	args := append([]string{"--db", filepath.Join(t.TempDir(), "cli.db"), "best", "--csv",
		"--model", strings.Join(models, ","), "--machine", strings.Join(machines, ",")}, cliRunArgs(g)...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("cnntime %s: %v", strings.Join(args, " "), err)
	}
	rows, err := readCSVRows(out)
	if err != nil {
		t.Fatalf("cnntime best --csv: %v", err)
	}
	return rows
}
