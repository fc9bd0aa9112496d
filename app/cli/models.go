package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"cnntime/app"
	"cnntime/db"
	"cnntime/predictor/cnn"
	"cnntime/predictor/cnn/onnx"
)

// ModelSummary is one row of `cnntime models --json`.
type ModelSummary struct {
	Name      string `json:"name"`
	Family    string `json:"family"`
	Params    int64  `json:"params"`
	MACs      int64  `json:"macs"`       // forward multiply-accumulates per sample at input_size
	InputSize int    `json:"input_size"` // the default input resolution (square)
	Layers    int    `json:"layers"`     // layers in the graph, the loss included
	// Custom marks the user's own models saved in the cache (File → Add model… in the app).
	Custom bool `json:"custom,omitempty"`
}

// LayerRow is one layer of `cnntime model NAME --json`.
type LayerRow struct {
	Index    int      `json:"index"`
	Name     string   `json:"name"`
	Op       string   `json:"op"`
	Inputs   []int    `json:"inputs"`    // layer indices; -1 is the input image
	InShapes [][3]int `json:"in_shapes"` // C, H, W per input
	Out      [3]int   `json:"out_shape"` // C, H, W
	Params   int64    `json:"params"`
	MACs     int64    `json:"macs"`
	// ActivationBytes is the new memory per sample of the layer's FP32 output: 0 for
	// in-place ops and views, which share their input's storage.
	ActivationBytes int64 `json:"activation_bytes"`
	// SavedBytes is what the layer keeps for backward per sample in FP32, counted on its own.
	SavedBytes int64 `json:"saved_bytes"`
	// Config is the layer's configuration key (cnn.Config.Key), the key the cache's kernel
	// measurements of it carry: layers of any CNN with equal keys are timed once.
	Config string `json:"config"`
	// Phases are the kernels PyTorch runs for the layer in a training step, in order
	// (cnn.Layer.Phases): "fwd", "bwd_data", "bwd_weights"; empty for a view.
	Phases []string `json:"phases"`
	// InPlace says the op writes into its input's storage (torchvision's ReLU(inplace=True)).
	InPlace bool `json:"inplace"`
}

// ModelDetail is `cnntime model NAME --json`.
type ModelDetail struct {
	Name    string `json:"name"`
	Family  string `json:"family"`
	Input   [3]int `json:"input"`
	Classes int    `json:"classes"`
	Params  int64  `json:"params"`
	MACs    int64  `json:"macs"`
	// SavedBytes is the FP32 activation memory per sample kept for backward, each shared
	// tensor counted once.
	SavedBytes int64      `json:"saved_bytes"`
	Layers     []LayerRow `json:"layers"`
}

func modelCommands(register func(Command)) {
	register(Command{
		Name:    "models",
		Summary: "list the CNN zoo (every torchvision classification CNN) and the custom models saved in the cache",
		Usage:   "models [--json]",
		Run:     runModels,
	})
	register(Command{
		Name:    "model",
		Summary: "show one CNN's layers; import your own (ONNX or a custom model file) into the cache, or remove it",
		Usage: "model NAME|FILE.json|FILE.onnx [--input N] [--classes K] [--json]   (NAME: a zoo model or a custom model saved in the cache)\n" +
			"       cnntime model import FILE.onnx|FILE.json [--name NAME] [--input N] [--json]\n" +
			"       cnntime model remove NAME [--json]",
		Details: "model import reads an ONNX file (torch.onnx.export's, weights not needed) or a custom model file, checks every layer\n" +
			"and saves the model in the cache, so predict, best, explain, sweep, export and the app know it by name. --name\n" +
			"names it (default: the file's name), --input fixes an ONNX input's height and width when the file leaves them open.\n" +
			"model remove deletes a model saved in the cache.",
		Run: runModel,
	})
}

