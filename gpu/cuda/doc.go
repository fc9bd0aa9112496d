// Package cuda is the CUDA backend of the sweep worker (build tag cuda): contexts,
// memory and CUDA-event timing through gorgonia.org/cu; convolutions and batch norm
// through cuDNN and linear layers through cuBLAS, both loaded at run time (cuDNN 8 or 9,
// any cuBLAS 11 or 12); memory-bound layers through small kernels of its own, compiled
// at start-up with NVRTC. It measures FP32, TF32 and FP16-mixed precision with cuDNN's
// heuristic or fastest algorithm choice, and watches the GPU's clock through NVML to
// report throttling.
//
// gorgonia.org/cu ends the process when no CUDA driver or device is present, so this
// package is linked only into the cnntime-gpu worker, never into cnntime.
//
// Imports: gpu and its CUDA-free seams (convalgo, cudastatus, libfind, selftest,
// timing), gpu/cpu (the self-test's reference), predictor/cnn, predictor/measure and
// gorgonia.org/cu. Only gpu/cmd/cnntime-gpu imports it.
package cuda
