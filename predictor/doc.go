// Package predictor is cnntime's time, memory and cost model: for a CNN on a machine
// at a batch size and precision it predicts the training step's time from per-layer
// kernel times (measured, interpolated, transferred from another GPU, or estimated from
// specifications), the memory the step needs, and the epoch and run time, cost and
// energy. It is pure Go and does no I/O: measurements and calibration are passed in.
//
// Imports: only its own sub-packages (cnn, hw, kernels, measure, pipeline, dataset, recipe),
// never another package of ours: app, db and gpu import predictor, not the other way
// round.
package predictor
