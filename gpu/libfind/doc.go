// Package libfind decides where cnntime-gpu looks for the CUDA libraries it loads at run
// time (cuDNN, cuBLAS, NVRTC, NVML): the path a flag or environment variable names, else
// the sonames of CUDA 13, 12 and 11 through the loader's path, then the same names under
// a standard NVIDIA install (/usr/local/cuda). For a cuDNN outside the loader's path it
// lists the sub-libraries to preload from that directory first (every libcudnn_*.so.<major>*
// there, the ones a release adds included, dependencies first): cuDNN opens them by
// name, so without a preload cuDNN 8 aborts and cuDNN 9 returns 1008
// (SUBLIBRARY_LOADING_FAILED) or 3009 (SUBLIBRARY_UNAVAILABLE). It also picks the targets NVRTC compiles the worker's
// kernels for. It does no loading itself and is tested without a GPU.
//
// Imports: nothing of ours; no CUDA.
package libfind
