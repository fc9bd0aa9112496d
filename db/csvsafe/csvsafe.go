package csvsafe

import (
	"fmt"
	"strings"
)

// formulaStart reports whether c, as a cell's first byte, makes a spreadsheet read the
// cell as a formula.
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// escaped reports whether s, written as a cell, would be read back as carrying Text's
// apostrophe: an apostrophe followed by a formula start or by another apostrophe.
func escaped(s string) bool {
	return len(s) >= 2 && s[0] == '\'' && (formulaStart(s[1]) || s[1] == '\'')
}

// Text is a text cell for a CSV file that people open in a spreadsheet: a cell that
// starts with =, +, -, @, a tab or a carriage return gets a leading apostrophe, and so
// does one that starts with an apostrophe Untext would take off; every other cell is
// returned as it is. Numbers are not passed through it.
func Text(s string) string {
	if s != "" && (formulaStart(s[0]) || escaped(s)) {
		return "'" + s
	}
	return s
}

// Untext reads a text cell that Text wrote: it takes off the apostrophe Text added, and
// returns every other cell as it is. Untext(Text(s)) == s for every s.
func Untext(s string) string {
	if escaped(s) {
		return s[1:]
	}
	return s
}

// Cell is a text cell of a CSV that cnntime writes for people and their tools only,
// never to read back (predict --csv, the exports' tables): Text, with every character
// a terminal or a tool would act on rather than show — a control character (a line
// break, ESC, BEL, DEL, a C1 control), a Unicode line or paragraph separator, a
// bidirectional override — written out as \x1b, \u2028 and the like. (The predicate is
// predictor/hw's Unprintable; this package imports nothing of ours.)
func Cell(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return Text(s)
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unprintable(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return Text(b.String())
}

func unprintable(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
