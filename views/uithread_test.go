package views

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// Fyne's desktop driver runs every fyne.Do on its one UI goroutine, so UI work started
// by the app's goroutines (a prediction's result, an explanation, a chart's render)
// never runs beside other UI work. Its test driver runs fyne.Do at once, on the
// caller's goroutine: two such callbacks, or one beside the test's own UI calls, then
// shape text at the same time in the shared text shaper, which panics now and then
// (an index out of range in harfbuzz), and a test's leftover callbacks ran while the
// next test's app cleared the font cache. newTestApp gives the tests the desktop
// driver's guarantee: every fyne.Do, every onUI and the building of a window hold one
// lock, and so does the change of app between tests.

// uiThread is the lock that stands for the UI goroutine. It is re-entrant, as the UI
// goroutine is: UI code that calls fyne.Do runs it at once under the test driver.
var uiThread reentrantLock

type reentrantLock struct {
	mu    sync.Mutex
	free  *sync.Cond
	owner uint64 // the goroutine holding it, 0 when none
	depth int
}

// goroutineID is the calling goroutine's number, read from its stack's first line
// ("goroutine 123 [running]:"); tests only.
func goroutineID() uint64 {
	var buf [64]byte
	line := buf[:runtime.Stack(buf[:], false)]
	line = bytes.TrimPrefix(line, []byte("goroutine "))
	if i := bytes.IndexByte(line, ' '); i > 0 {
		line = line[:i]
	}
	id, err := strconv.ParseUint(string(line), 10, 64)
	if err != nil {
		panic("views test: cannot read the goroutine's id from " + strconv.Quote(string(buf[:])))
	}
	return id
}

// do runs f holding the lock.
func (l *reentrantLock) do(f func()) {
	me := goroutineID()
	l.mu.Lock()
	if l.free == nil {
		l.free = sync.NewCond(&l.mu)
	}
	for l.owner != 0 && l.owner != me {
		l.free.Wait()
	}
	l.owner = me
	l.depth++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		if l.depth--; l.depth == 0 {
			l.owner = 0
			l.free.Broadcast()
		}
		l.mu.Unlock()
	}()
	f()
}

// serialDriver is the test driver whose fyne.Do runs under uiThread.
type serialDriver struct{ fyne.Driver }

func (d serialDriver) DoFromGoroutine(f func(), _ bool) { uiThread.do(f) }

// serialApp is a test app whose driver is a serialDriver.
type serialApp struct{ fyne.App }

func (a serialApp) Driver() fyne.Driver { return serialDriver{a.App.Driver()} }

// newTestApp is test.NewTempApp with one UI goroutine, as the desktop driver has: it
// is the current app until the test ends, then a fresh one is (made under the lock,
// so callbacks the test left running never meet the new app's cleared caches).
func newTestApp(t testing.TB) fyne.App {
	var a fyne.App
	uiThread.do(func() {
		a = serialApp{test.NewApp()}
		fyne.SetCurrentApp(a)
	})
	t.Cleanup(func() {
		uiThread.do(func() { fyne.SetCurrentApp(serialApp{test.NewApp()}) })
	})
	return a
}

// onUIThread returns what f makes, made holding uiThread (a window is built on the UI
// goroutine).
func onUIThread[T any](f func() T) T {
	var v T
	uiThread.do(func() { v = f() })
	return v
}

// ui runs f as UI code holding uiThread: a test's own taps and typing, while the app's
// goroutines may be putting their results on screen (a sweep's progress, a plan).
func ui(f func()) { uiThread.do(f) }
