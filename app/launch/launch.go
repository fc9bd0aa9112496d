package launch

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"cnntime/app/cluster"
	"cnntime/predictor/hw"
)

// Run is one training run as cnntime predicted it: what a launch file starts.
type Run struct {
	Model string // the CNN's name
	// Zoo says torchvision builds the model by that name, so its reference script can
	// train it; the user's own CNN needs Command.
	Zoo     bool
	Machine string // cnntime's id of the machine, e.g. aws/p4d.24xlarge
	// Cloud is the machine's provider as SkyPilot names clouds (aws, gcp, azure, lambda,
	// runpod), "" for a machine of the user's own; Instance its instance type, "" where
	// SkyPilot is left to choose one by the accelerator.
	Cloud    string
	Instance string
	// Accelerator is SkyPilot's name of the machine's GPU (H100, A100-80GB, ...), ""
	// for a machine without a GPU cnntime can name.
	Accelerator string
	GPUs        int // per node; 0 for a CPU
	CPUs        int // vCPUs per node; 0 when unknown
	Nodes       int
	Region      string // "" for any
	Spot        bool
	Batch       int     // the global batch
	Epochs      float64 // the epochs the prediction counts (to a target: what this batch needs)
	// Regime is the optimizer regime the epochs assume above the batch the usual
	// optimizer is known to hold to (lars, extrapolated); "" below it.
	Regime    string
	Precision string // fp32, fp32-strict or amp
	Workers   int    // data loader workers per GPU; 0 for the script's default
	Input     int    // the input's height and width in pixels; 0 for the script's default
	Dataset   string // the dataset the prediction assumed, e.g. imagenet-1k
	// Prediction says in one line what cnntime predicted for the run (time, cost,
	// their band, the source), for the file's header and its PREDICTION variable.
	Prediction string
	TotalS     float64 // the predicted run time, seconds
	ErrorPct   float64 // its expected error, ± percent
	// Command is the user's own training command, run on every node with the run's
	// variables in its environment; "" runs torchvision's reference script.
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
	case !(r.TotalS > 0) || math.IsInf(r.TotalS, 0) || !(r.ErrorPct >= 0):
		return fmt.Errorf("no predicted run time (%v s ±%v%%) to size the job by", r.TotalS, r.ErrorPct)
	case !r.Zoo && strings.TrimSpace(r.Command) == "":
		return fmt.Errorf("%s is not a torchvision model, so torchvision's reference script cannot build it: give your own training command (--run); it finds MODEL, GLOBAL_BATCH, BATCH_PER_GPU, EPOCHS and LR in its environment", r.Model)
	case strings.ContainsRune(r.Command, 0):
		return fmt.Errorf("the training command holds a NUL byte")
	}
	return nil
}

// perGPUBatch is the batch each GPU (or the one CPU process) runs: the global batch
// shared over every GPU of every node, rounded up as cnntime predicts it.
func (r Run) perGPUBatch() int {
	n := max(r.GPUs, 1) * r.Nodes
	return (r.Batch + n - 1) / n
}

// The learning rate of torchvision's ResNet recipe (SGD, 0.1 at a global batch of 256:
// 8 GPUs × 32), scaled linearly with the batch and warmed up over 5 epochs above 256
// (Goyal et al. 2017, "Accurate, Large Minibatch SGD").
const (
	recipeLR     = 0.1
	recipeBatch  = 256
	warmupEpochs = 5
)

// learningRate is the scaled learning rate, its warm-up epochs and a note on both.
func (r Run) learningRate() (lr float64, warmup int, note string) {
	lr = recipeLR * float64(r.Batch) / recipeBatch
	if r.Batch > recipeBatch {
		warmup = warmupEpochs
	}
	note = fmt.Sprintf("linear scaling (Goyal et al. 2017): lr = %g × %d/%d = %s", recipeLR, r.Batch, recipeBatch, strconv.FormatFloat(lr, 'g', 4, 64))
	if warmup > 0 {
		note += fmt.Sprintf(", warmed up over %d epochs", warmup)
	}
	note += "; torchvision's ResNet recipe (other models' recipes differ: references/classification/README.md)"
	if r.Regime != "" {
		note += fmt.Sprintf(". The epochs assume the %s regime at this batch, which plain SGD does not reach: train with such an optimizer (LARS, LAMB) in your own command", r.Regime)
	}
	return lr, warmup, note
}

