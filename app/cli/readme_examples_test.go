package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository's root, seen from this package's directory (where go test runs).
const repoRoot = "../.."

// docPages are the README and the manual's pages, as paths from the repository's root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	if len(out) < 2 {
		t.Fatalf("no docs/*.md beside the README (found %v)", out)
	}
	return out
}

// readmeExample is a block of the README or a docs page that shows a command and what it prints.
type readmeExample struct {
	page    string   // README.md or docs/PAGE.md
	line    int      // of the command in the page
	args    []string // after "cnntime"
	printed []string // the lines shown, "…" where the page leaves lines out
}

// readmeExamples reads every fenced block of the README and of docs/*.md whose first
// line is "$ cnntime …": the documentation's promises of what a command prints.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	var out []readmeExample
	for _, page := range docPages(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			// A block may be indented under a list item: its lines are compared word by word.
			if strings.TrimSpace(lines[i]) != "```" || i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "$ cnntime ") {
				continue
			}
			ex := readmeExample{page: page, line: i + 2, args: exampleArgs(strings.Fields(strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "$ cnntime ")))}
			for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				ex.printed = append(ex.printed, lines[i])
			}
			out = append(out, ex)
		}
	}
	return out
}

// exampleArgs makes an example's arguments that name a file of the repository (a
// custom model file, say), written from the repository's root as a reader runs them,
// name it from this package's directory.
func exampleArgs(args []string) []string {
	for i, a := range args {
		if strings.HasPrefix(a, "-") || !strings.Contains(a, "/") {
			continue
		}
		if _, err := os.Stat(filepath.Join(repoRoot, a)); err == nil {
			args[i] = filepath.Join(repoRoot, a)
		}
	}
	return args
}

// TestREADMEExamplesAreWhatTheCLIPrints runs each command the README and the docs show
// with its output and checks that every line shown is printed, in that order (columns
// compared word by word: a page may leave rows out, which changes no other row). A
// change to the step model that moves a figure a page quotes fails here until the page
// says what cnntime says.
func TestREADMEExamplesAreWhatTheCLIPrints(t *testing.T) {
	examples := readmeExamples(t)
	perPage := map[string]int{}
	for _, ex := range examples {
		perPage[ex.page]++
	}
	if perPage["README.md"] < 3 || perPage["docs/predicting.md"] < 4 {
		t.Fatalf("examples per page %v: want the README's tour (best, to-target, own CNN) and predicting's best --nodes (2), framework (2) and explain ones at least", perPage)
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, ex := range examples {
		where := fmt.Sprintf("%s:%d", ex.page, ex.line)
		t.Run(where, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, ex.args...)
			if code != 0 {
				t.Fatalf("%s: cnntime %s exits %d: %s", where, strings.Join(ex.args, " "), code, stderr)
			}
			got := strings.Split(stdout, "\n")
			at := 0
			for _, want := range ex.printed {
				if strings.TrimSpace(want) == "…" || strings.TrimSpace(want) == "" {
					continue
				}
				found := false
				for ; at < len(got); at++ {
					if words(got[at]) == words(want) {
						found, at = true, at+1
						break
					}
				}
				if !found {
					t.Errorf("%s: cnntime %s no longer prints (in this order)\n  %s\nit prints:\n%s",
						where, strings.Join(ex.args, " "), want, stdout)
					return
				}
			}
		})
	}
}
