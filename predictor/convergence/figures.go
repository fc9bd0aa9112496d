package convergence

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Figure is one published epochs-to-target figure (assets/validation/convergence.csv):
// a training recipe reached Target in Epochs at global batch Batch.
type Figure struct {
	Source    string  `json:"source"` // who published it; the hold-out is by whole source
	Where     string  `json:"where"`  // the file, table or figure it is read from
	Dataset   string  `json:"dataset"`
	Model     string  `json:"model"`
	Optimizer string  `json:"optimizer"`
	Target    string  `json:"target"`
	Batch     int     `json:"batch"`
	Epochs    float64 `json:"epochs"`
	Set       string  `json:"set"` // "tuning" or "held out"
}

// FigureColumns are the columns an epochs-to-target figures CSV must have (ParseFigures).
var FigureColumns = []string{"source", "where", "dataset", "model", "optimizer", "target", "batch", "epochs", "set"}

// ParseFigures reads the published figures; a malformed row is an error that names
// its line and column.
func ParseFigures(data []byte) ([]Figure, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("convergence figures: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range FigureColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("convergence figures: the header lacks column %q", c)
		}
	}
	var out []Figure
	for line := 2; ; line++ {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("convergence figures: %w", err)
		}
		get := func(c string) string { return strings.TrimSpace(f[col[c]]) }
		fig := Figure{Source: get("source"), Where: get("where"), Dataset: get("dataset"), Model: get("model"),
			Optimizer: get("optimizer"), Target: get("target"), Set: get("set")}
		b, err := strconv.Atoi(get("batch"))
		if err != nil || b < 1 {
			return nil, fmt.Errorf("convergence figures line %d, batch: %q is not a batch size of at least 1", line, get("batch"))
		}
		e, err := strconv.ParseFloat(get("epochs"), 64)
		if err != nil || !(e > 0) || math.IsInf(e, 0) {
			return nil, fmt.Errorf("convergence figures line %d, epochs: %q is not a positive number", line, get("epochs"))
		}
		fig.Batch, fig.Epochs = b, e
		switch {
		case fig.Source == "" || fig.Dataset == "":
			return nil, fmt.Errorf("convergence figures line %d: a figure needs its source and dataset", line)
		case fig.Set != "tuning" && fig.Set != "held out":
			return nil, fmt.Errorf("convergence figures line %d, set: %q is neither tuning nor held out", line, fig.Set)
		}
		out = append(out, fig)
	}
	// The hold-out is by whole source: a source's figures are all tuning or all held out.
	set := map[string]string{}
	for _, f := range out {
		if s, ok := set[f.Source]; ok && s != f.Set {
			return nil, fmt.Errorf("convergence figures: source %s has both tuning and held-out rows; hold out whole sources", f.Source)
		}
		set[f.Source] = f.Set
	}
	return out, nil
}

// Select returns the figures of dataset in set ("" for both), in file order.
func Select(figs []Figure, dataset, set string) []Figure {
	var out []Figure
	for _, f := range figs {
		if f.Dataset == dataset && (set == "" || f.Set == set) {
			out = append(out, f)
		}
	}
	return out
}
