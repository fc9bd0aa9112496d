package charts

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pdfContent is a PDF's streams, inflated where they are compressed, one after another.
func pdfContent(t *testing.T, pdf []byte) string {
	t.Helper()
	var out strings.Builder
	// A stream is as long as its dictionary's /Length says (its bytes may end in a
	// line break of their own).
	streams := regexp.MustCompile(`/Length (\d+)[^>]*>>\s*stream\r?\n`)
	for _, m := range streams.FindAllSubmatchIndex(pdf, -1) {
		n, _ := strconv.Atoi(string(pdf[m[2]:m[3]]))
		if m[1]+n > len(pdf) {
			t.Fatalf("a stream of %d bytes runs past the PDF's end", n)
		}
		stream := pdf[m[1] : m[1]+n]
		r, err := zlib.NewReader(bytes.NewReader(stream))
		if err != nil {
			out.Write(stream)
			continue
		}
		data, _ := io.ReadAll(r)
		out.Write(data)
	}
	return out.String()
}

// A PDF export writes —, · and × in the code page its fonts are embedded in, so a
// reader shows them (not "â€”", "Â·" and "Ã—"), and draws the error bands in their
// series' colour at the band's opacity (not a grey of the premultiplied channels).
func TestPDFTextAndBands(t *testing.T) {
	title := "Time to target vs batch size — resnet50 on cloud/ma · 2 GPUs × 8"
	ch := Curves(fleet(1, 1), Options{Legend: true, Title: title})
	var buf bytes.Buffer
	if err := ch.Write(&buf, PDF, 1200, 750); err != nil {
		t.Fatal(err)
	}
	content := pdfContent(t, buf.Bytes())
	if !strings.Contains(content, "\x97") || !strings.Contains(content, "\xb7") || !strings.Contains(content, "\xd7") {
		t.Error("the PDF's text lacks —, · or × in code page 1252")
	}
	if strings.Contains(content, "\xe2\x80\x94") || strings.Contains(content, "\xc3\x97") {
		t.Error("the PDF's text holds UTF-8 bytes, which its cp1252 font shows as â€” and Ã—")
	}
	// The series' band is filled in its colour, at its opacity, not in the
	// premultiplied channels that look grey.
	curves := fleet(1, 1)
	col := StylesFor(curves).Of(curves[0]).Color
	two := func(c uint8) float64 { return math.Floor(float64(c)/255*100) / 100 } // the first two decimals the PDF writes
	own := regexp.MustCompile(fmt.Sprintf(`%.2f\d* %.2f\d* %.2f\d* rg`, two(col.R), two(col.G), two(col.B)))
	if !own.MatchString(content) {
		t.Errorf("no fill in the series' colour %v in the PDF: its bands are not drawn in their colour", col)
	}
	if regexp.MustCompile(`0\.0[0-9]* 0\.1[0-9]* 0\.1[0-9]* rg`).MatchString(content) {
		t.Error("a band is filled in the premultiplied (grey) colour")
	}
	if !strings.Contains(string(buf.Bytes()), "/ca 0.2") {
		t.Error("no translucent fill (/ca) in the PDF: the bands are opaque")
	}
}

func TestCP1252(t *testing.T) {
	for in, want := range map[string]string{"a — b": "a \x97 b", "plain": "plain", "× ·": "\xd7 \xb7", "→ ≥": "? ?"} {
		if got := cp1252(in); got != want {
			t.Errorf("cp1252(%q) = %q, want %q", in, got, want)
		}
	}
}
