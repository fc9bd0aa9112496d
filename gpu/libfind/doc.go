// Package libfind decides where cnntime-gpu looks for the CUDA libraries it loads at run
// time (cuDNN, cuBLAS with its cuBLASLt, NVRTC, NVML) and why: Search lists every place
// of a stated order (SearchOrder) with what it holds — a flag or variable alone when
// set; else LD_LIBRARY_PATH, an activated virtual environment's or conda environment's
// pip wheels and lib, the pip wheels of the Python on PATH (PyTorch's CUDA 12 wheels
// keep each library in site-packages/nvidia/<name>/lib, its CUDA 13 wheels in
// nvidia/cu13/lib and nvidia/cudnn/lib), $CUDA_HOME, the loader's path, and the usual
// site-packages — so that `cnntime devices --check` shows, on any machine, which file
// the worker would load and why every other was taken or skipped. For a cuDNN outside
// the loader's path it lists the sub-libraries to preload from that directory first
// (every libcudnn_*.so.<major>* there, the ones a release adds included, dependencies
// first): cuDNN opens them by name, so without a preload cuDNN 8 aborts and cuDNN 9
// returns 1008 (SUBLIBRARY_LOADING_FAILED) or 3009 (SUBLIBRARY_UNAVAILABLE). It also
// picks the targets NVRTC compiles the worker's kernels for. It does no loading itself
// and is tested without a GPU, on fake layouts of each kind (Host).
//
// Imports: nothing of ours; no CUDA.
package libfind
