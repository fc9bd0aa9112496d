// Package cnn describes convolutional networks as layer graphs: every operation of a
// training step with its input and output shapes, parameter count, multiply-accumulates
// and memory traffic. The batch dimension N is symbolic: shapes and counts are per
// sample, and methods take the batch size where a figure depends on it.
//
// Builders reproduce every torchvision ImageNet classification CNN exactly (parameter
// counts equal torchvision's), and ParseCustom reads a user's own network from JSON.
//
// Imports: predictor/measure only.
package cnn
