package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// choiceFlag is an enumerated flag of a command or action.
type choiceFlag struct {
	set  string // "predict", "cache export"
	name string
	v    *choiceValue
}

// allChoiceFlags is every enumerated flag of every command and action.
func allChoiceFlags(t *testing.T) []choiceFlag {
	t.Helper()
	var out []choiceFlag
	for _, c := range Commands() {
		for _, s := range commandFlagSets(c) {
			s.fs.VisitAll(func(f *flag.Flag) {
				if v, ok := f.Value.(*choiceValue); ok {
					out = append(out, choiceFlag{s.name, f.Name, v})
				}
			})
		}
	}
	if len(out) < 15 {
		t.Fatalf("found %d enumerated flags; predict alone has 9", len(out))
	}
	return out
}

// flagBlock is the lines `cnntime help` prints for one flag: its line and those
// indented under it.
func flagBlock(help, set, name string) string {
	lines := strings.Split(help, "\n")
	inSet := !strings.Contains(help, "\nflags of ")
	var out []string
	for i, l := range lines {
		if strings.HasPrefix(l, "flags of ") {
			inSet = l == "flags of "+set+":"
		}
		if !inSet || !strings.HasPrefix(l, "  --"+name+" ") && l != "  --"+name {
			continue
		}
		out = append(out, l)
		for _, m := range lines[i+1:] {
			if !strings.HasPrefix(m, "      ") {
				break
			}
			out = append(out, m)
		}
		break
	}
	return strings.Join(out, "\n")
}

