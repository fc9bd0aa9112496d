package app

import (
	"context"
	"errors"

	"cnntime/predictor/cnn"
	"cnntime/predictor/cnn/onnx"
)

// LoadModel builds a zoo model, or reads a model file when name ends in .json or .onnx
// (input sizes an ONNX file whose height and width are open).
func LoadModel(ctx context.Context, name string, input, classes int) (*cnn.Network, error) {
	if IsONNXFile(name) {
		if classes != 0 {
			return nil, Inputf("a class count applies to zoo models; an ONNX file sets its own classes (leave it out)")
		}
		m, err := ReadONNXFile(name, onnx.Options{Resolution: input})
		if err != nil {
			return nil, err
		}
		return m.Network, nil
	}
	if IsModelFile(name) {
		if input != 0 || classes != 0 {
			return nil, Inputf("an input size and a class count apply to zoo models; a custom model file sets its own input and classes (leave them out)")
		}
		return ReadCustomModelFile(ctx, name)
	}
	net, err := cnn.Build(name, cnn.Options{Resolution: input, Classes: classes})
	if errors.Is(err, cnn.ErrUnknownModel) {
		return nil, Inputf("unknown model %q%s; 'cnntime models' lists them", name, Suggest(name, cnn.Names()))
	}
	return net, err
}
