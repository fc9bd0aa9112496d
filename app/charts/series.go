package charts

import (
	"hash/fnv"
	"image"
	"image/color"
	stddraw "image/draw"
	"math"
	"sort"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"cnntime/predictor"
)

// SeriesStyle is how one CNN × machine series is drawn: the machine's colour, and the
// CNN's dash pattern (curves) and marker (scatter, and the best batch on a curve).
type SeriesStyle struct {
	Color  color.RGBA
	Dashes []vg.Length // nil: a solid line
	Shape  draw.GlyphDrawer
	// ColorSlot and ShapeSlot are the machine's and the CNN's places in the palette
	// and in the list of dashes and markers.
	ColorSlot, ShapeSlot int
}

// dashes tell CNNs apart on the curves chart, where colour tells the machines.
var dashes = [][]vg.Length{
	nil, {6, 3}, {1.5, 2.5}, {8, 3, 1.5, 3}, {12, 4}, {3, 3}, {8, 2, 1.5, 2, 1.5, 2}, {2, 5},
}

// Styles gives each machine a colour and each CNN a dash and a marker, and keeps them
// while the machine or the CNN stays shown: adding or removing a series changes the
// look of no other. A machine or CNN that comes back gets its earlier colour or
// marker again when no other shown one took it meanwhile. The zero value is not
// ready: use NewStyles. Not safe for concurrent use; Clone gives a copy to share.
type Styles struct {
	machines slots
	models   slots
}

// slots hands out small integers to keys and remembers them.
// of is a key's slot; size is how many distinct looks there are (colours for
// machines, dash and marker pairs for CNNs), past which they repeat.
type slots struct {
	of   map[string]int
	size int
	// hashed makes a new key's first choice of slot a hash of the key itself, so
	// that a key gets the same slot whatever the order keys come in (a machine keeps
	// its colour across launches); otherwise it is the lowest free slot.
	hashed bool
	// alike reports whether two slots look alike (two blues): a new key avoids a slot
	// like a shown key's while another is free. nil: none do.
	alike func(a, b int) bool
}

func newSlots(size int) slots { return slots{of: map[string]int{}, size: size} }

// alikeColours reports whether palette colours a and b are hard to tell apart on a
// chart: closer than 85 in RGB (blue and navy, purple and pink, brown and grey).
func alikeColours(a, b int) bool {
	ca, cb := palette[a%len(palette)], palette[b%len(palette)]
	dr, dg, db := float64(ca.R)-float64(cb.R), float64(ca.G)-float64(cb.G), float64(ca.B)-float64(cb.B)
	return dr*dr+dg*dg+db*db < 85*85
}

// preferred is the slot a new key tries first: the key's FNV-1a hash modulo the size
// when hashed, else 0.
func (sl slots) preferred(k string) int {
	if !sl.hashed || sl.size <= 0 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(k))
	return int(h.Sum32() % uint32(sl.size))
}

// NewStyles is an empty assignment.
func NewStyles() *Styles {
	machines := newSlots(len(palette))
	machines.hashed = true // a machine's colour is its own, whatever else is shown or in what order
	machines.alike = alikeColours
	return &Styles{machines: machines, models: newSlots(len(shapes))}
}

// StylesFor is the assignment a new window would make for curves: machines and CNNs
// in the order they first appear.
func StylesFor(curves []predictor.Curve) *Styles {
	s := NewStyles()
	s.Assign(curves)
	return s
}

// Assign gives every machine and CNN of curves its slot: one that has a slot keeps it
// unless another shown key holds it; a new one gets the lowest slot that no shown
// key holds, preferring one no earlier key had.
func (s *Styles) Assign(curves []predictor.Curve) {
	var machines, models []string
	for _, c := range curves {
		machines = append(machines, c.Machine)
		models = append(models, c.Model)
	}
	s.machines.assign(machines)
	s.models.assign(models)
}

func (sl slots) assign(keys []string) {
	shown := map[string]bool{}
	var order []string
	for _, k := range keys {
		if !shown[k] {
			shown[k] = true
			order = append(order, k)
		}
	}
	held := map[int]string{} // slot → shown key
	var fresh []string
	for _, k := range order {
		if slot, ok := sl.of[k]; ok {
			if _, taken := held[slot]; !taken {
				held[slot] = k
				continue
			}
		}
		fresh = append(fresh, k)
	}
	remembered := map[int]bool{}
	for k, slot := range sl.of {
		if !shown[k] {
			remembered[slot] = true
		}
	}
	free := func(i int) bool { _, taken := held[i]; return !taken }
	if sl.hashed {
		sort.Strings(fresh) // the same keys get the same slots in whatever order they came
	}
	for _, k := range fresh {
		slot := -1
		first := sl.preferred(k)
		distinct := func(i int) bool { // its colour unlike every shown one's
			for h := range held {
				if sl.alike != nil && sl.alike(i, h) {
					return false
				}
			}
			return true
		}
		for j := 0; j < sl.size && slot < 0 && sl.alike != nil; j++ { // a slot no one had, unlike the shown ones, from the key's own
			if i := (first + j) % sl.size; free(i) && !remembered[i] && distinct(i) {
				slot = i
			}
		}
		for j := 0; j < sl.size && slot < 0; j++ { // a slot no one had, from the key's own
			if i := (first + j) % sl.size; free(i) && !remembered[i] {
				slot = i
			}
		}
		for i := 0; slot < 0; i++ { // else one an absent key had, else past the palette
			if free(i) {
				slot = i
			}
		}
		sl.of[k] = slot
		held[slot] = k
	}
}

