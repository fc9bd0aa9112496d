package csvsafe

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
