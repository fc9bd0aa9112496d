package cli

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"cnntime/app"
	"cnntime/app/charts"
	"cnntime/predictor"
	"cnntime/predictor/convergence"
	"cnntime/predictor/dataset"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
)

// choice is one value an enumerated flag takes, and what it means.
type choice struct {
	name    string
	help    string
	aliases []string // other spellings the flag's parser takes for it
}

// choiceValue is a string flag whose values are a list of choices: the list the code
// that reads the flag accepts (pipeline.Loaders for --loader, predictor.Frameworks for
// --framework, ...), so `cnntime help`, the command reference and shell completion show
// exactly what the parser takes. It stores whatever it is given: the command's own
// check (the same list's parser) says what is wrong with a bad value, naming the flag,
// after the whole command line has been read.
type choiceValue struct {
	p       *string
	choices []choice
	accept  func(string) error // the parser a value goes through; each choice passes it
}

func (c *choiceValue) Set(s string) error { *c.p = s; return nil }

func (c *choiceValue) String() string {
	if c == nil || c.p == nil {
		return ""
	}
	return *c.p
}

// names are the choices' names, in order.
func (c *choiceValue) names() []string {
	out := make([]string, len(c.choices))
	for i, ch := range c.choices {
		out[i] = ch.name
	}
	return out
}

// alternatives is the choices as a synopsis writes them: "a|b|c".
func alternatives(choices []choice) string {
	names := make([]string, len(choices))
	for i, ch := range choices {
		names[i] = ch.name
	}
	return strings.Join(names, "|")
}

// choiceVar defines an enumerated string flag: its default, what it is for and the
// choices it takes, checked by accept (the code's own parser for the flag's values).
func choiceVar(fs *flag.FlagSet, p *string, name, value, usage string, choices []choice, accept func(string) error) {
	*p = value
	fs.Var(&choiceValue{p: p, choices: choices, accept: accept}, name, usage)
}

// choicesOf pairs a package's list of values with what each means; aliases maps an
// alias to the value it stands for. A value missing from help is listed without words
// (TestEveryChoiceIsExplained then fails).
func choicesOf[T ~string](values []T, help map[T]string, aliases map[string]T) []choice {
	out := make([]choice, len(values))
	for i, v := range values {
		out[i] = choice{name: string(v), help: help[v]}
		for a, of := range aliases {
			if of == v {
				out[i].aliases = append(out[i].aliases, a)
			}
		}
		sort.Strings(out[i].aliases)
	}
	return out
}

// isChoice reports whether s names one of choices (or an alias of one).
func isChoice(choices []choice, s string) bool {
	for _, ch := range choices {
		if ch.name == s {
			return true
		}
		for _, a := range ch.aliases {
			if a == s {
				return true
			}
		}
	}
	return false
}

// acceptChoice is the parser of a flag whose choices the CLI itself defines.
func acceptChoice(what string, choices []choice) func(string) error {
	return func(s string) error {
		if !isChoice(choices, s) {
			return fmt.Errorf("unknown %s %q: use %s", what, s, strings.Join(strings.Split(alternatives(choices), "|"), ", "))
		}
		return nil
	}
}

// normalised is how the run-data and training flags read their values: in any case,
// spaces around them ignored.
func normalised(parse func(string) error) func(string) error {
	return func(s string) error { return parse(strings.ToLower(strings.TrimSpace(s))) }
}

// The choices of the run flags (predict, best, export, explain), each from the list
// its parser accepts.

func trainingPrecisionChoices() []choice {
	return choicesOf(predictor.TrainingPrecisions, map[measure.Precision]string{
		measure.FP32:       "PyTorch's default: TF32 convolutions on Ampere and later, strict FP32 matrix multiplies and everything else",
		measure.FP32Strict: "strict FP32 everywhere (TF32 off)",
		measure.TF32:       "TF32 for convolutions and matrix multiplies (torch.set_float32_matmul_precision(\"high\")), FP32 elsewhere",
		measure.AMP:        "automatic mixed precision: FP16 tensor cores, FP32 accumulation, a gradient scaler",
		measure.BF16:       "bf16 autocast: BF16 tensor cores (Ampere and later) at the FP16 rate, no gradient scaler",
	}, nil)
}

func policyChoices() []choice {
	return choicesOf(measure.Policies, map[measure.Policy]string{
		measure.Heuristic: "cuDNN's heuristic algorithm choice (PyTorch's cudnn.benchmark=False)",
		measure.Fastest:   "the fastest algorithm cuDNN times (cudnn.benchmark=True)",
	}, nil)
}

func datasetChoices() []choice {
	help := map[string]string{
		"imagenet-1k": "1,281,167 JPEGs of about 400×350 pixels, each model at its weights' crop size, 1000 classes",
		"cifar-10":    "50,000 images of 32×32 held in memory, 10 classes",
		"cifar-100":   "50,000 images of 32×32 held in memory, 100 classes",
	}
	return choicesOf(dataset.Names(), help, nil)
}

func loaderChoices() []choice {
	cheaper := func(l pipeline.Loader) string {
		return fmt.Sprintf("%.1f× fewer CPU core-seconds per image than the DataLoader", pipeline.CPUSpeedup[l])
	}
	return choicesOf(pipeline.Loaders, map[pipeline.Loader]string{
		pipeline.Synthetic: "data already on the GPU (what benchmarks report)",
		pipeline.PyTorch: fmt.Sprintf("DataLoader workers decode JPEGs with PIL on the CPU (about %.0f ImageNet images/s per worker on its own core)",
			pipeline.WorkerImagesPerS),
		pipeline.DALI:    "NVIDIA DALI: nvJPEG decodes on the GPU, which costs GPU time",
		pipeline.DALICPU: "NVIDIA DALI's CPU pipeline: " + cheaper(pipeline.DALICPU),
		pipeline.FFCV:    "FFCV's own dataset file and compiled decode: " + cheaper(pipeline.FFCV),
		pipeline.TFData:  "tf.data's C++ decode and crop: " + cheaper(pipeline.TFData),
	}, nil)
}

