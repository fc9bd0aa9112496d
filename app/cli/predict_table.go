package cli

import (
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"cnntime/app"
	"cnntime/app/numfmt"
	"cnntime/predictor"
)

// predict's table, streamed: each curve's rows are turned into their cells' text on the
// goroutine that predicted it (as the CSV's are), and the writer only aligns them, a
// block of about tableBlock rows at a time, into what app.Table (a tabwriter with two
// spaces between columns) prints for the same rows. The table of every zoo model on
// every catalog machine at 1–1024 took 124 s through app.Table, 23 times the CSV's time.

// tableBlock is how many rows are aligned together: a block ends after the curve that
// reaches it.
const tableBlock = 4096

// tableCurve is one curve's rows as table cells: their texts one after another, where
// each ends, and each one's width in runes; widest is each column's widest cell. first
// is the curve's first row, for the notes under the table.
type tableCurve struct {
	text   []byte
	ends   []int32
	widths []int32
	widest []int
	rows   int
	first  *PredictRow
	// warnings are the curve's own (app.RunWarnings), as the lines under the table say
	// them; recipe is its recipe's note (recipeNote), "" for fixed epochs.
	warnings []string
	recipe   string
}

// tableCells builds a tableCurve a cell at a time.
type tableCells struct {
	t     *tableCurve
	start int // where the current cell began in t.text
	col   int
}

// end ends the current cell: its text is what was appended since the last end.
func (b *tableCells) end() {
	t := b.t
	w := utf8.RuneCount(t.text[b.start:])
	t.ends = append(t.ends, int32(len(t.text)))
	t.widths = append(t.widths, int32(w))
	if w > t.widest[b.col] {
		t.widest[b.col] = w
	}
	b.start, b.col = len(t.text), b.col+1
}

// cell appends s as a whole cell.
func (b *tableCells) cell(s string) {
	b.t.text = append(b.t.text, s...)
	b.end()
}

// tableText is predict's table rows of c, as predictTableRow makes them: toTarget says
// which columns (predictTableHeader).
func tableText(c *predictor.Curve, toTarget bool) *tableCurve {
	cols := len(predictTableHeader(toTarget))
	t := &tableCurve{widest: make([]int, cols), rows: len(c.Points)}
	if len(c.Points) == 0 {
		return t
	}
	t.text = make([]byte, 0, len(c.Points)*160)
	t.ends = make([]int32, 0, len(c.Points)*cols)
	t.widths = make([]int32, 0, len(c.Points)*cols)
	first := rowOf(c, c.Points[0])
	t.first = &first
	// The cells the same on every row, made once: what app.Table prints of them.
	model, machine := app.Printable(first.Model), app.Printable(first.Machine)
	gpu := app.Printable(app.DeviceText(first.deviceID(), first.GPUCount))
	input := strconv.Itoa(first.Input)
	price := app.Printable(priceText(first))
	recipeID, target := app.Printable(first.EpochsSource), app.Printable(targetTop1Text(first.Target))
	texts := map[string]string{} // the per-row texts (bound, source, regime) made printable once
	printable := func(s string) string {
		p, ok := texts[s]
		if !ok {
			p = app.Printable(s)
			texts[s] = p
		}
		return p
	}
	inputBound := ""
	if first.LoaderImagesPerS != nil {
		inputBound = printable(boundText(PredictRow{Bound: "input", Loader: first.Loader, LoaderImagesPerS: first.LoaderImagesPerS, Host: first.Host}))
	}
	b := tableCells{t: t}
	for i := range c.Points {
		p := &c.Points[i]
		v := valuesOf(c, p)
		b.col = 0
		b.cell(model)
		b.cell(machine)
		b.cell(gpu)
		b.cell(input)
		t.text = numfmt.AppendCount(t.text, int64(p.Batch))
		b.end()
		mem := func() {
			t.text = strconv.AppendFloat(t.text, v.memoryGB, 'f', 1, 64)
			b.end()
		}
		if !p.Fits {
			if !toTarget {
				for _, s := range []string{"out of memory", "-", "-", "-", "-", "-"} {
					b.cell(s)
				}
				b.cell(price)
				b.cell("-")
				mem()
				b.cell("-")
				continue
			}
			for _, s := range []string{"out of memory", "-", "-", "-", "-"} {
				b.cell(s)
			}
			b.cell(recipeID)
			b.cell(target)
			b.cell("-")
			b.cell("-")
			b.cell(price)
			b.cell("-")
			mem()
			b.cell("-")
			b.cell("-")
			continue
		}
		t.text = appendIter(t.text, v.iterMS, v.errorPct)
		b.end()
		t.text = numfmt.AppendRate(t.text, v.imagesPerS)
		b.end()
		if p.Bound == "input" && inputBound != "" {
			b.cell(inputBound)
		} else {
			b.cell(printable(p.Bound))
		}
		t.text = numfmt.AppendSeconds(t.text, v.epochS)
		b.end()
		money := func(x float64, known bool, appendValue func([]byte, float64) []byte) {
			if known {
				t.text = appendValue(t.text, x)
			} else {
				t.text = append(t.text, "unknown"...)
			}
			b.end()
		}
		if toTarget {
			t.text = strconv.AppendFloat(t.text, v.epochs, 'f', 1, 64)
			b.end()
			b.cell(recipeID)
			b.cell(target)
			t.text = numfmt.AppendSeconds(t.text, v.totalS)
			t.text = append(t.text, " ±"...)
			t.text = strconv.AppendFloat(t.text, v.runErrorPct, 'f', 0, 64)
			t.text = append(t.text, '%')
			b.end()
		} else {
			t.text = numfmt.AppendSeconds(t.text, v.totalS)
			b.end()
		}
		money(v.costUSD, v.hasCost, numfmt.AppendUSD)
		b.cell(price)
		money(v.energyKWh, v.hasEnergy, numfmt.AppendKWh)
		mem()
		b.cell(printable(string(p.Source)))
		if toTarget {
			b.cell(printable(v.regime))
		}
	}
	return t
}

