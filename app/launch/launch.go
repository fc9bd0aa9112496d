package launch

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cnntime/predictor/hw"
)

// Run is one training run as cnntime predicted it: what a launch file starts.
type Run struct {
	Model string // the CNN's name
	// Zoo says torchvision builds the model by that name, so cnntime's training script
	// can train it; the user's own CNN needs Command.
	Zoo     bool
	Machine string // cnntime's id of the machine, e.g. aws/p4d.24xlarge
	// Cloud is the machine's provider as SkyPilot names clouds (aws, gcp, azure, lambda,
	// runpod), "" for a machine of the user's own; Instance its instance type, "" where
	// SkyPilot is left to choose one by the accelerator. Kubernetes says SkyPilot reaches
	// the machine through a Kubernetes cluster (CoreWeave's CKS): infra k8s, no instance
	// type, no region, no spot.
	Cloud      string
	Instance   string
	Kubernetes bool
	// Accelerator is SkyPilot's name of the machine's GPU (H100, A100-80GB, ...), ""
	// for a machine without a GPU cnntime can name.
	Accelerator string
	GPUs        int     // per node; 0 for a CPU
	CPUs        int     // vCPUs per node; 0 when unknown
	MemoryGiB   float64 // host memory per node; 0 when unknown
	Nodes       int
	Region      string // "" for any
	Spot        bool
	Batch       int     // the global batch
	Epochs      float64 // the epochs the prediction counts (to a target: what this batch needs)
	// Regime is the optimizer regime the epochs assume above the batch the usual
	// optimizer is known to hold to (lars, extrapolated); "" below it.
	Regime string
	// Precision is fp32, fp32-strict, tf32, amp or bf16; ChannelsLast runs NHWC;
	// Compile is torch.compile's mode ("" for eager PyTorch); CUDNNBenchmark lets cuDNN
	// time its algorithms (cnntime's policy "fastest").
	Precision      string
	ChannelsLast   bool
	Compile        string
	CUDNNBenchmark bool
	// Synthetic trains on one batch of random images kept on the GPU (cnntime's
	// synthetic loader), with no data to read.
	Synthetic bool
	Workers   int // data loader workers per GPU (per process)
	Input     int // the training crop, pixels
	Dataset   string
	Images    int // training images per epoch
	ValImages int // validation images a pass evaluates; 0 when unknown
	Classes   int
	Recipe    Recipe
	// GPUID is cnntime's catalog id of the GPU, the gpu column of the step CSV the
	// run writes; "" lets the script key the steps by the device it finds.
	GPUID string
	// Wheel is the PyTorch a SkyPilot task installs.
	Wheel Wheel
	// Data is where the images are: a bucket (s3://, gs://, r2://, cos://, oci://,
	// https://ACCOUNT.blob.core.windows.net/...) SkyPilot mounts or copies, or a path
	// the nodes see; "" leaves DATA_PATH to be set when starting. DataCopy copies a
	// bucket to the nodes' disks instead of mounting it.
	Data     string
	DataCopy bool
	// Checkpoints is where checkpoints and the step CSV go: a bucket (mounted with
	// write-back caching) or a path the nodes share; "" for the default (the node's
	// home on a cloud, the submit folder on Slurm).
	Checkpoints string
	// Prediction says in one line what cnntime predicted for the run this file starts
	// (time, cost, their band, the source); TotalS and ErrorPct are its run time and
	// expected error.
	Prediction string
	TotalS     float64
	ErrorPct   float64
	// BatchNote says how the batch was chosen ("the recommended batch: …", "picked in
	// the window: …"), a header line of its own; "" for none.
	BatchNote string
	// Differs lists what the file runs otherwise than asked, and cnntime's prediction
	// for what was asked, one line each; empty when it runs what was asked.
	Differs []string
	// Host says which host CPU the prediction assumed ("" when it assumed none).
	Host string
	// Command is the user's own training command, run on every node with the run's
	// variables in its environment; "" runs cnntime's training script.
	Command string
}

