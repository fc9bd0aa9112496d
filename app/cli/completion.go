package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"cnntime/app"
	"cnntime/app/cluster"
	"cnntime/db"
)

// Shell completion for bash, zsh and fish, written from the same FlagSets as help and
// the command reference: the commands, their actions, each one's flags and an
// enumerated flag's choices (with what each means, where the shell shows it).

func completionCommands(register func(Command)) {
	register(Command{
		Name:    "completion",
		Summary: "print a shell completion script: commands, flags and their choices",
		Usage: "completion bash|zsh|fish [--json]\n" +
			"       cnntime completion names models|machines|gpus|regions [WORD]",
		Details: "Load it in the running shell, or install it (it completes cnntime and cnntime-headless):\n" +
			"  bash  source <(cnntime completion bash)      or  cnntime completion bash > ~/.local/share/bash-completion/completions/cnntime\n" +
			"  zsh   source <(cnntime completion zsh)       or  cnntime completion zsh > \"${fpath[1]}/_cnntime\"\n" +
			"  fish  cnntime completion fish | source       or  cnntime completion fish > ~/.config/fish/completions/cnntime.fish\n" +
			"With --json it prints what the script completes instead: the commands, their actions, flags and choices.\n" +
			"completion names KIND [WORD] lists the names of that kind that complete WORD (a comma-separated list being\n" +
			"typed), one a line, from the catalog and the cache: the scripts call it for --model, --machine, --gpu and --region.",
		Run: func(env *Env, args []string) error {
			fs := env.Flags(commandIndex()["completion"])
			pos, err := parseCacheFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) > 0 && pos[0] == "names" {
				return runCompletionNames(env, pos[1:])
			}
			if len(pos) != 1 {
				return Usagef("say which shell: completion bash, completion zsh or completion fish")
			}
			m := completionModelOf()
			write, ok := map[string]func(io.Writer) error{"bash": m.writeBash, "zsh": m.writeZsh, "fish": m.writeFish}[pos[0]]
			if !ok {
				return Usagef("unknown shell %q: use bash, zsh or fish", pos[0])
			}
			if env.JSON {
				return WriteJSON(env.Stdout, m.describe())
			}
			return write(env.Stdout)
		},
	})
}

// completionFlag is one flag as completion offers it.
type completionFlag struct {
	name    string
	help    string   // its first line
	value   bool     // it takes a value
	choices []choice // an enumerated flag's values
	names   string   // the kind of names its value is (app.NameKinds), "" for none
}

// flagNameKinds are the flags whose values are names the catalog and the cache know:
// completion asks `cnntime completion names KIND` for them.
var flagNameKinds = map[string]string{
	"model": app.ModelNames, "models": app.ModelNames,
	"machine": app.MachineNames, "machines": app.MachineNames,
	"gpu": app.GPUNames, "gpus": app.GPUNames,
	"region": app.RegionNames,
}

// runCompletionNames prints the names of a kind that complete a word, one a line.
func runCompletionNames(env *Env, args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] == "--") {
		return Usagef("completion names takes a kind (%s) and the word to complete", strings.Join(app.NameKinds, ", "))
	}
	word := ""
	if len(args) == 2 {
		word = args[1]
	}
	// The cache's names too where there is a cache; completion never creates one.
	var d *db.DB
	if _, err := os.Stat(env.DBPath); err == nil {
		if d, err = env.Cache(); err != nil {
			d = nil // a damaged cache still completes the catalog's names
		}
	}
	names, err := app.CompleteNames(env.Ctx, d, args[0], word)
	if err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, names)
	}
	var b strings.Builder
	for _, n := range names {
		if strings.ContainsAny(n, "\n\r") { // a name a shell could not take as one word
			continue
		}
		b.WriteString(n)
		b.WriteByte('\n')
	}
	_, err = io.WriteString(env.Stdout, b.String())
	return err
}

// completionJSON is what `completion --json` prints: what the scripts complete.
type completionJSON struct {
	Commands []completionCommandJSON `json:"commands"`
}

