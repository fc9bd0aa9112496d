package app

import "strings"

// CSVText is a text cell for a CSV file that people open in a spreadsheet: a cell that
// starts with =, +, -, @, a tab or a carriage return would be read as a formula (CSV
// injection), so it gets a leading apostrophe, which spreadsheets show as text. Other
// cells are returned as they are; numbers should not be passed through it.
func CSVText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
