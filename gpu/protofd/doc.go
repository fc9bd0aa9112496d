// Package protofd gives the worker's protocol a descriptor of its own: Claim duplicates
// fd 1 (the pipe cnntime reads) to a new descriptor for the protocol, then points fd 1
// at stderr, so a C library (CUDA, cuDNN, gorgonia.org/cu's init) that prints on stdout
// lands in the worker's stderr instead of corrupting a JSON line. The worker's precheck
// claims it in its init, before any library can print. Tested without a GPU.
//
// Imports: nothing of ours; no CUDA.
package protofd