// env is the run's variables, in order: what the command reads.
func (r Run) env() [][2]string {
	lr, warmup, note := r.learningRate()
	amp := ""
	if r.Precision == "amp" {
		amp = "--amp"
	}
	vars := [][2]string{
		{"MODEL", r.Model},
		{"DATASET", r.Dataset},
		{"DATA_PATH", "/data/" + dataFolder(r.Dataset)},
		{"GLOBAL_BATCH", strconv.Itoa(r.Batch)},
		{"BATCH_PER_GPU", strconv.Itoa(r.perGPUBatch())},
		{"EPOCHS", strconv.Itoa(int(math.Ceil(r.Epochs - 1e-9)))},
		{"EPOCHS_PREDICTED", strconv.FormatFloat(r.Epochs, 'f', 2, 64)},
		{"LR", strconv.FormatFloat(lr, 'g', 6, 64)},
		{"WARMUP_EPOCHS", strconv.Itoa(warmup)},
		{"LR_NOTE", note},
		{"PRECISION", r.Precision},
		{"AMP", amp},
		{"WORKERS", strconv.Itoa(r.Workers)},
		{"INPUT_SIZE", strconv.Itoa(r.Input)},
		{"PREDICTION", r.Prediction},
	}
	if r.Precision == "fp32-strict" { // no TF32 anywhere, as the prediction assumed
		vars = append(vars, [2]string{"NVIDIA_TF32_OVERRIDE", "0"})
	}
	return vars
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

// trainArgs are the reference script's arguments, read from the run's variables.
func (r Run) trainArgs() string {
	args := `--data-path "$DATA_PATH" --model "$MODEL" --batch-size "$BATCH_PER_GPU" --epochs "$EPOCHS"` +
		` --lr "$LR" --lr-warmup-epochs "$WARMUP_EPOCHS" --lr-warmup-method linear`
	if r.Workers > 0 {
		args += ` --workers "$WORKERS"`
	}
	if r.Input > 0 {
		args += ` --train-crop-size "$INPUT_SIZE"`
	}
	if r.GPUs == 0 {
		args += ` --device cpu`
	}
	return args + ` $AMP`
}

// referenceScript is where torchvision's reference training script is in a clone of
// github.com/pytorch/vision.
const referenceScript = "vision/references/classification/train.py"

// SkyPilot writes a SkyPilot task: resources (cloud, region, instance type,
// accelerators, spot), nodes, the run's variables and the command, with the prediction
// in a comment at the top.
func SkyPilot(r Run) ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	switch {
	case r.Cloud == "":
		return nil, fmt.Errorf("%s is not a cloud machine, so SkyPilot cannot launch it: pick a machine of aws, gcp, azure, lambda or runpod, or write a Slurm script (launch slurm)", r.Machine)
	case r.Accelerator == "" || r.GPUs < 1:
		return nil, fmt.Errorf("cnntime knows no SkyPilot accelerator name for %s's GPU: pick a machine whose GPU SkyPilot lists", r.Machine)
	}
	resources := mapping(
		"cloud", quoted(r.Cloud),
		"accelerators", quoted(fmt.Sprintf("%s:%d", r.Accelerator, r.GPUs)),
		"use_spot", boolean(r.Spot),
	)
	if r.Region != "" {
		resources.Content = append(resources.Content, key("region"), quoted(r.Region))
	}
	if r.Instance != "" {
		resources.Content = append(resources.Content, key("instance_type"), quoted(r.Instance))
	}
	envs := mapping()
	for _, v := range r.env() {
		envs.Content = append(envs.Content, key(v[0]), quoted(v[1]))
	}
	setup, run := skyPilotCommands(r)
	doc := mapping(
		"name", quoted(jobName(r.Model)),
		"resources", resources,
		"num_nodes", integer(r.Nodes),
		"envs", envs,
	)
	if setup != "" {
		doc.Content = append(doc.Content, key("setup"), literal(setup))
	}
	doc.Content = append(doc.Content, key("run"), literal(run))
	doc.HeadComment = header(r, "sky launch FILE (sky launch --env DATA_PATH=... FILE points it at your data)")
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("write the SkyPilot task: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the SkyPilot task: %w", err)
	}
	return b.Bytes(), nil
}

