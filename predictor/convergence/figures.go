package convergence

import (
	"fmt"
	"strconv"

	"cnntime/predictor/published"
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
	var out []Figure
	err := published.Read("convergence figures", data, FigureColumns, func(f *published.Row) error {
		fig := Figure{Source: f.Text("source"), Where: f.Text("where"), Dataset: f.Text("dataset"), Model: f.Text("model"),
			Optimizer: f.Text("optimizer"), Target: f.Text("target"), Set: f.Text("set"), Epochs: f.Num("epochs", true)}
		b, err := strconv.Atoi(f.Text("batch"))
		if err != nil || b < 1 {
			return f.CellErrorf("batch", "%q is not a batch size of at least 1", f.Text("batch"))
		}
		if f.Err() != nil {
			return f.Err()
		}
		if fig.Source == "" || fig.Dataset == "" {
			return f.Errorf("a figure needs its source and dataset")
		}
		fig.Batch = b
		out = append(out, fig)
		return nil
	})
	if err != nil {
		return nil, err
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
