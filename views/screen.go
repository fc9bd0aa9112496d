package views

import (
	"fyne.io/fyne/v2"
	"github.com/go-gl/glfw/v3.4/glfw"
)

// fitScreen shrinks the window to the screen it opens on when it is larger: the
// default size at a large scaling (1280×800 at 150% is 1920×1200 pixels, more than a
// 1080-pixel screen) or a size remembered from a larger screen. It runs on the UI
// goroutine once the window is shown, when its scale is known; under a driver with
// no screen (tests) it does nothing.
func (mw *MainWindow) fitScreen() {
	defer func() { _ = recover() }() // GLFW not started (a test driver): nothing to fit
	mon := glfw.GetPrimaryMonitor()
	if mon == nil {
		return
	}
	mode := mon.GetVideoMode()
	if mode == nil {
		return
	}
	scale := mw.Window.Canvas().Scale()
	if scale <= 0 {
		scale = 1
	}
	size := mw.Window.Canvas().Size()
	if fit := fitTo(size, float32(mode.Width)/scale, float32(mode.Height)/scale); fit != size {
		mw.Window.Resize(fit)
		mw.Window.CenterOnScreen()
	}
}

// fitTo is a window of size on a screen of w×h (both in the window's units): the
// same when it fits, else shrunk to leave room for the desktop's panels and the
// window's frame (95% of the width, 90% of the height).
func fitTo(size fyne.Size, w, h float32) fyne.Size {
	if size.Width <= w && size.Height <= h {
		return size
	}
	return fyne.NewSize(fyne.Min(size.Width, w*0.95), fyne.Min(size.Height, h*0.9))
}
