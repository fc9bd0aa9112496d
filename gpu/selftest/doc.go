// Package selftest is the report of cnntime-gpu -selftest and the logic behind its
// verdicts: which small layer configurations it runs (one of every kind the worker
// measures), the per-precision tolerances its outputs and gradients must meet against
// the Go CPU backend's reference, the comparison itself, and the table a person reads
// (what works, what is unsupported and why, with the driver and library versions). The
// report travels over the worker protocol so the app can ask for it. It does not import
// the CUDA libraries and is tested without a GPU.
//
// Imports: gpu/libfind (where each library was looked for), predictor/cnn and
// predictor/measure; no CUDA.
package selftest
