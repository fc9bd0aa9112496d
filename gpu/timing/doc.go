// Package timing plans how the worker times a kernel: warm-up by GPU time in samples
// of K runs (until the clocks settle, whatever the kernel's size), K back-to-back runs
// between two GPU events behind a spin kernel long enough for the host to queue them
// all (NVBench's method), so that the host's launch rate does not read as kernel time,
// and a note on a sample the host may still have paced (HostBound); a kernel whose
// buffers fit in the GPU's L2 timed one run at a time after a flush of the L2
// (L2Resident); and throttle warnings only for a clock change that lasts (Throttle). It
// is arithmetic on estimates and readings, tested without a GPU.
//
// Imports: nothing of ours; no CUDA.
package timing
