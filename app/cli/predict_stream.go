package cli

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"

	"cnntime/app"
	"cnntime/db/csvsafe"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// Predictions of many models × machines × batch sizes (the zoo on the catalog at
// 1–65,536 is 300 million rows) are written as they are predicted: each curve is
// turned into its output text on the goroutine that predicted it and written in order,
// then dropped (app.StreamCurves), so memory stays bounded whatever the output's size.

// curveText turns curves into output text; curve may run on several goroutines at once.
type curveText interface {
	header() []byte
	// curve appends c's text to buf as it follows other text; first changes the text
	// of the first curve written, which follows the header.
	curve(buf []byte, c *predictor.Curve) ([]byte, error)
	first(text []byte) []byte
	// footer ends the output; empty says that no curve wrote anything.
	footer(empty bool) []byte
}

// streamPredict predicts q and writes every point of every curve as out formats it.
func streamPredict(env *Env, eng *app.Engine, q app.Query, out curveText) error {
	if _, err := env.Stdout.Write(out.header()); err != nil {
		return writeErr("output", err)
	}
	empty := true
	progress := newCurveProgress(env, q)
	defer progress.finish()
	var unavailable struct { // said on stderr after the rows, in the query's order
		sync.Mutex
		lines map[int]string
	}
	unavailable.lines = map[int]string{}
	order := map[[2]string]int{}
	for i, m := range q.Models {
		for j, t := range q.Targets {
			order[[2]string{m, t.Machine.ID}] = i*len(q.Targets) + j
		}
	}
	defer func() {
		for i := range len(q.Models) * len(q.Targets) {
			if line, ok := unavailable.lines[i]; ok {
				fmt.Fprintln(env.Stderr, line)
			}
		}
	}()
	q.TransientPoints = true // each curve is text before the next is predicted
	q.PointsOnly = true      // the rows say nothing of the best batch or the sweet spots
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) (*[]byte, error) {
		if c.Unavailable != "" {
			unavailable.Lock()
			unavailable.lines[order[[2]string{c.Model, c.Machine}]] = warningLine(c.Model, c.Machine, app.UnavailableWarning(c))
			unavailable.Unlock()
		}
		buf := textBuffers.Get().(*[]byte)
		text, err := out.curve((*buf)[:0], c)
		*buf = text
		return buf, err
	}, func(buf *[]byte) error {
		defer textBuffers.Put(buf)
		progress.curve()
		text := *buf
		if len(text) == 0 {
			return nil
		}
		if empty {
			text, empty = out.first(text), false
		}
		_, err := env.Stdout.Write(text)
		return writeErr("output", err)
	})
	if err != nil {
		return err
	}
	_, err = env.Stdout.Write(out.footer(empty))
	return writeErr("output", err)
}

// textBuffers are reused buffers of curves' output text.
var textBuffers = sync.Pool{New: func() any { return new([]byte) }}

