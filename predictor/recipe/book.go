package recipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Book is a set of recipes (the built-in ones: assets/recipes/recipes.yaml), each
// resolved and checked, with the fallback recipe of each dataset for a network that
// has none of its own and each dataset's reference law.
type Book struct {
	recipes  []Recipe
	fallback map[string]string // dataset → recipe ID
	refs     map[string]Reference
}

// bookFile is the built-in file's form: families of recipes sharing their settings,
// each listing the networks it was published for with what differs per network
// (their accuracy at least).
type bookFile struct {
	// Sources names the sources the recipes' citations share: each name in a
	// recipe's source is replaced by its text.
	Sources  map[string]string `yaml:"sources"`
	Fallback map[string]string `yaml:"fallback"`
	Families []family          `yaml:"families"`
}

type family struct {
	Recipe `yaml:",inline"`
	Models []Recipe `yaml:"models"`
}

// Parse reads a book of recipes; a recipe that is wrong is an error that names it and
// the field.
func Parse(data []byte) (Book, error) {
	var f bookFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Book{}, fmt.Errorf("recipes: %w", err)
	}
	b := Book{fallback: f.Fallback, refs: map[string]Reference{}}
	var pairs []string
	for name, text := range f.Sources {
		pairs = append(pairs, name, text)
	}
	cite := strings.NewReplacer(pairs...)
	seen := map[string]bool{}
	for _, fam := range f.Families {
		models := fam.Models
		if len(models) == 0 {
			models = []Recipe{{}}
		}
		for _, m := range models {
			r := fam.Recipe
			if r.NormWeightDecay != nil {
				v := *r.NormWeightDecay
				r.NormWeightDecay = &v
			}
			overlay(reflect.ValueOf(&r).Elem(), reflect.ValueOf(m))
			r.Source = cite.Replace(r.Source)
			if err := r.Law.resolve(r); err != nil {
				return Book{}, fmt.Errorf("recipe %s, law: %w", r.ID(), err)
			}
			if err := r.Check(); err != nil {
				return Book{}, err
			}
			if seen[r.ID()] {
				return Book{}, fmt.Errorf("recipes: %s is listed twice", r.ID())
			}
			seen[r.ID()] = true
			b.recipes = append(b.recipes, r)
		}
	}
	for ds, id := range b.fallback {
		if r, ok := b.byID(id); !ok || r.Dataset != ds {
			return Book{}, fmt.Errorf("recipes: the fallback of %s, %s, is no recipe of %s", ds, id, ds)
		}
	}
	// Each dataset's reference law: its noise-scale law over the most doublings.
	span := map[string]float64{}
	for _, r := range b.recipes {
		l := r.Law
		if l.Kind != NoiseScale {
			continue
		}
		if s := float64(l.MaxBatch) / float64(l.MinBatch); s > span[r.Dataset] {
			span[r.Dataset], b.refs[r.Dataset] = s, referenceOf(r)
		}
	}
	return b, nil
}

// overlay sets every field of dst that src gives (not its zero value), recursing into
// structs, so that a network's entry overrides its family's settings.
func overlay(dst, src reflect.Value) {
	for i := range src.NumField() {
		s, d := src.Field(i), dst.Field(i)
		if s.Kind() == reflect.Struct {
			overlay(d, s)
			continue
		}
		if !s.IsZero() {
			d.Set(s)
		}
	}
}

// All is every recipe, in the book's order.
func (b Book) All() []Recipe { return append([]Recipe(nil), b.recipes...) }

// Names lists the recipes' names, each once, sorted.
func (b Book) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range b.recipes {
		if !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (b Book) byID(id string) (Recipe, bool) {
	for _, r := range b.recipes {
		if r.ID() == id {
			return r, true
		}
	}
	return Recipe{}, false
}

// Named lists the recipes a name or an ID names.
func (b Book) Named(name string) []Recipe {
	n := strings.TrimSpace(name)
	var out []Recipe
	for _, r := range b.recipes {
		if r.Name == n || r.ID() == n {
			out = append(out, r)
		}
	}
	return out
}

// ForNetwork lists the recipes published for network on dataset ("" for every
// dataset), the default first.
func (b Book) ForNetwork(network, dataset string) []Recipe {
	var out []Recipe
	for _, r := range b.recipes {
		if r.Model == network && (dataset == "" || r.Dataset == dataset) {
			out = append(out, r)
		}
	}
	return out
}

// Default is network's recipe on dataset when none is named: the first published for
// it, else the dataset's fallback (own false: the recipe is another network's). No
// recipe for the dataset at all is an error that says what to give.
func (b Book) Default(network, dataset string) (r Recipe, own bool, err error) {
	if rs := b.ForNetwork(network, dataset); dataset != "" && len(rs) > 0 {
		return rs[0], true, nil
	}
	if id, ok := b.fallback[dataset]; ok {
		r, _ := b.byID(id)
		return r, false, nil
	}
	name := dataset
	if name == "" {
		name = "synthetic data"
	}
	return Recipe{}, false, fmt.Errorf("training to a target accuracy on %s: no recipe for it is built in (built-in recipes train on %s); give your own recipe file, or your recipe's epochs at a reference batch",
		name, strings.Join(b.datasets(), ", "))
}

func (b Book) datasets() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range b.recipes {
		if !seen[r.Dataset] {
			seen[r.Dataset] = true
			out = append(out, r.Dataset)
		}
	}
	sort.Strings(out)
	return out
}

