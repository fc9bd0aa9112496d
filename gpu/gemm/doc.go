// Package gemm says which cuBLAS GEMMs the CUDA worker runs for a linear layer, in each
// phase, as column-major calls on named operands: the two matrix products of the
// forward and backward passes, and the bias through cuBLAS too, as PyTorch's addmm does
// it: added by the forward GEMM's epilogue where cuBLASLt is loaded (one pass over the
// output, as PyTorch 2 runs it), else broadcast into the output by a rank-1 GEMM against
// a vector of ones and the product added with beta 1; its gradient as the output
// gradient times the ones. A linear layer with a bias needs none of cnntime's own
// kernels (and no NVRTC).
// Tested without a GPU by running the calls with a CPU GEMM against the CPU reference.
//
// Imports: predictor/measure only; no CUDA.
package gemm
