package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/app/outfile"
	"cnntime/db"
	"cnntime/predictor/cnn"
)

func cacheCommands(register func(Command)) {
	register(Command{
		Name:    "cache",
		Summary: "show, check, import into or export the measurement cache",
		Usage: "cache info [--json]\n" +
			"       cnntime cache import FILE… [--json]    (other cache files, e.g. shard-*.db, or a step or kernel measurement CSV; - reads a CSV from stdin)\n" +
			"       cnntime cache export FILE [--device KEY] [--model NAME] [--csv [--layers]] [--json]\n" +
			"       cnntime cache check [--json]",
		Run: runCache,
	})
}

var cacheActions = []string{"info", "import", "export", "check"}

func runCache(env *Env, args []string) error {
	if len(args) == 0 {
		return Usagef("say what to do: %s", strings.Join(cacheActions, ", "))
	}
	action, rest := args[0], args[1:]
	switch action {
	case "info":
		return runCacheInfo(env, rest)
	case "import":
		return runCacheImport(env, rest)
	case "export":
		return runCacheExport(env, rest)
	case "check":
		return runCacheCheck(env, rest)
	case "-h", "-help", "--help":
		fs := env.Flags(commandIndex()["cache"])
		return fs.Parse([]string{"-h"})
	}
	return Usagef("unknown action %q%s: use %s", action, app.Suggest(action, cacheActions), strings.Join(cacheActions, ", "))
}

// parseCacheFlags parses fs from args where flags and positional arguments may be
// mixed ("export out.db --device K"), and returns the positional ones.
func parseCacheFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func cacheFlags(env *Env, action string) *flag.FlagSet {
	return env.Flags(Command{Name: "cache " + action, Summary: commandIndex()["cache"].Summary, Usage: commandIndex()["cache"].Usage})
}

