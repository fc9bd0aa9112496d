package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"cnntime/app"
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
	// Names from the catalog (and the cache: none here), through `completion names`.
	for _, nq := range []struct{ kind, flag, word string }{
		{app.ModelNames, "predict --model", "resnet1"}, {app.ModelNames, "best --models", "resnet50,mobilenet_v"},
		{app.MachineNames, "launch skypilot --machine", "aws/p4"}, {app.GPUNames, "predict --gpu", ""},
		{app.RegionNames, "best --region", "us-"},
	} {
		want, err := app.CompleteNames(context.Background(), nil, nq.kind, nq.word)
		if err != nil || len(want) == 0 {
			t.Fatalf("CompleteNames(%s, %q) = %v, %v", nq.kind, nq.word, want, err)
		}
		qs = append(qs, completionQuery{append(strings.Fields(nq.flag), nq.word), want})
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
			cmd.Env = cnntimeOnPath(t)
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

// cnntimeOnPath is the environment with a "cnntime" on PATH that runs this test binary
// as the command line (the completion scripts call `cnntime completion names`), and no
// cache: the names are the catalog's.
func cnntimeOnPath(t *testing.T) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\n" + runAsCLIEnv + "=1 exec " + shellQuote(self) + " \"$@\"\n"
	for _, name := range []string{"cnntime", "cnntime-headless"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CNNTIME_DB="+filepath.Join(dir, "no-cache", "cache.db"))
}

// TestZshCompletesValuesInZsh types into a real interactive zsh (zsh/zpty, compinit,
// the real _describe and compadd) and reads what it lists: the --precision choices
// (`_describe` once took the flag's name, "--precision", for its own options: "bad
// option: --"), and GPU names from `cnntime completion names`, for cnntime and for
// cnntime-headless.
func TestZshCompletesValuesInZsh(t *testing.T) {
	zsh := needShell(t, "zsh")
	script := completionScript(t, "zsh")
	cases := []struct {
		line string
		want []string
	}{
		{"cnntime predict --precision ", []string{"fp32-strict", "amp", "strict FP32 everywhere"}},
		{"cnntime-headless best --precision=", []string{"fp32-strict", "amp"}},
		{"cnntime predict --gpu h10", []string{"h100-sxm", "h100-pcie", "h100-nvl"}},
		{"cnntime best --model resnet50,mobilenet_v3", []string{"resnet50,mobilenet_v3_large", "resnet50,mobilenet_v3_small"}},
	}
	// One interactive zsh answers every line: each is typed with a TAB (LIST_AMBIGUOUS
	// off: zsh inserts the matches' common part and lists them at once), read until the
	// terminal is quiet, then cleared with Ctrl-U; "=== N" separates the answers.
	var driver strings.Builder
	driver.WriteString(`zmodload zsh/zpty
zpty -b z 'zsh -f -i'
zpty -w z 'PS1="> "; unsetopt LIST_AMBIGUOUS; autoload -Uz compinit && compinit -u -D; source ` + shellQuote(script) + `; print RE""ADY'
quiet() { local chunk got=1; out=""; while (( got )); do got=0; sleep 0.6; while zpty -r -t z chunk; do out+=$chunk; got=1; done; done }
local out
local seen=""
for i in {1..100}; do quiet; seen+=$out; [[ $seen == *READY* ]] && break; done
`)
	for i, tc := range cases {
		fmt.Fprintf(&driver, "zpty -w -n z %s$'\\t'; quiet; print -r -- \"=== %d $out\"; zpty -w -n z $'\\x15'; quiet\n", shellQuote(tc.line), i)
	}
	driver.WriteString("zpty -d z\n")
	cmd := exec.Command(zsh, "-f", "-c", driver.String())
	cmd.Env = append(cnntimeOnPath(t), "TERM=xterm", "COLUMNS=200", "LINES=50")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zsh: %v\n%s", err, out)
	}
	answers := strings.Split(string(out), "=== ")
	if len(answers) != len(cases)+1 {
		t.Fatalf("zsh answered %d lines of %d:\n%q", len(answers)-1, len(cases), out)
	}
	for i, tc := range cases {
		text := answers[i+1]
		if strings.Contains(text, "bad option") {
			t.Errorf("%q<TAB>: zsh complains:\n%s", tc.line, text)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%q<TAB>: zsh does not offer %q; it printed:\n%q", tc.line, w, text)
			}
		}
	}
}

// TestHeadlessBuildIsCompleted: the scripts complete cnntime-headless as they do
// cnntime (the name the server build installs under).
func TestHeadlessBuildIsCompleted(t *testing.T) {
	for _, tc := range []struct{ shell, code, want string }{
		{"bash", "source SCRIPT; COMP_WORDS=(cnntime-headless predict --precision ''); COMP_CWORD=3; _cnntime; complete -p cnntime-headless; echo \"${COMPREPLY[*]}\"", "-F _cnntime cnntime-headless"},
		{"fish", "source SCRIPT; complete -C 'cnntime-headless predict --precision '; complete -C 'cnntime-headless predict --gpu h100-s'", "h100-sxm"},
	} {
		t.Run(tc.shell, func(t *testing.T) {
			sh := needShell(t, tc.shell)
			script := completionScript(t, tc.shell)
			args := []string{"-c", strings.ReplaceAll(tc.code, "SCRIPT", shellQuote(script))}
			if tc.shell == "bash" {
				args = append([]string{"--norc"}, args...)
			} else {
				args = append([]string{"--no-config"}, args...)
			}
			cmd := exec.Command(sh, args...)
			cmd.Env = cnntimeOnPath(t)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "fp32-strict") {
				t.Errorf("%s: cnntime-headless is not completed: %v\n%s", tc.shell, err, out)
			}
		})
	}
}
