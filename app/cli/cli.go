package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"cnntime/app"
	"cnntime/db"
)

// Env is what a CLI command runs with: where to write, which cache, and the global flags.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	DBPath string // the cache file; see DefaultDBPath
	JSON   bool   // --json: machine-readable output (each command documents its shape)

	notedNoCache bool         // noteNoCache said there is no cache
	usageShown   bool         // a FlagSet from Flags printed the usage: the command line was wrong, or help was asked
	usage        bytes.Buffer // what the FlagSets printed: to stdout when help was asked, else to stderr
	cache        *db.DB       // the one cache handle of this command, opened by Cache; RunCLI closes it
	collect      *[]flagSet   // when set, every FlagSet Flags makes (for help, the reference, completion)
}

// Cache is the command's measurement cache at DBPath, opened (and created when
// missing) on first use; every part of the command shares this one handle.
func (e *Env) Cache() (*db.DB, error) {
	if e.cache == nil {
		d, err := app.OpenCache(e.DBPath)
		if err != nil {
			return nil, err
		}
		e.cache = d
	}
	return e.cache, nil
}

// ExistingCache is Cache for a command that only reads the cache: where no file is at
// DBPath it opens and creates nothing (a mistyped --db made its folders and an empty
// cache), and returns nil.
func (e *Env) ExistingCache() (*db.DB, error) {
	if e.cache != nil {
		return e.cache, nil
	}
	if _, err := os.Stat(e.DBPath); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return e.Cache()
}

// noteNoCache says, for a command that goes on without a cache (ExistingCache gave
// none), when the path's folder is missing too, which a typo more than a first run
// explains.
func (e *Env) noteNoCache() {
	if _, err := os.Stat(filepath.Dir(e.DBPath)); errors.Is(err, os.ErrNotExist) && !e.notedNoCache {
		e.notedNoCache = true
		fmt.Fprintf(e.Stderr, "note: no cache at %s, nor its folder: going on without one (is --db or CNNTIME_DB mistyped?)\n", app.Printable(e.DBPath))
	}
}

// noCache is what a command that reads the cache alone says where there is none.
func (e *Env) noCache(what string) error {
	return fmt.Errorf("no cache at %s: nothing to %s (a command that only reads a cache never creates one; check --db or CNNTIME_DB)", app.Printable(e.DBPath), what)
}

// closeCache closes the handle Cache opened, if any.
func (e *Env) closeCache() error {
	if e.cache == nil {
		return nil
	}
	err := e.cache.Close()
	e.cache = nil
	return err
}

// Flags returns a flag set for a command that already knows --json, writes its usage
// to the command's stderr, and returns errors instead of exiting.
func (e *Env) Flags(cmd Command) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	// What the flags print (a parse error, the usage) waits in e.usage: RunCLI sends it
	// to stdout when the user asked for help (flag.ErrHelp), else to stderr.
	fs.SetOutput(printableWriter{&e.usage}) // its own line names a flag as given
	fs.BoolVar(&e.JSON, "json", e.JSON, "print JSON instead of a table")
	fs.Usage = func() {
		e.usageShown = true
		writeCommandHelp(&e.usage, cmd, []flagSet{{cmd.Name, fs}})
	}
	if e.collect != nil {
		*e.collect = append(*e.collect, flagSet{cmd.Name, fs})
	}
	return fs
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// Command is one CLI command, e.g. "models" or "cache".
type Command struct {
	Name    string
	Summary string // one line
	Usage   string // the synopsis after "cnntime ", e.g. "models [--json]"
	Details string // more help, printed by `cnntime help COMMAND` after the summary
	Run     func(env *Env, args []string) error
}

// commandSets is every command, by the function in its file that declares them: an
// explicit list, no registration at init time. A new command's file adds its function here.
func commandSets() []func(register func(Command)) {
	return []func(register func(Command)){
		helpAndVersionCommands,
		predictCommands, bestCommands, explainCommands, exportCommands,
		modelCommands, machineCommands, priceCommands,
		sweepCommands, cacheCommands, calibrateCommands, validateCommands,
		clusterCommands, launchCommands, completionCommands,
	}
}

