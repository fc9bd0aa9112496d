package csvsafe

import (
	"bytes"
	"encoding/csv"
	"testing"
)

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=1+2", "'=1+2"},
		{"+x", "'+x"},
		{"-y", "'-y"},
		{"@z", "'@z"},
		{"\tt", "'\tt"},
		{"\rr", "'\rr"},
		{`=HYPERLINK("http://x","click")`, `'=HYPERLINK("http://x","click")`},
		{"normal", "normal"},
		{"", ""},
		{"resnet50", "resnet50"},
		{"a=b", "a=b"},
		{" =x", " =x"}, // a leading space is text in spreadsheets
		{"'abc", "'abc"},
		{"'", "'"},
		{"'=x", "''=x"}, // a name that really starts with '= survives the round trip
		{"''", "'''"},
		{"'-1", "''-1"},
		{"-", "'-"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Untext(tc.want); got != tc.in {
			t.Errorf("Untext(%q) = %q, want %q", tc.want, got, tc.in)
		}
	}
}

// Hand-written cells: Untext takes off only the apostrophe Text would have added.
func TestUntext(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"'=x", "=x"},
		{"'@z", "@z"},
		{"'abc", "'abc"},
		{"'", "'"},
		{"normal", "normal"},
		{"", ""},
		{"=x", "=x"}, // not written by Text, read as it is
	} {
		if got := Untext(tc.in); got != tc.want {
			t.Errorf("Untext(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Every string, written through encoding/csv and read back, comes back unchanged, and
// no written cell starts with a formula character.
func TestRoundTripThroughCSV(t *testing.T) {
	names := []string{"=1+2", "+x", "-y", "@z", "normal", "", "'", "'=", "''", "'''=", "'a", "-", "=", "\t", "a'b; rm -rf /",
		`=HYPERLINK("http://evil","x")`, "-2+3+cmd|' /C calc'!A0", "ünïcødé", "a,b", "a\"b", "line\nbreak"}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for _, n := range names {
		w.Write([]string{Text(n), "-1.5"})
	}
	w.Flush()
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r[0] != "" && formulaStart(r[0][0]) {
			t.Errorf("cell %q for %q starts a formula", r[0], names[i])
		}
		if got := Untext(r[0]); got != names[i] {
			t.Errorf("round trip of %q gave %q", names[i], got)
		}
		if r[1] != "-1.5" {
			t.Errorf("a number cell became %q", r[1])
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"=1", "'", "''=", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Text(s)
		if c != "" && formulaStart(c[0]) {
			t.Errorf("Text(%q) = %q starts a formula", s, c)
		}
		if got := Untext(c); got != s {
			t.Errorf("Untext(Text(%q)) = %q", s, got)
		}
	})
}

func TestCellWritesControlCharactersOut(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"us-east-1", "us-east-1"},
		{"us\x1b[2J", `us\x1b[2J`},
		{"a\nb\r\tc\a", `a\x0ab\x0d\x09c\x07`},
		{"x\u2028y\u202e", `x\u2028y\u202e`},
		{"\u0085z\x7f", `\x85z\x7f`},
		{"=1+2\n", `'=1+2\x0a`},
		{"é名", "é名"},
	} {
		if got := Cell(tc.in); got != tc.want {
			t.Errorf("Cell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