// ModelSummaries builds every zoo model at its default resolution and summarizes it.
func ModelSummaries() ([]ModelSummary, error) {
	names := cnn.Names()
	out := make([]ModelSummary, 0, len(names))
	for _, name := range names {
		net, err := cnn.Build(name, cnn.Options{})
		if err != nil {
			return nil, err
		}
		out = append(out, summarize(net))
	}
	return out, nil
}

// CustomModelSummaries summarizes custom networks at their own input, marked custom.
func CustomModelSummaries(nets []*cnn.Network) []ModelSummary {
	out := make([]ModelSummary, 0, len(nets))
	for _, net := range nets {
		s := summarize(net)
		s.Custom = true
		out = append(out, s)
	}
	return out
}

func summarize(net *cnn.Network) ModelSummary {
	return ModelSummary{Name: net.Name, Family: net.Family, Params: net.Params(), MACs: net.MACs(),
		InputSize: net.Input.H, Layers: len(net.Layers)}
}

// withExistingCache calls fn with the cache open, or with nil when its file does not
// exist yet: it holds nothing then, and is not created just to list or show models.
func withExistingCache(env *Env, fn func(d *db.DB) error) error {
	if _, err := os.Stat(env.DBPath); errors.Is(err, os.ErrNotExist) {
		return fn(nil)
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	return fn(d)
}

func runModels(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["models"])
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		switch arg := fs.Arg(0); arg {
		case "import", "add":
			return Usagef("unexpected argument %q: to import your own model, run 'cnntime model import FILE.onnx'", arg)
		case "remove", "rm", "delete":
			return Usagef("unexpected argument %q: to remove a saved model, run 'cnntime model remove NAME'", arg)
		default:
			return Usagef("unexpected argument %q: to see one model, run 'cnntime model %s'", arg, arg)
		}
	}
	rows, err := ModelSummaries()
	if err != nil {
		return err
	}
	var custom []ModelSummary
	err = withExistingCache(env, func(d *db.DB) error {
		if d == nil {
			return nil
		}
		nets, warnings, err := app.ReadSavedModels(env.Ctx, d)
		for _, w := range warnings {
			fmt.Fprintln(env.Stderr, "warning: "+app.Printable(w))
		}
		if len(warnings) > 0 {
			fmt.Fprintln(env.Stderr, "warning: 'cnntime model remove NAME' removes a saved model that no longer reads (or the app's File → Remove model…)")
		}
		custom = CustomModelSummaries(nets)
		return err
	})
	if err != nil {
		return err
	}
	rows = append(rows, custom...)
	if env.JSON {
		return WriteJSON(env.Stdout, rows)
	}
	t := app.NewTable(env.Stdout, "NAME", "FAMILY", "PARAMS", "GMACS", "INPUT", "LAYERS")
	for _, r := range rows {
		family := r.Family
		if r.Custom {
			family += " *"
		}
		t.Row(r.Name, family, groupDigits(r.Params), fmt.Sprintf("%.2f", float64(r.MACs)/1e9),
			fmt.Sprintf("%dx%d", r.InputSize, r.InputSize), strconv.Itoa(r.Layers))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if len(custom) > 0 {
		fmt.Fprintf(env.Stdout, "\n* your own model, saved in the cache %s (the app's File → Add model…)\n", app.Printable(env.DBPath))
	}
	return nil
}