// skyPilotCommands are the task's setup and run: torchvision's reference script under
// torchrun over every node's GPUs, or the user's own command.
func skyPilotCommands(r Run) (setup, run string) {
	if r.Command != "" {
		return "", r.Command + "\n"
	}
	setup = "[ -d vision ] || git clone --depth 1 https://github.com/pytorch/vision.git\n"
	run = `MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n 1)` + "\n" +
		`torchrun --nnodes="$SKYPILOT_NUM_NODES" --node_rank="$SKYPILOT_NODE_RANK" --nproc_per_node="$SKYPILOT_NUM_GPUS_PER_NODE" \` + "\n" +
		`  --master_addr="$MASTER_ADDR" --master_port=8008 \` + "\n" +
		"  " + referenceScript + " " + r.trainArgs() + "\n"
	return setup, run
}

// SlurmOptions are a Slurm script's settings beside the run's own.
type SlurmOptions struct {
	Partition string // "" for the cluster's default
	// Gres is the generic resources per node; "" asks for the run's GPUs (gpu:N),
	// "none" for none (a cluster that hands out GPUs another way).
	Gres string
	CPUs int // --cpus-per-task; 0 for the machine's vCPUs (left out when unknown)
}

// Slurm writes a Slurm batch script: its #SBATCH header (nodes, one task per node,
// the GPUs, CPUs and a time limit of the predicted time plus its band), the run's
// variables and the command, run on every node by srun.
func Slurm(r Run, o SlurmOptions) ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	gres := o.Gres
	switch {
	case gres == "none":
		gres = ""
	case gres == "" && r.GPUs > 0:
		gres = fmt.Sprintf("gpu:%d", r.GPUs)
	}
	cpus := o.CPUs
	if cpus == 0 {
		cpus = r.CPUs
	}
	for _, d := range []struct{ flag, v string }{{"--partition", o.Partition}, {"--gres", gres}} {
		if err := cluster.CheckDirective(d.flag, d.v); err != nil {
			return nil, err
		}
	}
	if cpus < 0 {
		return nil, fmt.Errorf("--cpus-per-task %d: give a positive count", cpus)
	}
	if err := cluster.CheckTime(TimeLimit(r.TotalS, r.ErrorPct)); err != nil {
		return nil, fmt.Errorf("the run is predicted to take %.0f days, longer than a Slurm job may ask for (%d days): choose a faster machine, more nodes or fewer epochs", r.TotalS/86400, cluster.MaxTimeMinutes/(24*60))
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	for _, line := range strings.Split(header(r, "sbatch FILE (DATA_PATH=... sbatch FILE points it at your data)"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", jobName(r.Model))
	fmt.Fprintf(&b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n", r.Nodes)
	if gres != "" {
		fmt.Fprintf(&b, "#SBATCH --gres=%s\n", gres)
	}
	if cpus > 0 {
		fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", cpus)
	}
	fmt.Fprintf(&b, "#SBATCH --time=%s\n", TimeLimit(r.TotalS, r.ErrorPct))
	if o.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", o.Partition)
	}
	b.WriteString("#SBATCH --output=cnntime-train-%j.out\nset -euo pipefail\n\n")
	for _, v := range r.env() {
		if v[0] == "DATA_PATH" { // the submitter's own DATA_PATH wins
			fmt.Fprintf(&b, "export DATA_PATH=\"${DATA_PATH:-%s}\"\n", v[1]) // dataFolder keeps it plain
			continue
		}
		fmt.Fprintf(&b, "export %s=%s\n", v[0], cluster.ShellQuoteText(v[1]))
	}
	b.WriteString("\n")
	if r.Command != "" {
		fmt.Fprintf(&b, "srun bash -c %s\n", cluster.ShellQuote(r.Command))
		return []byte(b.String()), nil
	}
	nproc := max(r.GPUs, 1)
	b.WriteString(`TRAIN="${TRAIN_SCRIPT:-` + referenceScript + `}"` + "\n")
	b.WriteString(`if [ ! -f "$TRAIN" ]; then` + "\n" +
		`  echo "no $TRAIN: clone https://github.com/pytorch/vision beside this script, or set TRAIN_SCRIPT" >&2` + "\n" +
		"  exit 1\nfi\n")
	b.WriteString(`MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)` + "\n")
	fmt.Fprintf(&b, `srun torchrun --nnodes="$SLURM_NNODES" --nproc_per_node=%d \`+"\n", nproc)
	b.WriteString(`  --rdzv_id="$SLURM_JOB_ID" --rdzv_backend=c10d --rdzv_endpoint="$MASTER_ADDR:29500" \` + "\n")
	b.WriteString(`  "$TRAIN" ` + r.trainArgs() + "\n")
	return []byte(b.String()), nil
}

// TimeLimit is a Slurm time limit (D-HH:MM:SS) for a run predicted to take totalS
// seconds ± errorPct percent: the upper end of the band, rounded up to the minute.
func TimeLimit(totalS, errorPct float64) string {
	minutes := int(math.Ceil(totalS * (1 + errorPct/100) / 60))
	minutes = max(minutes, 1)
	return fmt.Sprintf("%d-%02d:%02d:00", minutes/(24*60), minutes/60%24, minutes%60)
}

// header is the comment at the top of a launch file: what it runs, the prediction it
// was chosen from, and how to start it.
func header(r Run, how string) string {
	what := fmt.Sprintf("%s on %d × %s at global batch %d", r.Model, r.Nodes, r.Machine, r.Batch)
	if r.Nodes == 1 {
		what = fmt.Sprintf("%s on %s at global batch %d", r.Model, r.Machine, r.Batch)
	}
	lines := []string{"Written by cnntime: " + oneLine(what) + ".", "Predicted: " + oneLine(r.Prediction) + "."}
	if r.Command == "" {
		lines = append(lines, "Runs torchvision's reference training script; DATA_PATH is an ImageFolder tree (train/, val/).")
	}
	return strings.Join(append(lines, "Start it with: "+how+"."), "\n")
}

// oneLine keeps a comment on its line: line breaks become spaces, and what else a
// terminal, a YAML loader or a shell would act on is written out (printable).
func oneLine(s string) string {
	return printable(strings.Join(strings.Fields(s), " "))
}

// printable is s with each character a terminal, a YAML loader (PyYAML refuses a
// control character even in a comment) or a reader of a shell script would act on
// rather than show (hw.Unprintable) written out as \x1b, \u2028 and the like: text
// from a price catalog or a cache (a region, an instance type) goes into launch files
// only so.
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

// YAML nodes.

func key(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }

// quoted is a string double-quoted, whatever it holds.
func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func literal(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.LiteralStyle}
}

func integer(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func boolean(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
}

// mapping is a YAML mapping of keys and values, in order.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, key(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}
