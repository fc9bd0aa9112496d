package fit

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/dataset"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

// Anchor is one published whole-network training throughput on one GPU model
// (assets/validation/modern_anchors.csv): a zoo CNN, a catalog GPU, a training
// precision and a per-GPU batch size, with the images per second measured.
type Anchor struct {
	Line         int // in the CSV file, for messages
	Source       string
	Where        string // URL or repository:path of the figure
	GPU          string // catalog GPU id
	Model        string // zoo name
	Framework    string
	Precision    measure.Precision // fp32 (TF32 convolutions on Ampere and later), fp32-strict, tf32, amp or bf16
	Batch        int               // per GPU
	GPUs         int
	ImagesPerS   float64 // measured, all GPUs together
	ChannelsLast bool
	// Input is the input size the run trained at (the optional input column); 0: the
	// model's default (torchvision's crop size).
	Input int
	// Loader, Workers and VCPUs describe the run's input pipeline (optional columns
	// loader, workers per GPU, vcpus of the machine): empty, synthetic, for data
	// already on the GPU; 0 workers or vCPUs: unknown.
	Loader  pipeline.Loader
	Workers int
	VCPUs   int
	Held    bool // in the held-out part: never used to fit
	Notes   string
	// Stack is the software stack the run used (the optional stack column, a
	// predictor.Framework); "" takes it from the Framework description
	// (predictor.FrameworkOf).
	Stack predictor.Framework
	// Software is the release of the kernel libraries the run used (the software
	// column: pytorch-X.Y, ngc-YY.MM or YYYY-MM, as its source states it).
	Software predictor.Software
}

// StackOf is the predictor's stack for the run: Stack, else what its framework
// description names.
func (a Anchor) StackOf() predictor.Framework {
	if a.Stack != "" {
		return a.Stack
	}
	return predictor.FrameworkOf(a.Framework)
}

// RealData reports whether the run read its images through a loader (not synthetic).
func (a Anchor) RealData() bool { return a.Loader != "" && a.Loader != pipeline.Synthetic }

// MemoryFormat is the layout the run's activations had.
func (a Anchor) MemoryFormat() predictor.MemoryFormat {
	if a.ChannelsLast {
		return predictor.NHWC
	}
	return predictor.NCHW
}

// Set names the part of the anchors a row belongs to: "tuning" or "held out".
func (a Anchor) Set() string {
	if a.Held {
		return "held out"
	}
	return "tuning"
}

// AnchorColumns are the columns a published-throughputs CSV must have (ParseAnchors).
var AnchorColumns = []string{"source", "url_or_path", "gpu", "model", "framework", "software", "precision", "batch_per_gpu",
	"gpus", "metric", "value", "memory_format", "set", "notes"}