func runModel(env *Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "import":
			return runModelImport(env, args[1:])
		case "remove":
			return runModelRemove(env, args[1:])
		}
	}
	fs := env.Flags(commandIndex()["model"])
	input := wholeFlag(fs, "input", 0, "input resolution N (N×N pixels); default the model's own (224, 299 for inception_v3)")
	classes := wholeFlag(fs, "classes", 0, "number of output classes; default 1000")
	// Accept the name before or after the flags.
	if err := fs.Parse(args); err != nil {
		return err
	}
	var name string
	if fs.NArg() > 0 {
		name = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
	}
	switch {
	case name == "":
		return Usagef("name a model (see 'cnntime models') or a custom model file ending in .json")
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q: give one model", fs.Arg(0))
	case *input < 0:
		return Usagef("--input %d: the resolution must be positive", *input)
	case *classes < 0:
		return Usagef("--classes %d: must be positive", *classes)
	}
	net, err := loadNamedModel(env, name, *input, *classes)
	if err != nil {
		return err
	}
	d := DescribeModel(net)
	if env.JSON {
		return WriteJSON(env.Stdout, d)
	}
	fmt.Fprintf(env.Stdout, "%s (%s): input %dx%dx%d, %d classes, %s params, %.3f GMACs, %s saved for backward per sample (FP32)\n\n",
		app.Printable(d.Name), app.Printable(d.Family), d.Input[0], d.Input[1], d.Input[2], d.Classes, groupDigits(d.Params), float64(d.MACs)/1e9, humanBytes(d.SavedBytes))
	t := app.NewTable(env.Stdout, "#", "NAME", "OP", "INPUT", "OUTPUT", "PARAMS", "MACS", "ACTIVATION", "SAVED")
	for _, l := range d.Layers {
		ins := make([]string, len(l.InShapes))
		for i, s := range l.InShapes {
			ins[i] = fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2])
		}
		t.Row(strconv.Itoa(l.Index), l.Name, l.Op, strings.Join(ins, " + "), fmt.Sprintf("%dx%dx%d", l.Out[0], l.Out[1], l.Out[2]),
			groupDigits(l.Params), groupDigits(l.MACs), layerBytes(l.ActivationBytes), layerBytes(l.SavedBytes))
	}
	return t.Flush()
}

// loadNamedModel is app.LoadNamedModel over the cache, which it opens only for a name
// that may be a saved model's, and does not create.
func loadNamedModel(env *Env, name string, input, classes int) (*cnn.Network, error) {
	if app.IsModelFile(name) || cnn.Family(name) != "" {
		return app.LoadModel(env.Ctx, name, input, classes)
	}
	var net *cnn.Network
	err := withExistingCache(env, func(d *db.DB) error {
		var err error
		net, err = app.LoadNamedModel(env.Ctx, d, name, input, classes)
		return err
	})
	return net, err
}

// ImportedModel is `cnntime model import --json`: the saved model's summary, whether it
// replaced one of the same name, and what the import approximated.
type ImportedModel struct {
	ModelSummary
	Replaced bool     `json:"replaced"`
	Notes    []string `json:"notes"`
}

// modelFlags parses a model subcommand's flags, which may come before or after its one
// argument, and returns that argument.
func modelFlags(fs *flag.FlagSet, args []string, what string) (string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(pos) {
	case 0:
		return "", Usagef("give %s", what)
	case 1:
		return pos[0], nil
	}
	return "", Usagef("unexpected argument %q: give one %s", pos[1], what)
}

