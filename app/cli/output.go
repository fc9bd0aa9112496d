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

// isBrokenPipe reports whether err is a write to a pipe whose reader is gone.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
