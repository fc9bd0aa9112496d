// Package randfill gives the CUDA worker's tensors pseudo-random contents, as PyTorch's
// randn inputs have: constant data (every element 0.5, as the worker had) toggles fewer
// bits in the multipliers, draws less power and lets a power-limited GPU hold higher
// clocks than real training (NVIDIA's A100 reaches ~295 TFLOPS on zeros and ~257 on
// random data). A tile of normally distributed values is made once on the host; a tensor
// is filled by copying the tile to its start and then doubling what is filled with
// device-to-device copies, so the filling runs on the GPU and costs a logarithmic number
// of copies, without NVRTC or cuRAND. Tested without a GPU.
//
// Imports: gpu/selftest (its FP16 conversion); no CUDA.
package randfill
