// Package gpu measures devices: it plans sweeps (which layer configurations at which
// batch sizes, minus what the cache already holds), defines the Backend interface that
// the CPU backend (gpu/cpu) and the CUDA backend (gpu/cuda, in the separate cnntime-gpu
// worker) implement, and speaks the JSON-lines protocol (gpu/protocol) with the worker.
// An item that crashes or hangs the worker, or whose measurement returns an error, is
// quarantined; after an error the sweep goes on (restarting the worker when the error
// was sticky and broke its CUDA context).
//
// gpu returns measurements; it never writes the cache. The app layer does.
//
// Imports: gpu/protocol, gpu/selftest, predictor/cnn and predictor/measure. Never db (it
// does not write the cache), app, views or gorgonia.org/cu: only gpu/cuda and the
// cnntime-gpu worker link CUDA.
package gpu