// writeErr wraps an error of writing what.
func writeErr(what string, err error) error {
	if err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

// predictCSVColumns are the columns of predict --csv: each appends its cell of a row,
// rounded as rowOf rounds it (the JSON's values; appendRound rounds and writes in one
// step). Text cells that a spreadsheet would read as a formula (a custom model named
// =cmd) are neutralised (csvsafe.Text), numbers are written as numbers, unknown ones
// as empty cells. A cell the same on every row of a curve is marked perCurve and
// written once per curve. A new column is one entry here.
var predictCSVColumns = []struct {
	name     string
	perCurve bool
	cell     func(b []byte, r *csvRow) []byte
}{
	{"model", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.Model)) }},
	{"machine", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.Machine)) }},
	{"gpu", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.GPU)) }},
	{"gpu_count", true, func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.c.GPUCount), 10) }},
	{"batch", false, func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.p.Batch), 10) }},
	{"precision", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(string(r.c.Precision))) }},
	{"iter_ms", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.IterMS, 3, r.p.Fits) }},
	{"images_per_s", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.ImagesPerS, 1, r.p.Fits) }},
	{"epoch_s", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.EpochS, 1, r.p.Fits) }},
	{"total_s", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.TotalS, 1, r.p.Fits) }},
	{"cost_usd", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.CostUSD, 4, r.p.Fits && r.c.CostKnown) }},
	{"energy_kwh", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.EnergyKWh, 4, r.p.Fits && r.c.EnergyKnown) }},
	{"memory_gb", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.MemoryGB, 3, true) }},
	{"fits", false, func(b []byte, r *csvRow) []byte { return strconv.AppendBool(b, r.p.Fits) }},
	{"source", false, func(b []byte, r *csvRow) []byte { return r.text(b, string(r.p.Source)) }},
	{"error_pct", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.ErrorPct, 1, r.p.Fits) }},
	{"input", true, func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.c.Input), 10) }},
	{"loader", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(string(r.c.Loader))) }},
	{"workers", true, func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.c.Workers), 10) }},
	{"loader_images_per_s", true, func(b []byte, r *csvRow) []byte {
		return appendRoundIf(b, r.c.LoaderImagesPerS, 1, r.c.LoaderImagesPerS > 0)
	}},
	{"bound", false, func(b []byte, r *csvRow) []byte { return r.text(b, r.p.Bound) }},
	{"memory_format", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(string(r.c.Format))) }},
	{"price_usd_per_hour", true, func(b []byte, r *csvRow) []byte {
		return appendRoundIf(b, r.c.PriceUSDPerHour, 4, r.c.CostKnown)
	}},
	{"price_kind", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(string(r.c.Price.Kind))) }},
	{"price_region", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.Price.Region)) }},
	{"price_date", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.Price.Date)) }},
	{"price_age_days", true, func(b []byte, r *csvRow) []byte {
		if r.c.Price.AgeDays == nil {
			return b
		}
		return strconv.AppendInt(b, int64(*r.c.Price.AgeDays), 10)
	}},
	{"epochs", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.Epochs, 2, r.p.Fits) }},
	{"epochs_source", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.EpochsSource)) }},
	{"target", true, func(b []byte, r *csvRow) []byte {
		if r.c.Recipe == nil {
			return b
		}
		return appendCSVText(b, csvsafe.Cell(r.c.Recipe.TargetName()))
	}},
	{"epochs_error_pct", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.EpochsErrorPct, 1, r.toTarget()) }},
	{"run_error_pct", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.RunErrorPct(), 1, r.toTarget()) }},
	{"regime", false, func(b []byte, r *csvRow) []byte { return r.text(b, r.regime()) }},
	{"script", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(string(r.c.Script))) }},
	{"script_ms", false, func(b []byte, r *csvRow) []byte { return r.round(b, r.p.ScriptMS, 3, r.p.Fits) }},
	{"framework", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(string(r.c.Framework))) }},
	{"software", true, func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Cell(r.c.Software.Name)) }},
	{"cpu", true, func(b []byte, r *csvRow) []byte {
		if r.c.Host == nil {
			return b
		}
		return appendCSVText(b, csvsafe.Cell(r.c.Host.CPU.Model))
	}},
	{"cpu_assumed", true, func(b []byte, r *csvRow) []byte {
		if r.c.Host == nil {
			return b
		}
		return strconv.AppendBool(b, r.c.Host.CPUAssumed)
	}},
	{"host", true, func(b []byte, r *csvRow) []byte {
		if r.c.Host == nil {
			return b
		}
		return appendCSVText(b, csvsafe.Cell(r.c.Host.Text()))
	}},
	{"host_error_pct", false, func(b []byte, r *csvRow) []byte {
		return appendRoundedIf(b, r.p.HostErrorPct, 1, r.p.Fits && r.p.HostErrorPct > 0)
	}},
}