type completionCommandJSON struct {
	Name    string              `json:"name"`
	Summary string              `json:"summary"`
	Actions []string            `json:"actions,omitempty"`
	Flags   map[string][]flagJS `json:"flags"` // by command or "command action"
}

type flagJS struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Value   bool     `json:"takes_value"`
	Choices []string `json:"choices,omitempty"`
	Names   string   `json:"names,omitempty"` // the kind of names `completion names` lists for it
}

// describe is the model as completionJSON.
func (m completionModel) describe() completionJSON {
	var out completionJSON
	for _, c := range m.commands {
		cj := completionCommandJSON{Name: c.Name, Summary: firstLine(c.Summary), Actions: m.namedActions(c.Name), Flags: map[string][]flagJS{}}
		for _, s := range m.sets {
			if s.key != c.Name && !strings.HasPrefix(s.key, c.Name+" ") {
				continue
			}
			for _, f := range s.flags {
				cj.Flags[s.key] = append(cj.Flags[s.key], flagJS{Name: f.name, Help: firstLine(f.help), Value: f.value, Choices: choiceWords(f.choices), Names: f.names})
			}
		}
		out.Commands = append(out.Commands, cj)
	}
	return out
}

// completionSet is the flags of a command, or of one of its actions.
type completionSet struct {
	key   string // "predict", "cache export"
	flags []completionFlag
}

// completionModel is what a completion script knows.
type completionModel struct {
	commands []Command
	actions  map[string][]string // each command's actions, "" when it runs without one
	sets     []completionSet
}

func completionModelOf() completionModel {
	m := completionModel{commands: Commands(), actions: map[string][]string{}}
	for _, c := range m.commands {
		m.actions[c.Name] = commandActions(c)
		if c.Name == "help" { // help COMMAND: the commands are its words
			m.actions[c.Name] = append([]string{""}, m.commandNames()...)
		}
		for _, s := range commandFlagSets(c) {
			cs := completionSet{key: s.name}
			s.fs.VisitAll(func(f *flag.Flag) {
				_, usage := flag.UnquoteUsage(f)
				cf := completionFlag{name: f.Name, help: usage, value: !isBoolFlag(f)}
				if cf.value {
					cf.names = flagNameKinds[f.Name]
				}
				if v, ok := f.Value.(*choiceValue); ok {
					cf.choices = v.choices
				}
				cs.flags = append(cs.flags, cf)
			})
			m.sets = append(m.sets, cs)
		}
	}
	return m
}

