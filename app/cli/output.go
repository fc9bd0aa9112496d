package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"cnntime/app"
)

// WriteJSON writes v as indented JSON followed by a newline: the stable --json form.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// printableLines is a message made printable (app.Printable) line by line: an error
// quotes names and paths from files, and a control character in one must not act on
// the terminal, but the message's own line breaks stay.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = app.Printable(l)
	}
	return strings.Join(lines, "\n")
}

// withoutRawArgs is msg, an error of the command run with args, with the control
// characters that came from args written out (app.Printable): a line break in a flag's
// value or a file name must not start a line of the message of its own (printableLines
// keeps the message's own line breaks). Each argument, without its leading dashes, its
// value after "=", and each of its comma-separated parts are looked for, trimmed as the
// commands trim them.
func withoutRawArgs(msg string, args []string) string {
	for _, a := range args {
		if !strings.ContainsFunc(a, unprintableRune) {
			continue
		}
		frags := []string{a, strings.TrimLeft(a, "-")} // the flag package names a flag with one dash
		if _, v, ok := strings.Cut(a, "="); ok {
			frags = append(frags, v)
		}
		for _, part := range strings.Split(a, ",") {
			frags = append(frags, part, strings.TrimSpace(part))
		}
		for _, f := range frags {
			if strings.ContainsFunc(f, unprintableRune) {
				msg = strings.ReplaceAll(msg, f, app.Printable(f))
			}
		}
	}
	return msg
}

func unprintableRune(r rune) bool { return app.Printable(string(r)) != string(r) }

// printableWriter writes what the flag package says of a flag it does not know (its
// one line, with the flag's name as given) with the control characters of the name
// written out; the line's own end stays.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	text, end := strings.CutSuffix(string(b), "\n")
	out := app.Printable(text)
	if end {
		out += "\n"
	}
	if _, err := io.WriteString(p.w, out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// isBrokenPipe reports whether err is a write to a pipe whose reader is gone.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