// csvRow is what a predict --csv row is made of: its curve and its point; texts
// remembers the cells of the few texts the rows repeat (sources, bounds).
type csvRow struct {
	c     *predictor.Curve
	p     *predictor.Point
	texts map[string][]byte
	col   int // the column whose cell is being written
	last  []lastText
	// rounds are the rounded numbers' cells of the row before (csvRow.round): a
	// column whose value is the one it had there (a curve's epochs and errors; the
	// step time and memory of the global batches that make one per-GPU batch) copies
	// that cell's text rather than writing it again.
	rounds []lastRound
}

// lastRound is a rounded number's cell in the row before: the value's bits, and where
// its text lies in the curve's text (end 0: no such cell).
type lastRound struct {
	bits    uint64
	at, end int
}

// round appends v rounded to digits (appendRoundIf: nothing where not known) as the
// row's cell of its column, copying the row before's cell where v is the same.
func (r *csvRow) round(b []byte, v float64, digits int, known bool) []byte {
	if !known {
		return b
	}
	c, bits := &r.rounds[r.col], math.Float64bits(v)
	if c.end > 0 && c.bits == bits {
		return appendAgain(b, c.at, c.end)
	}
	at := len(b)
	b = appendRound(b, v, digits)
	*c = lastRound{bits: bits, at: at, end: len(b)}
	return b
}

// appendAgain appends b[at:end], a cell written before, again: a cell of up to eight
// bytes followed by at least as many others in b (a row's cells are) is copied as one
// eight-byte word where b has room, not by a call of memmove.
func appendAgain(b []byte, at, end int) []byte {
	n, to := end-at, len(b)
	if n <= 8 && at+8 <= len(b) && cap(b)-len(b) >= 8 {
		b = b[:to+8]
		binary.LittleEndian.PutUint64(b[to:], binary.LittleEndian.Uint64(b[at:]))
		return b[:to+n]
	}
	return append(b, b[at:end]...)
}

// toTarget says that the row's run trains to a target accuracy and its batch fits:
// its epochs then have an error and a regime (valuesOf's toTarget).
func (r *csvRow) toTarget() bool { return r.p.Fits && r.c.Recipe != nil }

// regime is the row's optimizer regime where it trains to a target, else "".
func (r *csvRow) regime() string {
	if !r.toTarget() {
		return ""
	}
	return r.p.Regime
}

// text appends s as a neutralised CSV text cell, worked out once per distinct s (and
// looked up only when s is not the text the row before had here: a curve's rows
// mostly repeat their source and bound).
func (r *csvRow) text(b []byte, s string) []byte {
	if c := &r.last[r.col]; c.set && c.text == s {
		return append(b, c.cell...)
	}
	cell, ok := r.texts[s]
	if !ok {
		if r.texts == nil {
			r.texts = map[string][]byte{}
		}
		cell = appendCSVText(nil, csvsafe.Cell(s))
		r.texts[s] = cell
	}
	r.last[r.col] = lastText{s, cell, true}
	return append(b, cell...)
}

// lastText is the text a column's cell held in the row before, and the cell.
type lastText struct {
	text string
	cell []byte
	set  bool
}

// predictCSV writes predict's rows as CSV (predictCSVColumns).
type predictCSV struct{}

func (predictCSV) header() []byte {
	var b []byte
	for i, col := range predictCSVColumns {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVText(b, col.name)
	}
	return append(b, '\n')
}

func (predictCSV) footer(bool) []byte { return nil }

func (predictCSV) first(text []byte) []byte { return text }

// csvPiece is a stretch of a row: the text before a per-row cell that is the same on
// every row of the curve (commas and per-curve cells, written once), then that cell
// (nil at the row's end).
type csvPiece struct {
	fixed []byte
	// word holds fixed where it is at most eight bytes (n of them; else n is 0), to
	// be written as one word (appendFixed).
	word uint64
	n    int
	cell func(b []byte, r *csvRow) []byte
	col  int // the cell's column
}

// appendFixed appends the piece's fixed text: a short one (mostly a comma, or the
// commas of empty per-curve cells) as one eight-byte word, the rest by copy.
func (piece *csvPiece) appendFixed(b []byte) []byte {
	if to := len(b); piece.n > 0 && cap(b)-to >= 8 {
		b = b[:to+8]
		binary.LittleEndian.PutUint64(b[to:], piece.word)
		return b[:to+piece.n]
	}
	return append(b, piece.fixed...)
}

