package assets

import _ "embed"

// Calibration is the predictor's fitted per-layer calibration (kernels.Calibration as
// JSON), written by `cnntime calibrate --deepbench calibration/deepbench_conv.csv --out
// assets/calibration/calibration.json`.
//
//go:embed calibration/calibration.json
var Calibration []byte

// DeepBench is the public per-layer convolution timings the calibration is fitted on
// (a copy of ../shared/data/deepbench_conv.csv; its README gives the source), embedded
// so that `cnntime validate` can report the per-layer leave-one-GPU-out accuracy.
//
//go:embed calibration/deepbench_conv.csv
var DeepBench []byte
