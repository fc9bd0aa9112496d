package cnn

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLayerName bounds a layer's name, in bytes: far above a module path's
// ("features.denseblock4.denselayer32.conv2"), short enough for a table's column.
const MaxLayerName = 200

// CheckLayerName says why s cannot name a layer of a custom model: it is not UTF-8
// text, it is longer than MaxLayerName bytes, or it holds a control or formatting
// character (NUL, ESC, a line break, a right-to-left override), which a terminal acts
// on, a table breaks on and a CSV carries raw. Punctuation is fine: CSV cells are
// neutralised where they are written.
func CheckLayerName(s string) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("the layer name %q is not UTF-8 text", s)
	case len(s) > MaxLayerName:
		return fmt.Errorf("the layer name %.40q… is %d bytes long: give at most %d", s, len(s), MaxLayerName)
	case strings.IndexFunc(s, unprintableRune) >= 0:
		return fmt.Errorf("the layer name %q holds a control or formatting character (a terminal would act on it): give a plain name", s)
	}
	return nil
}

// CleanLayerName is s made a name CheckLayerName takes: what it refuses replaced by
// '_', cut to MaxLayerName bytes (for names that come from a file, an ONNX node's).
func CleanLayerName(s string) string {
	s = strings.ToValidUTF8(s, "_")
	s = strings.Map(func(r rune) rune {
		if unprintableRune(r) {
			return '_'
		}
		return r
	}, s)
	for len(s) > MaxLayerName {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}

// unprintableRune reports whether r is a control character (C0, DEL, C1) or a
// formatting one (Cf: bidirectional overrides, zero-width characters).
func unprintableRune(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }
