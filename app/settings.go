package app

import (
	"errors"
	"fmt"
	"strings"

	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

// SessionSettings are what the user chose to predict.
type SessionSettings struct {
	Models    []string          // CNN names
	Machines  []string          // machine IDs, e.g. "aws/p3.2xlarge"
	Epochs    int               // passes over the data set
	Images    int               // training images per epoch
	Precision measure.Precision // fp32, fp32-strict or amp
	Policy    measure.Policy    // cuDNN algorithm choice: heuristic or fastest
	BatchMin  int               // the smallest global batch size
	BatchMax  int               // the largest global batch size
	// Data is the dataset (its input size and classes), the input pipeline and the
	// memory format; Images is kept equal to the dataset's unless the user changes it.
	Data RunData
}

// DefaultSessionSettings are a fresh session's: ImageNet-1k for 90 epochs in FP32,
// batch sizes 1 to 1024, nothing selected.
func DefaultSessionSettings() SessionSettings {
	return SessionSettings{
		Epochs:    DefaultEpochs,
		Images:    predictor.ImageNetImages,
		Precision: measure.FP32,
		Policy:    measure.Heuristic,
		BatchMin:  1,
		BatchMax:  1024,
		Data:      DefaultRunData(), // the CLI's default too: the two predict alike
	}
}

// Limits on the settings, wide enough for any real training run.
const (
	MaxEpochs    = 100000
	MaxImages    = 10_000_000_000
	MaxBatchSize = 1 << 16
)

// Validate says what is wrong with the settings and how to fix it.
func (s SessionSettings) Validate() error {
	var errs []error
	if s.Epochs < 1 || s.Epochs > MaxEpochs {
		errs = append(errs, fmt.Errorf("epochs must be a whole number from 1 to %d, not %d", MaxEpochs, s.Epochs))
	}
	if s.Images < 1 || s.Images > MaxImages {
		errs = append(errs, fmt.Errorf("training images must be from 1 to %d, not %d", int64(MaxImages), s.Images))
	}
	if _, err := predictor.ParseTrainingPrecision(string(s.Precision)); err != nil {
		errs = append(errs, err)
	}
	if s.Policy != measure.NoPolicy {
		if _, err := measure.ParsePolicy(string(s.Policy)); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case s.BatchMin < 1:
		errs = append(errs, fmt.Errorf("the smallest batch size must be at least 1, not %d", s.BatchMin))
	case s.BatchMax < s.BatchMin:
		errs = append(errs, fmt.Errorf("the largest batch size (%d) is below the smallest (%d)", s.BatchMax, s.BatchMin))
	case s.BatchMax > MaxBatchSize:
		errs = append(errs, fmt.Errorf("the largest batch size must be at most %d, not %d", MaxBatchSize, s.BatchMax))
	}
	if err := s.Data.Check(); err != nil {
		errs = append(errs, err)
	}
	for _, list := range [][]string{s.Models, s.Machines} {
		for _, name := range list {
			if strings.TrimSpace(name) == "" {
				errs = append(errs, errors.New("an empty CNN or machine name was selected"))
			}
		}
	}
	return errors.Join(errs...)
}

// ChartSettings are how the charts show the curves.
type ChartSettings struct {
	Metric    charts.Metric
	LogX      bool
	LogY      bool
	Hidden    map[string]bool // series keys (charts.SeriesKey) toggled off in the legend
	Highlight string          // the series clicked in the scatter; "" for none
	// ScatterLog draws the scatter with logarithmic axes (for machines of very
	// different speeds); LogX and LogY are the curves chart's.
	ScatterLog bool
}

// Options are the chart options for these settings in a style.
func (v ChartSettings) Options(style charts.Style) charts.Options {
	return charts.Options{Metric: v.Metric, LogX: v.LogX, LogY: v.LogY, Hidden: v.Hidden, Highlight: v.Highlight, Style: style}
}

func (s SessionSettings) clone() SessionSettings {
	s.Models = append([]string(nil), s.Models...)
	s.Machines = append([]string(nil), s.Machines...)
	return s
}

func (v ChartSettings) clone() ChartSettings {
	hidden := make(map[string]bool, len(v.Hidden))
	for k, on := range v.Hidden {
		if on {
			hidden[k] = true
		}
	}
	v.Hidden = hidden
	return v
}

// BatchGrid is the batch sizes a session predicts between lo and hi: every size up to
// 64, every multiple of 8 up to 512 and of 32 beyond, plus the powers of two and the
// ends. Dense enough to show the jumps that tile and wave quantization make.
func BatchGrid(lo, hi int) []int {
	var out []int
	for b := lo; b <= hi; b++ {
		if b == lo || b == hi || b <= 64 || (b <= 512 && b%8 == 0) || b%32 == 0 || b&(b-1) == 0 {
			out = append(out, b)
		}
	}
	return out
}
