package views

import (
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// The status line says what the window is doing and what it just did, as a desktop
// tool's status bar does:
//   - a state (a prediction running or done, an explanation, a download's progress)
//     replaces the state before it;
//   - a notice (what an action of the user did: a model removed or imported, a file
//     exported, a quick pick, an error) stays in front of the states that follow it for
//     noticeHold, joined to them: the prediction an action starts no longer wipes out the
//     action's answer before it can be read ("Removed custom model x.  ·  Predicted 4
//     curves…");
//   - every message is kept, with its time, among the last statusHistoryLen: the button
//     at the bar's end and View › Messages… list them, newest first, so nothing said is
//     lost to the next message.

// noticeHold is how long a notice stays in front of the states that follow it.
const noticeHold = 10 * time.Second

// statusHistoryLen is how many messages the window keeps.
const statusHistoryLen = 200

// statusJoin joins a notice to the state that follows it.
const statusJoin = "  ·  "

// StatusMessage is one message the status line said.
type StatusMessage struct {
	At     time.Time
	Text   string
	Notice bool // what an action did, kept in front of later states for noticeHold
}

// statusLine is the status bar's text and the messages it said.
type statusLine struct {
	label *widget.Label
	now   func() time.Time // the clock (a test's may jump)

	mu       sync.Mutex // history is read off the UI goroutine too
	history  []StatusMessage
	notice   string
	noticeAt time.Time
}

func newStatusLine(text string) *statusLine {
	s := &statusLine{label: widget.NewLabel(text), now: time.Now}
	s.label.Truncation = fyne.TextTruncateEllipsis // a long message never widens the window
	return s
}

// record keeps m, dropping the oldest beyond statusHistoryLen.
func (s *statusLine) record(m StatusMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, m)
	if n := len(s.history) - statusHistoryLen; n > 0 {
		s.history = append(s.history[:0], s.history[n:]...)
	}
}

// state shows text, after the last notice while that is recent.
func (s *statusLine) state(text string) {
	now := s.now()
	s.record(StatusMessage{At: now, Text: text})
	if s.notice != "" && now.Sub(s.noticeAt) < noticeHold && text != s.notice {
		text = s.notice + statusJoin + text
	}
	s.label.SetText(text)
}

// notify shows text, and keeps it in front of the states that follow for noticeHold.
func (s *statusLine) notify(text string) {
	now := s.now()
	s.record(StatusMessage{At: now, Text: text, Notice: true})
	s.notice, s.noticeAt = text, now
	s.label.SetText(text)
}

// messages are the messages said, oldest first.
func (s *statusLine) messages() []StatusMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]StatusMessage(nil), s.history...)
}

// setStatus shows a state of the window on the status line (on the UI goroutine).
// The text is shown in the theme's glyphs (uiText), as everything it says.
func (mw *MainWindow) setStatus(text string) { mw.status.state(uiText(text)) }

// notify shows on the status line what an action did (on the UI goroutine).
func (mw *MainWindow) notify(text string) { mw.status.notify(uiText(text)) }

// StatusHistory is what the status line said, oldest first (the last statusHistoryLen
// messages).
func (mw *MainWindow) StatusHistory() []StatusMessage { return mw.status.messages() }

// newMessagesButton is the status bar's button that lists the messages.
func (mw *MainWindow) newMessagesButton() *widget.Button {
	b := widget.NewButtonWithIcon("Messages", theme.HistoryIcon(), mw.showMessages) // named: an icon alone says little
	b.Importance = widget.LowImportance
	return b
}

// messagesText lists the messages, newest first, each with its time.
func messagesText(ms []StatusMessage) string {
	if len(ms) == 0 {
		return "Nothing yet."
	}
	var b strings.Builder
	for i := len(ms) - 1; i >= 0; i-- {
		b.WriteString(ms[i].At.Format("15:04:05"))
		b.WriteString("  ")
		b.WriteString(ms[i].Text)
		if i > 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// showMessages lists what the status line said, newest first.
func (mw *MainWindow) showMessages() {
	l := widget.NewLabel(messagesText(mw.StatusHistory()))
	l.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("Messages", "Close", container.NewVScroll(l), mw.Window)
	d.Resize(fyne.NewSize(760, 460))
	closeOnEscape(d, mw.Window)
	d.Show()
}
