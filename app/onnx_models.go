package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"cnntime/db"
	"cnntime/predictor/cnn"
	"cnntime/predictor/cnn/onnx"
)

// IsONNXFile reports whether path names an ONNX model file: it ends in .onnx (in any case).
func IsONNXFile(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".onnx") }

// modelName is what a custom model's name may be, whichever way it comes (an ONNX
// import, a custom model file, a colleague's cache): it travels in comma-separated
// --model lists, chart legends, CSV cells, job scripts and file names. Compiled when
// first used: its bounded repeat makes a large program, which every command's start
// would otherwise pay.
var modelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`) })

// Subcommands of `cnntime model` that a model's name may not be, so that `cnntime model
// NAME` always shows the model.
var modelCommandWords = []string{"import", "remove"}

// CheckModelName says why name cannot name a custom model (see modelName).
func CheckModelName(name string) error {
	switch {
	case name == "":
		return Inputf("the model needs a name")
	case !modelName().MatchString(name):
		return Inputf("model name %q: use 1 to 64 letters, digits, '_', '-', '.' or '+', starting with a letter or digit", name)
	case cnn.Family(name) != "":
		return Inputf("model name %q is a zoo model's: give yours another name", name)
	case IsModelFile(name):
		return Inputf("model name %q ends like a model file: give yours a name without .json or .onnx", name)
	case slices.Contains(modelCommandWords, name):
		return Inputf("model name %q is a word of the model command: give yours another name", name)
	}
	return nil
}

