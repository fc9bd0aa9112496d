package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// completionScript writes `cnntime completion SHELL` to a file and returns its path.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	code, out, errOut := runCLI(t, "completion", shell)
	if code != 0 || out == "" {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errOut)
	}
	path := filepath.Join(t.TempDir(), "cnntime."+shell)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// needShell skips a test when the shell is not installed (make test installs zsh and
// fish; bash is always there).
func needShell(t *testing.T, shell string) string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed (make test-deps installs it)", shell)
	}
	return path
}

// Each shell reads its completion script without a syntax error.
func TestCompletionScriptsParse(t *testing.T) {
	for _, tc := range []struct{ shell, check string }{{"bash", "-n"}, {"zsh", "-n"}, {"fish", "--no-execute"}} {
		t.Run(tc.shell, func(t *testing.T) {
			sh := needShell(t, tc.shell)
			script := completionScript(t, tc.shell)
			if out, err := exec.Command(sh, tc.check, script).CombinedOutput(); err != nil {
				t.Errorf("%s %s rejects the script: %v\n%s", tc.shell, tc.check, err, out)
			}
		})
	}
	if code, _, errOut := runCLI(t, "completion", "tcsh"); code != 2 || !strings.Contains(errOut, "use bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d, %q; want 2 and the shells it writes", code, errOut)
	}
}

// completionQuery is a command line typed up to the cursor and the words completion
// must offer there.
type completionQuery struct {
	words []string // after "cnntime"; the last is the word under the cursor
	want  []string
}

// completionQueries asks, for every enumerated flag of every command and action,
// for its values, and for every command's flags and actions.
func completionQueries(t *testing.T) []completionQuery {
	t.Helper()
	var qs []completionQuery
	for _, f := range allChoiceFlags(t) {
		qs = append(qs, completionQuery{append(strings.Fields(f.set), "--"+f.name, ""), choiceWords(f.v.choices)})
	}
	for _, c := range Commands() {
		for _, s := range commandFlagSets(c) {
			var names []string
			s.fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
			qs = append(qs, completionQuery{append(strings.Fields(s.name), "--"), names})
		}
		if acts := completionModelOf().namedActions(c.Name); len(acts) > 0 && c.Name != "help" {
			qs = append(qs, completionQuery{[]string{c.Name, ""}, acts})
		}
	}
	qs = append(qs,
		completionQuery{[]string{"--db", "x.db", "predict", "--loader", "dali"}, []string{"dali", "dali-cpu"}},
		completionQuery{[]string{"pre"}, []string{"predict"}},
		completionQuery{[]string{"help", "ex"}, []string{"explain", "export"}},
	)
	return qs
}

// checkCompletions compares what a shell offered (one query's words per line,
// space-separated) with what each query wants.
func checkCompletions(t *testing.T, shell string, qs []completionQuery, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(qs) {
		t.Fatalf("%s answered %d queries of %d:\n%s", shell, len(lines), len(qs), out)
	}
	for i, q := range qs {
		got := strings.Fields(lines[i])
		want := append([]string(nil), q.want...)
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: cnntime %s<TAB> offers %v, want %v", shell, strings.Join(q.words, " "), got, want)
		}
	}
}

// shellWordsOf is q's words after "cnntime", each quoted for bash and zsh.
func shellWordsOf(q completionQuery) string {
	words := []string{"cnntime"}
	for _, w := range q.words {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

// Each shell's completion offers each enumerated flag's choices, each command's flags
// and actions, as the FlagSets define them: every query is typed into the shell's own
// completion, one line of words offered per query. zsh's completion widgets need a
// terminal, so its _describe, compadd, _files and compset are stood in for by
// functions that print the words offered (unfiltered: only queries at an empty word or
// "--" are asked of zsh).
func TestCompletionOffersTheFlagsAndChoices(t *testing.T) {
	for _, sh := range []struct {
		name    string
		args    []string // before the script
		prelude string   // what loads SCRIPT
		query   func(q completionQuery) string
		all     bool // every query, or only those at an empty word or "--"
	}{
		{"bash", []string{"--norc", "-c"}, "source SCRIPT\n", func(q completionQuery) string {
			return fmt.Sprintf("COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _cnntime; echo \"${COMPREPLY[*]}\"\n", shellWordsOf(q), len(q.words))
		}, true},
		{"fish", []string{"--no-config", "-c"}, "source SCRIPT\n", func(q completionQuery) string {
			return fmt.Sprintf("echo (complete -C %s | string replace -r '\\t.*' '')\n", fishQuote("cnntime "+strings.Join(q.words, " ")))
		}, true},
		{"zsh", []string{"-f", "-c"}, "compdef() { :; }\nsource SCRIPT\n" +
			"_describe() { local arr=${@[-1]}; print -r -- ${${(P)arr}%%:*} }\n" +
			"compadd() { shift; print -r -- \"$@\" }\n_files() { print }\ncompset() { PREFIX=${PREFIX#*=} }\n",
			func(q completionQuery) string {
				return fmt.Sprintf("words=(%s); CURRENT=%d; _cnntime\n", shellWordsOf(q), len(q.words)+1)
			}, false},
	} {
		t.Run(sh.name, func(t *testing.T) {
			path := needShell(t, sh.name)
			script := completionScript(t, sh.name)
			var qs []completionQuery
			for _, q := range completionQueries(t) {
				if last := q.words[len(q.words)-1]; sh.all || last == "" || last == "--" {
					qs = append(qs, q)
				}
			}
			var b bytes.Buffer
			b.WriteString(strings.ReplaceAll(sh.prelude, "SCRIPT", shellQuote(script)))
			for _, q := range qs {
				b.WriteString(sh.query(q))
			}
			cmd := exec.Command(path, append(sh.args, b.String())...)
			cmd.Dir = t.TempDir() // file name completion finds nothing there
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", sh.name, err, out)
			}
			checkCompletions(t, sh.name, qs, strings.ReplaceAll(string(out), `\:`, ":"))
		})
	}
}

// The words completion offers are plain: a shell's word list (compgen -W expands
// what it is given) reads them as they are.
func TestCompletionWordsArePlain(t *testing.T) {
	plain := regexp.MustCompile(`^[A-Za-z0-9._:/-]+$`)
	m := completionModelOf()
	words := m.commandNames()
	for _, c := range m.commands {
		words = append(words, m.namedActions(c.Name)...)
	}
	for _, s := range m.sets {
		for _, f := range s.flags {
			words = append(words, "--"+f.name)
			words = append(words, choiceWords(f.choices)...)
		}
	}
	for _, w := range words {
		if !plain.MatchString(w) {
			t.Errorf("completion offers %q, which a shell's word list would expand or split", w)
		}
	}
}
