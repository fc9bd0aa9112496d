// Package measure defines the records that flow from sweeps to the cache to the
// predictor: the devices measured, the timed kernels of one layer configuration, and
// whole training steps. It holds types and their validation only.
//
// Imports: nothing of ours.
package measure