// Every choice the parser of an enumerated flag accepts is listed, with what it means,
// by `cnntime help COMMAND` and by the command reference (docs/commands.md), for every
// command and action. The choices are probed with every name and alias any flag takes,
// so a parser that learns a value (a new loader, an alias) fails here until the flag's
// choices list it.
func TestHelpListsEveryChoice(t *testing.T) {
	flags := allChoiceFlags(t)
	reference, err := os.ReadFile(filepath.Join(repoRoot, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	probes := map[string]bool{"none": true, "default": true, "auto": true} // an empty value is the default, not a choice
	for _, f := range flags {
		for _, ch := range f.v.choices {
			probes[ch.name] = true
			for _, a := range ch.aliases {
				probes[a] = true
			}
		}
	}
	helps := map[string]string{}
	for _, f := range flags {
		cmd := strings.Fields(f.set)[0]
		if _, ok := helps[cmd]; !ok {
			code, out, errOut := runCLI(t, "help", cmd)
			if code != 0 {
				t.Fatalf("help %s: exit %d: %s", cmd, code, errOut)
			}
			helps[cmd] = out
		}
		block := flagBlock(helps[cmd], f.set, f.name)
		if block == "" {
			t.Errorf("help %s does not list --%s (of %s)", cmd, f.name, f.set)
			continue
		}
		listed := map[string]bool{}
		for _, ch := range f.v.choices {
			listed[ch.name] = true
			if err := f.v.accept(ch.name); err != nil {
				t.Errorf("%s --%s lists %q, which its parser refuses: %v", f.set, f.name, ch.name, err)
			}
			if !regexp.MustCompile(`(?m)^ +` + regexp.QuoteMeta(ch.name) + ` +\S`).MatchString(block) {
				t.Errorf("help %s --%s does not explain the choice %q:\n%s", cmd, f.name, ch.name, block)
			}
			if !bytes.Contains(reference, []byte("  - `"+ch.name+"`: ")) {
				t.Errorf("docs/commands.md does not list %s --%s's choice %q: run %s", f.set, f.name, ch.name, ReferenceCommand)
			}
			for _, a := range ch.aliases {
				listed[a] = true
				if err := f.v.accept(a); err != nil {
					t.Errorf("%s --%s lists the alias %q, which its parser refuses: %v", f.set, f.name, a, err)
				}
				if !strings.Contains(block, a) {
					t.Errorf("help %s --%s does not name the alias %q of %q", cmd, f.name, a, ch.name)
				}
			}
		}
		for p := range probes {
			if !listed[p] && f.v.accept(p) == nil {
				t.Errorf("%s --%s: its parser accepts %q, which neither help nor the reference lists", f.set, f.name, p)
			}
		}
	}
}

// Every choice says what it means.
func TestEveryChoiceIsExplained(t *testing.T) {
	for _, f := range allChoiceFlags(t) {
		for _, ch := range f.v.choices {
			if len(strings.Fields(ch.help)) < 2 {
				t.Errorf("%s --%s: the choice %q has no explanation (%q): add one where its choices are listed (app/cli/choices.go)", f.set, f.name, ch.name, ch.help)
			}
		}
	}
}

// choiceList matches a flag with its choices spelled out: --loader a|b|c.
var choiceList = regexp.MustCompile(`--([a-z][a-z-]*) ([a-z0-9.-]+(?:\|[a-z0-9.-]+)+)\b`)

// sameChoices reports whether "a|b|c" names the same choices as want, in any order.
func sameChoices(got, want string) bool {
	g, w := strings.Split(got, "|"), strings.Split(want, "|")
	sort.Strings(g)
	sort.Strings(w)
	return strings.Join(g, "|") == strings.Join(w, "|")
}

// The synopsis a command prints (`usage: cnntime …`) offers exactly its flags' choices
// wherever it spells them out as a|b|c, and so does every page of the README and the
// manual, for some command's flag of that name (--table is export's results|curves and
// validate's steps|convergence).
func TestSynopsisChoicesAreTheFlags(t *testing.T) {
	checked := 0
	anyCommand := map[string][]string{} // a flag's choices in each command that has it
	for _, c := range Commands() {
		choices := map[string]string{}
		for _, s := range commandFlagSets(c) {
			s.fs.VisitAll(func(f *flag.Flag) {
				if v, ok := f.Value.(*choiceValue); ok {
					choices[f.Name] = alternatives(v.choices)
					if !slices.Contains(anyCommand[f.Name], alternatives(v.choices)) {
						anyCommand[f.Name] = append(anyCommand[f.Name], alternatives(v.choices))
					}
				}
			})
		}
		for _, m := range choiceList.FindAllStringSubmatch(c.Usage, -1) {
			want, ok := choices[m[1]]
			if !ok {
				continue // not an enumerated flag (--device cpu|cuda:N)
			}
			checked++
			if !sameChoices(m[2], want) {
				t.Errorf("%s's synopsis offers --%s %s; the flag takes %s", c.Name, m[1], m[2], want)
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked %d choice lists in the synopses; predict's alone has 9", checked)
	}
	for _, page := range docPages(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range choiceList.FindAllStringSubmatch(string(data), -1) {
			wants, ok := anyCommand[m[1]]
			if !ok {
				continue
			}
			found := false
			for _, w := range wants {
				found = found || sameChoices(m[2], w)
			}
			if !found {
				t.Errorf("%s offers --%s %s; the flag takes %s", page, m[1], m[2], strings.Join(wants, " or "))
			}
		}
	}
}

// The command reference page is what `cnntime help --markdown` prints today.
func TestCommandReferenceIsCurrent(t *testing.T) {
	t.Setenv("CNNTIME_PRICES_URL", "") // an environment default would change the page
	code, out, errOut := runCLI(t, "help", "--markdown")
	if code != 0 {
		t.Fatalf("help --markdown: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(page) != out {
		gotLines, wantLines := strings.Split(string(page), "\n"), strings.Split(out, "\n")
		for i := 0; i < len(gotLines) || i < len(wantLines); i++ {
			var g, w string
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if g != w {
				t.Fatalf("docs/commands.md is not what cnntime help --markdown prints (line %d: %q, want %q): run %s", i+1, g, w, ReferenceCommand)
			}
		}
	}
}

// The issue's own case: predict takes every loader its help lists, and help lists them all.
func TestPredictTakesEveryLoaderItsHelpLists(t *testing.T) {
	code, help, _ := runCLI(t, "help", "predict")
	if code != 0 {
		t.Fatal("help predict failed")
	}
	for _, l := range []string{"synthetic", "pytorch", "dali", "dali-cpu", "ffcv", "tfdata"} {
		if !strings.Contains(flagBlock(help, "predict", "loader"), "\n          "+l+" ") {
			t.Errorf("help predict does not list the loader %s", l)
		}
		if code, _, errOut := runCLI(t, "predict", "--model", "resnet18", "--gpu", "t4", "--batch", "32", "--loader", l); code != 0 {
			t.Errorf("predict --loader %s: exit %d: %s", l, code, errOut)
		}
	}
}

// TestHelpFlagPrintsToStdout: --help (or -h) on every command and action prints its
// usage on standard output and exits 0, as a user piping it to less expects; launch and
// cluster asked for help before naming their action exited 2 with a line on stderr.
func TestHelpFlagPrintsToStdout(t *testing.T) {
	cases := [][]string{{"launch", "skypilot"}, {"launch", "slurm"}, {"cluster", "slurm"}, {"cluster", "k8s"},
		{"cache", "import"}, {"predict", "--model", "resnet50"}, {"launch", "--model", "resnet50"}}
	for _, name := range commandNames() {
		cases = append(cases, []string{name})
	}
	for _, args := range cases {
		for _, h := range []string{"--help", "-h"} {
			var out, errOut bytes.Buffer
			code := RunCLI(context.Background(), append(append([]string{"--db", filepath.Join(t.TempDir(), "c.db")}, args...), h), strings.NewReader(""), &out, &errOut)
			if code != 0 || errOut.Len() != 0 || !strings.Contains(out.String(), "cnntime "+args[0]) {
				t.Errorf("cnntime %s %s: exit %d, stdout %d bytes, stderr %q; want exit 0 and the usage on stdout",
					strings.Join(args, " "), h, code, out.Len(), errOut.String())
			}
		}
	}
	// A wrong flag is still an error on stderr, with the usage, exit 2.
	var out, errOut bytes.Buffer
	if code := RunCLI(context.Background(), []string{"--db", filepath.Join(t.TempDir(), "c.db"), "predict", "--bogus"}, strings.NewReader(""), &out, &errOut); code != 2 || out.Len() != 0 ||
		!strings.Contains(errOut.String(), "-bogus") || !strings.Contains(errOut.String(), "usage: cnntime predict") {
		t.Errorf("predict --bogus: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", code, out.String(), errOut.String())
	}
}