func (predictCSV) curve(b []byte, c *predictor.Curve) ([]byte, error) {
	if len(c.Points) == 0 {
		return b, nil
	}
	r := csvRow{c: c, p: &c.Points[0], last: make([]lastText, len(predictCSVColumns)), rounds: make([]lastRound, len(predictCSVColumns))}
	pieces := []csvPiece{{}}
	for j, col := range predictCSVColumns {
		f := &pieces[len(pieces)-1].fixed
		if j > 0 {
			*f = append(*f, ',')
		}
		if col.perCurve {
			r.col = j
			*f = col.cell(*f, &r)
			continue
		}
		pieces[len(pieces)-1].cell, pieces[len(pieces)-1].col = col.cell, j
		pieces = append(pieces, csvPiece{})
	}
	pieces[len(pieces)-1].fixed = append(pieces[len(pieces)-1].fixed, '\n')
	for j := range pieces {
		if f := pieces[j].fixed; len(f) <= 8 {
			var word [8]byte
			copy(word[:], f)
			pieces[j].word, pieces[j].n = binary.LittleEndian.Uint64(word[:]), len(f)
		}
	}
	clear(r.rounds)                                              // a per-curve cell's text lies in pieces, not in b
	cells, end := pieces[:len(pieces)-1], &pieces[len(pieces)-1] // each of cells ends in a cell, end in none
	// b grows once, to the curve's rows at the first row's length and an eighth more
	// (rows differ by a few digits), rather than by doubling as the rows come.
	at := len(b)
	for i := range c.Points {
		if i == 1 {
			b = slices.Grow(b, (len(b)-at)*len(c.Points)*9/8)
		}
		r.p = &c.Points[i]
		for j := range cells {
			piece := &cells[j]
			b = piece.appendFixed(b)
			r.col = piece.col
			b = piece.cell(b, &r)
		}
		b = end.appendFixed(b)
	}
	return b, nil
}

// appendRoundedIf appends x (appendRounded) where known, nothing where not.
func appendRoundedIf(b []byte, x float64, digits int, known bool) []byte {
	if !known {
		return b
	}
	return appendRounded(b, x, digits)
}

// appendRounded appends x, a value round(v, digits) made, as appendNum does (the
// shortest decimal that reads back as x, in %g's form), but without strconv's general
// search: for such a value that decimal is its digits after the point with the
// trailing zeros taken off. Values %g writes with an exponent (below 1e-4 or from 1e6
// on), and any x that is not exactly such a value, go through appendNum.
//
// k, the value's digits as a whole number, needs no exact rounding: x is k ÷ 10^digits
// only where k is right (two whole numbers below 10^12 are never the same float
// after the division), and every other x goes through appendNum.
func appendRounded(b []byte, x float64, digits int) []byte {
	ax := math.Abs(x)
	if !(ax >= 1e-4 && ax < 1e6) || digits < 0 || digits >= len(pow10) {
		return appendNum(b, x)
	}
	scale := pow10[digits]
	k := float64(int64(ax*scale + 0.5))
	if k/scale != ax {
		return appendNum(b, x)
	}
	return appendDecimal(b, x < 0, uint64(k), digits)
}

// appendRound appends round(v, digits) as appendRounded writes it, without the
// division round makes and the one appendRounded checks it by: the value is k ÷
// 10^digits for k = math.Round(|v| × 10^digits), so its text is k's digits with the
// point put in (appendDecimal) wherever %g writes it without an exponent, that is
// where 10^-4 ≤ k ÷ 10^digits < 10^6, which for whole k is minRound ≤ k <
// 10^(6+digits) exactly. Only other values are divided, for appendNum.
func appendRound(b []byte, v float64, digits int) []byte {
	if digits < 0 || digits >= len(pow10) {
		return appendRounded(b, round(v, digits), digits)
	}
	scale := pow10[digits]
	k := math.Round(math.Abs(v) * scale) // round's rounding: math.Round is symmetric about 0
	if !(k >= minRound[digits] && k < 1e6*scale) {
		return appendNum(b, math.Round(v*scale)/scale)
	}
	return appendDecimal(b, v < 0, uint64(k), digits)
}

