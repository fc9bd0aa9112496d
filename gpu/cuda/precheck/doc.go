// Package precheck makes the cnntime-gpu worker fail with one clear sentence when this
// machine has no usable NVIDIA GPU, before gorgonia.org/cu's init can end the process
// with a bare driver error. Go initialises packages in import-path order among those
// whose imports are ready; this package needs only what gorgonia.org/cu needs and its
// path (cnntime/...) sorts first, so its init runs first.
//
// Before anything else its init moves the protocol off fd 1 (package gpu/protofd): from
// then on what any library prints on stdout goes to stderr, and the protocol (and a
// person's output, such as -list's) goes to protofd.Out().
//
// Imports: gpu/protofd only, and cuda.h with libcuda (build tag cuda). Only
// gpu/cmd/cnntime-gpu imports it.
package precheck