// namedActions are a command's actions without "" (which means it runs without one).
func (m completionModel) namedActions(cmd string) []string {
	var out []string
	for _, a := range m.actions[cmd] {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

func (m completionModel) commandNames() []string {
	out := make([]string, len(m.commands))
	for i, c := range m.commands {
		out[i] = c.Name
	}
	return out
}

// choiceWords are a flag's choices and their aliases, as words a shell offers.
func choiceWords(choices []choice) []string {
	var out []string
	for _, ch := range choices {
		out = append(out, ch.name)
		out = append(out, ch.aliases...)
	}
	return out
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// shellWords joins words for a shell's word list (compgen -W, compadd): flag names,
// choices and commands, plain words all (TestCompletionWordsArePlain).
func shellWords(words []string) string { return strings.Join(words, " ") }

// shellQuote quotes s as one shell word for bash and zsh.
func shellQuote(s string) string { return cluster.ShellQuote(s) }

// findWords is the shell code, shared by bash and zsh, that finds the command and its
// action among the words before the cursor: global flags skipped, --db's value too.
const findWords = `    local cmd="" action="" db="" i w
    for (( i = FIRST; i < CUR; i++ )); do
        w="${WORDS[i]}"
        case "$w" in
            --db|-db) (( i++ )); db="${WORDS[i]}"; continue ;;
            --db=*|-db=*) db="${w#*=}"; continue ;;
            -*) continue ;;
        esac
        if [[ -z "$cmd" ]]; then
            cmd="$w"
        else
            action="$w"
            break
        fi
    done
    local key="$cmd"
    case "$cmd" in
ACTIONS    esac
`

// actionCases are the case arms that set key to "COMMAND ACTION" for a command's actions.
func (m completionModel) actionCases() string {
	var b strings.Builder
	for _, c := range m.commands {
		if acts := m.namedActions(c.Name); len(acts) > 0 {
			fmt.Fprintf(&b, "        %s) case \"$action\" in %s) key=\"$cmd $action\" ;; esac ;;\n", c.Name, strings.Join(acts, "|"))
		}
	}
	return b.String()
}

// shellDialect is how bash and zsh differ in a completion function; writePosix
// writes the rest, which they share.
type shellDialect struct {
	head     string                                          // the lines before the function and its first lines: cur, prev, flag
	first    string                                          // the index of the first word after "cnntime"
	cursor   string                                          // the index of the word under the cursor
	words    string                                          // the array of words
	commands func(m completionModel) string                  // offer the commands and global flags
	choices  func(key string, f completionFlag) string       // offer a flag's choices
	files    string                                          // offer file names
	names    func(kind string) string                        // offer the names of a kind (completion names)
	actions  func(acts []string) string                      // offer a command's actions
	flags    func(key string, flags []completionFlag) string // a case arm: the flags of key
	offer    string                                          // after the flags' case: offer them
	tail     string
}

// bashReply fills COMPREPLY with the lines cmd prints, one entry a line: COMPREPLY=($(…))
// split a file name "my model.onnx" into two and expanded one named "*" into every file
// of the folder.
func bashReply(cmd string) string { return "mapfile -t COMPREPLY < <(" + cmd + ")" }

var bashDialect = shellDialect{
	head: "# bash completion for cnntime and cnntime-headless. Load it with: source <(cnntime completion bash)\n" +
		"# __cnntime_names KIND: the names of KIND that complete $cur, from the catalog and the cache\n" +
		"# (--db's, when the line gives one); a model may also be a file. One name a line: no\n" +
		"# word splitting, no globbing.\n" +
		"__cnntime_names() {\n" +
		"    mapfile -t COMPREPLY < <(\"${COMP_WORDS[0]}\" ${db:+--db \"$db\"} completion names \"$1\" -- \"$cur\" 2>/dev/null)\n" +
		"    if [[ \"$1\" == models && ${#COMPREPLY[@]} -eq 0 ]]; then mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); fi\n" +
		"}\n" +
		"_cnntime() {\n" +
		"    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" flag=\"\"\n" +
		"    (( COMP_CWORD > 0 )) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n" +
		"    # --flag=value: bash splits the = off as a word of its own\n" +
		"    if [[ \"$cur\" == \"=\" ]]; then flag=\"$prev\"; cur=\"\"\n" +
		"    elif [[ \"$prev\" == \"=\" ]] && (( COMP_CWORD > 1 )); then flag=\"${COMP_WORDS[COMP_CWORD-2]}\"\n" +
		"    elif [[ \"$prev\" == -* ]]; then flag=\"$prev\"\n" +
		"    fi\n",
	first: "1", cursor: "COMP_CWORD", words: "COMP_WORDS",
	commands: func(m completionModel) string {
		return bashReply("compgen -W " + shellQuote(shellWords(append(m.commandNames(), "--db", "--json"))) + " -- \"$cur\"")
	},
	choices: func(key string, f completionFlag) string {
		return bashReply("compgen -W " + shellQuote(shellWords(choiceWords(f.choices))) + " -- \"$cur\"")
	},
	files: bashReply("compgen -f -- \"$cur\""),
	names: func(kind string) string { return "__cnntime_names " + kind },
	actions: func(acts []string) string {
		return bashReply("compgen -W " + shellQuote(shellWords(acts)) + " -- \"$cur\"")
	},
	flags: func(key string, flags []completionFlag) string {
		var names []string
		for _, f := range flags {
			names = append(names, "--"+f.name)
		}
		return bashReply("compgen -W " + shellQuote(shellWords(names)) + " -- \"$cur\"")
	},
	tail: "complete -o filenames -F _cnntime cnntime cnntime-headless\n",
}

var zshDialect = shellDialect{
	head: "#compdef cnntime cnntime-headless\n# zsh completion for cnntime and cnntime-headless. Load it with: source <(cnntime completion zsh)\n" +
		"# __cnntime_names KIND: the names of KIND that complete $cur, from the catalog and the cache\n" +
		"# (--db's, when the line gives one); a model may also be a file.\n" +
		"__cnntime_names() {\n" +
		"    local -a names\n" +
		"    names=(\"${(@f)$(${words[1]} ${db:+--db \"$db\"} completion names \"$1\" -- \"$cur\" 2>/dev/null)}\")\n" +
		"    names=(${names:#})\n" +
		"    if (( ${#names} )); then compadd -- \"${names[@]}\"; elif [[ \"$1\" == models ]]; then _files; fi\n" +
		"}\n" +
		"_cnntime() {\n" +
		"    local cur=\"${words[CURRENT]}\" prev=\"${words[CURRENT-1]}\" flag=\"\"\n" +
		"    local -a described\n" +
		"    if [[ \"$cur\" == -*=* ]]; then flag=\"${cur%%=*}\"; compset -P '*='; cur=\"${cur#*=}\"\n" +
		"    elif [[ \"$prev\" == -* ]]; then flag=\"$prev\"\n" +
		"    fi\n",
	first: "2", cursor: "CURRENT", words: "words",
	commands: func(m completionModel) string {
		var words []string
		for _, c := range m.commands {
			words = append(words, zshDescribed(c.Name, c.Summary))
		}
		words = append(words, zshDescribed("--db", "the measurement cache"), zshDescribed("--json", "machine-readable JSON output"))
		return "described=(" + strings.Join(words, " ") + "); _describe -t commands 'cnntime command' described"
	},
	choices: func(key string, f completionFlag) string {
		var words []string
		for _, ch := range f.choices {
			words = append(words, zshDescribed(ch.name, ch.help))
			for _, a := range ch.aliases {
				words = append(words, zshDescribed(a, "the same as "+ch.name))
			}
		}
		return "described=(" + strings.Join(words, " ") + "); _describe -t values " + shellQuote(f.name) + " described"
	},
	files:   "_files",
	names:   func(kind string) string { return "__cnntime_names " + kind },
	actions: func(acts []string) string { return "compadd -- " + shellWords(acts) },
	flags: func(key string, flags []completionFlag) string {
		var words []string
		for _, f := range flags {
			words = append(words, zshDescribed("--"+f.name, f.help))
		}
		return "described=(" + strings.Join(words, " ") + ")"
	},
	offer: "        _describe -t flags 'flag' described\n",
	tail:  "if [[ \"${funcstack[1]}\" == _cnntime ]]; then\n    _cnntime \"$@\"\nelse\n    compdef _cnntime cnntime cnntime-headless\nfi\n",
}

func (m completionModel) writeBash(w io.Writer) error { return m.writePosix(w, bashDialect) }

func (m completionModel) writeZsh(w io.Writer) error { return m.writePosix(w, zshDialect) }

// writePosix writes a completion function in bash's or zsh's dialect: it finds the
// command and action before the cursor, then offers the value of the flag before the
// cursor, else the command's actions, else its flags, else file names.
func (m completionModel) writePosix(w io.Writer, d shellDialect) error {
	var b strings.Builder
	b.WriteString(d.head)
	b.WriteString("    flag=\"${flag#-}\"; flag=\"${flag#-}\"\n")
	b.WriteString(strings.NewReplacer("FIRST", d.first, "CUR", d.cursor, "WORDS", d.words, "ACTIONS", m.actionCases()).Replace(findWords))
	b.WriteString("    if [[ -z \"$cmd\" ]]; then\n")
	fmt.Fprintf(&b, "        if [[ \"$flag\" == db ]]; then %s; return; fi\n", d.files)
	fmt.Fprintf(&b, "        %s\n        return\n    fi\n", d.commands(m))
	// The value of the flag before the cursor.
	b.WriteString("    if [[ -n \"$flag\" ]]; then\n        case \"$key:$flag\" in\n")
	var files []string
	names := map[string][]string{}
	for _, s := range m.sets {
		for _, f := range s.flags {
			switch {
			case len(f.choices) > 0:
				fmt.Fprintf(&b, "            %s) %s; return ;;\n", shellQuote(s.key+":"+f.name), d.choices(s.key, f))
			case f.names != "":
				names[f.names] = append(names[f.names], shellQuote(s.key+":"+f.name))
			case f.value:
				files = append(files, shellQuote(s.key+":"+f.name))
			}
		}
	}
	for _, kind := range app.NameKinds {
		if len(names[kind]) > 0 {
			fmt.Fprintf(&b, "            %s) %s; return ;;\n", strings.Join(names[kind], "|"), d.names(kind))
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(&b, "            %s) %s; return ;;\n", strings.Join(files, "|"), d.files)
	}
	b.WriteString("        esac\n    fi\n")
	// A command's actions, right after it.
	b.WriteString("    if [[ \"$key\" == \"$cmd\" && \"$cur\" != -* ]]; then\n        case \"$cmd\" in\n")
	for _, c := range m.commands {
		if acts := m.namedActions(c.Name); len(acts) > 0 {
			fmt.Fprintf(&b, "            %s) if [[ -z \"$action\" ]]; then %s; return; fi ;;\n", c.Name, d.actions(acts))
		}
	}
	b.WriteString("        esac\n    fi\n")
	// The flags of the command or action.
	b.WriteString("    if [[ \"$cur\" == -* ]]; then\n        case \"$key\" in\n")
	for _, s := range m.sets {
		fmt.Fprintf(&b, "            %s) %s ;;\n", shellQuote(s.key), d.flags(s.key, s.flags))
	}
	b.WriteString("        esac\n" + d.offer + "        return\n    fi\n")
	fmt.Fprintf(&b, "    %s\n}\n", d.files)
	b.WriteString(d.tail)
	_, err := io.WriteString(w, b.String())
	return err
}

// zshDescribed is a word with its description, as _describe reads it ("word:what").
func zshDescribed(word, what string) string {
	return shellQuote(strings.ReplaceAll(word, ":", `\:`) + ":" + firstLine(what))
}

// firstLine is s up to its first line break, for a one-line description.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

func (m completionModel) writeFish(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# fish completion for cnntime and cnntime-headless. Load it with: cnntime completion fish | source\n")
	b.WriteString("complete -c cnntime -e\ncomplete -c cnntime -f\ncomplete -c cnntime-headless -e\ncomplete -c cnntime-headless -w cnntime\n\n")
	// __cnntime_names KIND: the names of KIND that complete the token under the cursor,
	// from the catalog and the cache (--db's, when the line gives one).
	b.WriteString("function __cnntime_names\n")
	b.WriteString("    set -l words (commandline -opc)\n    set -l db\n    set -l i 2\n")
	b.WriteString("    while test $i -le (count $words)\n        switch $words[$i]\n")
	b.WriteString("            case --db -db\n                set i (math $i + 1)\n                set db --db $words[$i]\n")
	b.WriteString("            case '--db=*' '-db=*'\n                set db --db (string replace -r '^-+db=' '' -- $words[$i])\n")
	b.WriteString("        end\n        set i (math $i + 1)\n    end\n")
	b.WriteString("    $words[1] $db completion names $argv[1] -- (commandline -ct) 2>/dev/null\nend\n\n")
	// __cnntime_at KEY: the command (and action) before the cursor is KEY.
	b.WriteString("function __cnntime_key\n")
	b.WriteString("    set -l words (commandline -opc)\n")
	b.WriteString("    set -l cmd\n    set -l action\n    set -l skip 0\n")
	b.WriteString("    for w in $words[2..-1]\n")
	b.WriteString("        if test $skip = 1\n            set skip 0\n            continue\n        end\n")
	b.WriteString("        switch $w\n            case --db -db\n                set skip 1\n                continue\n            case '-*'\n                continue\n        end\n")
	b.WriteString("        if test -z \"$cmd\"\n            set cmd $w\n        else\n            set action $w\n            break\n        end\n    end\n")
	b.WriteString("    switch \"$cmd $action\"\n")
	var keys []string
	for _, c := range m.commands {
		for _, a := range m.namedActions(c.Name) {
			keys = append(keys, c.Name+" "+a)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "        case %s\n            echo %s\n            return\n", fishQuote(k), fishQuote(k))
	}
	b.WriteString("    end\n    echo $cmd\nend\n\n")
	b.WriteString("function __cnntime_at\n    test (__cnntime_key) = \"$argv[1]\"\nend\n\n")
	b.WriteString("function __cnntime_no_action\n    set -l key (__cnntime_key)\n    test -n \"$key\"; and not string match -q '* *' -- $key\nend\n\n")
	b.WriteString("complete -c cnntime -n 'test -z (__cnntime_key)' -l db -r -F -d 'the measurement cache'\n")
	b.WriteString("complete -c cnntime -n 'test -z (__cnntime_key)' -l json -d 'machine-readable JSON output'\n")
	for _, c := range m.commands {
		fmt.Fprintf(&b, "complete -c cnntime -n 'test -z (__cnntime_key)' -a %s -d %s\n", fishQuote(c.Name), fishQuote(firstLine(c.Summary)))
	}
	for _, c := range m.commands {
		for _, a := range m.namedActions(c.Name) {
			fmt.Fprintf(&b, "complete -c cnntime -n %s -a %s\n", fishQuote("__cnntime_no_action; and __cnntime_at "+c.Name), fishQuote(a))
		}
	}
	n := 0
	for _, s := range m.sets {
		b.WriteString("\n")
		cond := fishQuote("__cnntime_at " + fishQuote(s.key))
		for _, f := range s.flags {
			switch {
			case len(f.choices) > 0:
				n++
				fn := fmt.Sprintf("__cnntime_values_%d", n)
				fmt.Fprintf(&b, "function %s\n", fn)
				for _, ch := range f.choices {
					fmt.Fprintf(&b, "    printf '%%s\\t%%s\\n' %s %s\n", fishQuote(ch.name), fishQuote(firstLine(ch.help)))
					for _, a := range ch.aliases {
						fmt.Fprintf(&b, "    printf '%%s\\t%%s\\n' %s %s\n", fishQuote(a), fishQuote("the same as "+ch.name))
					}
				}
				b.WriteString("end\n")
				fmt.Fprintf(&b, "complete -c cnntime -n %s -l %s -x -a '(%s)' -d %s\n", cond, f.name, fn, fishQuote(firstLine(f.help)))
			case f.names == app.ModelNames: // a zoo or saved model, or a model file
				fmt.Fprintf(&b, "complete -c cnntime -n %s -l %s -r -F -a '(__cnntime_names %s)' -d %s\n", cond, f.name, f.names, fishQuote(firstLine(f.help)))
			case f.names != "":
				fmt.Fprintf(&b, "complete -c cnntime -n %s -l %s -x -a '(__cnntime_names %s)' -d %s\n", cond, f.name, f.names, fishQuote(firstLine(f.help)))
			case f.value:
				fmt.Fprintf(&b, "complete -c cnntime -n %s -l %s -r -F -d %s\n", cond, f.name, fishQuote(firstLine(f.help)))
			default:
				fmt.Fprintf(&b, "complete -c cnntime -n %s -l %s -d %s\n", cond, f.name, fishQuote(firstLine(f.help)))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
