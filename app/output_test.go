package app

import (
	"strings"
	"testing"
)

// A table shows what a terminal would act on as escapes, and leaves other text alone.
func TestTablesPrintNamesAsText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"resnet50", "resnet50"},
		{"Büro-Rechner ✓ \ufffd", "Büro-Rechner ✓ \ufffd"},
		{"\x1b[2Jgone", `\x1b[2Jgone`},
		{"a\tb\nc", `a\x09b\x0ac`},
		{"del\x7f c1\u009b", `del\x7f c1\u009b`},
		{"bad \xff byte", `bad \xff byte`},
	}
	for _, tc := range tests {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
		var out strings.Builder
		tab := NewTable(&out, "NAME")
		tab.Row(tc.in)
		tab.Flush()
		if strings.ContainsAny(out.String(), "\x1b\x7f\t") || !strings.Contains(out.String(), tc.want) {
			t.Errorf("table of %q = %q", tc.in, out.String())
		}
	}
}