// Find looks a recipe up for network: by its ID ("torchvision-v1/resnet50"), or by its
// name, the one published for network, or, when only one recipe has that name, that
// one (for another network). Anything else is an error that lists what there is.
func (b Book) Find(name, network string) (Recipe, error) {
	n := strings.TrimSpace(name)
	if r, ok := b.byID(n); ok {
		return r, nil
	}
	var same []Recipe
	for _, r := range b.recipes {
		if r.Name == n {
			if r.Model == network {
				return r, nil
			}
			same = append(same, r)
		}
	}
	switch len(same) {
	case 0:
		return Recipe{}, fmt.Errorf("recipe %q: no such recipe; built in: %s (or give a recipe file)", name, strings.Join(b.Names(), ", "))
	case 1:
		return same[0], nil
	}
	ids := make([]string, len(same))
	for i, r := range same {
		ids[i] = r.ID()
	}
	own := b.ForNetwork(network, "")
	hint := ""
	if len(own) > 0 {
		names := make([]string, len(own))
		for i, r := range own {
			names[i] = r.Name
		}
		hint = fmt.Sprintf("; %s's own recipes: %s", network, strings.Join(names, ", "))
	}
	return Recipe{}, fmt.Errorf("recipe %s is published for %d networks, not %s: name one of %s to apply it to %s as another network's recipe (extrapolated)%s",
		n, len(same), network, strings.Join(ids, ", "), network, hint)
}

// Reference is dataset's reference law (see Reference); a dataset without one of its
// own takes the widest-spreading one of any dataset, and ok is false.
func (b Book) Reference(dataset string) (ref Reference, ok bool) {
	if r, ok := b.refs[dataset]; ok {
		return r, true
	}
	keys := make([]string, 0, len(b.refs))
	for k := range b.refs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if r := b.refs[k]; r.SpreadPerDoublingPct > ref.SpreadPerDoublingPct {
			ref = r
		}
	}
	return ref, false
}

// Plan resolves the recipe a run of network on dataset trains with (named: by Find;
// "": Default) to the target top-1 accuracy (0: the recipe's own). A recipe of another
// dataset is an error.
func (b Book) Plan(name, network, dataset string, target float64) (Plan, error) {
	var r Recipe
	var err error
	if strings.TrimSpace(name) == "" {
		r, _, err = b.Default(network, dataset)
	} else {
		r, err = b.Find(name, network)
	}
	if err != nil {
		return Plan{}, err
	}
	return b.PlanFor(r, network, dataset, target)
}

// PlanFor resolves recipe r (a built-in one, or a user's) for a run of network on
// dataset to the target accuracy (0: the recipe's own).
func (b Book) PlanFor(r Recipe, network, dataset string, target float64) (Plan, error) {
	if dataset != "" && r.Dataset != dataset {
		return Plan{}, fmt.Errorf("recipe %s reached its accuracy on %s; this run trains on %s: choose a recipe of %s", r.ID(), r.Dataset, dataset, dataset)
	}
	ref, _ := b.Reference(r.Dataset)
	p, err := ForTarget(r, network, target, ref)
	if err != nil && target > r.Top1 {
		var reach []string
		for _, o := range b.ForNetwork(network, r.Dataset) {
			if o.Top1 >= target {
				reach = append(reach, fmt.Sprintf("%s reaches %s", o.ID(), FormatTop1(o.Top1)))
			}
		}
		if len(reach) > 0 {
			err = fmt.Errorf("%w (%s)", err, strings.Join(reach, ", "))
		}
	}
	return p, err
}

// MaxFileBytes bounds a recipe file: a recipe is a few hundred bytes.
const MaxFileBytes = 64 << 10

// ParseFile reads a user's recipe: one recipe as YAML or JSON (name as the file
// calls it, for errors). Unknown keys, a second document and every out-of-range field
// are errors that name the key.
func ParseFile(data []byte, name string) (Recipe, error) {
	if len(data) > MaxFileBytes {
		return Recipe{}, fmt.Errorf("recipe file %s: %d bytes; a recipe file holds at most %d", name, len(data), MaxFileBytes)
	}
	var r Recipe
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		if errors.Is(err, io.EOF) {
			return Recipe{}, fmt.Errorf("recipe file %s is empty: give one recipe (name, dataset, opt, lr, ..., epochs, global_batch, top1, source)", name)
		}
		return Recipe{}, fmt.Errorf("recipe file %s: %w", name, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return Recipe{}, fmt.Errorf("recipe file %s holds more than one document: give one recipe", name)
	}
	if err := r.Law.resolve(r); err != nil {
		return Recipe{}, fmt.Errorf("recipe file %s, law: %w", name, err)
	}
	if err := r.Check(); err != nil {
		return Recipe{}, fmt.Errorf("recipe file %s: %w", name, err)
	}
	return r, nil
}
