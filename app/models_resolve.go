package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cnntime/app/infile"
	"cnntime/db"
	"cnntime/predictor/cnn"
	"cnntime/predictor/cnn/onnx"
)

// CheckCustomNetwork says why a custom network cannot be added to an engine: it has
// no name or no layers, it has a zoo model's name (the two could not be told apart in a
// --model list, a chart or the cache), or its name breaks the rule every custom model's
// name follows, however it came (CheckModelName: "a,b" could never be selected).
func CheckCustomNetwork(n *cnn.Network) error {
	switch {
	case n == nil || n.Name == "":
		return errors.New("add a custom model: it has no name; give it a \"name\" in its file")
	case len(n.Layers) == 0:
		return fmt.Errorf("add custom model %s: it has no layers", Printable(n.Name))
	case cnn.Family(n.Name) != "":
		return fmt.Errorf("custom model %q has the name of a zoo model: rename it in its file", n.Name)
	}
	if err := CheckModelName(n.Name); err != nil {
		return fmt.Errorf("custom model: %v (rename it in its file)", err)
	}
	return nil
}

// addSavedModels registers the custom models saved in the cache (by the app's File →
// Add model…). A saved model that no longer reads (written for another cnntime
// version, say) is left out and said so in e.Warnings; the others still load.
func (e *Engine) addSavedModels(ctx context.Context, d *db.DB) error {
	nets, warnings, err := ReadSavedModels(ctx, d)
	if err != nil {
		return err
	}
	e.warnings = append(e.warnings, warnings...)
	for _, net := range nets {
		if err := e.AddNetwork(net); err != nil { // ReadSavedModels checked them: not expected
			e.warnings = append(e.warnings, fmt.Sprintf("the custom model %s saved in %s was left out: %v", Printable(net.Name), d.Path(), err))
		}
	}
	return nil
}

// IsModelFile reports whether a --model entry names a model file rather than a zoo
// model: a custom model file ending in .json or an ONNX file ending in .onnx (in any case).
func IsModelFile(entry string) bool {
	return strings.HasSuffix(strings.ToLower(entry), ".json") || IsONNXFile(entry)
}

// ReadCustomModelFile reads and checks a custom model file (cnn.ParseCustom's format,
// see docs/models.md). Its errors name the file and, for a mistake in
// a layer, the layer's index and name.
//
// An ONNX file (.onnx) is imported (see ReadONNXFile) under its file's base name.
func ReadCustomModelFile(ctx context.Context, path string) (*cnn.Network, error) {
	if IsONNXFile(path) {
		m, err := ReadONNXFile(path, onnx.Options{})
		if err != nil {
			return nil, err
		}
		return m.Network, nil
	}
	data, err := ReadCustomModelBytes(ctx, path)
	if err != nil {
		return nil, err
	}
	net, err := cnn.ParseCustom(data)
	if err != nil {
		return nil, fmt.Errorf("custom model file %s: %w", path, err)
	}
	if err := CheckCustomNetwork(net); err != nil { // as predict would refuse it
		return nil, fmt.Errorf("custom model file %s: %w", path, err)
	}
	return net, nil
}

// ReadCustomModelBytes reads a custom model file as it is: a JSON object of at most
// maxCustomModelBytes (a file of NULs, or a larger one, is refused after its first line
// or at the limit, not read whole), until ctx ends.
func ReadCustomModelBytes(ctx context.Context, path string) ([]byte, error) {
	return infile.Read(ctx, path, infile.Spec{What: "custom model file (JSON)", Max: maxCustomModelBytes, Start: infile.JSONObject})
}

// ResolveModels turns a list of --model entries into networks known to eng, in order:
// a zoo name is looked up (an unknown one gets the closest names suggested); a path to
// a .json file is read, checked and registered with eng.AddNetwork, so that it is then
// predicted by its name like a zoo model. Two different files that define models of
// the same name are refused, as is a file whose model has a zoo model's name. At the
// first wrong entry it returns the error; the files read before it stay registered.
func ResolveModels(ctx context.Context, eng *Engine, entries []string) ([]*cnn.Network, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("no models given: name zoo models (e.g. resnet50) or custom model files (.json)")
	}
	fromFile := map[string]string{} // model name → the file that defined it
	out := make([]*cnn.Network, 0, len(entries))
	for _, entry := range entries {
		if !IsModelFile(entry) {
			net, err := eng.Network(entry)
			if err != nil {
				return nil, err
			}
			out = append(out, net)
			continue
		}
		net, err := ReadCustomModelFile(ctx, entry)
		if err != nil {
			return nil, err
		}
		if first, dup := fromFile[net.Name]; dup && first != entry {
			return nil, fmt.Errorf("custom model files %s and %s both define a model called %q: rename one of them", first, entry, net.Name)
		}
		if err := eng.AddNetwork(net); err != nil {
			return nil, fmt.Errorf("custom model file %s: %w", entry, err)
		}
		fromFile[net.Name] = entry
		out = append(out, net)
	}
	return out, nil
}
