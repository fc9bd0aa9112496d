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

// predictCSVColumns is the header of predict --csv.
var predictCSVColumns = []string{"model", "machine", "gpu", "gpu_count", "batch", "precision", "iter_ms", "images_per_s", "epoch_s",
	"total_s", "cost_usd", "energy_kwh", "memory_gb", "fits", "source", "error_pct",
	"input", "loader", "workers", "loader_images_per_s", "bound", "memory_format"}

// predictCSV writes predict's rows as CSV: text cells that a spreadsheet would read as
// a formula (a custom model named =cmd) are neutralised (csvsafe.Text), numbers are
// written as numbers, unknown ones as empty cells.
type predictCSV struct{}

func (predictCSV) header() []byte {
	var b []byte
	for i, c := range predictCSVColumns {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVText(b, c)
	}
	return append(b, '\n')
}

func (predictCSV) footer(bool) []byte { return nil }

func (predictCSV) first(text []byte) []byte { return text }

func (predictCSV) curve(b []byte, c *predictor.Curve) []byte {
	// The cells that are the same on every row of the curve, written once.
	var head, mid, tail []byte
	for _, s := range []string{c.Model, c.Machine, c.GPU} {
		head = appendCSVText(head, csvsafe.Text(s))
		head = append(head, ',')
	}
	head = strconv.AppendInt(head, int64(c.GPUCount), 10)
	head = append(head, ',')
	mid = append(mid, ',')
	mid = appendCSVText(mid, csvsafe.Text(string(c.Precision)))
	tail = append(tail, ',')
	tail = strconv.AppendInt(tail, int64(c.Input), 10)
	tail = append(tail, ',')
	tail = appendCSVText(tail, csvsafe.Text(string(c.Loader)))
	tail = append(tail, ',')
	tail = strconv.AppendInt(tail, int64(c.Workers), 10)
	tail = append(tail, ',')
	if c.LoaderImagesPerS > 0 {
		tail = appendNum(tail, round(c.LoaderImagesPerS, 1))
	}
	tail = append(tail, ',')
	format := appendCSVText(nil, csvsafe.Text(string(c.Format)))
	for i := range c.Points {
		p := &c.Points[i]
		v := valuesOf(c, p)
		b = append(b, head...)
		b = strconv.AppendInt(b, int64(p.Batch), 10)
		b = append(b, mid...)
		b = append(b, ',')
		if p.Fits {
			b = appendNum(b, v.iterMS)
			b = append(b, ',')
			b = appendNum(b, v.imagesPerS)
			b = append(b, ',')
			b = appendNum(b, v.epochS)
			b = append(b, ',')
			b = appendNum(b, v.totalS)
			b = append(b, ',')
			if v.hasCost {
				b = appendNum(b, v.costUSD)
			}
			b = append(b, ',')
			if v.hasEnergy {
				b = appendNum(b, v.energyKWh)
			}
		} else {
			b = append(b, ",,,,,"...)
		}
		b = append(b, ',')
		b = appendNum(b, v.memoryGB)
		b = append(b, ',')
		b = strconv.AppendBool(b, p.Fits)
		b = append(b, ',')
		b = appendCSVText(b, csvsafe.Text(string(p.Source)))
		b = append(b, ',')
		if p.Fits {
			b = appendNum(b, v.errorPct)
		}
		b = append(b, tail...)
		b = appendCSVText(b, csvsafe.Text(p.Bound))
		b = append(b, ',')
		b = append(b, format...)
		b = append(b, '\n')
	}
	return b
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
	t := app.NewTable(env.Stdout, predictTableHeader...)
	var notes nodeNotes
	pending := 0
	err := app.StreamCurves(env.Ctx, eng, q, func(c *predictor.Curve) ([]PredictRow, error) {
		rows := make([]PredictRow, len(c.Points))
		for i, p := range c.Points {
			rows[i] = rowOf(c, p)
		}
		return rows, nil
	}, func(rows []PredictRow) error {
		for _, r := range rows {
			predictTableRow(t, r)
		}
		if len(rows) > 0 {
			notes.add(rows[0].Machine, rows[0].Nodes, rows[0].Network, "")
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
	notes.write(env)
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
