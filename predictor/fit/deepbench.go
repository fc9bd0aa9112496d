package fit

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// Row is one DeepBench training-mode convolution on one GPU at one batch size.
type Row struct {
	Line      int    // line in the CSV file, for messages
	GPU       string // the GPU as DeepBench names it, e.g. "NVIDIA V100"
	Precision measure.Precision
	Config    cnn.Config
	Batch     int
	// MS is the time of each phase in measure.Phases order: forward, data gradient,
	// weight gradient; 0 where DeepBench gives none (first layers have no data gradient).
	MS [3]float64
}

// DeepBenchColumns are the columns a DeepBench results CSV must have (ParseDeepBench).
var DeepBenchColumns = []string{"gpu", "sheet", "mode", "W", "H", "C", "N", "K", "S_filter_w", "R_filter_h",
	"pad_w", "pad_h", "stride_w", "stride_h", "fwd_ms", "bwd_input_ms", "bwd_params_ms"}

// ParseDeepBench reads deepbench_conv.csv (see ../shared/data/README.md) and returns
// its training-mode rows. Inference rows are skipped; a malformed row is an error
// naming its line and field.
func ParseDeepBench(data []byte) ([]Row, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read DeepBench header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range DeepBenchColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("DeepBench file lacks column %q: is this deepbench_conv.csv?", c)
		}
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read DeepBench: %w", err)
		}
		if !strings.HasPrefix(rec[col["mode"]], "train") {
			continue
		}
		row, err := parseRow(rec, col, line)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("DeepBench file has no training-mode rows")
	}
	return rows, nil
}

func parseRow(rec []string, col map[string]int, line int) (Row, error) {
	row := Row{Line: line, GPU: strings.TrimSpace(rec[col["gpu"]])}
	sheet := strings.ToLower(rec[col["sheet"]])
	switch {
	case strings.Contains(sheet, "fp32"):
		row.Precision = measure.FP32
	case strings.Contains(sheet, "fp16"):
		row.Precision = measure.AMP
	default:
		return row, fmt.Errorf("DeepBench line %d: sheet %q is neither FP32 nor FP16", line, rec[col["sheet"]])
	}
	ints := map[string]int{}
	for _, name := range []string{"W", "H", "C", "N", "K", "S_filter_w", "R_filter_h", "pad_w", "pad_h", "stride_w", "stride_h"} {
		v, err := strconv.Atoi(strings.TrimSpace(rec[col[name]]))
		if err != nil || v < 0 {
			return row, fmt.Errorf("DeepBench line %d: %s = %q is not a whole number ≥ 0", line, name, rec[col[name]])
		}
		ints[name] = v
	}
	for _, name := range []string{"W", "H", "C", "N", "K", "S_filter_w", "R_filter_h", "stride_w", "stride_h"} {
		if ints[name] == 0 {
			return row, fmt.Errorf("DeepBench line %d: %s is 0: must be positive", line, name)
		}
	}
	ho := (ints["H"]+2*ints["pad_h"]-ints["R_filter_h"])/ints["stride_h"] + 1
	wo := (ints["W"]+2*ints["pad_w"]-ints["S_filter_w"])/ints["stride_w"] + 1
	if ho <= 0 || wo <= 0 {
		return row, fmt.Errorf("DeepBench line %d: the filter is larger than the padded input", line)
	}
	row.Batch = ints["N"]
	row.Config = cnn.Config{
		Op:        cnn.OpConv2d,
		In:        cnn.Shape{C: ints["C"], H: ints["H"], W: ints["W"]},
		Out:       cnn.Shape{C: ints["K"], H: ho, W: wo},
		NumInputs: 1,
		Kernel:    cnn.Pair{ints["R_filter_h"], ints["S_filter_w"]},
		Stride:    cnn.Pair{ints["stride_h"], ints["stride_w"]},
		Padding:   cnn.Pair{ints["pad_h"], ints["pad_w"]},
		Dilation:  cnn.Pair{1, 1},
		Groups:    1,
	}
	for i, name := range []string{"fwd_ms", "bwd_input_ms", "bwd_params_ms"} {
		text := strings.TrimSpace(rec[col[name]])
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || !(v > 0) {
			continue // "N/A*", empty: not measured
		}
		row.MS[i] = v
	}
	return row, nil
}

// DeepBenchGPUs maps DeepBench's GPU names to catalog GPU ids. DeepBench's P100 results
// do not say which board; the PCIe one is the catalog's. The Maxwell M40 and Titan X
// and the Pascal Titan X and Titan Xp are not in the catalog, and the public data
// gives no specifications for them, so their rows are left out of the fit.
var DeepBenchGPUs = map[string]string{
	"NVIDIA GTX 1080 Ti": "gtx-1080-ti",
	"NVIDIA Tesla P100":  "p100-pcie-16gb",
	"NVIDIA V100":        "v100-sxm2-16gb",
	"NVIDIA T4":          "t4",
}

// MatchGPUs returns the catalog GPUs of the DeepBench GPUs it knows, keyed by
// DeepBench's name, and an error naming any catalog id that is missing.
func MatchGPUs(catalog []hw.GPU) (map[string]hw.GPU, error) {
	byID := map[string]hw.GPU{}
	for _, g := range catalog {
		byID[g.ID] = g
	}
	out := map[string]hw.GPU{}
	for name, id := range DeepBenchGPUs {
		g, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("the catalog has no GPU %q (DeepBench's %q): is the catalog complete?", id, name)
		}
		out[name] = g
	}
	return out, nil
}