var (
	commandsOnce sync.Once
	commands     map[string]Command
)

// commandIndex is the commands by name, built from commandSets on first use.
func commandIndex() map[string]Command {
	commandsOnce.Do(func() {
		commands = map[string]Command{}
		for _, set := range commandSets() {
			set(func(c Command) {
				if _, dup := commands[c.Name]; dup {
					panic("cli: two commands named " + c.Name) // a programming error, found by any test
				}
				commands[c.Name] = c
			})
		}
	})
	return commands
}

// Commands lists the registered commands by name.
func Commands() []Command {
	out := make([]Command, 0, len(commandIndex()))
	for _, c := range commandIndex() {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Globals are the flags that come before a command.
type Globals struct {
	DBPath string
	JSON   bool
	Rest   []string // the command and its arguments
}

// ParseGlobals reads --db PATH (or --db=PATH) and --json from the front of args.
func ParseGlobals(args []string) (Globals, error) {
	var g Globals
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--db" || a == "-db":
			if len(args) < 2 || strings.TrimSpace(args[1]) == "" {
				return g, Usagef("--db needs a file path (an empty one would silently mean the default cache)")
			}
			g.DBPath, args = args[1], args[2:]
		case strings.HasPrefix(a, "--db=") || strings.HasPrefix(a, "-db="):
			g.DBPath, args = a[strings.Index(a, "=")+1:], args[1:]
			if strings.TrimSpace(g.DBPath) == "" {
				return g, Usagef("--db needs a file path (an empty one would silently mean the default cache)")
			}
		case a == "--json" || a == "-json":
			g.JSON, args = true, args[1:]
		default:
			g.Rest = args
			return g, nil
		}
	}
	return g, nil
}

// IsCLI reports whether args (without the program name) ask for a CLI command rather
// than the GUI: their first word after the global flags is a command or a request for help.
func IsCLI(args []string) bool {
	g, err := ParseGlobals(args)
	if err != nil {
		return true // let the CLI report the mistake
	}
	if len(g.Rest) == 0 {
		return false
	}
	return true
}

// RunCLI runs the command named by args and returns the process exit status:
// 0 on success, 1 when the command failed, 2 for a mistake in the command line.
func RunCLI(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() { // a bug in a command: a sentence and status 1 (Supervise covers the other goroutines)
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "cnntime: internal error: %v; this is a bug in cnntime: please report it with the command you ran\n", r)
			code = 1
		}
	}()
	g, err := ParseGlobals(args)
	if err != nil {
		fmt.Fprintln(stderr, "cnntime:", err)
		return 2
	}
	if len(g.Rest) == 0 {
		printHelp(stdout)
		return 0
	}
	env := &Env{Ctx: ctx, Stdin: stdin, Stdout: stdout, Stderr: stderr, DBPath: g.DBPath, JSON: g.JSON}
	if env.DBPath == "" {
		if env.DBPath, err = app.DefaultDBPath(); err != nil {
			fmt.Fprintln(stderr, "cnntime:", err)
			return 1
		}
	}
	name := g.Rest[0]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commandIndex()[name]
	if !ok {
		fmt.Fprintf(stderr, "cnntime: unknown command %q%s\nRun 'cnntime help' for the list of commands.\n", name, app.Suggest(name, commandNames()))
		return 2
	}
	err = cmd.Run(env, g.Rest[1:])
	switch {
	case errors.Is(err, flag.ErrHelp): // --help: the usage is the output asked for
		stdout.Write(env.usage.Bytes())
	case err != nil && asksForHelp(g.Rest[1:]):
		// --help on a command that wants an action first (launch, cluster) or with
		// other arguments it could not take: the command's whole help, as asked.
		err = commandIndex()["help"].Run(env, []string{name})
	default:
		stderr.Write(env.usage.Bytes())
	}
	if env.cache != nil { // a full disk or a damaged file, said in words
		err = db.Explain(env.cache.Path(), err)
	}
	if cerr := env.closeCache(); cerr != nil && err == nil {
		err = cerr
	}
	var ue *UsageError
	var ie *app.InputError
	var ee *ExitError
	if err != nil {
		err = printedError{err, withoutRawArgs(err.Error(), args)}
	}
	switch code, sig := signalStatus(ctx); {
	case err == nil:
		return 0
	case sig != nil: // whatever the command made of it: the shell's convention
		fmt.Fprintf(stderr, "cnntime %s: %s: %s\n", name, sig, printableLines(err.Error()))
		return code
	case errors.As(err, &ee):
		fmt.Fprintf(stderr, "cnntime %s: %s\n", name, printableLines(err.Error()))
		return ee.Code
	case errors.Is(err, flag.ErrHelp):
		return 0
	case isBrokenPipe(err): // standard output's reader stopped reading: it has what it wanted
		return 0
	case env.usageShown: // a flag the command does not know; the usage is printed already
		fmt.Fprintf(stderr, "cnntime %s: %s\n", name, printableLines(err.Error()))
		return 2
	case errors.As(err, &ue), errors.As(err, &ie):
		fmt.Fprintf(stderr, "cnntime %s: %s\nusage: cnntime %s\n", name, printableLines(err.Error()), cmd.Usage)
		return 2
	default:
		fmt.Fprintf(stderr, "cnntime %s: %s\n", name, printableLines(err.Error()))
		return 1
	}
}