func runCacheInfo(env *Env, args []string) error {
	fs := cacheFlags(env, "info")
	if pos, err := parseCacheFlags(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return Usagef("cache info takes no arguments, got %q", pos[0])
	}
	d, err := env.ExistingCache()
	if err != nil {
		return err
	}
	if d == nil {
		return env.noCache("describe")
	}
	info, err := d.Info(env.Ctx)
	if err != nil {
		return err
	}
	damaged := func() error {
		return fmt.Errorf("cache %s is damaged (%s): restore it from a copy, or export what still reads ('cnntime cache export') into a new cache; 'cnntime cache check' lists every problem", info.Path, info.Damage)
	}
	if env.JSON {
		if info.Devices == nil {
			info.Devices = []db.DeviceCounts{}
		}
		if info.StepSources == nil {
			info.StepSources = []db.SourceCount{}
		}
		if err := WriteJSON(env.Stdout, info); err != nil || info.Damage == "" {
			return err
		}
		return damaged()
	}
	if info.Damage != "" {
		fmt.Fprintf(env.Stdout, "cache %s (schema version %d): DAMAGED\n", info.Path, info.SchemaVersion)
		return damaged()
	}
	fmt.Fprintf(env.Stdout, "cache %s (schema version %d, %s)\n", info.Path, info.SchemaVersion, humanBytes(info.SizeBytes))
	fmt.Fprintf(env.Stdout, "%d kernel measurements of %d layer configurations on %d devices; %d step measurements; %d sweeps; %d user machines; %d price overrides; %d custom models\n",
		info.Measurements, info.Configs, len(info.Devices), info.Steps, info.Sweeps, info.UserMachines, info.PriceOverride, info.CustomModels)
	if info.InterruptedSweeps > 0 {
		fmt.Fprintf(env.Stdout, "%d sweeps were interrupted (their process died while they ran): running the same sweep again continues each, measuring only what is missing\n", info.InterruptedSweeps)
	}
	for _, s := range info.StoppedSweeps {
		fmt.Fprintln(env.Stdout, app.Printable(s))
	}
	for _, x := range info.InterruptedExports {
		fmt.Fprintf(env.Stdout, "an export to %s was interrupted (its process died): its partial file %s is still there; the next export to %s removes it, or remove it yourself\n",
			app.Printable(x.To), app.Printable(x.Partial), app.Printable(x.To))
	}
	if len(info.Devices) > 0 {
		fmt.Fprintln(env.Stdout)
		t := app.NewTable(env.Stdout, "DEVICE", "NAME", "MEASUREMENTS", "CONFIGS", "OUT OF MEMORY", "BATCHES")
		for _, c := range info.Devices {
			batches := "-"
			if c.Measurements > 0 {
				batches = fmt.Sprintf("%d-%d", c.MinBatch, c.MaxBatch)
			}
			t.Row(c.Key, c.Name, strconv.Itoa(c.Measurements), strconv.Itoa(c.Configs), strconv.Itoa(c.OutOfMemory), batches)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(info.StepSources) > 0 {
		fmt.Fprintln(env.Stdout)
		t := app.NewTable(env.Stdout, "STEP SOURCE", "STEPS")
		for _, s := range info.StepSources {
			t.Row(s.Source, strconv.Itoa(s.Steps))
		}
		return t.Flush()
	}
	return nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func runCacheImport(env *Env, args []string) error {
	fs := cacheFlags(env, "import")
	pos, err := parseCacheFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return Usagef("cache import takes FILE… (cache files, e.g. shards/shard-*.db, or one step, kernel measurement or loader-rate CSV; - reads a CSV from stdin)")
	}
	if len(pos) > 1 {
		// Several files: cache shards merged one after the other, each atomically. A
		// missing one stops the import before anything is merged.
		for _, f := range pos {
			if f == "-" {
				return Usagef("- (a CSV on stdin) goes alone: cache import - < steps.csv")
			}
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("cache import: %w; nothing was imported", err)
			}
		}
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	var reps []db.ImportReport
	for i, f := range pos {
		var rep db.ImportReport
		if f == "-" {
			rep, err = d.ImportCSV(env.Ctx, env.Stdin, "stdin")
		} else {
			rep, err = d.Import(env.Ctx, f)
		}
		if err != nil {
			if i > 0 {
				return fmt.Errorf("%w (the %d files before it were imported: %s)", err, i, strings.Join(pos[:i], ", "))
			}
			return err
		}
		reps = append(reps, rep)
	}
	if env.JSON {
		if len(reps) == 1 {
			return WriteJSON(env.Stdout, reps[0])
		}
		return WriteJSON(env.Stdout, reps)
	}
	for _, rep := range reps {
		if rep.Kind == "cache" {
			fmt.Fprintf(env.Stdout, "imported cache %s: %d devices, %d layer configurations, %d user machines and %d custom models added\n",
				app.Printable(rep.File), rep.Devices, rep.Configs, rep.UserMachines, rep.CustomModels)
			if len(rep.CustomModelClashes) > 0 {
				fmt.Fprintf(env.Stdout, "custom models not imported: %s (this cache has a different model of the same name and keeps it; remove yours with 'cnntime model remove NAME' or the app's File → Remove model…, and import again to take theirs)\n",
					app.Printable(strings.Join(rep.CustomModelClashes, ", ")))
			}
			fmt.Fprintf(env.Stdout, "kernel measurements: %s\n", app.MergedText(rep.Measurements))
			fmt.Fprintf(env.Stdout, "cloud prices: %s\n", app.PricesMergedText(rep))
		} else if rep.Kind == "loader-csv" {
			fmt.Fprintf(env.Stdout, "imported loader-rate CSV %s: %s (predictions for this computer's machines use it: user/workstation, local/…)\n",
				app.Printable(rep.File), app.MergedText(rep.LoaderRates))
			continue
		} else if rep.Kind == "layers-csv" {
			fmt.Fprintf(env.Stdout, "imported kernel measurement CSV %s: %d devices and %d layer configurations added\n", app.Printable(rep.File), rep.Devices, rep.Configs)
			fmt.Fprintf(env.Stdout, "kernel measurements: %s\n", app.MergedText(rep.Measurements))
			continue
		} else {
			fmt.Fprintf(env.Stdout, "imported step CSV %s\n", app.Printable(rep.File))
		}
		fmt.Fprintf(env.Stdout, "step measurements: %s\n", app.MergedText(rep.Steps))
	}
	return nil
}

// ExportFilterFor is the part of the cache that a device key and a model name choose
// ("" for any): the model's step measurements and the kernel measurements of its layer
// configurations at its default resolution.
func ExportFilterFor(deviceKey, model string) (db.ExportFilter, error) {
	f := db.ExportFilter{DeviceKey: deviceKey}
	if model == "" {
		return f, nil
	}
	net, err := cnn.Build(model, cnn.Options{})
	if err != nil {
		if errors.Is(err, cnn.ErrUnknownModel) {
			return f, Usagef("--model: unknown model %q%s: see 'cnntime models'", model, app.Suggest(model, cnn.Names()))
		}
		return f, err
	}
	configs, _ := net.Configs()
	f.Models = []string{model}
	f.ConfigKeys = make([]string, 0, len(configs))
	for _, c := range configs {
		f.ConfigKeys = append(f.ConfigKeys, c.Key())
	}
	return f, nil
}

func runCacheExport(env *Env, args []string) error {
	fs := cacheFlags(env, "export")
	device := fs.String("device", "", "only this device's measurements (a key from 'cnntime cache info', or gpu:ID for imported steps)")
	model := fs.String("model", "", "only this model's step measurements and its layers' kernel measurements")
	asCSV := fs.Bool("csv", false, "write CSV instead of a cache file: whole-step measurements in the import format")
	layers := fs.Bool("layers", false, "with --csv: write the kernel measurements instead of the steps")
	pos, err := parseCacheFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return Usagef("cache export takes one FILE to write, got %d arguments", len(pos))
	}
	if *layers && !*asCSV {
		return Usagef("--layers goes with --csv")
	}
	filter, err := ExportFilterFor(*device, *model)
	if err != nil {
		return err
	}
	d, err := env.ExistingCache()
	if err != nil {
		return err
	}
	if d == nil {
		return env.noCache("export")
	}
	if *device != "" {
		if err := checkDeviceKnown(env, d, *device); err != nil {
			return err
		}
	}
	out := pos[0]
	if !*asCSV {
		rep, err := d.ExportCache(env.Ctx, out, filter)
		if err != nil {
			return err
		}
		if env.JSON {
			return WriteJSON(env.Stdout, rep)
		}
		for _, name := range rep.RemovedLeftovers {
			fmt.Fprintf(env.Stdout, "removed %s, the partial file of an earlier export there whose process died\n", app.Printable(name))
		}
		fmt.Fprintf(env.Stdout, "exported %d kernel measurements (%d devices, %d layer configurations) and %d step measurements to %s\n",
			rep.Measurements, rep.Devices, rep.Configs, rep.Steps, app.Printable(out))
		return nil
	}
	n, err := exportCSV(env, d, out, filter, *layers)
	if err != nil {
		return err
	}
	what := "step measurements"
	if *layers {
		what = "kernel measurements"
	}
	if env.JSON && out != "-" {
		return WriteJSON(env.Stdout, map[string]any{"file": out, "rows": n, "what": what})
	}
	if out != "-" {
		fmt.Fprintf(env.Stdout, "exported %d %s to %s\n", n, what, app.Printable(out))
	}
	return nil
}

// exportCSV writes the CSV to out ("-" for stdout) with outfile.Write: a file appears
// whole or not at all, a pipe or a terminal is written into; it refuses to overwrite a
// file.
func exportCSV(env *Env, d *db.DB, out string, f db.ExportFilter, layers bool) (int, error) {
	write := d.ExportStepsCSV
	if layers {
		write = d.ExportMeasurementsCSV
	}
	if out == "-" {
		return write(env.Ctx, env.Stdout, f)
	}
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return 0, fmt.Errorf("export to %s: the file exists; choose a new file name", app.Printable(out))
	}
	n := 0
	err := outfile.Write(out, func(w io.Writer) error {
		var err error
		n, err = write(env.Ctx, w, f)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("export to %s: %w", app.Printable(out), err)
	}
	return n, nil
}

// checkDeviceKnown refuses a device key the cache has neither measurements nor steps of.
func checkDeviceKnown(env *Env, d *db.DB, key string) error {
	devices, err := d.Devices(env.Ctx)
	if err != nil {
		return err
	}
	var keys []string
	for _, dev := range devices {
		if dev.Key == key {
			return nil
		}
		keys = append(keys, dev.Key)
	}
	steps, err := d.Steps(env.Ctx, db.StepFilter{DeviceKey: key})
	if err != nil {
		return err
	}
	if len(steps) > 0 {
		return nil
	}
	return Usagef("--device: the cache has nothing of device %q%s: see 'cnntime cache info'", key, app.Suggest(key, keys))
}

func runCacheCheck(env *Env, args []string) error {
	fs := cacheFlags(env, "check")
	if pos, err := parseCacheFlags(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return Usagef("cache check takes no arguments, got %q", pos[0])
	}
	d, err := env.ExistingCache()
	if err != nil {
		return err
	}
	if d == nil {
		return env.noCache("check")
	}
	problems, err := d.Check(env.Ctx)
	if err != nil {
		return err
	}
	if env.JSON {
		if problems == nil {
			problems = []string{}
		}
		if err := WriteJSON(env.Stdout, map[string]any{"file": d.Path(), "ok": len(problems) == 0, "problems": problems}); err != nil {
			return err
		}
	} else if len(problems) == 0 {
		fmt.Fprintf(env.Stdout, "ok: %s passes SQLite's integrity check and cnntime's consistency checks\n", d.Path())
	} else {
		for _, p := range problems {
			fmt.Fprintln(env.Stdout, p)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problems in %s: export what is sound with 'cnntime cache export', or restore a copy", len(problems), d.Path())
	}
	return nil
}
