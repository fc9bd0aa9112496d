// Package cudakern is what the CUDA worker runs with its own kernels, for the
// memory-bound layers cuDNN and cuBLAS do not cover (activations, add, mul, layer scale,
// concat, channel shuffle, permute, dropout, pooling, layer norm, the loss): the CUDA C
// source (kernels.cu, compiled with NVRTC by package gpu/cuda), and for each layer
// configuration a Program: its device buffers, the kernel launches of each phase with
// their grid, block and the most elements one thread reads in sequence, and which
// buffers the self-test fills from the CPU reference and reads back. Reductions are
// block and warp tree reductions, one warp per row for the norms, so that no thread
// walks a whole column or row of a large tensor.
//
// Nothing here calls CUDA: the worker allocates the buffers and launches what a Program
// says; the tests check the launch geometry for whole networks, compile the source with
// NVRTC where it is installed, and run the kernels on the CPU (host_cuda.h emulates
// CUDA's threads, warps and blocks) against the CPU reference.
//
// Imports: gpu/cpu (the reference the self-test compares with), predictor/cnn,
// predictor/measure; no CUDA.
package cudakern
