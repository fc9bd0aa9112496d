package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	curve(buf []byte, c *predictor.Curve) []byte
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
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) (*[]byte, error) {
		buf := textBuffers.Get().(*[]byte)
		*buf = out.curve((*buf)[:0], c)
		return buf, nil
	}, func(buf *[]byte) error {
		defer textBuffers.Put(buf)
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
// rounded as rowOf rounds it (the JSON's values). Text cells that a spreadsheet would
// read as a formula (a custom model named =cmd) are neutralised (csvsafe.Text), numbers
// are written as numbers, unknown ones as empty cells. A new column is one entry here.
var predictCSVColumns = []struct {
	name string
	cell func(b []byte, r *csvRow) []byte
}{
	{"model", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.c.Model)) }},
	{"machine", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.c.Machine)) }},
	{"gpu", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.c.GPU)) }},
	{"gpu_count", func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.c.GPUCount), 10) }},
	{"batch", func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.p.Batch), 10) }},
	{"precision", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.c.Precision))) }},
	{"iter_ms", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.iterMS, r.p.Fits) }},
	{"images_per_s", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.imagesPerS, r.p.Fits) }},
	{"epoch_s", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.epochS, r.p.Fits) }},
	{"total_s", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.totalS, r.p.Fits) }},
	{"cost_usd", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.costUSD, r.v.hasCost) }},
	{"energy_kwh", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.energyKWh, r.v.hasEnergy) }},
	{"memory_gb", func(b []byte, r *csvRow) []byte { return appendNum(b, r.v.memoryGB) }},
	{"fits", func(b []byte, r *csvRow) []byte { return strconv.AppendBool(b, r.p.Fits) }},
	{"source", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.p.Source))) }},
	{"error_pct", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.errorPct, r.p.Fits) }},
	{"input", func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.c.Input), 10) }},
	{"loader", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.c.Loader))) }},
	{"workers", func(b []byte, r *csvRow) []byte { return strconv.AppendInt(b, int64(r.c.Workers), 10) }},
	{"loader_images_per_s", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.loaderImagesPerS, r.v.hasLoader) }},
	{"bound", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.p.Bound)) }},
	{"memory_format", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.c.Format))) }},
	{"price_usd_per_hour", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.priceUSDPerHour, r.c.CostKnown) }},
	{"price_kind", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.c.Price.Kind))) }},
	{"price_region", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.c.Price.Region)) }},
	{"price_date", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.c.Price.Date)) }},
	{"price_age_days", func(b []byte, r *csvRow) []byte {
		if r.c.Price.AgeDays == nil {
			return b
		}
		return strconv.AppendInt(b, int64(*r.c.Price.AgeDays), 10)
	}},
	{"epochs", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.epochs, r.p.Fits) }},
	{"epochs_source", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.c.EpochsSource)) }},
	{"epochs_error_pct", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.epochsErrorPct, r.v.toTarget) }},
	{"run_error_pct", func(b []byte, r *csvRow) []byte { return appendNumIf(b, r.v.runErrorPct, r.v.toTarget) }},
	{"regime", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(r.v.regime)) }},
	{"script", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.c.Script))) }},
	{"script_ms", func(b []byte, r *csvRow) []byte { return appendNumIf(b, round(r.p.ScriptMS, 3), r.p.Fits) }},
	{"framework", func(b []byte, r *csvRow) []byte { return appendCSVText(b, csvsafe.Text(string(r.c.Framework))) }},
	{"cpu", func(b []byte, r *csvRow) []byte {
		if r.c.CPU == nil {
			return b
		}
		return appendCSVText(b, csvsafe.Text(r.c.CPU.Model))
	}},
	{"cpu_assumed", func(b []byte, r *csvRow) []byte {
		if r.c.CPU == nil {
			return b
		}
		return strconv.AppendBool(b, r.c.CPU.Assumed)
	}},
}

// csvRow is what a predict --csv row is made of: its curve, its point, and the point's
// values as rowOf rounds them.
type csvRow struct {
	c *predictor.Curve
	p *predictor.Point
	v pointValues
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

func (predictCSV) curve(b []byte, c *predictor.Curve) []byte {
	r := csvRow{c: c}
	for i := range c.Points {
		r.p = &c.Points[i]
		r.v = valuesOf(c, r.p)
		for j, col := range predictCSVColumns {
			if j > 0 {
				b = append(b, ',')
			}
			b = col.cell(b, &r)
		}
		b = append(b, '\n')
	}
	return b
}

// appendNumIf appends x (appendNum) where known, nothing where not.
func appendNumIf(b []byte, x float64, known bool) []byte {
	if !known {
		return b
	}
	return appendNum(b, x)
}

// appendNum appends x as the shortest decimal that reads back as x (fmt's %g).
func appendNum(b []byte, x float64) []byte { return strconv.AppendFloat(b, x, 'g', -1, 64) }

// appendCSVText appends s as a CSV field, quoted as encoding/csv quotes it.
func appendCSVText(b []byte, s string) []byte { return app.AppendCSVField(b, s) }

// jsonRows writes rows as one indented JSON array (WriteJSON's layout), a row at a time.
type jsonRows struct {
	rows func(c *predictor.Curve) []any
}

func (jsonRows) header() []byte { return []byte("[") }

func (j jsonRows) curve(b []byte, c *predictor.Curve) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("  ", "  ")
	for _, r := range j.rows(c) {
		b = append(b, ",\n  "...)
		buf.Reset()
		if err := enc.Encode(r); err != nil { // rows of plain fields always encode
			panic(err)
		}
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	return b
}

// first drops the comma before the array's first row.
func (jsonRows) first(text []byte) []byte { return text[1:] }

func (jsonRows) footer(empty bool) []byte {
	if empty {
		return []byte("]\n")
	}
	return []byte("\n]\n")
}

// predictJSON is predict --json's rows: every point of a curve.
func predictJSON(c *predictor.Curve) []any {
	out := make([]any, len(c.Points))
	for i, p := range c.Points {
		out[i] = rowOf(c, p)
	}
	return out
}

// streamPredictTable writes predict's table, a block of rows at a time (each block's
// columns aligned), then the networks the multi-node rows assume.
func streamPredictTable(env *Env, eng *app.Engine, q app.Query) error {
	const block = 4096 // rows aligned together
	toTarget := q.Run.ToTarget != nil
	t := app.NewTable(env.Stdout, predictTableHeader(toTarget)...)
	var notes nodeNotes
	var priced []PredictRow // one row per curve, for writePriceNotes
	pending := 0
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) ([]PredictRow, error) {
		rows := make([]PredictRow, len(c.Points))
		for i, p := range c.Points {
			rows[i] = rowOf(c, p)
		}
		return rows, nil
	}, func(rows []PredictRow) error {
		for _, r := range rows {
			predictTableRow(t, r, toTarget)
		}
		if len(rows) > 0 { // the notes are per curve: its first row says them
			notes.add(rows[0].Machine, rows[0].Nodes, rows[0].Network, "")
			priced = append(priced, rows[0])
		}
		if pending += len(rows); pending >= block {
			pending = 0
			return t.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := t.Flush(); err != nil {
		return err
	}
	writePriceNotes(env, priced)
	notes.write(env)
	if note := epochsNote(q.Run.ToTarget); note != "" {
		fmt.Fprintln(env.Stdout, note)
	}
	return nil
}

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