func runModelImport(env *Env, args []string) error {
	fs := env.Flags(Command{Name: "model import", Summary: commandIndex()["model"].Summary, Usage: commandIndex()["model"].Usage})
	name := fs.String("name", "", "the model's name in cnntime (default: the ONNX file's name; a .json file names its own)")
	input := wholeFlag(fs, "input", 0, "the input's height and width N, for an ONNX file that leaves them open (dynamic axes)")
	path, err := modelFlags(fs, args, "the model file to import (FILE.onnx or FILE.json)")
	if err != nil {
		return err
	}
	if *input < 0 {
		return Usagef("--input %d: the input size must be positive", *input)
	}
	var (
		net   *cnn.Network
		data  []byte
		notes []string
	)
	switch {
	case app.IsONNXFile(path):
		m, err := app.ReadONNXFile(path, onnx.Options{Name: *name, Resolution: *input})
		if err != nil {
			return err
		}
		net, data, notes = m.Network, m.JSON, m.Notes
	case app.IsModelFile(path):
		if *name != "" || *input != 0 {
			return Usagef("--name and --input apply to ONNX files; a custom model file gives its own name and input")
		}
		if net, err = app.ReadCustomModelFile(env.Ctx, path); err != nil {
			return err
		}
		if data, err = app.ReadCustomModelBytes(env.Ctx, path); err != nil {
			return err
		}
	default:
		return Usagef("%s: import reads an ONNX file (.onnx) or a custom model file (.json)", path)
	}
	d, err := env.Cache()
	if err != nil {
		return err
	}
	saved, err := app.SaveModel(env.Ctx, d, net, data)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(env.Stderr, "note: "+app.Printable(n))
	}
	if env.JSON {
		out := ImportedModel{ModelSummary: CustomModelSummaries([]*cnn.Network{net})[0], Replaced: saved.Replaced, Notes: notes}
		if out.Notes == nil {
			out.Notes = []string{}
		}
		return WriteJSON(env.Stdout, out)
	}
	replaced := ""
	if saved.Replaced {
		replaced = ", replacing the model of that name saved before"
	}
	fmt.Fprintf(env.Stdout, "imported %s from %s: %d layers, %s params, %.3f GMACs, input %dx%dx%d, %d classes; saved in the cache %s%s\n",
		app.Printable(net.Name), app.Printable(path), len(net.Layers), groupDigits(net.Params()), float64(net.MACs())/1e9, net.Input.C, net.Input.H, net.Input.W, net.Classes, app.Printable(d.Path()), replaced)
	fmt.Fprintf(env.Stdout, "see it with 'cnntime model %s'; predict it with 'cnntime predict --model %s'\n", net.Name, net.Name)
	return nil
}

func runModelRemove(env *Env, args []string) error {
	fs := env.Flags(Command{Name: "model remove", Summary: commandIndex()["model"].Summary, Usage: commandIndex()["model"].Usage})
	name, err := modelFlags(fs, args, "the name of a custom model saved in the cache ('cnntime models' marks them *)")
	if err != nil {
		return err
	}
	err = withExistingCache(env, func(d *db.DB) error { return app.RemoveSavedModel(env.Ctx, d, name) })
	if err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, map[string]string{"removed": name})
	}
	fmt.Fprintf(env.Stdout, "removed the custom model %s from the cache %s\n", app.Printable(name), app.Printable(env.DBPath))
	return nil
}

// DescribeModel lays a network out as its layer table.
func DescribeModel(net *cnn.Network) ModelDetail {
	d := ModelDetail{Name: net.Name, Family: net.Family, Input: shape3(net.Input), Classes: net.Classes,
		Params: net.Params(), MACs: net.MACs(), SavedBytes: net.SavedBytes(4), Layers: make([]LayerRow, len(net.Layers))}
	for i := range net.Layers {
		l := &net.Layers[i]
		row := LayerRow{Index: i, Name: l.Name, Op: string(l.Op), Inputs: l.Inputs, Out: shape3(l.Out),
			Params: l.Params, MACs: l.MACs, SavedBytes: l.SavedBytes(4), InShapes: make([][3]int, len(l.InShapes)),
			Config: l.Config.Key(), Phases: []string{}, InPlace: l.InPlace}
		for _, p := range l.Phases() {
			row.Phases = append(row.Phases, string(p))
		}
		for j, s := range l.InShapes {
			row.InShapes[j] = shape3(s)
		}
		if !l.InPlace && l.Op != cnn.OpFlatten && l.Op != cnn.OpSlice {
			row.ActivationBytes = 4 * l.Out.Elems()
		}
		d.Layers[i] = row
	}
	return d
}

func shape3(s cnn.Shape) [3]int { return [3]int{s.C, s.H, s.W} }

// groupDigits writes n with thousands separators: 25,557,032.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// layerBytes is humanBytes with "-" for none.
func layerBytes(n int64) string {
	if n == 0 {
		return "-"
	}
	return humanBytes(n)
}
