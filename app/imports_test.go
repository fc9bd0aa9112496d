package app

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// modulePackages reads the import lists of every package of the module, from the
// sources (every build tag, test files left out), keyed by import path ("cnntime/db"),
// and which packages have a doc.go whose package comment says what they may import
// (a paragraph starting "Imports:").
func modulePackages(t *testing.T) (module string, imports map[string][]string, hasDoc map[string]bool) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			module = f[1]
		}
	}
	imports, hasDoc = map[string][]string{}, map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := module
		if rel != "." {
			pkg = module + "/" + filepath.ToSlash(rel)
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if _, seen := imports[pkg]; !seen {
			imports[pkg] = nil
		}
		for _, spec := range f.Imports {
			ip, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			imports[pkg] = append(imports[pkg], ip)
		}
		if filepath.Base(p) == "doc.go" && f.Doc != nil && strings.Contains(f.Doc.Text(), "Imports:") {
			hasDoc[pkg] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, list := range imports {
		sort.Strings(list)
		imports[p] = slices.Compact(list)
	}
	return module, imports, hasDoc
}

// under says whether pkg is dir or one of its sub-packages.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestImportGraph keeps the house's layering (DESIGN.md, "Rules that keep the house
// easy to change"): data flows views → app → {predictor, gpu, db}; predictor imports
// nothing of ours outside predictor/; db knows nothing of Fyne, CUDA, gpu or app; only
// views and main import Fyne; only the worker links gorgonia.org/cu; app has no flag
// parsing (app/cli does); the accuracy tables (app/validate) serve only the
// command line; and no package climbs back up: a sub-package never imports a
// package that depends on its own parent (predictor/kernels/fit importing predictor,
// which imports predictor/kernels, did). Every package but main and the worker says in a
// doc.go what it does and what it may import.
func TestImportGraph(t *testing.T) {
	mod, imports, hasDoc := modulePackages(t)
	if len(imports) < 10 || imports[mod+"/predictor"] == nil {
		t.Fatalf("found %d packages of %s: not the module's tree", len(imports), mod)
	}
	ours := func(ip string) bool { return under(ip, mod) }
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)

	// deps: the packages of ours that p imports, directly or not.
	memo := map[string]map[string]bool{}
	var deps func(p string) map[string]bool
	deps = func(p string) map[string]bool {
		if d, ok := memo[p]; ok {
			return d
		}
		d := map[string]bool{}
		memo[p] = d
		for _, ip := range imports[p] {
			if ours(ip) {
				d[ip] = true
				for q := range deps(ip) {
					d[q] = true
				}
			}
		}
		return d
	}

	for _, p := range pkgs {
		for _, ip := range imports[p] {
			switch {
			case under(p, mod+"/predictor") && ours(ip) && !under(ip, mod+"/predictor"):
				t.Errorf("%s imports %s: predictor imports nothing of ours outside predictor/", p, ip)
			case under(ip, "fyne.io") && p != mod && !under(p, mod+"/views"):
				t.Errorf("%s imports %s: only views and main import Fyne", p, ip)
			case under(ip, "gorgonia.org/cu") && !under(p, mod+"/gpu/cuda") && !under(p, mod+"/gpu/cmd"):
				t.Errorf("%s imports %s: only the cnntime-gpu worker links CUDA", p, ip)
			case under(p, mod+"/db") && ours(ip) && !under(ip, mod+"/db") && !under(ip, mod+"/predictor/hw") && !under(ip, mod+"/predictor/measure"):
				t.Errorf("%s imports %s: db knows only the records it stores (predictor/hw, predictor/measure) and its own sub-packages", p, ip)
			case under(p, mod+"/gpu") && (under(ip, mod+"/db") || under(ip, mod+"/app") || under(ip, mod+"/views")):
				t.Errorf("%s imports %s: gpu returns measurements; app writes the cache", p, ip)
			case under(p, mod+"/views") && (under(ip, mod+"/db") || under(ip, mod+"/gpu") || under(ip, mod+"/app/cli")):
				t.Errorf("%s imports %s: views shows what app gives it, never the cache, the GPU or the command line", p, ip)
			case under(ip, mod+"/views") && p != mod:
				t.Errorf("%s imports %s: only main imports views", p, ip)
			case under(ip, mod+"/app/cli") && p != mod:
				t.Errorf("%s imports %s: only main imports the command line", p, ip)
			case under(ip, mod+"/app/validate") && !under(p, mod+"/app/validate") && !under(p, mod+"/app/cli"):
				t.Errorf("%s imports %s: the accuracy tables are the command line's (cnntime validate), not a use case", p, ip)
			case under(p, mod+"/app/validate") && (under(ip, mod+"/app/cli") || under(ip, mod+"/views")):
				t.Errorf("%s imports %s: the accuracy tables sit below the command line and the GUI", p, ip)
			case ip == "flag" && under(p, mod+"/app") && !under(p, mod+"/app/cli"):
				t.Errorf("%s imports flag: app has no flag parsing (app/cli does)", p)
			}
		}
		// No climbing back up: p's parent package (when its directory is one) is
		// below p, and so are its other sub-packages; nothing else that p imports may
		// depend on that parent, since what depends on the parent sits above it.
		if parent := path.Dir(p); parent != p && parent != "." && imports[parent] != nil && parent != mod {
			for _, ip := range imports[p] {
				if ours(ip) && !under(ip, parent) && deps(ip)[parent] {
					t.Errorf("%s imports %s, which depends on %s, %s's own parent: the arrow climbs back up", p, ip, parent, p)
				}
			}
		}
		if p != mod && !strings.HasPrefix(p, mod+"/gpu/cmd/") && !hasDoc[p] {
			t.Errorf("%s has no doc.go whose package comment says its job and, after \"Imports:\", what it may import", p)
		}
	}
}
