package cnn

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Options choose the input and output of a zoo network.
type Options struct {
	// Resolution is the input's height and width in pixels; 0 means the model's default
	// (224, or 299 for inception_v3).
	Resolution int
	// Classes is the number of output classes; 0 means 1000 (ImageNet).
	Classes int
}

// model is one zoo entry: how to build it and the figures torchvision publishes for it.
type model struct {
	name       string
	family     string
	resolution int          // the default input resolution
	layers     int          // a capacity hint for the layer slice
	build      func(*graph) // appends every layer before the loss and returns through g
}

// zoo holds every model, grouped by family in the order Names lists them.
var zoo []model

// zooIndex maps a name to its place in zoo.
var zooIndex map[string]int

// layerHints remembers each zoo model's layer count from its last build, so that the
// next build allocates its layer slice once.
var layerHints []atomic.Int32

func init() {
	families := [][]model{
		alexnetModels(), vggModels(), resnetModels(), squeezenetModels(), densenetModels(),
		inceptionModels(), googlenetModels(), shufflenetModels(), mobilenetModels(), mnasnetModels(),
		efficientnetModels(), regnetModels(), convnextModels(),
	}
	zooIndex = make(map[string]int)
	for _, f := range families {
		for _, m := range f {
			if m.resolution == 0 {
				m.resolution = 224
			}
			zooIndex[m.name] = len(zoo)
			zoo = append(zoo, m)
		}
	}
	layerHints = make([]atomic.Int32, len(zoo))
}

// Names lists every zoo model by torchvision's name, grouped by family.
func Names() []string {
	out := make([]string, len(zoo))
	for i, m := range zoo {
		out[i] = m.name
	}
	return out
}

// Family returns the family of a zoo model ("ResNet", "VGG", ...), or "" for an unknown name.
func Family(name string) string {
	if i, ok := zooIndex[name]; ok {
		return zoo[i].family
	}
	return ""
}

// DefaultResolution returns a zoo model's default input resolution, or 0 for an unknown name.
func DefaultResolution(name string) int {
	if i, ok := zooIndex[name]; ok {
		return zoo[i].resolution
	}
	return 0
}

// ErrUnknownModel is wrapped by Build's error for a name that is not in the zoo.
var ErrUnknownModel = errors.New("unknown model")

// Build returns the zoo network called name (torchvision's name, e.g. "resnet50") for
// the given input resolution and number of classes. The last layer is the loss. A
// resolution too small for the architecture is an error naming the layer that fails.
func Build(name string, opt Options) (*Network, error) {
	i, ok := zooIndex[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: see Names for the zoo", ErrUnknownModel, name)
	}
	m := zoo[i]
	res, classes := opt.Resolution, opt.Classes
	if res == 0 {
		res = m.resolution
	}
	if classes == 0 {
		classes = 1000
	}
	switch {
	case res < 0 || res > 8192:
		return nil, fmt.Errorf("build %s: input resolution %d must be between 1 and 8192", name, res)
	case classes < 0 || classes > 1<<20:
		return nil, fmt.Errorf("build %s: number of classes %d must be between 1 and %d", name, classes, 1<<20)
	}
	if h := int(layerHints[i].Load()); h > m.layers {
		m.layers = h
	}
	net, err := build(m, res, classes)
	if err == nil {
		layerHints[i].Store(int32(len(net.Layers)))
	}
	if err != nil {
		if least := smallestResolution(m, res); least > 0 {
			return nil, fmt.Errorf("build %s at %dx%d: %w: %s needs an input of at least %dx%d", name, res, res, err, name, least, least)
		}
		return nil, fmt.Errorf("build %s at %dx%d: %w", name, res, res, err)
	}
	return net, nil
}

func build(m model, res, classes int) (*Network, error) {
	net := &Network{Name: m.name, Family: m.family, Input: Shape{3, res, res}, Classes: classes}
	g := newGraph(net, m.layers)
	m.build(g)
	if g.err != nil {
		return nil, g.err
	}
	return net, nil
}

// smallestResolution finds the least input resolution above tooSmall at which m builds,
// by bisection up to the model's default resolution; 0 if none is found.
func smallestResolution(m model, tooSmall int) int {
	lo, hi := tooSmall, m.resolution // lo fails; hi builds
	if _, err := build(m, hi, 1000); err != nil || lo >= hi {
		return 0
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, err := build(m, mid, 1000); err != nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Families lists the zoo's families in order.
func Families() []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range zoo {
		if !seen[m.family] {
			seen[m.family] = true
			out = append(out, m.family)
		}
	}
	return out
}
