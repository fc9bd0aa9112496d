// Package cudastatus classifies the status codes of cuDNN and cuBLAS into what a sweep
// does with them: out of memory (the batch range ends here), unsupported (the library
// cannot run this configuration), a bad parameter (a bug in the worker: an error that
// names the layer) or another failure. cuDNN 9 renumbered its codes into categories
// (bad parameter 2000–2012, not supported 3000–3014, internal 4000–4006 with the
// allocation failures 4003/4004, execution failed 5000–5004), so the version that
// cudnnGetVersion() reports picks the table. The "not supported" codes that mean the
// install cannot run anything (an incompatible driver or runtime 3005/3006, a missing
// prerequisite 3008, a sub-library unavailable 3009; cuDNN 8's 11) are failures with a
// hint on fixing the install, not "unsupported": a sweep must not record a broken cuDNN
// as a GPU that cannot run convolutions. It does not import the CUDA libraries and
// is tested without a GPU.
//
// Imports: nothing of ours; no CUDA.
package cudastatus
