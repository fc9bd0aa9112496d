package views

import (
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Every section the Help menu opens is a heading of its page in docs/, with text under
// it: a page renamed or a heading reworded would leave the menu item empty.
func TestManualSectionsAreInTheDocs(t *testing.T) {
	for _, sec := range manualSections {
		md, err := os.ReadFile("../" + sec.page)
		if err != nil {
			t.Errorf("the Help menu opens %s, which is missing: %v", sec.page, err)
			continue
		}
		body := readmeSection(string(md), sec.heading)
		if len(strings.Fields(body)) < 50 {
			t.Errorf("%s has no section %q (or almost nothing under it: %q)", sec.page, sec.heading, body)
		}
	}
}

// The manual's text is laid out narrower than its scroll by a list bullet's indent
// or more: Fyne wraps a list item to the whole width and then indents it, which ran
// its lines off the dialog's right edge.
func TestManualLinesStayInsideTheDialog(t *testing.T) {
	mw := newTestWindow(t)
	mw.docs = os.DirFS("..")
	onUI(mw, func() { mw.showReadme(manualSections[0].heading) })
	var text *widget.RichText
	var scroll *container.Scroll
	walk(topDialog(t, mw), func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.RichText:
			if text == nil && len(x.String()) > 200 { // the body (its code blocks scroll sideways in rich texts of their own), not the title
				text = x
			}
		case *container.Scroll:
			if scroll == nil { // the dialog's, not a code block's own
				scroll = x
			}
		}
	})
	if text == nil || scroll == nil {
		t.Fatal("the manual dialog has no scrolled rich text")
	}
	onUI(mw, func() {
		sw := scroll.Size().Width
		if tw := text.Size().Width; sw <= 0 || tw > sw-2*theme.TextSize() {
			t.Errorf("the text is %.0f px wide in a %.0f px scroll: its list items run past the edge", tw, sw)
		}
	})
	if !strings.Contains(text.String(), "The first launch") {
		t.Errorf("the dialog shows %.200q, not the window's section", text.String())
	}
}
