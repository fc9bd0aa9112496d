// Package dataset holds the training datasets a prediction can name (imagenet-1k,
// cifar-10, cifar-100): how many images an epoch reads, the input size the network is
// trained at, the number of classes, and what a data loader must do to produce each
// image (decode a JPEG of a given mean size, or take a tensor held in memory). Any
// figure can be overridden.
//
// Imports: nothing of ours.
package dataset