// tableWriter aligns tableCurves a block at a time, as app.Table would.
type tableWriter struct {
	header  []string // the header row, in the first block only
	block   []*tableCurve
	pending int
	buf     []byte
}

// add takes the next curve's rows; it reports whether a block is complete.
func (w *tableWriter) add(t *tableCurve) bool {
	if t.rows == 0 {
		return false
	}
	w.block = append(w.block, t)
	w.pending += t.rows
	return w.pending >= tableBlock
}

// flush returns the block's text, aligned, and starts a new block.
func (w *tableWriter) flush() []byte {
	if len(w.block) == 0 && w.header == nil {
		return nil
	}
	cols := len(w.header)
	if len(w.block) > 0 {
		cols = len(w.block[0].widest)
	}
	width := make([]int, cols)
	for j, h := range w.header {
		width[j] = utf8.RuneCountInString(h)
	}
	for _, t := range w.block {
		for j, x := range t.widest {
			width[j] = max(width[j], x)
		}
	}
	b := w.buf[:0]
	pad := func(n int) {
		for ; n > 0; n-- {
			b = append(b, ' ')
		}
	}
	for j, h := range w.header {
		b = append(b, h...)
		if j < cols-1 {
			pad(width[j] + 2 - utf8.RuneCountInString(h))
		}
	}
	if w.header != nil {
		b = append(b, '\n')
	}
	for _, t := range w.block {
		start, k := 0, 0
		for range t.rows {
			for j := 0; j < cols; j++ {
				b = append(b, t.text[start:t.ends[k]]...)
				if j < cols-1 {
					pad(width[j] + 2 - int(t.widths[k]))
				}
				start = int(t.ends[k])
				k++
			}
			b = append(b, '\n')
		}
	}
	w.buf, w.block, w.pending, w.header = b, w.block[:0], 0, nil
	return b
}

// streamPredictTable writes predict's table, a block of rows at a time (each block's
// columns aligned), then the networks the multi-node rows assume.
func streamPredictTable(env *Env, eng *app.Engine, q app.Query) error {
	toTarget := q.ToTarget()
	header := predictTableHeader(toTarget)
	for i, h := range header {
		header[i] = app.Printable(h)
	}
	w := &tableWriter{header: header}
	var notes nodeNotes
	var priced []PredictRow // one row per curve, for writePriceNotes
	write := func() error {
		_, err := env.Stdout.Write(w.flush())
		return writeErr("output", err)
	}
	var warnings, recipes []string // each once
	progress := newCurveProgress(env, q)
	defer progress.finish()
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) (*tableCurve, error) {
		t := tableText(c, toTarget)
		if n := app.AnchorNote(c); n != "" {
			t.warnings = append(t.warnings, measuredLine(c.Model, c.Machine, n))
		}
		for _, w := range app.RunWarnings(c) {
			t.warnings = append(t.warnings, warningLine(c.Model, c.Machine, w))
		}
		t.recipe = recipeNote(c)
		return t, nil
	}, func(t *tableCurve) error {
		progress.curve()
		if t.first != nil { // the notes are per curve: its first row says them
			notes.add(t.first.Machine, t.first.Nodes, t.first.Network, "")
			priced = append(priced, *t.first)
		}
		for _, w := range t.warnings {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
		if t.recipe != "" && !slices.Contains(recipes, t.recipe) {
			recipes = append(recipes, t.recipe)
		}
		if w.add(t) {
			return write()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := write(); err != nil {
		return err
	}
	writeTableNotes(env, priced, &notes, warnings, recipes)
	return nil
}

// writeTableNotes writes what predict says under its table: each machine's price and
// each GPU's sources (rows: one per curve), the networks of the multi-node rows, the
// runs' warnings (lines already made by warningLine) and, to a target, each recipe the
// epochs come from (recipeNote).
func writeTableNotes(env *Env, rows []PredictRow, notes *nodeNotes, warnings []string, recipes []string) {
	writePriceNotes(env, rows)
	notes.write(env)
	for _, w := range warnings {
		fmt.Fprintln(env.Stdout, w)
	}
	writeRecipeNotes(env, recipes)
}