// ParseAnchors reads modern_anchors.csv. Every row must name a training precision, a
// positive batch and GPU count, images_per_s as its metric with a positive value,
// nchw or nhwc, and the set "tuning" or "held out"; a bad row is an error naming its
// line. Whether the GPU and model exist is the caller's check (it has the catalog).
func ParseAnchors(data []byte) ([]Anchor, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read the anchors' header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range AnchorColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("the anchors file lacks the column %q", c)
		}
	}
	var out []Anchor
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the anchors: %w", err)
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		a := Anchor{Line: line, Source: get("source"), Where: get("url_or_path"), GPU: get("gpu"), Model: get("model"),
			Framework: get("framework"), Notes: get("notes")}
		bad := func(what string) error {
			return fmt.Errorf("anchors line %d: %s", line, what)
		}
		if get("software") == "" {
			return nil, bad("software is empty: name the release the run used (pytorch-X.Y, ngc-YY.MM or YYYY-MM)")
		}
		if a.Software, err = predictor.ParseSoftware(get("software")); err != nil {
			return nil, bad(err.Error())
		}
		if a.Precision, err = predictor.ParseTrainingPrecision(get("precision")); err != nil {
			return nil, bad(err.Error())
		}
		if a.Batch, err = strconv.Atoi(get("batch_per_gpu")); err != nil || a.Batch <= 0 {
			return nil, bad(fmt.Sprintf("batch_per_gpu %q is not a positive whole number", get("batch_per_gpu")))
		}
		if a.GPUs, err = strconv.Atoi(get("gpus")); err != nil || a.GPUs <= 0 {
			return nil, bad(fmt.Sprintf("gpus %q is not a positive whole number", get("gpus")))
		}
		if get("metric") != "images_per_s" {
			return nil, bad(fmt.Sprintf("metric %q: only images_per_s is understood", get("metric")))
		}
		if a.ImagesPerS, err = strconv.ParseFloat(get("value"), 64); err != nil || !(a.ImagesPerS > 0) || math.IsInf(a.ImagesPerS, 0) {
			return nil, bad(fmt.Sprintf("value %q is not a positive number", get("value")))
		}
		switch get("memory_format") {
		case "nchw":
		case "nhwc":
			a.ChannelsLast = true
		default:
			return nil, bad(fmt.Sprintf("memory_format %q: use nchw or nhwc", get("memory_format")))
		}
		if i, ok := col["input"]; ok && strings.TrimSpace(rec[i]) != "" {
			if a.Input, err = strconv.Atoi(strings.TrimSpace(rec[i])); err != nil || a.Input <= 0 || a.Input > 8192 {
				return nil, bad(fmt.Sprintf("input %q is not an input size in pixels (leave it empty for the model's default)", rec[i]))
			}
		}
		if i, ok := col["stack"]; ok && strings.TrimSpace(rec[i]) != "" {
			if a.Stack, err = predictor.ParseFramework(rec[i]); err != nil {
				return nil, bad(err.Error())
			}
		}
		if i, ok := col["loader"]; ok && strings.TrimSpace(rec[i]) != "" {
			if a.Loader, err = pipeline.ParseLoader(rec[i]); err != nil {
				return nil, bad(err.Error())
			}
		}
		for _, f := range []struct {
			name string
			to   *int
		}{{"workers", &a.Workers}, {"vcpus", &a.VCPUs}} {
			if i, ok := col[f.name]; ok && strings.TrimSpace(rec[i]) != "" {
				if *f.to, err = strconv.Atoi(strings.TrimSpace(rec[i])); err != nil || *f.to < 0 {
					return nil, bad(fmt.Sprintf("%s %q is not a whole number", f.name, rec[i]))
				}
			}
		}
		switch get("set") {
		case "tuning":
		case "held out":
			a.Held = true
		default:
			return nil, bad(fmt.Sprintf("set %q: use tuning or held out", get("set")))
		}
		if a.Source == "" || a.GPU == "" || a.Model == "" {
			return nil, bad("source, gpu and model must be given")
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the anchors file has no rows")
	}
	return out, nil
}

// Case is an anchor resolved against the catalog and the zoo, ready to predict.
type Case struct {
	Anchor
	Net *cnn.Network
	Dev hw.GPU
}

// Resolve looks up each anchor's GPU among gpus and builds its network at its input
// size (nets caches networks by name and size). An unknown GPU or model is an error
// naming the line.
func Resolve(anchors []Anchor, gpus []hw.GPU, nets map[string]*cnn.Network) ([]Case, error) {
	byID := map[string]hw.GPU{}
	for _, g := range gpus {
		byID[g.ID] = g
	}
	out := make([]Case, 0, len(anchors))
	for _, a := range anchors {
		g, ok := byID[a.GPU]
		if !ok {
			return nil, fmt.Errorf("anchors line %d: GPU %q is not in the catalog", a.Line, a.GPU)
		}
		key := a.Model
		if a.Input > 0 {
			key = fmt.Sprintf("%s@%d", a.Model, a.Input)
		}
		net, ok := nets[key]
		if !ok {
			var err error
			if net, err = cnn.Build(a.Model, cnn.Options{Resolution: a.Input}); err != nil {
				return nil, fmt.Errorf("anchors line %d: %w", a.Line, err)
			}
			nets[key] = net
		}
		out = append(out, Case{Anchor: a, Net: net, Dev: g})
	}
	return out, nil
}

