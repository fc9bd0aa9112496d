package cli

import (
	"context"
	"flag"
	"strings"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// maxPredictBatch bounds the batch sizes the CLI accepts.
const maxPredictBatch = 1 << 16

// maxEpochs and maxImages bound --epochs and --images: a run of more is a mistake (and
// its total time would overflow what a duration prints).
const (
	maxEpochs = 100_000
	maxImages = 10_000_000_000
)

// exampleBatches is the batch range the messages suggest. Left out, --batch and
// --batches give the window's batch sizes (app.DefaultSessionSettings): app.BatchGrid
// from 1 up to the largest batch that fits each machine, so `best` and the window find
// the same best batch for the same settings.
const exampleBatches = "1-1024"

// runFlags are THE shared run flags: what to train (--model), where (--machine, --gpu),
// at which batch sizes (--batch, --batches), how (--precision, --policy) and how long
// (--epochs, --images). predict, best and export register them here, so each meaning has
// one spelling, one default (the GUI's: app.DefaultSessionSettings) and one check.
//
// To add a shared flag (e.g. --dataset, --nodes): a field below, its fs.*Var in
// register, its check and its Query field in query; every command that predicts a run
// then has it, with the same help text.
type runFlags struct {
	models, machines, gpus string
	batch                  int // predict only (withBatch): one batch size
	batches                string
	precision, policy      string
	epochs, images         int
	data                   runDataFlags // --dataset, --input, --classes, --loader, --workers, --memory-format
	nodes                  nodeFlags    // --nodes, --network-gbps (best: --budget, --deadline)
	chooseNodes            bool         // best: --nodes may list several counts
	oneBatch               bool         // explain: --batch is required and --batches is not registered
	batchOrRecommended     bool         // launch, with oneBatch: without --batch, the query spans the grid (the recommended batch is then chosen)
	nodeCounts             []int        // the counts --nodes gave, set by query
	region                 string       // --region: price every machine there ("" each one's cheapest)
	spot                   bool         // --spot: spot prices instead of on-demand
	train                  trainFlags   // --train, --recipe, --target-accuracy, --ref-epochs, --ref-batch, --critical-batch, --like
}

// register adds the shared run flags to fs. Lists have a singular and a plural
// spelling (--model/--models, --machine/--machines, --gpu/--gpus): both work.
func (rf *runFlags) register(fs *flag.FlagSet, withBatch bool) {
	fs.StringVar(&rf.models, "model", "", "CNNs, comma-separated: zoo names or custom model files (e.g. resnet50,my_net.json); all: every zoo model")
	fs.StringVar(&rf.models, "models", "", "the same as --model")
	fs.StringVar(&rf.machines, "machine", "", "machines, comma-separated catalog or user ids (e.g. aws/p3.2xlarge); all: every catalog and user machine; a provider (aws, lambda, …): its machines; gpu:ID: every machine with that GPU")
	fs.StringVar(&rf.machines, "machines", "", "the same as --machine")
	fs.StringVar(&rf.gpus, "gpu", "", "bare GPUs, comma-separated catalog ids: a one-GPU machine with no price")
	fs.StringVar(&rf.gpus, "gpus", "", "the same as --gpu")
	switch {
	case rf.oneBatch && rf.batchOrRecommended:
		wholeVar(fs, &rf.batch, "batch", 0, "the global batch size (default: the recommended batch, as best and the window advise it)")
	case rf.oneBatch:
		wholeVar(fs, &rf.batch, "batch", 0, "the global batch size (required)")
	case withBatch:
		wholeVar(fs, &rf.batch, "batch", 0, "one global batch size (instead of --batches)")
	}
	if !rf.oneBatch {
		fs.StringVar(&rf.batches, "batches", "", "global batch sizes: a range 1-1024 (every size in it), a list 32,64 or both (default: the window's grid, from 1 up to the largest batch that fits each machine)")
	}
	choiceVar(fs, &rf.precision, "precision", "fp32", "the training precision", trainingPrecisionChoices(), errorOf(predictor.ParseTrainingPrecision))
	choiceVar(fs, &rf.policy, "policy", "heuristic", "cuDNN's convolution algorithm choice", policyChoices(), errorOf(measure.ParsePolicy))
	wholeVar(fs, &rf.epochs, "epochs", app.DefaultEpochs, "training epochs")
	wholeVar(fs, &rf.images, "images", 0, "training images per epoch (default: the dataset's: 1,281,167 for imagenet-1k, 50,000 for cifar)")
	fs.StringVar(&rf.region, "region", "", "price the machines in this region, e.g. us-east-1 (default: each machine's cheapest region)")
	fs.BoolVar(&rf.spot, "spot", false, "cost with spot (preemptible) prices instead of on-demand ones")
	rf.data.register(fs)
	rf.nodes.register(fs, rf.chooseNodes)
	rf.train.register(fs)
}

// runFlagsUsage is the synopsis of the shared run flags, for the commands' Usage; the
// node flags follow it (nodesUsage, or best's bestNodesUsage). Its choices are the
// flags' own (TestSynopsisChoicesAreTheFlags).
var runFlagsUsage = "--model M[,…] (--machine ID[,…] | --gpu ID[,…]) [--batches B[-B],…]\n" +
	"        [--precision " + alternatives(trainingPrecisionChoices()) + "] [--policy " + alternatives(policyChoices()) + "] [--epochs 90] [--images N]\n" +
	"        [--region R] [--spot]\n" +
	"        [--dataset " + alternatives(datasetChoices()) + "] [--input N] [--classes K]\n" +
	"        [--loader " + alternatives(loaderChoices()) + "] [--workers N]\n" +
	"        [--memory-format " + alternatives(memoryFormatChoices()) + "] [--script " + alternatives(scriptChoices()) + "]\n" +
	"        [--framework " + alternatives(frameworkChoices()) + "] [--software current|pytorch-X.Y|ngc-YY.MM|YYYY-MM]"

// trainFlagsUsage is the synopsis of the training flags; each command's synopsis ends
// with it.
var trainFlagsUsage = "\n        [--train " + alternatives(trainModeChoices()) + " [--recipe NAME|FILE] [--target-accuracy X]\n        [--ref-epochs E --ref-batch B (--critical-batch N | --like " + alternatives(likeChoices()) + ")]]"

// query checks the flags and resolves them against the engine; every mistake is a
// usage error that names the bad value and says what to type instead.
func (rf *runFlags) query(ctx context.Context, eng *app.Engine, fs *flag.FlagSet) (app.Query, error) {
	var q app.Query
	if fs.NArg() > 0 {
		return q, Usagef("unexpected argument %q: every value follows its flag, e.g. --model resnet50,vgg16 --machine aws/p3.2xlarge", fs.Arg(0))
	}
	if rf.models == "" {
		return q, Usagef("--model is required (e.g. --model resnet50)")
	}
	if rf.machines == "" && rf.gpus == "" {
		return q, Usagef("give --machine or --gpu (e.g. --machine aws/p3.2xlarge or --gpu a100-sxm4-40gb)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	batchSet := set["batch"]
	if batchSet && set["batches"] {
		return q, Usagef("give --batch or --batches, not both")
	}
	switch {
	case batchSet && rf.batch <= 0:
		return q, Usagef("--batch %d: the batch size must be positive", rf.batch)
	case batchSet && rf.batch > maxPredictBatch:
		return q, Usagef("--batch %d is above the largest this tool predicts (%d)", rf.batch, maxPredictBatch)
	case batchSet:
		q.Batches = []int{rf.batch}
	case rf.oneBatch && rf.batchOrRecommended:
		q.Span = app.BatchSpan{Min: 1}
	case rf.oneBatch:
		return q, Usagef("--batch is required: the global batch size to explain, e.g. --batch 128")
	case set["batches"] && rf.batches == "":
		return q, Usagef("--batches needs sizes: write --batches %s (a range), --batches 32,64 (a list) or --batch 64", exampleBatches)
	case !set["batches"]:
		// The window's grid, from 1 up to the largest batch that fits each machine (and
		// at most an epoch's images): the same batch sizes, so the same best batch.
		q.Span = app.BatchSpan{Min: 1}
	default:
		b, err := app.ParseBatches(rf.batches, maxPredictBatch)
		if err != nil {
			return q, Usagef("--batches: %v", err)
		}
		q.Batches = b
	}
	switch {
	case rf.epochs <= 0:
		return q, Usagef("--epochs %d: must be positive (default %d)", rf.epochs, app.DefaultEpochs)
	case rf.epochs > maxEpochs:
		return q, Usagef("--epochs %d: give 1 to %d (default %d)", rf.epochs, maxEpochs, app.DefaultEpochs)
	case set["images"] && rf.images <= 0:
		return q, Usagef("--images %d: must be positive (leave it out for the dataset's)", rf.images)
	case set["images"] && rf.images > maxImages:
		return q, Usagef("--images %d: give 1 to %d (leave it out for the dataset's)", rf.images, maxImages)
	}
	data, err := rf.data.runData(set["framework"])
	if err != nil {
		return q, err
	}
	q.Data = data
	if rf.nodeCounts, err = rf.nodes.counts(rf.chooseNodes); err != nil {
		return q, err
	}
	q.Nodes = rf.nodeCounts[0]
	if q.NodeNetwork, err = rf.nodes.network(); err != nil {
		return q, err
	}
	images := rf.images
	if !set["images"] {
		images = data.Images()
	}
	q.Run = predictor.Run{Epochs: rf.epochs, Images: images}
	training, err := rf.train.training(set)
	if err != nil {
		return q, err
	}
	if err := training.Check(data); err != nil {
		return q, Usagef("--train %s: %v", training.Mode, err)
	}
	q.Train = training
	if q.ToTarget() && set["epochs"] {
		return q, Usagef("--epochs %d counts a fixed run; --train to-target gives each batch the epochs it needs (leave --epochs out, or use --train epochs)", rf.epochs)
	}
	p, err := predictor.ParseTrainingPrecision(rf.precision)
	if err != nil {
		return q, Usagef("--precision: %v", err)
	}
	q.Precision = p
	if q.Policy, err = measure.ParsePolicy(rf.policy); err != nil {
		return q, Usagef("--policy: %v", err)
	}
	nets, err := app.ResolveModels(ctx, eng, app.ExpandModels(splitList(rf.models)))
	if err != nil {
		return q, Usagef("--model: %v", err)
	}
	for _, n := range nets {
		q.Models = append(q.Models, n.Name)
	}
	q.Price = hw.PriceChoice{Region: strings.TrimSpace(rf.region), Spot: rf.spot}
	if err := eng.CheckPriceChoice(q.Price); err != nil {
		return q, Usagef("--region: %v", err)
	}
	for _, f := range []struct{ flag, value, e string }{
		{"--machine", rf.machines, "aws/p3.2xlarge"}, {"--gpu", rf.gpus, "a100-sxm4-40gb"}} {
		if f.value != "" && len(splitList(f.value)) == 0 { // ",": as --model , is refused
			return q, Usagef("%s %q names nothing: give ids separated by commas, e.g. %s %s", f.flag, f.value, f.flag, f.e)
		}
	}
	machines, err := eng.ExpandMachines(splitList(rf.machines))
	if err != nil {
		return q, Usagef("--machine: %v", err)
	}
	for _, id := range machines {
		t, err := eng.MachineTarget(id)
		if err != nil {
			return q, Usagef("--machine: %v", err)
		}
		q.Targets = append(q.Targets, t)
	}
	for _, id := range splitList(rf.gpus) {
		t, err := eng.GPUTarget(id)
		if err != nil {
			return q, Usagef("--gpu: %v", err)
		}
		q.Targets = append(q.Targets, t)
	}
	if len(q.Targets) == 0 { // a provider or a GPU no machine has
		return q, Usagef("--machine %q names no machine: 'cnntime machines' lists them", rf.machines)
	}
	return q, nil
}

// checkFlagValues finds a flag that takes a value but is followed by another flag
// (`--csv --out r.csv`): the flag package would take "--out" as the value and report
// a confusing mistake later. The usage error says what to type.
func checkFlagValues(fs *flag.FlagSet, args []string) error {
	for i, a := range args {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") || i+1 >= len(args) {
			continue
		}
		f := fs.Lookup(strings.TrimLeft(a, "-"))
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		next := args[i+1]
		if strings.HasPrefix(next, "-") && fs.Lookup(strings.TrimLeft(strings.SplitN(next, "=", 2)[0], "-")) != nil {
			return Usagef("%s needs a value before %s: write %s VALUE (%s)", a, next, a, f.Usage)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// flagGiven reports whether the command line gave the flag name, even as "".
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
