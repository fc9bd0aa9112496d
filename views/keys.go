package views

import (
	"slices"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// escapeStack is a window's open dialogs that Esc closes, the newest last.
type escapeStack struct {
	mu      sync.Mutex
	dialogs []dialog.Dialog
}

// escapeStacks maps a canvas to its window's stack.
var escapeStacks sync.Map // fyne.Canvas → *escapeStack

// closeOnEscape makes Esc close d, whether the pointer rests on the window or a field
// of the dialog has the keyboard (fields made by escapeEntry pass Esc on). onClosed,
// when set, runs when the dialog closes however it closes.
func closeOnEscape(d dialog.Dialog, w fyne.Window, onClosed ...func()) {
	st := escapeStackOf(w.Canvas())
	st.mu.Lock()
	st.dialogs = append(st.dialogs, d)
	st.mu.Unlock()
	d.SetOnClosed(func() {
		st.mu.Lock()
		if i := slices.Index(st.dialogs, d); i >= 0 {
			st.dialogs = slices.Delete(st.dialogs, i, i+1)
		}
		st.mu.Unlock()
		for _, f := range onClosed {
			if f != nil {
				f()
			}
		}
	})
}

// escapeStackOf is c's stack, made (and Esc bound on c) on first use.
func escapeStackOf(c fyne.Canvas) *escapeStack {
	if st, ok := escapeStacks.Load(c); ok {
		return st.(*escapeStack)
	}
	st := &escapeStack{}
	escapeStacks.Store(c, st)
	prev := c.OnTypedKey()
	c.SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape && escapeTop(c) {
			return
		}
		if prev != nil {
			prev(k)
		}
	})
	return st
}

// escapeTop closes the newest dialog of c that Esc closes; false when none is open.
func escapeTop(c fyne.Canvas) bool {
	v, ok := escapeStacks.Load(c)
	if !ok {
		return false
	}
	st := v.(*escapeStack)
	st.mu.Lock()
	var top dialog.Dialog
	if n := len(st.dialogs); n > 0 {
		top = st.dialogs[n-1]
	}
	st.mu.Unlock()
	if top == nil {
		return false
	}
	top.Hide()
	return true
}

// escapeEntry is a text field of a dialog: Esc in it closes the dialog, as Esc
// anywhere else in the window does.
type escapeEntry struct {
	widget.Entry
}

func newEscapeEntry() *escapeEntry {
	e := &escapeEntry{}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey closes the window's top dialog on Esc and types otherwise.
func (e *escapeEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil && escapeTop(c) {
			return
		}
	}
	e.Entry.TypedKey(k)
}
