// Package timing plans how the worker times a kernel: warm-up by time (until the clocks
// settle, not a fixed count of runs) and K back-to-back runs between two GPU events,
// divided by K, so the host's launch overhead does not read as kernel time for small
// layers. It is arithmetic on an estimate and tested without a GPU.
//
// Imports: nothing of ours; no CUDA.
package timing
