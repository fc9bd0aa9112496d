package app

import (
	"context"
	"sort"
	"strings"

	"cnntime/db"
	"cnntime/predictor/cnn"
)

// The kinds of names a user types on a command line, as Names lists them.
const (
	ModelNames   = "models"   // the zoo's CNNs and the cache's own
	MachineNames = "machines" // catalog machines and the user's
	GPUNames     = "gpus"     // catalog GPU ids
	RegionNames  = "regions"  // every region a machine has a price in
)

// NameKinds lists the kinds Names takes, in the order help shows them.
var NameKinds = []string{ModelNames, MachineNames, GPUNames, RegionNames}

// Names lists the names of a kind (one of NameKinds) that a command accepts, sorted:
// from the embedded catalog and, when d is not nil, the cache's custom models, user
// machines and imported prices. Shell completion offers them.
func Names(ctx context.Context, d *db.DB, kind string) ([]string, error) {
	var out []string
	switch kind {
	case ModelNames:
		out = cnn.Names()
		if d != nil {
			saved, err := d.CustomModels(ctx)
			if err != nil {
				return nil, err
			}
			for _, m := range saved {
				out = append(out, m.Name)
			}
		}
	case MachineNames, RegionNames:
		machines, err := Machines(ctx, d)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, m := range machines {
			if kind == MachineNames {
				out = append(out, m.ID)
				continue
			}
			for _, r := range m.KnownRegions() {
				if r != "" && !seen[strings.ToLower(r)] {
					seen[strings.ToLower(r)] = true
					out = append(out, r)
				}
			}
		}
	case GPUNames:
		cat, err := LoadCatalog()
		if err != nil {
			return nil, err
		}
		for _, g := range cat.GPUs() {
			out = append(out, g.ID)
		}
	default:
		return nil, Inputf("unknown kind of name %q: use %s", kind, strings.Join(NameKinds, ", "))
	}
	sort.Strings(out)
	return out, nil
}

// CompleteNames is the names of a kind that complete word, a comma-separated list
// being typed: each is the list so far with its last item completed, so a shell can
// offer it whole. Names already in the list are not offered again.
func CompleteNames(ctx context.Context, d *db.DB, kind, word string) ([]string, error) {
	names, err := Names(ctx, d, kind)
	if err != nil {
		return nil, err
	}
	done, last := "", word
	if i := strings.LastIndexByte(word, ','); i >= 0 {
		done, last = word[:i+1], word[i+1:]
	}
	typed := map[string]bool{}
	for _, n := range strings.Split(done, ",") {
		typed[strings.ToLower(n)] = true
	}
	var out []string
	for _, n := range names {
		if !typed[strings.ToLower(n)] && strings.HasPrefix(strings.ToLower(n), strings.ToLower(last)) {
			out = append(out, done+n)
		}
	}
	return out, nil
}
