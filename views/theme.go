package views

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// compactTheme is Fyne's own theme with the spacing of a desktop data tool: less
// padding inside widgets and a point smaller text, so that a 1280×800 window shows a
// dozen results rows, several legend entries and the selection's chips at once. Colours,
// icons, fonts and the light or dark variant are Fyne's, as the desktop chose them.
type compactTheme struct{ base fyne.Theme }

// CompactTheme is the theme the main window applies to its app.
func CompactTheme() fyne.Theme { return compactTheme{base: theme.DefaultTheme()} }

func (t compactTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	return t.base.Color(n, v)
}

func (t compactTheme) Font(s fyne.TextStyle) fyne.Resource { return t.base.Font(s) }

func (t compactTheme) Icon(n fyne.ThemeIconName) fyne.Resource { return t.base.Icon(n) }

func (t compactTheme) Size(n fyne.ThemeSizeName) float32 {
	switch n {
	case theme.SizeNameInnerPadding:
		return 5
	case theme.SizeNamePadding:
		return 3
	case theme.SizeNameText:
		return 13
	case theme.SizeNameLineSpacing:
		return 3
	case theme.SizeNameInlineIcon:
		return 18
	}
	return t.base.Size(n)
}