// Check reports the first thing wrong with the run, or nil.
func (r Run) Check() error {
	switch {
	case strings.TrimSpace(r.Model) == "":
		return fmt.Errorf("no model: give the CNN to train")
	case r.Nodes < 1:
		return fmt.Errorf("%d nodes: give at least 1", r.Nodes)
	case r.Batch < 1:
		return fmt.Errorf("batch %d: give a positive global batch", r.Batch)
	case r.GPUs > 0 && r.Batch < r.GPUs*r.Nodes:
		return fmt.Errorf("batch %d is smaller than the %d GPUs that would share it", r.Batch, r.GPUs*r.Nodes)
	case !(r.TotalS > 0) || math.IsInf(r.TotalS, 0) || !(r.ErrorPct >= 0) || math.IsInf(r.ErrorPct, 0):
		return fmt.Errorf("no predicted run time (%v s ±%v%%) to size the job by", r.TotalS, r.ErrorPct)
	case !(r.Epochs > 0) || math.IsInf(r.Epochs, 0):
		return fmt.Errorf("no epochs (%v) to train", r.Epochs)
	case !r.Zoo && strings.TrimSpace(r.Command) == "":
		return fmt.Errorf("%s is not a torchvision model, so cnntime's training script cannot build it: give your own training command (--run); it finds MODEL, GLOBAL_BATCH, BATCH_PER_GPU, EPOCHS and LR in its environment", r.Model)
	case strings.ContainsRune(r.Command, 0):
		return fmt.Errorf("the training command holds a NUL byte")
	case strings.ContainsAny(r.Data+r.Checkpoints, "\x00\n\r"):
		return fmt.Errorf("--data and --checkpoints take one line each, without control characters")
	case !slices.Contains(precisions, r.Precision):
		return fmt.Errorf("precision %q: the training script runs %s", r.Precision, strings.Join(precisions, ", "))
	case r.Compile != "" && !slices.Contains(compileModes, r.Compile):
		return fmt.Errorf("torch.compile mode %q: use %s", r.Compile, strings.Join(compileModes, ", "))
	case r.Region != "" && strings.Contains(r.Region, "/"):
		return fmt.Errorf("region %q holds a /: give the region's name alone (us-east-1)", r.Region)
	}
	if r.Command == "" {
		return r.Recipe.check()
	}
	return nil
}

// The training script's precisions and torch.compile modes (scripts/cnntime_train.py:
// PRECISIONS, COMPILE_MODES).
var (
	precisions   = []string{"fp32", "fp32-strict", "tf32", "amp", "bf16"}
	compileModes = []string{"default", "reduce-overhead", "max-autotune"}
)

// procs is the training processes on each node: one per GPU, one on a CPU.
func (r Run) procs() int { return max(r.GPUs, 1) }

// perGPUBatch is the batch each GPU (or the one CPU process) runs: the global batch
// shared over every GPU of every node, rounded up as cnntime predicts it.
func (r Run) perGPUBatch() int {
	n := r.procs() * r.Nodes
	return (r.Batch + n - 1) / n
}