// DefaultModelName is the name an imported file's model gets unless one is given: the
// file's base name without its extension, with the characters a name may not have
// replaced by '_'.
func DefaultModelName(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.', r == '+':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), "_-.+")
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// ImportONNX reads an ONNX model from r (see onnx.Import: its weights are skipped as they
// stream past) and checks that it can join an engine under its name.
func ImportONNX(r io.Reader, opt onnx.Options) (*onnx.Model, error) {
	if err := CheckModelName(opt.Name); err != nil {
		return nil, err
	}
	m, err := onnx.Import(r, opt)
	if err != nil {
		return nil, err
	}
	if err := CheckCustomNetwork(m.Network); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadONNXFile imports the ONNX model in the file at path; its name is opt.Name, or
// DefaultModelName(path) when that is empty.
func ReadONNXFile(path string, opt onnx.Options) (*onnx.Model, error) {
	if opt.Name == "" {
		opt.Name = DefaultModelName(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read ONNX file %s: %w", path, err)
	}
	defer f.Close()
	m, err := ImportONNX(f, opt)
	if err != nil {
		var in *InputError
		if errors.As(err, &in) {
			return nil, Inputf("ONNX file %s: %s", path, in.Msg)
		}
		return nil, fmt.Errorf("ONNX file %s: %w", path, err)
	}
	return m, nil
}

// SavedModel is a custom model added to the cache: its network and whether it replaced
// one of the same name.
type SavedModel struct {
	Network  *cnn.Network
	Replaced bool
}

// SaveModel saves a checked custom network's model file (cnn.ParseCustom's JSON) in the
// cache, replacing a saved model of the same name. Nothing is written when it fails.
func SaveModel(ctx context.Context, d *db.DB, net *cnn.Network, data []byte) (SavedModel, error) {
	if err := CheckCustomNetwork(net); err != nil {
		return SavedModel{}, err
	}
	saved, err := d.CustomModels(ctx)
	if err != nil {
		return SavedModel{}, err
	}
	replaced := slices.ContainsFunc(saved, func(m db.CustomModel) bool { return m.Name == net.Name })
	if err := d.PutCustomModel(ctx, net.Name, cnn.TrimBOM(data)); err != nil {
		return SavedModel{}, err
	}
	return SavedModel{Network: net, Replaced: replaced}, nil
}

// RemoveSavedModel deletes the custom model called name from the cache. A saved model
// is removed whatever its name, one taking a zoo model's name included (an older cache
// or import let such a model in, and it is left out of every list; the zoo model itself
// is built in and stays). A zoo model's name the cache does not hold, or another name
// it does not hold, is an InputError that lists what it holds.
func RemoveSavedModel(ctx context.Context, d *db.DB, name string) error {
	var saved []db.CustomModel
	if d != nil {
		var err error
		if saved, err = d.CustomModels(ctx); err != nil {
			return err
		}
	}
	names := make([]string, len(saved))
	for i, m := range saved {
		names[i] = m.Name
	}
	switch {
	case slices.Contains(names, name):
		return d.RemoveCustomModel(ctx, name)
	case cnn.Family(name) != "":
		return Inputf("%s is a zoo model: only your own models saved in the cache can be removed", name)
	case len(names) == 0:
		return Inputf("there is no custom model %q: the cache holds none", name)
	}
	return Inputf("there is no custom model %q%s; the cache holds %s", name, Suggest(name, names), Printable(strings.Join(names, ", ")))
}

// LoadNamedModel finds a model by name for a command: a zoo model built at input and
// classes, a model file (.json or .onnx; input sizes an ONNX file's open dims), or a
// custom model saved in the cache d (nil when there is none yet).
func LoadNamedModel(ctx context.Context, d *db.DB, name string, input, classes int) (*cnn.Network, error) {
	if IsModelFile(name) || cnn.Family(name) != "" {
		return LoadModel(ctx, name, input, classes)
	}
	var saved []db.CustomModel
	if d != nil {
		var err error
		if saved, err = d.CustomModels(ctx); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(saved))
	for _, m := range saved {
		if m.Name != name {
			names = append(names, m.Name)
			continue
		}
		if input != 0 || classes != 0 {
			return nil, Inputf("an input size and a class count apply to zoo models; the custom model %s sets its own input and classes (leave them out)", name)
		}
		net, err := ParseSavedModel(m)
		if err != nil {
			return nil, fmt.Errorf("%w (saved in the cache %s: fix its file and add it again)", err, d.Path())
		}
		return net, nil
	}
	return nil, Inputf("unknown model %q%s; 'cnntime models' lists them", name, Suggest(name, append(cnn.Names(), names...)))
}

// ONNXImporter is a SessionBackend that can add an ONNX model.
type ONNXImporter interface {
	// ImportONNX reads an ONNX model, saves it in the cache like a custom model file and
	// registers it; it returns the model's name and what the import approximated.
	ImportONNX(r io.Reader, opt onnx.Options) (name string, notes []string, err error)
}

// ImportONNX reads an ONNX model (see the package function), saves its model file in the
// cache and registers it with the engine; a model of the same name is replaced. A model
// that does not import or cannot be saved changes nothing.
func (b *EngineBackend) ImportONNX(r io.Reader, opt onnx.Options) (string, []string, error) {
	m, err := ImportONNX(r, opt)
	if err != nil {
		return "", nil, err
	}
	if err := b.addNetwork(m.Network, m.JSON); err != nil {
		return "", nil, err
	}
	return m.Network.Name, m.Notes, nil
}

// addNetwork saves a checked custom network's file in the cache (when there is one) and
// registers it with the engine.
func (b *EngineBackend) addNetwork(net *cnn.Network, data []byte) error {
	if err := CheckCustomNetwork(net); err != nil {
		return err
	}
	if b.cache != nil {
		if err := b.cache.PutCustomModel(context.Background(), net.Name, cnn.TrimBOM(data)); err != nil {
			return err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.engine.AddNetwork(net); err != nil {
		return err
	}
	b.added = slices.DeleteFunc(b.added, func(n *cnn.Network) bool { return n.Name == net.Name })
	b.added = append(b.added, net)
	return nil
}

// CanImportONNX reports whether the session's backend imports ONNX models.
func (s *Session) CanImportONNX() bool {
	_, ok := s.backend.(ONNXImporter)
	return ok
}

// ImportONNX imports an ONNX model through the backend and selects it; it returns the
// model's name and what the import approximated. On an error nothing changes.
func (s *Session) ImportONNX(r io.Reader, opt onnx.Options) (string, []string, error) {
	im, ok := s.backend.(ONNXImporter)
	if !ok {
		return "", nil, errors.New("import ONNX: this window cannot import models")
	}
	name, notes, err := im.ImportONNX(r, opt)
	if err != nil {
		return "", nil, err
	}
	return name, notes, s.SetModel(name, true)
}
