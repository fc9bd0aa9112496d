package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"cnntime/app"
)

// isTerminal reports whether w is a terminal (a redrawn progress line belongs there,
// never in a pipe or a log file).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progressLine reports the progress of a long command on stderr. On a terminal it
// redraws one line (a bar, the count, the ETA and what ran last), starting only once
// the command has run for showAfter so quick commands print nothing; elsewhere (a pipe,
// a Slurm log) it writes a plain line at each tenth of the work when logSteps is set,
// and nothing otherwise.
type progressLine struct {
	w         io.Writer
	tty       bool
	logSteps  bool
	what      string // the work's name in plain lines: "sweep", "predict"
	showAfter time.Duration
	now       func() time.Time

	start    time.Time
	last     time.Time
	drawn    bool
	loggedAt int // the tenths already logged
}

func newProgressLine(w io.Writer, what string, showAfter time.Duration, logSteps bool) *progressLine {
	p := &progressLine{w: w, tty: isTerminal(w), logSteps: logSteps, what: what, showAfter: showAfter, now: time.Now}
	p.start = p.now()
	return p
}

// update shows done of total with an ETA (zero: estimated from the rate so far) and
// what ran last.
func (p *progressLine) update(done, total int, eta time.Duration, detail string) {
	now := p.now()
	if eta <= 0 && done > 0 && total > done {
		eta = time.Duration(float64(now.Sub(p.start)) / float64(done) * float64(total-done))
	}
	etaText := "ETA -"
	if eta > 0 {
		etaText = "ETA " + roundDuration(eta).String()
	}
	if !p.tty {
		if !p.logSteps || total <= 0 {
			return
		}
		if tenth := 10 * done / total; tenth > p.loggedAt {
			p.loggedAt = tenth
			fmt.Fprintf(p.w, "%s: %d/%d (%d%%), %s\n", p.what, done, total, 100*done/total, etaText)
		}
		return
	}
	if now.Sub(p.start) < p.showAfter || (now.Sub(p.last) < 200*time.Millisecond && done < total) {
		return
	}
	p.last = now
	const width = 30
	filled := width
	if total > 0 {
		filled = width * min(done, total) / total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s  %-48.48s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, etaText, detail)
	p.drawn = true
}

// message prints a line of its own (a warning), above the progress line.
func (p *progressLine) message(line string) {
	p.clear()
	fmt.Fprintln(p.w, line)
}

// clear removes the drawn progress line.
func (p *progressLine) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// curveProgress counts the curves of a prediction as they are written, on a terminal
// only and only once it has taken a second: a whole-catalog predict runs for a while.
type curveProgress struct {
	line        *progressLine
	done, total int
}

func newCurveProgress(env *Env, q app.Query) *curveProgress {
	line := newProgressLine(env.Stderr, "predict", time.Second, false)
	// Rows written to the same terminal would run into the redrawn line, and are
	// progress enough: the line is for output that goes to a file or a pipe.
	line.tty = line.tty && !isTerminal(env.Stdout)
	return &curveProgress{line: line, total: len(q.Models) * len(q.Targets)}
}

// curve counts one more curve written.
func (p *curveProgress) curve() {
	p.done++
	p.line.update(p.done, p.total, 0, fmt.Sprintf("%d of %d curves", p.done, p.total))
}

// finish removes the progress line before the command's last lines.
func (p *curveProgress) finish() { p.line.clear() }