// Of is the style of a curve's series; a machine or CNN not assigned yet gets slot 0.
func (s *Styles) Of(c predictor.Curve) SeriesStyle {
	cs, ms := s.machines.of[c.Machine], s.models.of[c.Model]
	return SeriesStyle{
		Color: palette[cs%len(palette)], Dashes: dashes[ms%len(dashes)], Shape: shapes[ms%len(shapes)],
		ColorSlot: cs, ShapeSlot: ms,
	}
}

// Clone is a copy that later Assign calls on s do not change.
func (s *Styles) Clone() *Styles {
	c := NewStyles()
	for k, v := range s.machines.of {
		c.machines.of[k] = v
	}
	for k, v := range s.models.of {
		c.models.of[k] = v
	}
	return c
}

// stylesOf is opt's assignment, or a new one for curves.
func stylesOf(opt Options, curves []predictor.Curve) *Styles {
	if opt.Styles != nil {
		return opt.Styles
	}
	return StylesFor(curves)
}

// Overlaps groups the series that a metric draws on top of each other: curves (by
// index) with the same batch sizes whose values differ by less than 0.5% at every
// one, e.g. the same CNN on three machines with the same GPU. Only groups of two or
// more are returned, each in index order; hidden series (opt.Hidden) are left out.
func Overlaps(curves []predictor.Curve, metric Metric, hidden map[string]bool) [][]int {
	if metric == "" {
		metric = MetricTotal
	}
	type sig struct {
		batches []int
		values  []float64
	}
	sigs := make([]*sig, len(curves))
	for i, c := range curves {
		if hidden[SeriesKey(c)] {
			continue
		}
		s := &sig{}
		for _, p := range c.Points {
			if v, ok := metric.Value(p); ok && p.Batch > 0 {
				s.batches = append(s.batches, p.Batch)
				s.values = append(s.values, v)
			}
		}
		if len(s.values) > 0 {
			sigs[i] = s
		}
	}
	same := func(a, b *sig) bool {
		if len(a.batches) != len(b.batches) {
			return false
		}
		for k := range a.batches {
			if a.batches[k] != b.batches[k] {
				return false
			}
			if d := math.Abs(a.values[k] - b.values[k]); d > 0.005*math.Max(math.Abs(a.values[k]), math.Abs(b.values[k])) {
				return false
			}
		}
		return true
	}
	grouped := make([]bool, len(curves))
	var out [][]int
	for i := range curves {
		if sigs[i] == nil || grouped[i] {
			continue
		}
		g := []int{i}
		for j := i + 1; j < len(curves); j++ {
			if sigs[j] != nil && !grouped[j] && same(sigs[i], sigs[j]) {
				g = append(g, j)
				grouped[j] = true
			}
		}
		if len(g) > 1 {
			out = append(out, g)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a][0] < out[b][0] })
	return out
}

// SeriesIcon draws a series' look as a legend shows it, w×h pixels at 96 dpi on bg:
// a short line in its colour and dash with its marker in the middle.
func SeriesIcon(st SeriesStyle, w, h int, bg color.Color) *image.RGBA {
	wpt, hpt := vg.Length(w)*vg.Inch/vgimg.DefaultDPI, vg.Length(h)*vg.Inch/vgimg.DefaultDPI
	cv := vgimg.NewWith(vgimg.UseWH(wpt, hpt), vgimg.UseDPI(vgimg.DefaultDPI), vgimg.UseBackgroundColor(bg))
	dc := draw.New(cv)
	lineThumb{color: st.Color, width: lineWidth, dashes: st.Dashes, shape: st.Shape}.Thumbnail(&dc)
	if img, ok := cv.Image().(*image.RGBA); ok {
		return img
	}
	b := cv.Image().Bounds()
	img := image.NewRGBA(b)
	stddraw.Draw(img, b, cv.Image(), b.Min, stddraw.Src)
	return img
}
