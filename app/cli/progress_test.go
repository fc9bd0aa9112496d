package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock steps by step each time it is read.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time { c.t = c.t.Add(c.step); return c.t }

func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tty, logs bool
		showAfter time.Duration
		want      []string // substrings, in order
		wantNot   []string
	}{
		{"terminal: a redrawn bar with the ETA from the rate", true, false, 0,
			[]string{"\r[###.", "3/10 ETA ", "\r\033[K"}, []string{"\n"}},
		{"terminal: nothing before showAfter", true, false, time.Hour, nil, []string{"["}},
		{"pipe with log lines: a plain line at each tenth, no carriage return", false, true, 0,
			[]string{"sweep: 1/10 (10%), ETA ", "sweep: 10/10 (100%)"}, []string{"\r", "\033"}},
		{"pipe without log lines: nothing", false, false, 0, nil, []string{"sweep", "["}},
	} {
		var buf bytes.Buffer
		c := &fakeClock{t: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), step: time.Second}
		p := &progressLine{w: &buf, tty: tc.tty, logSteps: tc.logs, what: "sweep", showAfter: tc.showAfter, now: c.now}
		p.start = p.now()
		for done := 1; done <= 10; done++ {
			p.update(done, 10, 0, "resnet18 b=64 forward")
		}
		p.clear()
		out := buf.String()
		rest := out
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: %q lacks %q (in order):\n%q", tc.name, out, w, out)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, w := range tc.wantNot {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q has %q", tc.name, out, w)
			}
		}
		if tc.logs && strings.Count(out, "\n") != 10 {
			t.Errorf("%s: %d lines, want one per tenth (10):\n%s", tc.name, strings.Count(out, "\n"), out)
		}
	}
}

// TestSweepProgressInAPipe: a sweep's output into a pipe or a file (here a buffer,
// which is no terminal) has no carriage returns or escape codes.
func TestProgressIsPlainOffATerminal(t *testing.T) {
	var buf bytes.Buffer
	if isTerminal(&buf) {
		t.Fatal("a buffer is no terminal")
	}
	b := sweepProgress{newProgressLine(&buf, "sweep", 0, true)}
	for done := 0; done <= 20; done++ {
		b.line.update(done, 20, 0, "x")
	}
	b.line.message("warning: the GPU is throttling")
	b.finish()
	if s := buf.String(); strings.ContainsAny(s, "\r\033") || !strings.Contains(s, "sweep: 20/20 (100%)") || !strings.Contains(s, "warning: the GPU is throttling\n") {
		t.Errorf("sweep progress off a terminal:\n%q", s)
	}
}
