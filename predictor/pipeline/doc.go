// Package pipeline models the input pipeline of a training run: how many images per
// second a data loader can deliver to each GPU, and what it costs the GPU. It knows
// three loaders: synthetic (the data is already on the GPU, as benchmarks run),
// pytorch (torch.utils.data.DataLoader worker processes decoding JPEGs with PIL and
// applying torchvision's training transforms on the CPU) and dali (NVIDIA DALI:
// Huffman decoding on CPU threads, the rest of the decode and the augmentations on
// the GPU). The rates come from cited public figures; see the constants.
//
// Imports: predictor/dataset and predictor/hw.
package pipeline