// bucket reports whether a --data or --checkpoints value names an object store
// SkyPilot mounts (a URL with a scheme), not a path.
func bucket(s string) bool {
	scheme, rest, ok := strings.Cut(s, "://")
	return ok && rest != "" && regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`).MatchString(scheme)
}

// Mount points of the buckets on a SkyPilot node.
const (
	dataMount       = "/data"
	checkpointMount = "/checkpoints"
)

// dataPath is DATA_PATH: where the ImageFolder tree is on the nodes.
func (r Run) dataPath() string {
	switch {
	case r.Data != "" && bucket(r.Data):
		return dataMount
	case r.Data != "":
		return r.Data
	}
	return "/data/" + dataFolder(r.Dataset)
}

// dataFolder is the folder name DATA_PATH suggests for a dataset.
func dataFolder(dataset string) string {
	if dataset == "" {
		return "imagenet"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(dataset))
}

// epochsText is the epochs the script trains: the prediction's own figure, to the
// hundredth (the script trains a fraction of the last epoch).
func (r Run) epochsText() string {
	return strconv.FormatFloat(math.Ceil(r.Epochs*100-1e-6)/100, 'f', -1, 64)
}

// env is the run's variables, in order: what the command reads.
func (r Run) env() [][2]string {
	vars := [][2]string{
		{"MODEL", r.Model},
		{"DATASET", r.Dataset},
		{"DATA_PATH", r.dataPath()},
		{"GLOBAL_BATCH", strconv.Itoa(r.Batch)},
		{"BATCH_PER_GPU", strconv.Itoa(r.perGPUBatch())},
		{"EPOCHS", r.epochsText()},
		{"LR", num(r.Recipe.LR)},
		{"WARMUP_EPOCHS", num(r.Recipe.WarmupEpochs)},
		{"RECIPE", r.Recipe.Note},
		{"PRECISION", r.Precision},
		{"WORKERS", strconv.Itoa(r.Workers)},
		{"INPUT_SIZE", strconv.Itoa(r.Input)},
		{"GPU_ID", r.GPUID},
		{"PREDICTION", r.Prediction},
	}
	if r.Precision == "fp32-strict" { // no TF32 anywhere, as the prediction assumed
		vars = append(vars, [2]string{"NVIDIA_TF32_OVERRIDE", "0"})
	}
	return vars
}

// num is a number as the script's flags take it.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// trainArgs are the training script's arguments: the values the user may have named
// come from the run's variables ("$MODEL"), everything else is a number or a word
// cnntime chose. checkpoints is the shell expression of the checkpoint folder.
func (r Run) trainArgs(checkpoints string) []string {
	args := []string{`--model "$MODEL"`}
	if r.Synthetic {
		args = append(args, "--synthetic", "--synthetic-images "+strconv.Itoa(max(r.Images, 1)))
		if r.Classes > 0 {
			args = append(args, "--classes "+strconv.Itoa(r.Classes))
		}
	} else {
		args = append(args, `--data "$DATA_PATH"`)
	}
	args = append(args, `--batch-size "$BATCH_PER_GPU"`, `--epochs "$EPOCHS"`, `--workers "$WORKERS"`,
		`--precision "$PRECISION"`, `--train-crop-size "$INPUT_SIZE"`)
	if r.ChannelsLast {
		args = append(args, "--channels-last")
	}
	if r.Compile != "" {
		args = append(args, "--compile", "--compile-mode "+r.Compile)
	}
	if r.CUDNNBenchmark {
		args = append(args, "--cudnn-benchmark")
	}
	if r.GPUs == 0 {
		args = append(args, "--device cpu")
	}
	args = append(args, r.Recipe.flags()...)
	if every := r.evalEvery(); every > 0 {
		args = append(args, "--eval-every "+strconv.Itoa(every))
	}
	args = append(args, `--checkpoint-dir "`+checkpoints+`"`, `--steps-csv "`+checkpoints+`/steps.csv"`)
	if r.GPUID != "" {
		args = append(args, `--gpu-id "$GPU_ID"`)
	}
	return args
}

// argLines lays out arguments a few to a line, continued with backslashes.
func argLines(indent string, args []string) string {
	var b strings.Builder
	line := 0
	for i, a := range args {
		if line > 0 && line+len(a) > 100 {
			b.WriteString(" \\\n" + indent)
			line = 0
		} else if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(a)
		line += len(a) + 1
	}
	return b.String()
}

// Evaluation and start-up, which a job's time limit adds to the predicted training.
const (
	// evalShare is the most of the training time the evaluation passes may take: the
	// script evaluates every n epochs, n the smallest that keeps the passes within it
	// (every epoch on ImageNet, whose 50,000 validation images are 3.9% of an epoch).
	evalShare = 0.05
	// startupS allows for a job's start: Python and PyTorch imports, listing an
	// ImageFolder (a million files on a shared file system take minutes), the
	// DataLoader's workers, NCCL's rendezvous, cuDNN's first calls.
	startupS = 10 * 60
	// compileS allows for torch.compile's first graphs (a few minutes for a ResNet-50,
	// more for networks of many small layers) and the CUDA graphs' capture.
	compileS = 10 * 60
	// maxJobDays bounds a job's time limit: a run predicted to take longer than a year
	// is a mistake to correct (more nodes, a larger batch), not a job to queue.
	maxJobDays = 365
)

// evalEvery is how many epochs lie between evaluations; 0 when there is nothing to
// evaluate (synthetic data, or no validation images known).
func (r Run) evalEvery() int {
	if r.Synthetic || r.ValImages <= 0 || r.Images <= 0 || r.Command != "" {
		return 0
	}
	share := float64(r.ValImages) / float64(r.Images)
	return max(1, int(math.Ceil(share/evalShare-1e-9)))
}

// evalPasses is how many times the script evaluates: every evalEvery epochs, and at
// the end.
func (r Run) evalPasses() int {
	every := r.evalEvery()
	if every == 0 {
		return 0
	}
	return int(math.Floor(r.Epochs/float64(every)+1e-9)) + 1
}

// upperS is the upper end of the predicted training time.
func (r Run) upperS() float64 { return r.TotalS * (1 + r.ErrorPct/100) }

// evalUpperS bounds the evaluation passes' time: a pass reads and decodes its images
// as training does and runs only the forward pass, so it takes at most the training
// time of as many images.
func (r Run) evalUpperS() float64 {
	if r.evalPasses() == 0 {
		return 0
	}
	return float64(r.evalPasses()) * float64(r.ValImages) / float64(r.Images) * r.upperS() / r.Epochs
}

// startUpS is the start-up a job's time limit allows.
func (r Run) startUpS() float64 {
	if r.Compile != "" {
		return startupS + compileS
	}
	return startupS
}

// JobSeconds is the time a job must be given: the upper end of the predicted training,
// the evaluation passes and the start-up.
func (r Run) JobSeconds() float64 { return r.upperS() + r.evalUpperS() + r.startUpS() }

// TimeLimit is a Slurm time limit (D-HH:MM:SS) of seconds, rounded up to the minute;
// longer than maxJobDays is an error that says what to do.
func TimeLimit(seconds float64) (string, error) {
	if !(seconds >= 0) || seconds > maxJobDays*86400 {
		return "", fmt.Errorf("the job would need %s, longer than the %d days a time limit here may ask: train on more nodes or at a larger batch, or split the run with --checkpoints and resubmit it (it resumes)", durationText(seconds), maxJobDays)
	}
	minutes := max(int(math.Ceil(seconds/60-1e-9)), 1)
	return fmt.Sprintf("%d-%02d:%02d:00", minutes/(24*60), minutes/60%24, minutes%60), nil
}

// durationText is seconds in words for messages and headers: 3.2 h, 41 min, 2.5 days.
func durationText(s float64) string {
	switch {
	case math.IsInf(s, 0) || math.IsNaN(s):
		return fmt.Sprint(s) + " s"
	case s >= 2*86400:
		return fmt.Sprintf("%.1f days", s/86400)
	case s >= 5400:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.0f min", math.Ceil(s/60))
	}
	return fmt.Sprintf("%.0f s", math.Ceil(s))
}

// header is the comment at the top of a launch file: what it runs, the prediction for
// that run, what it runs otherwise than asked, where its data and checkpoints are, and
// how to start it.
func header(r Run, start []string) []string {
	what := fmt.Sprintf("%s on %d × %s at global batch %d (%d per GPU)", r.Model, r.Nodes, r.Machine, r.Batch, r.perGPUBatch())
	if r.Nodes == 1 {
		what = fmt.Sprintf("%s on %s at global batch %d", r.Model, r.Machine, r.Batch)
		if r.GPUs > 1 {
			what += fmt.Sprintf(" (%d per GPU)", r.perGPUBatch())
		}
	}
	lines := []string{"Written by cnntime: " + oneLine(what) + "."}
	if r.BatchNote != "" {
		lines = append(lines, "Batch: "+oneLine(r.BatchNote)+".")
	}
	lines = append(lines, "Predicted for the run this file starts: "+oneLine(r.Prediction)+".")
	if r.Command != "" {
		lines = append(lines, "Runs your own command, which must train as the prediction assumed (its variables below).")
	} else {
		lines = append(lines, "Runs cnntime's training script ("+scriptNameText+"): "+oneLine(r.runText())+".",
			"Recipe: "+oneLine(r.Recipe.Note)+".")
	}
	for _, d := range r.Differs {
		lines = append(lines, "Not as asked: "+oneLine(d)+".")
	}
	if r.Host != "" {
		lines = append(lines, oneLine(r.Host)+".")
	}
	if n := r.evalPasses(); n > 0 {
		every := "after every epoch"
		if e := r.evalEvery(); e > 1 {
			every = fmt.Sprintf("every %d epochs", e)
		}
		lines = append(lines, fmt.Sprintf("Evaluation: %s and at the end, %d passes over %s validation images, at most %s in all (not in the figure above).",
			every, n, thousands(r.ValImages), durationText(r.evalUpperS())))
	}
	return append(lines, start...)
}

// thousands writes n with thousands separators: 50,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// scriptNameText names the training script in headers.
const scriptNameText = "cnntime_train.py, written out below"

// runText says how the script runs: precision, layout, stack, loader.
func (r Run) runText() string {
	parts := []string{r.Precision}
	if r.ChannelsLast {
		parts = append(parts, "channels_last (NHWC)")
	}
	if r.Compile != "" {
		parts = append(parts, "torch.compile mode "+r.Compile)
	} else {
		parts = append(parts, "eager PyTorch")
	}
	if r.CUDNNBenchmark {
		parts = append(parts, "cudnn.benchmark")
	}
	if r.Synthetic {
		parts = append(parts, "synthetic images on the GPU (no loader)")
	} else {
		parts = append(parts, fmt.Sprintf("an ImageFolder through PyTorch's DataLoader with %d workers per GPU", r.Workers))
	}
	if r.GPUs == 0 {
		parts = append(parts, "on the CPU")
	}
	return strings.Join(parts, ", ")
}

// oneLine keeps a comment on its line: line breaks become spaces, and what else a
// terminal, a YAML loader or a shell would act on is written out (printable).
func oneLine(s string) string {
	return printable(strings.Join(strings.Fields(s), " "))
}

// printable is s with each character a terminal, a YAML loader (PyYAML refuses a
// control character even in a comment) or a reader of a shell script would act on
// rather than show (hw.Unprintable) written out as \x1b, \u2028 and the like: text
// from a price catalog or a cache (a region, an instance type) goes into launch files'
// comments only so.
func printable(s string) string {
	if !strings.ContainsFunc(s, hw.Unprintable) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !hw.Unprintable(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// jobNameChar is what a job name keeps of a model's name: Slurm reads it without a
// shell, SkyPilot uses it in cluster names.
var jobNameChar = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// jobName names the job after the model.
func jobName(model string) string {
	return "cnntime-" + strings.Trim(jobNameChar.ReplaceAllString(model, "-"), "-.")
}
