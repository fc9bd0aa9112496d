package charts

import (
	"image/color"

	"golang.org/x/text/encoding/charmap"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// pdfCanvas is gonum's PDF canvas with two of its faults mended:
//
//   - it writes a string's UTF-8 bytes into a font it embeds in code page 1252, so
//     "—", "·" and "×" come out as "â€”", "Â·" and "Ã—": the text is encoded in
//     code page 1252 first (a character it lacks becomes "?");
//   - it takes a colour's premultiplied channels as its straight ones, so a
//     translucent error band is drawn grey: the colour is handed over un-premultiplied.
type pdfCanvas struct {
	*vgpdf.Canvas
}

// newPDFCanvas is a w×h points PDF canvas with its fonts embedded.
func newPDFCanvas(w, h vg.Length) pdfCanvas {
	c := vgpdf.New(w, h)
	c.EmbedFonts(true)
	return pdfCanvas{c}
}

// SetColor sets the colour of what is drawn next, its alpha as the PDF's opacity.
func (c pdfCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.Canvas.SetColor(straightColor(color.NRGBA64Model.Convert(clr).(color.NRGBA64)))
}

// FillString draws text encoded as the embedded font is.
func (c pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, cp1252(s))
}

// cp1252 is s in code page 1252, a character it lacks replaced by "?".
func cp1252(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := charmap.Windows1252.EncodeRune(r); ok {
			out = append(out, b)
		} else {
			out = append(out, '?')
		}
	}
	return string(out)
}

// straightColor is a colour whose RGBA returns its straight (not premultiplied)
// channels: what vgpdf reads RGBA's result as.
type straightColor color.NRGBA64

func (s straightColor) RGBA() (r, g, b, a uint32) {
	return uint32(s.R), uint32(s.G), uint32(s.B), uint32(s.A)
}
