package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The flags' one definition is the FlagSet each command registers (choiceVar for an
// enumerated flag, carrying the list its parser accepts). `cnntime help COMMAND`, the
// command reference (docs/commands.md, `cnntime help --markdown`) and shell completion
// (`cnntime completion`) are all written from those FlagSets, gathered by running the
// command and each of its actions with -h.

// flagSet is the flags of a command, or of one of its actions.
type flagSet struct {
	name string // "predict", "cache export"
	fs   *flag.FlagSet
}

// actionWords is how actions follow their command in a synopsis: "cache info", or
// "completion bash|zsh|fish" for several on one line.
var actionWords = regexp.MustCompile(`^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$`)

// commandActions lists the actions of c as its synopsis names them (cache info,
// cache import, …), "" first when c also runs without one (model NAME, prices).
func commandActions(c Command) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(c.Usage, "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "cnntime "))
		if len(f) == 0 || f[0] != c.Name {
			continue // a continuation line
		}
		actions := []string{""}
		if len(f) > 1 && actionWords.MatchString(f[1]) {
			actions = strings.Split(f[1], "|")
		}
		for _, a := range actions {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// commandFlagSets returns the flags of c and of each of its actions, as the command
// registers them: it runs the command (and each action) with -h, which every command
// answers by parsing its flags before it does anything else, and keeps the FlagSets it
// asks Env.Flags for.
func commandFlagSets(c Command) []flagSet {
	var sets []flagSet
	for _, action := range commandActions(c) {
		args := []string{"-h"}
		if action != "" {
			args = []string{action, "-h"}
		}
		var got []flagSet
		env := &Env{Ctx: context.Background(), Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, DBPath: "", collect: &got}
		_ = c.Run(env, args) // flag.ErrHelp, or a usage error where -h follows a positional argument
		// Named by the action asked for: some actions' FlagSets carry their command's name.
		for _, g := range got {
			sets = append(sets, flagSet{strings.TrimSpace(c.Name + " " + action), g.fs})
		}
	}
	return sets
}

// flagTypeName is what a flag's value is, as its help line shows it.
func flagTypeName(f *flag.Flag) string {
	switch v := f.Value.(type) {
	case *choiceValue:
		return alternatives(v.choices)
	case *decimalValue:
		return "number"
	case *wholeValue:
		return "int"
	}
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "float":
		return "number"
	case "value":
		return "string"
	}
	return name
}

// flagDefault is the default a flag's help shows, "" when it has none worth showing.
func flagDefault(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return ""
	}
	return f.DefValue
}

// isBoolFlag reports whether f takes no value (--spot).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagHead is how a flag is written, "--loader a|b|c", and what it is for.
func flagHead(f *flag.Flag) (head, usage string) {
	head = "--" + f.Name
	if !isBoolFlag(f) {
		head += " " + flagTypeName(f)
	}
	_, usage = flag.UnquoteUsage(f)
	return head, usage
}

// writeFlags writes the flags of fs, each with what it is for, its default and, for an
// enumerated flag, every choice with what it means.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		head, usage := flagHead(f)
		if d := flagDefault(f); d != "" {
			usage += " (default " + d + ")"
		}
		fmt.Fprintf(w, "  %s\n        %s\n", head, usage)
		if c, ok := f.Value.(*choiceValue); ok {
			width := 0
			for _, ch := range c.choices {
				width = max(width, len(ch.name))
			}
			for _, ch := range c.choices {
				fmt.Fprintf(w, "          %-*s  %s%s\n", width, ch.name, ch.help, aliasNote(ch))
			}
		}
	})
}

// aliasNote says which other spellings a choice has: " (also channels_last)".
func aliasNote(ch choice) string {
	if len(ch.aliases) == 0 {
		return ""
	}
	return " (also " + strings.Join(ch.aliases, ", ") + ")"
}

// writeCommandHelp writes what `cnntime help COMMAND` prints: the synopsis, the summary,
// the details and every flag of the command and of its actions.
func writeCommandHelp(w io.Writer, c Command, sets []flagSet) {
	fmt.Fprintf(w, "usage: cnntime %s\n\n%s\n", c.Usage, c.Summary)
	if c.Details != "" {
		fmt.Fprintf(w, "\n%s\n", c.Details)
	}
	for _, g := range groupFlagSets(sets) {
		if len(sets) == 1 {
			fmt.Fprintln(w, "\nflags:")
		} else {
			fmt.Fprintf(w, "\nflags of %s:\n", g.name)
		}
		writeFlags(w, g.fs)
	}
}

// groupFlagSets joins actions in a row that take the same flags ("cache info and
// cache import" take only --json) and leaves out sets without flags.
func groupFlagSets(sets []flagSet) []flagSet {
	var out []flagSet
	var names [][]string
	last := ""
	for _, s := range sets {
		if !hasFlags(s.fs) {
			continue
		}
		var sig strings.Builder
		writeFlags(&sig, s.fs)
		if len(out) > 0 && sig.String() == last {
			names[len(names)-1] = append(names[len(names)-1], s.name)
			continue
		}
		last = sig.String()
		out = append(out, s)
		names = append(names, []string{s.name})
	}
	for i, n := range names {
		out[i].name = n[0]
		if len(n) > 1 {
			out[i].name = strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1]
		}
	}
	return out
}