func memoryFormatChoices() []choice {
	return choicesOf(predictor.MemoryFormats, map[predictor.MemoryFormat]string{
		predictor.NCHW: "PyTorch's default: pays cuDNN's layout transposes around tensor-core convolutions and its slower NCHW batch norm under amp",
		predictor.NHWC: "channels_last: no transposes",
	}, predictor.MemoryFormatAliases)
}

func scriptChoices() []choice {
	return choicesOf(predictor.Scripts, map[predictor.Script]string{
		predictor.Lean:      "a tight loop, as benchmarks run: nothing per step",
		predictor.Reference: "torchvision's reference script: accuracy, .item() reads and meters every step",
		predictor.Examples:  "pytorch/examples' imagenet main.py: the same, with the loss read right after the forward pass",
		predictor.Lightning: "a PyTorch Lightning Trainer loop",
	}, nil)
}

func frameworkChoices() []choice {
	return choicesOf(predictor.Frameworks, map[predictor.Framework]string{
		predictor.PyTorch2:       "PyTorch 2 eager: every layer its own kernels, foreach optimizer, gradients set to None",
		predictor.PyTorch1:       "PyTorch 1.x eager: the optimizer loops over the parameters in Python, gradients are zeroed and accumulated (several small kernels per tensor)",
		predictor.Graph:          "a graph framework as it runs by default (TensorFlow, MXNet): a C++ executor, one fused optimizer kernel per tensor, under amp convolutions in NHWC",
		predictor.Compiled:       "torch.compile(model), its default mode (inductor): batch norm and elementwise chains fused into one kernel each, kernels still issued one by one, eager optimizer",
		predictor.CompiledGraphs: "torch.compile mode=\"reduce-overhead\": the same kernels replayed as CUDA graphs",
		predictor.Optimized:      "NVIDIA's MLPerf-class implementations: under amp NHWC throughout, batch norm fused into the convolutions, BN-add-ReLU fused, one CUDA graph per step (use with --loader dali)",
	}, nil)
}

func trainModeChoices() []choice {
	return choicesOf(app.TrainModes, map[app.TrainMode]string{
		app.TrainEpochs:   "every batch trains for --epochs",
		app.TrainToTarget: "every batch trains for the epochs its recipe needs to reach the recipe's published accuracy (or --target-accuracy)",
	}, app.TrainModeAliases)
}

// recipeChoices are the built-in recipes' names, each with what it is.
func recipeChoices() []choice {
	var out []choice
	for _, name := range app.RecipeNames() {
		out = append(out, choice{name: name, help: app.RecipeHelp(name)})
	}
	return out
}

func likeChoices() []choice {
	help := map[string]string{}
	for _, name := range convergence.PresetNames() {
		if p, ok := convergence.Preset(name); ok {
			help[name] = fmt.Sprintf("its critical batch %.0f (to %s)", p.NoiseBatch, p.Target)
		}
	}
	return choicesOf(convergence.PresetNames(), help, convergence.LikeAliases)
}

// The choices of the sweep flags (sweep, cluster).

func kernelPrecisionChoices() []choice {
	return choicesOf(measure.Precisions, map[measure.Precision]string{
		measure.FP32:       "as PyTorch's fp32 training runs: convolutions on TF32 tensor cores on Ampere and later, every other layer in strict FP32 (the CPU: FP32)",
		measure.FP32Strict: "strict FP32 everywhere, no tensor cores (TF32 off, as torch.backends.cudnn.allow_tf32 = False)",
		measure.TF32:       "every layer on TF32 tensor cores (Ampere and later)",
		measure.AMP:        "FP16 data on tensor cores, FP32 accumulation",
		measure.BF16:       "bfloat16 data on tensor cores, FP32 accumulation (Ampere and later; batch norm in PyTorch's own kernels, as PyTorch runs it)",
	}, nil)
}

// The choices of export's flags, whose parsers are here.

var exportCharts = []choice{
	{name: "curves", help: "time, cost or throughput against the batch size (--metric)"},
	{name: "scatter", help: "each CNN × machine at its best batch: total time against cost, the Pareto front"},
}

var exportTables = []choice{
	{name: "results", help: "the best batch of each CNN × machine"},
	{name: "curves", help: "every batch size of every curve"},
}

func metricChoices() []choice {
	return choicesOf(charts.Metrics(), map[charts.Metric]string{
		charts.MetricTotal:      "total training time",
		charts.MetricIter:       "time per iteration",
		charts.MetricEpoch:      "time per epoch",
		charts.MetricThroughput: "images per second",
		charts.MetricCost:       "training cost",
	}, nil)
}

// validateTables are the tables `validate --table` prints alone.
var validateTables = []choice{
	{name: "steps", help: "only the cache's measured whole steps against the steps their devices' layer measurements predict (measures nothing)"},
	{name: "convergence", help: "only the epochs-to-target model against the published figures"},
	{name: "ratios", help: "only the cross-GPU throughput ratios against the published ones (table 9)"},
	{name: "gains", help: "only each published series' throughput gain from its smallest to its largest batch against the predicted one (table 10)"},
}

// errorOf turns a parser that returns a value into one that returns only its error.
func errorOf[T any](parse func(string) (T, error)) func(string) error {
	return func(s string) error { _, err := parse(s); return err }
}
