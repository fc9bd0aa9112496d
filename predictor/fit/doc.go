// Package fit fits the per-layer model's efficiencies (kernels.Calibration) to
// measured layer timings, and reports how well the fit predicts a GPU it has not seen
// (leave one GPU out). It reads the public DeepBench convolution results from bytes
// its caller supplies; it does no I/O.
//
// Imports: predictor and its sub-packages, and gonum's optimizer. It sits above
// predictor, as app/cli sits above app: it composes whole steps with predictor's engine
// to fit the whole-network scales; predictor and predictor/kernels never import it, app
// and app/cli call it.
package fit
