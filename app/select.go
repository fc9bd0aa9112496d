package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cnntime/predictor/cnn"
)

// AllSelector names every model (the zoo's) or every machine (the catalog's and the
// user's) in a --model or --machine list.
const AllSelector = "all"

// ExpandMachines turns a --machine list into machine ids: "all" is every catalog and
// user machine, a provider's name ("aws", or "provider:aws") its machines, "gpu:ID"
// every machine with that GPU; anything else is an id, kept as given. Each machine
// comes once, in the order first named.
func (e *Engine) ExpandMachines(items []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(id string) {
		if k := strings.ToLower(id); !seen[k] {
			seen[k] = true
			out = append(out, id)
		}
	}
	providers := map[string]bool{}
	for _, id := range e.machineIDs {
		if p := e.machines[strings.ToLower(id)].Provider; p != "" {
			providers[strings.ToLower(p)] = true
		}
	}
	for _, item := range items {
		key := strings.ToLower(strings.TrimSpace(item))
		switch {
		case key == AllSelector:
			for _, id := range e.machineIDs {
				add(id)
			}
		case strings.HasPrefix(key, "gpu:"):
			gpu := strings.TrimPrefix(key, "gpu:")
			if _, err := e.catalog.GPU(gpu); err != nil {
				return nil, err
			}
			n := 0
			for _, id := range e.machineIDs {
				if strings.EqualFold(e.machines[strings.ToLower(id)].GPUID, gpu) {
					add(id)
					n++
				}
			}
			if n == 0 {
				return nil, fmt.Errorf("no machine has the GPU %s: use --gpu %s for the bare GPU", gpu, gpu)
			}
		case strings.HasPrefix(key, "provider:") || (!strings.Contains(key, "/") && providers[key]):
			p := strings.TrimPrefix(key, "provider:")
			if !providers[p] {
				return nil, fmt.Errorf("unknown provider %q: the machines are from %s", p, strings.Join(slices.Sorted(maps.Keys(providers)), ", "))
			}
			for _, id := range e.machineIDs {
				if strings.EqualFold(e.machines[strings.ToLower(id)].Provider, p) {
					add(id)
				}
			}
		default:
			add(item)
		}
	}
	return out, nil
}

// ExpandModels turns a --model list into model names and files: "all" is every zoo
// model; anything else is kept as given.
func ExpandModels(items []string) []string {
	var out []string
	for _, item := range items {
		if strings.EqualFold(strings.TrimSpace(item), AllSelector) {
			for _, n := range cnn.Names() {
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
			continue
		}
		out = append(out, item)
	}
	return out
}
