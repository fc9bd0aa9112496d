// Package cuda is the CUDA backend of the sweep worker (build tag cuda): contexts,
// memory and CUDA-event timing through gorgonia.org/cu; convolutions and batch norm
// through cuDNN and linear layers (their bias too) through cuBLAS, both loaded at run
// time (cuDNN 8 or 9, any cuBLAS 11 or 12); memory-bound layers through package
// cudakern's kernels and programs, compiled at start-up with NVRTC. Tensors start with
// pseudo-random normal data (package randfill), as PyTorch's. It measures FP32, TF32 and
// FP16-mixed precision with cuDNN's heuristic or fastest algorithm choice, watches the
// GPU's clock through NVML to report throttling, and marks an error that broke the CUDA
// context (a sticky error) so that the sweep restarts the worker.
//
// gorgonia.org/cu ends the process when no CUDA driver or device is present, so this
// package is linked only into the cnntime-gpu worker, never into cnntime.
//
// Imports: gpu and its CUDA-free seams (convalgo, cudakern, cudastatus, gemm, libfind,
// randfill, selftest, timing), gpu/cpu (the self-test's reference), predictor/cnn, predictor/measure and
// gorgonia.org/cu. Only gpu/cmd/cnntime-gpu imports it.
package cuda
