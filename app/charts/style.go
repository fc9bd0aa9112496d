package charts

import (
	"image/color"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Style is the look of a chart: a light one for export and light desktops, a dark one
// for dark desktops.
type Style struct {
	Background color.Color
	Foreground color.Color // text, axes
	Grid       color.Color
	Front      color.Color // the Pareto front
	Limit      color.Color // a run's deadline and budget, and the region of runs that meet them; Foreground when nil
}

// LightStyle is black on white.
var LightStyle = Style{
	Background: color.White,
	Foreground: color.Black,
	Grid:       color.Gray{Y: 225},
	Front:      color.RGBA{R: 90, G: 90, B: 90, A: 255},
	Limit:      color.RGBA{R: 24, G: 128, B: 56, A: 255},
}

// DarkStyle is light grey on the dark desktop background.
var DarkStyle = Style{
	Background: color.RGBA{R: 0x17, G: 0x17, B: 0x18, A: 255},
	Foreground: color.Gray{Y: 220},
	Grid:       color.Gray{Y: 60},
	Front:      color.Gray{Y: 190},
	Limit:      color.RGBA{R: 96, G: 200, B: 110, A: 255},
}

// palette is a set of twelve well separated colours (Tableau 10 plus two), used in
// turn for the series.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 255}, {0xff, 0x7f, 0x0e, 255}, {0x2c, 0xa0, 0x2c, 255},
	{0xd6, 0x27, 0x28, 255}, {0x94, 0x67, 0xbd, 255}, {0x8c, 0x56, 0x4b, 255},
	{0xe3, 0x77, 0xc2, 255}, {0x7f, 0x7f, 0x7f, 255}, {0xbc, 0xbd, 0x22, 255},
	{0x17, 0xbe, 0xcf, 255}, {0x00, 0x3f, 0x8c, 255}, {0xa0, 0x6a, 0x00, 255},
}

// SeriesColor is the colour of the i-th curve (its index in the curves passed to the
// chart), the same in both charts and in a GUI legend.
func SeriesColor(i int) color.RGBA {
	if i < 0 {
		i = -i
	}
	return palette[i%len(palette)]
}

// shapes tell CNNs apart in the scatter, where colour tells the series.
var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{},
}

func faded(c color.RGBA, bg color.Color) color.RGBA {
	r, g, b, _ := bg.RGBA()
	mix := func(a uint8, b uint32) uint8 { return uint8((int(a)*30 + int(b>>8)*70) / 100) }
	return color.RGBA{mix(c.R, r), mix(c.G, g), mix(c.B, b), 255}
}

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

const (
	lineWidth      = vg.Length(1.5)
	highlightWidth = vg.Length(3)
)