// minRound[d] is the least whole k with k ÷ 10^d ≥ 10^-4 (as floats: 10^(d-4) ÷ 10^d
// is the float 1e-4 itself).
var minRound = [len(pow10)]float64{1, 1, 1, 1, 1, 10, 100}

// appendRoundIf appends v rounded (appendRound) where known, nothing where not.
func appendRoundIf(b []byte, v float64, digits int, known bool) []byte {
	if !known {
		return b
	}
	return appendRound(b, v, digits)
}

// appendDecimal appends k ÷ 10^digits (k below 10^13) in full, without an exponent,
// less its fraction's trailing zeros, with a minus before it when neg.
func appendDecimal(b []byte, neg bool, k uint64, digits int) []byte {
	if neg {
		b = append(b, '-')
	}
	// The fraction's trailing zeros off; then the digits written from the last straight
	// into b, grown to their length (the fraction's, the point, the whole part's: at
	// least one), two at a time where two are left.
	for digits > 0 && k%10 == 0 {
		k /= 10
		digits--
	}
	// k's digit count, from its bit length: ⌊bits × log10 2⌋ (1233/4096 a shade under
	// log10 2) is the count or one less, which one comparison settles.
	count := bits.Len64(k) * 1233 >> 12
	if k >= decimalPow10[count] {
		count++
	}
	n := max(count-digits, 1) // the whole part's digits, at least a 0
	if digits > 0 {
		n += 1 + digits
	}
	at := len(b)
	b = slices.Grow(b, n)[:at+n]
	out := b[at : at+n]
	i := n
	for ; digits >= 2; digits -= 2 {
		i -= 2
		d := k % 100 * 2
		k /= 100
		out[i], out[i+1] = digitPairs[d], digitPairs[d+1]
	}
	if digits == 1 {
		i--
		out[i] = '0' + byte(k%10)
		k /= 10
	}
	if i < n {
		i--
		out[i] = '.'
	}
	for i >= 2 {
		i -= 2
		d := k % 100 * 2
		k /= 100
		out[i], out[i+1] = digitPairs[d], digitPairs[d+1]
	}
	if i == 1 {
		out[0] = '0' + byte(k%10)
	}
	return b
}

// digitPairs are the two digits of 00 to 99, one after the other.
const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

// decimalPow10 are the powers of ten appendDecimal counts digits by, up to the first
// above any k it is given (below 10^13: at most 44 bits, a first guess of 13 digits).
var decimalPow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13}

// appendNum appends x as the shortest decimal that reads back as x (fmt's %g).
func appendNum(b []byte, x float64) []byte { return strconv.AppendFloat(b, x, 'g', -1, 64) }

// appendCSVText appends s as a CSV field, quoted as encoding/csv quotes it.
func appendCSVText(b []byte, s string) []byte { return app.AppendCSVField(b, s) }

// nodeNotes are the lines printed under a table for its multi-node machines: each
// machine's network, what the times assume, with its source (or that it is assumed).
type nodeNotes struct {
	lines []string
	seen  map[string]bool
}

// add notes the network of nodes × machine (nothing when net is nil), with note after it.
func (n *nodeNotes) add(machine string, nodes int, net *hw.Network, note string) {
	if net == nil {
		return
	}
	line := fmt.Sprintf("%d × %s over %s: %s", nodes, machine, net, net.Source)
	if note != "" {
		line += " (" + note + ")"
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	if !n.seen[line] {
		n.seen[line] = true
		n.lines = append(n.lines, line)
	}
}

func (n *nodeNotes) write(env *Env) {
	for _, l := range n.lines {
		fmt.Fprintln(env.Stdout, l)
	}
}
