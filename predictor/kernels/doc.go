// Package kernels predicts the time of one layer's forward and backward kernels on a
// device at a batch size and precision, from the most trusted source available:
// measured, interpolated along batch size, transferred from another GPU by wave
// scaling, or estimated from specifications with a roofline, tile and wave quantization
// and fitted efficiencies (package predictor/fit fits them).
//
// Imports: predictor/cnn, predictor/hw and predictor/measure. Never predictor, which
// composes its kernel times into steps, nor predictor/fit, which fits its efficiencies.
package kernels