// Prediction is one case's predicted throughput and whether the memory model lets
// the published batch fit.
type Prediction struct {
	ImagesPerS float64
	Fits       bool
	MaxBatch   int     // per GPU; -1 when the GPU's memory is unknown
	BandPct    float64 // the prediction's own error band, ± percent
}

// ErrorPct is the signed relative error of the prediction, percent.
func (p Prediction) ErrorPct(measured float64) float64 {
	return 100 * (p.ImagesPerS - measured) / measured
}

// Predict predicts every case with the estimator alone (calibration cal, no
// measurements) and the given step and memory models. The time is predicted even
// where the memory model says the published batch does not fit (the source ran it),
// so that time and memory are judged apart.
func Predict(cal *kernels.Calibration, over predictor.Overheads, mem predictor.MemoryModel, cases []Case) ([]Prediction, error) {
	model := kernels.NewModel(cal, nil, nil, nil)
	out := make([]Prediction, len(cases))
	for i, c := range cases {
		eng := predictor.NewEngine(oneBatchTimer{model, c.Batch}, over, mem)
		m := mem.NetworkMemory(c.Net, c.Precision)
		out[i].MaxBatch = m.MaxBatch(mem.Capacity(c.Dev))
		out[i].Fits = out[i].MaxBatch < 0 || c.Batch <= out[i].MaxBatch
		timing := c.Dev
		timing.MemoryGB = 0 // unknown capacity: time every batch
		n := c.GPUs
		in, err := c.inputRate()
		if err != nil {
			return nil, fmt.Errorf("anchors line %d: %w", c.Line, err)
		}
		curve, err := eng.Curve(predictor.Request{Network: c.Net, GPU: timing,
			Machine:   hw.Machine{ID: "anchor/" + c.GPU, GPUID: c.GPU, GPUCount: n},
			Precision: c.Precision, Policy: measure.Heuristic, Batches: []int{c.Batch * n},
			Run: predictor.Run{Epochs: 1, Images: c.Batch * n}, MemoryFormat: c.MemoryFormat(), Input: in,
			Framework: c.StackOf(), Software: c.Software})
		if err != nil {
			return nil, fmt.Errorf("anchors line %d: %w", c.Line, err)
		}
		p := curve.Points[0]
		if !(p.IterMS > 0) {
			return nil, fmt.Errorf("anchors line %d: no time predicted for %s on %s", c.Line, c.Model, c.GPU)
		}
		out[i].ImagesPerS = float64(c.Batch*n) / p.IterMS * 1000
		out[i].BandPct = p.ErrorPct
	}
	return out, nil
}

// inputRate is the loader's rate for the case: ImageNet-1k's JPEGs at the network's
// input size, the row's workers per GPU and the machine's vCPUs.
func (c Case) inputRate() (pipeline.Rate, error) {
	if !c.RealData() {
		return pipeline.Rate{}, nil
	}
	d, err := dataset.Preset(dataset.Default)
	if err != nil {
		return pipeline.Rate{}, err
	}
	return pipeline.Model(pipeline.Settings{Loader: c.Loader, Workers: c.Workers}, d, c.Net.Input.H, c.VCPUs, c.GPUs, c.Dev)
}

// oneBatchTimer times kernels at one batch size only (and at the first and last
// batch asked for, by which the step composer tells a phase that runs no kernel):
// the step composer fills a table over every batch up to the largest, and a fit that
// predicts many networks at one batch each need not pay for the others. The step
// times it gives at other batch sizes are meaningless; only batch is read.
type oneBatchTimer struct {
	inner *kernels.Model
	batch int
}

// UntunedFamily is the model's (a family without tuning rows keeps its band here too).
func (t oneBatchTimer) UntunedFamily(g hw.GPU) (string, float64) { return t.inner.UntunedFamily(g) }

func (t oneBatchTimer) Times(dev kernels.Device, req kernels.Request, batches []int, out []kernels.Estimate) {
	for i := range batches {
		out[i] = kernels.Estimate{}
	}
	for i, b := range batches { // the composer asks in chunks: find the batch by its value
		if i == 0 || i == len(batches)-1 || b == t.batch {
			t.inner.Times(dev, req, batches[i:i+1], out[i:i+1])
		}
	}
}
