package dataset

import (
	"fmt"
	"sort"
	"strings"
)

// Dataset is one training set as a run reads it.
type Dataset struct {
	Name    string `json:"name"`
	Images  int    `json:"images"`  // training images per epoch
	Input   int    `json:"input"`   // input height and width, pixels; 0: the model's own default
	Classes int    `json:"classes"` // output classes
	// InMemory is true for a dataset a loader holds as decoded tensors (CIFAR's
	// pickled arrays): no decoding, only a crop, a flip and normalisation per image.
	InMemory bool `json:"in_memory"`
	// SourceWidth and SourceHeight are the mean size of the stored images a loader
	// decodes (JPEG files), pixels; 0 for an in-memory dataset.
	SourceWidth  int `json:"source_width,omitempty"`
	SourceHeight int `json:"source_height,omitempty"`
}

// The presets. ImageNet-1k (ILSVRC-2012): 1,281,167 training images in 1,000 classes,
// JPEGs of about 400×350 pixels on average (Deng et al., "ImageNet: A Large-Scale
// Hierarchical Image Database", CVPR 2009, as tensorpack's "Efficient DataFlow"
// tutorial quotes it; 140 GB in all). It has no input size of its own: each model
// is trained at its weights' crop size (224 for most, 299 for inception_v3, 380 for
// efficientnet_b4). CIFAR-10 and CIFAR-100 (Krizhevsky 2009): 50,000 training images
// of 32×32 pixels in 10 or 100 classes, distributed as pickled uint8 arrays that a
// loader keeps in memory.
var presets = []Dataset{
	{Name: "imagenet-1k", Images: 1281167, Input: 0, Classes: 1000, SourceWidth: 400, SourceHeight: 350},
	{Name: "cifar-10", Images: 50000, Input: 32, Classes: 10, InMemory: true},
	{Name: "cifar-100", Images: 50000, Input: 32, Classes: 100, InMemory: true},
}

// Default is the dataset a run reads when none is named.
const Default = "imagenet-1k"

// Names lists the presets, sorted.
func Names() []string {
	out := make([]string, len(presets))
	for i, p := range presets {
		out[i] = p.Name
	}
	sort.Strings(out)
	return out
}

// Preset returns the named preset; an unknown name is an error that lists the presets.
func Preset(name string) (Dataset, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range presets {
		if p.Name == n {
			return p, nil
		}
	}
	return Dataset{}, fmt.Errorf("unknown dataset %q: use one of %s", name, strings.Join(Names(), ", "))
}

// Overrides replace a preset's figures; a zero field keeps the preset's.
type Overrides struct {
	Input   int // input height and width, pixels
	Classes int
	Images  int // training images per epoch
}

// Largest figures accepted, beyond any real training set.
const (
	maxInput   = 8192
	maxClasses = 1 << 20
	maxImages  = 1 << 40
)

// With returns d with the overrides applied. A negative or absurd figure is an error
// that names it, and d is returned unchanged.
func (d Dataset) With(o Overrides) (Dataset, error) {
	switch {
	case o.Input < 0 || o.Input > maxInput:
		return d, fmt.Errorf("input size %d: must be between 1 and %d pixels (0 keeps the dataset's or the model's)", o.Input, maxInput)
	case o.Classes < 0 || o.Classes > maxClasses:
		return d, fmt.Errorf("classes %d: must be between 1 and %d (0 keeps the dataset's)", o.Classes, maxClasses)
	case o.Images < 0 || o.Images > maxImages:
		return d, fmt.Errorf("images %d: must be between 1 and %d (0 keeps the dataset's)", o.Images, int64(maxImages))
	}
	out := d
	if o.Input > 0 {
		out.Input = o.Input
	}
	if o.Classes > 0 {
		out.Classes = o.Classes
	}
	if o.Images > 0 {
		out.Images = o.Images
	}
	return out, nil
}

// InputFor is the input size a model whose own default is modelDefault trains at on
// d: the dataset's (or its override's) when it has one, else the model's.
func (d Dataset) InputFor(modelDefault int) int {
	if d.Input > 0 {
		return d.Input
	}
	return modelDefault
}

// SourcePixels is the mean number of pixels of a stored image a loader decodes; 0
// for an in-memory dataset.
func (d Dataset) SourcePixels() float64 {
	if d.InMemory {
		return 0
	}
	return float64(d.SourceWidth) * float64(d.SourceHeight)
}
