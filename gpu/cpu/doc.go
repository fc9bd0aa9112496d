// Package cpu is the CPU backend: the forward and backward kernels of every layer kind
// in pure Go (convolutions through im2col and gonum's GEMM, a direct loop for depthwise
// ones), so the whole pipeline of plan, measure, cache and predict runs and is tested on
// any machine, and a CPU is a device one can compare with GPUs. It runs FP32 only.
//
// Imports: gpu (the Backend it implements), predictor/cnn, predictor/measure and gonum.
package cpu
