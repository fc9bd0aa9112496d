// Package onnxtest builds small ONNX models for tests: a graph written node by node with
// the generated onnxpb messages and marshalled with google.golang.org/protobuf, so tests
// of the importer, the command line and the window need no PyTorch.
//
// Imports: predictor/cnn/onnx/onnxpb and google.golang.org/protobuf.
package onnxtest
