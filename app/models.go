package app

import (
	"errors"

	"cnntime/predictor/cnn"
)

// loadModel builds a zoo model, or reads a custom model file when name ends in .json.
func LoadModel(name string, input, classes int) (*cnn.Network, error) {
	if IsModelFile(name) {
		if input != 0 || classes != 0 {
			return nil, Inputf("an input size and a class count apply to zoo models; a custom model file sets its own input and classes (leave them out)")
		}
		return ReadCustomModelFile(name)
	}
	net, err := cnn.Build(name, cnn.Options{Resolution: input, Classes: classes})
	if errors.Is(err, cnn.ErrUnknownModel) {
		return nil, Inputf("unknown model %q%s; 'cnntime models' lists them", name, Suggest(name, cnn.Names()))
	}
	return net, err
}
