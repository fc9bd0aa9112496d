// Package onnx imports a CNN from an ONNX file (torch.onnx.export's output, say) into
// cnntime's layer graph: Decode reads the ModelProto without its weights, and Import maps
// its nodes onto cnn's ops, infers every shape and writes the network as a custom model
// file (cnn.ParseCustom's JSON), which the app saves in its cache like any custom model.
// Weights are never needed: parameter counts come from the tensors' dims, so files
// exported without parameters (export_params=False) or with external data import too.
//
// The protobuf messages are generated from onnx.proto (package onnxpb).
//
// Imports: predictor/cnn, predictor/cnn/onnx/onnxpb and google.golang.org/protobuf;
// no I/O of its own (it reads the io.Reader it is given).
package onnx
