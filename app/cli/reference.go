package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ReferenceCommand is the command that writes the command reference page.
const ReferenceCommand = "cnntime help --markdown > docs/commands.md"

// referencePages are the manual's pages that explain each command, for the
// reference's links; a command without one is explained by its help alone.
var referencePages = map[string]string{
	"predict": "predicting.md", "best": "predicting.md", "explain": "predicting.md#why-this-number-cnntime-explain",
	"export": "window.md#the-same-exports-from-the-command-line",
	"models": "models.md", "model": "models.md#your-own-cnn",
	"machines": "machines.md", "machine": "machines.md", "prices": "machines.md#where-prices-come-from-and-keeping-them-current",
	"devices": "measuring.md", "sweep": "measuring.md", "cluster": "measuring.md#sweeps-on-a-slurm-cluster",
	"cache": "cache.md", "calibrate": "accuracy.md#per-layer-calibration", "validate": "accuracy.md",
	"launch": "launching.md",
}

// referenceIntro is the top of the command reference page.
const referenceIntro = `# Command reference

[cnntime](../README.md) › [manual](README.md) › commands

<!-- Written by '` + ReferenceCommand + `' from the flags each command registers; do not edit
     (TestCommandReferenceIsCurrent fails when it differs from what that command prints). -->

` + "`cnntime`" + ` with no arguments opens the desktop app. With a command it runs headless:

` + "```" + `
cnntime [--db PATH] [--json] COMMAND [ARGS]
` + "```" + `

- ` + "`--db PATH`" + ` chooses the measurement cache (also the ` + "`CNNTIME_DB`" + ` environment variable). The
  default is ` + "`cnntime/cache.db`" + ` in your configuration directory (` + "`~/.config`" + ` on Linux).
- ` + "`--json`" + ` prints JSON instead of a table; each command's JSON shape is documented on the
  page that explains it, and is stable.
- Errors go to stderr. Exit status: 0 success, 1 the command failed, 2 a mistake in the command line.
  A command that runs out of memory, crashes or is killed by the system exits 1 with a sentence
  (and, for a crash, the file its report was saved to), never 2: each command runs in a child
  process that the ` + "`cnntime`" + ` process watches.
- Numbers are decimal: ` + "`64`" + `, ` + "`010`" + ` (ten) and, where a fraction makes sense, ` + "`2.5`" + ` or ` + "`1e-3`" + `. Go's
  other forms (` + "`0x10`" + `, ` + "`0b11`" + `, ` + "`1_000`" + `, ` + "`NaN`" + `, ` + "`Inf`" + `) are a mistake in the command line, as is a
  fraction where a whole number is asked for.
- ` + "`cnntime help COMMAND`" + ` prints what this page says of one command; ` + "`cnntime completion bash|zsh|fish`" + `
  prints a shell completion script for the same flags and choices.
`

// writeReference writes the command reference in Markdown: every command's synopsis,
// summary, details and flags, with every choice of an enumerated flag.
func writeReference(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprint(w, referenceIntro)
	fmt.Fprint(w, "\n| command | what it does |\n|---|---|\n")
	for _, c := range Commands() {
		fmt.Fprintf(w, "| [`%s`](#%s) | %s |\n", c.Name, c.Name, markdownText(c.Summary))
	}
	for _, c := range Commands() {
		fmt.Fprintf(w, "\n## %s\n\n%s", c.Name, markdownText(sentence(c.Summary)))
		if page := referencePages[c.Name]; page != "" {
			fmt.Fprintf(w, " Explained in [%s](%s).", strings.SplitN(page, "#", 2)[0], page)
		}
		fmt.Fprintf(w, "\n\n```\ncnntime %s\n```\n", c.Usage)
		if c.Details != "" {
			fmt.Fprintf(w, "\n```text\n%s\n```\n", c.Details)
		}
		sets := commandFlagSets(c)
		for _, s := range groupFlagSets(sets) {
			if len(sets) > 1 {
				fmt.Fprintf(w, "\n### %s\n", s.name)
			}
			fmt.Fprintln(w)
			writeMarkdownFlags(w, s.fs)
		}
	}
	return w.Flush()
}

// writeMarkdownFlags lists the flags of fs as Markdown, each choice of an enumerated
// flag under it.
func writeMarkdownFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		head, usage := flagHead(f)
		fmt.Fprintf(w, "- `%s`", head)
		if d := flagDefault(f); d != "" {
			fmt.Fprintf(w, " (default `%s`)", d)
		}
		fmt.Fprintf(w, ": %s\n", markdownText(usage))
		if c, ok := f.Value.(*choiceValue); ok {
			for _, ch := range c.choices {
				fmt.Fprintf(w, "  - `%s`: %s%s\n", ch.name, markdownText(ch.help), markdownText(aliasNote(ch)))
			}
		}
	})
}

// markdownText escapes what Markdown would read as markup in a line of help.
func markdownText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "|", `\|`).Replace(s)
}

// sentence is s with a capital letter and a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
