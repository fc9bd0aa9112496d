package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeExample is a block of the README that shows a command and what it prints.
type readmeExample struct {
	line    int      // of the command in README.md
	args    []string // after "cnntime"
	printed []string // the lines shown, "…" where the README leaves lines out
}

// readmeExamples reads every fenced block of README.md whose first line is
// "$ cnntime …": the README's promises of what a command prints.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeExample
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		// A block may be indented under a list item: its lines are compared word by word.
		if strings.TrimSpace(lines[i]) != "```" || i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "$ cnntime ") {
			continue
		}
		ex := readmeExample{line: i + 2, args: strings.Fields(strings.TrimPrefix(strings.TrimSpace(lines[i+1]), "$ cnntime "))}
		for i += 2; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			ex.printed = append(ex.printed, lines[i])
		}
		out = append(out, ex)
	}
	return out
}

// TestREADMEExamplesAreWhatTheCLIPrints runs each command the README shows with its
// output and checks that every line shown is printed, in that order (columns compared
// word by word: the README may leave rows out, which changes no other row). A change to
// the step model that moves a figure the README quotes fails here until the README
// says what cnntime says.
func TestREADMEExamplesAreWhatTheCLIPrints(t *testing.T) {
	examples := readmeExamples(t)
	if len(examples) < 4 {
		t.Fatalf("found %d README examples, want the best --nodes (2), framework and explain ones at least", len(examples))
	}
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, ex := range examples {
		t.Run(fmt.Sprintf("README.md:%d", ex.line), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, ex.args...)
			if code != 0 {
				t.Fatalf("README.md:%d: cnntime %s exits %d: %s", ex.line, strings.Join(ex.args, " "), code, stderr)
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
					t.Errorf("README.md:%d: cnntime %s no longer prints (in this order)\n  %s\nit prints:\n%s",
						ex.line, strings.Join(ex.args, " "), want, stdout)
					return
				}
			}
		})
	}
}