// asksForHelp reports whether a command's arguments ask for help: -h, -help or --help
// before any "--".
func asksForHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printedError is err as it is printed: its message with the command line's control
// characters written out (withoutRawArgs); errors.As and errors.Is see err.
type printedError struct {
	err error
	msg string
}

func (e printedError) Error() string { return e.msg }
func (e printedError) Unwrap() error { return e.err }

// ExitError is a failure with an exit status of its own: 3 for "no usable GPU", as the
// CUDA worker's.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is a mistake in the command line; it exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

func commandNames() []string {
	var names []string
	for n := range commandIndex() {
		names = append(names, n)
	}
	return names
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, `cnntime %s predicts how long and how much it costs to train a CNN on a GPU machine
at every mini-batch size, and measures your own GPU to make the predictions true.

usage: cnntime [--db PATH] [--json] COMMAND [ARGS]
       cnntime                      (no command: open the desktop app)

global flags:
  --db PATH   the measurement cache (also CNNTIME_DB; default %s)
  --json      machine-readable JSON output

commands:
`, app.Version, defaultDBForHelp())
	for _, c := range Commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nRun 'cnntime help COMMAND' for a command's flags.")
}

func defaultDBForHelp() string {
	p, err := app.DefaultDBPath()
	if err != nil {
		return "the user's config directory"
	}
	return p
}

func helpAndVersionCommands(register func(Command)) {
	register(Command{
		Name:    "help",
		Summary: "show the commands, or one command's usage",
		Usage:   "help [COMMAND | --markdown]",
		Details: "help --markdown prints the command reference (docs/commands.md) in Markdown.",
		Run: func(env *Env, args []string) error {
			if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
				printHelp(env.Stdout)
				return nil
			}
			if args[0] == "--markdown" || args[0] == "-markdown" {
				return writeReference(env.Stdout)
			}
			c, ok := commandIndex()[args[0]]
			if !ok {
				return Usagef("unknown command %q%s", args[0], app.Suggest(args[0], commandNames()))
			}
			// Every flag of the command and of its actions (cluster slurm …), from the
			// FlagSets they register.
			var help bytes.Buffer
			writeCommandHelp(&help, c, commandFlagSets(c))
			_, err := env.Stdout.Write(help.Bytes())
			return err
		},
	})
	register(Command{
		Name:    "version",
		Summary: "print the version",
		Usage:   "version [--json]",
		Run: func(env *Env, args []string) error {
			fs := env.Flags(commandIndex()["version"])
			if err := fs.Parse(args); err != nil {
				return err
			}
			if fs.NArg() > 0 {
				return Usagef("unexpected argument %q", fs.Arg(0))
			}
			if env.JSON {
				return WriteJSON(env.Stdout, map[string]string{"name": "cnntime", "version": app.Version})
			}
			fmt.Fprintf(env.Stdout, "cnntime %s\n", app.Version)
			return nil
		},
	})
}
