package views

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
)

// What an action did stays on the status line beside the prediction it starts, for
// noticeHold, then the prediction's line alone; every message is kept, and the
// Messages button lists them newest first.
func TestStatusKeepsAnActionsAnswerBesideThePrediction(t *testing.T) {
	mw := newTestWindow(t)
	settle(t, mw)
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	onUI(mw, func() {
		mw.status.now = func() time.Time { return clock }
		mw.Selection.ToggleModel("resnet50", true)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	onUI(mw, func() { mw.Selection.ClearMachines() })
	settle(t, mw)
	const cleared = "Cleared 1 machine: aws/p3.2xlarge."
	for _, m := range mw.StatusHistory() {
		if strings.HasPrefix(m.Text, "Predicting 0 ") {
			t.Errorf("an emptied selection said %q", m.Text)
		}
	}
	onUI(mw, func() {
		if want := cleared + statusJoin + "Ready. Pick at least one CNN and one machine."; mw.Status.Text != want {
			t.Errorf("after Clear the status line says %q, want %q", mw.Status.Text, want)
		}
	})
	// Within the hold a new prediction keeps the notice in front; past it, the line is
	// the prediction's alone.
	onUI(mw, func() {
		clock = clock.Add(noticeHold - time.Second)
		mw.Selection.ToggleMachine("gcp/a2-highgpu-1g", true)
	})
	settle(t, mw)
	onUI(mw, func() {
		if !strings.HasPrefix(mw.Status.Text, cleared+statusJoin+"Predicted 1 curve in ") {
			t.Errorf("within %s the status line says %q, want the notice, then the prediction", noticeHold, mw.Status.Text)
		}
		clock = clock.Add(2 * time.Second)
		mw.Selection.ToggleMachine("aws/p3.2xlarge", true)
	})
	settle(t, mw)
	onUI(mw, func() {
		if !strings.HasPrefix(mw.Status.Text, "Predicted 2 curves in ") {
			t.Errorf("past %s the status line says %q, want the prediction's line alone", noticeHold, mw.Status.Text)
		}
	})
	var said []string
	for _, m := range mw.StatusHistory() {
		said = append(said, m.Text)
	}
	i := slices.Index(said, cleared)
	if i < 0 || !slices.ContainsFunc(said[i:], func(s string) bool { return strings.HasPrefix(s, "Predicted 2 curves") }) {
		t.Errorf("the messages kept: %q", said)
	}
	onUI(mw, func() { test.Tap(mw.Messages) })
	text := dialogText(t, mw)
	if !strings.Contains(text, "09:00:11  Predicted 2 curves") || !strings.Contains(text, "09:00:00  "+cleared) ||
		strings.Index(text, "Predicted 2 curves") > strings.Index(text, cleared) {
		t.Errorf("the Messages dialog says:\n%s\nwant every message with its time, newest first", text)
	}
	tapDialogButton(t, mw, "Close")
}

// The status line keeps the last statusHistoryLen messages, oldest dropped first.
func TestStatusHistoryKeepsTheLastMessages(t *testing.T) {
	for _, tc := range []struct {
		said        int
		first, last int // the first and last message kept
	}{
		{1, 0, 0},
		{statusHistoryLen, 0, statusHistoryLen - 1},
		{statusHistoryLen + 1, 1, statusHistoryLen},
		{statusHistoryLen + 50, 50, statusHistoryLen + 49},
	} {
		t.Run(fmt.Sprint(tc.said), func(t *testing.T) {
			newTestApp(t)
			s := onUIThread(func() *statusLine { return newStatusLine("") })
			uiThread.do(func() {
				for i := range tc.said {
					if i%2 == 0 {
						s.state(fmt.Sprint("message ", i))
					} else {
						s.notify(fmt.Sprint("message ", i))
					}
				}
			})
			ms := s.messages()
			if want := tc.last - tc.first + 1; len(ms) != want {
				t.Fatalf("kept %d messages, want %d", len(ms), want)
			}
			if ms[0].Text != fmt.Sprint("message ", tc.first) || ms[len(ms)-1].Text != fmt.Sprint("message ", tc.last) {
				t.Errorf("kept %q to %q, want message %d to %d", ms[0].Text, ms[len(ms)-1].Text, tc.first, tc.last)
			}
		})
	}
}

// A notice stays in front of the states that follow it for noticeHold, the latest
// notice only; a state replaces the state before it.
func TestStatusLineHoldsANoticeBeforeTheStatesAfterIt(t *testing.T) {
	type step struct {
		after  time.Duration // since the step before
		notice bool
		text   string
		shows  string
	}
	const j = statusJoin
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a state replaces a state", []step{
			{0, false, "Predicting 2 curves…", "Predicting 2 curves…"},
			{time.Second, false, "Predicted 2 curves.", "Predicted 2 curves."},
		}},
		{"a notice stays before the states that follow within the hold", []step{
			{0, false, "Predicted 2 curves.", "Predicted 2 curves."},
			{time.Second, true, "Removed custom model x.", "Removed custom model x."},
			{0, false, "Predicting 1 curve…", "Removed custom model x." + j + "Predicting 1 curve…"},
			{noticeHold - time.Second, false, "Predicted 1 curve.", "Removed custom model x." + j + "Predicted 1 curve."},
			{time.Second, false, "Predicted 1 curve again.", "Predicted 1 curve again."},
		}},
		{"the latest notice is the one held", []step{
			{0, true, "Exported a.png.", "Exported a.png."},
			{time.Second, true, "Exported b.png.", "Exported b.png."},
			{time.Second, false, "Predicted 1 curve.", "Exported b.png." + j + "Predicted 1 curve."},
		}},
		{"a state that repeats the notice is not said twice", []step{
			{0, true, "Ready.", "Ready."},
			{time.Second, false, "Ready.", "Ready."},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newTestApp(t)
			clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			uiThread.do(func() {
				s := newStatusLine("Starting…")
				s.now = func() time.Time { return clock }
				for i, st := range tc.steps {
					clock = clock.Add(st.after)
					if st.notice {
						s.notify(st.text)
					} else {
						s.state(st.text)
					}
					if s.label.Text != st.shows {
						t.Errorf("step %d (%q): the line shows %q, want %q", i, st.text, s.label.Text, st.shows)
					}
				}
				if ms := s.messages(); len(ms) != len(tc.steps) {
					t.Errorf("kept %d messages of %d", len(ms), len(tc.steps))
				}
			})
		})
	}
}

// The Messages list is newest first, each message with its time.
func TestMessagesTextIsNewestFirst(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ms   []StatusMessage
		want string
	}{
		{"none", nil, "Nothing yet."},
		{"one", []StatusMessage{{At: at, Text: "Ready."}}, "09:00:00  Ready."},
		{"newest first", []StatusMessage{
			{At: at, Text: "Predicted 1 curve."},
			{At: at.Add(5 * time.Second), Text: "Cleared 1 machine: a/x.", Notice: true},
			{At: at.Add(65 * time.Second), Text: "Ready."},
		}, "09:01:05  Ready.\n09:00:05  Cleared 1 machine: a/x.\n09:00:00  Predicted 1 curve."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := messagesText(tc.ms); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
