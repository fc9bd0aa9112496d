package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"cnntime/app"
	"cnntime/app/cluster"
	"cnntime/app/outfile"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/timing"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

func clusterCommands(register func(Command)) {
	register(Command{
		Name:    "cluster",
		Summary: "write a batch job that sweeps on many nodes: a Slurm array script or a Kubernetes Indexed Job",
		Usage: "cluster slurm --models a,b --batches 1-64 --device cpu|cuda:0 [--precision " + alternatives(kernelPrecisionChoices()) + "]\n" +
			"        [--memory-format " + alternatives(memoryFormatChoices()) + "] [--l2 " + alternatives(l2Choices()) + "] [--cudnn-api " + alternatives(cudnnAPIChoices()) + "] [--step]\n" +
			"        [--policy " + alternatives(policyChoices()) + "] [--repeats K] [--partition P] [--gres gpu:1] [--cpus-per-task N]\n" +
			"        [--time HH:MM:SS] [--array N] [--shards DIR] [--cnntime PATH] [--job-name NAME] --out sweep.sbatch\n" +
			"  cnntime cluster k8s --models a,b --batches 1-64 --device cpu|cuda:0 [--precision P] [--memory-format F] [--l2 MODE]\n" +
			"        [--cudnn-api API] [--step] [--policy P] [--repeats K]\n" +
			"        --image IMAGE [--array N] [--name NAME]\n" +
			"        [--namespace NS] [--claim PVC] [--storage 1Gi] [--parallel K] --out sweep.yaml",
		Run: runCluster,
	})
}

func runCluster(env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return Usagef("say which job to write: cluster slurm … or cluster k8s …")
	}
	kind, args := args[0], args[1:]
	if kind != "slurm" && kind != "k8s" {
		return Usagef("unknown job kind %q: use slurm or k8s", kind)
	}
	fs := env.Flags(Command{Name: "cluster " + kind, Summary: commandIndex()["cluster"].Summary, Usage: commandIndex()["cluster"].Usage})
	var sw cluster.Sweep
	models := fs.String("models", "", "comma-separated models: zoo names or custom model files (.json) as the nodes see them")
	batches := fs.String("batches", "", "batch sizes, e.g. 1-64,96,128")
	fs.StringVar(&sw.Device, "device", "cpu", "cpu, or cuda:N (N the GPU index on each node; cuda:0 with one GPU per task)")
	choiceVar(fs, &sw.Precision, "precision", "", "the kernels' precision (default: the sweep's, fp32)", kernelPrecisionChoices(), errorOf(measure.ParsePrecision))
	choiceVar(fs, &sw.Policy, "policy", "", "cuDNN's convolution algorithm choice (default: the sweep's)", policyChoices(), errorOf(measure.ParsePolicy))
	wholeVar(fs, &sw.Repeats, "repeats", 0, "timed runs per kernel (default: the sweep's)")
	choiceVar(fs, &sw.MemoryFormat, "memory-format", "", "the activations' layout a GPU measures in (default: the sweep's, nchw)", memoryFormatChoices(), normalised(errorOf(predictor.ParseMemoryFormat)))
	choiceVar(fs, &sw.L2, "l2", "", "how a GPU times a phase that fits in its L2 (default: the sweep's, "+timing.L2Cold+")", l2Choices(), timing.CheckL2Mode)
	choiceVar(fs, &sw.CuDNNAPI, "cudnn-api", "", "the cuDNN API a GPU's convolutions choose their algorithm through (default: the sweep's, "+convalgo.Auto+")", cudnnAPIChoices(), errorOf(convalgo.ParseAPI))
	fs.BoolVar(&sw.Steps, "step", false, "also time whole training steps of each model at each batch size")
	tasks := wholeFlag(fs, "array", 0, "tasks (array size or completions); default one per (model, batch) pair, at most 16")
	out := fs.String("out", "", "the file to write")
	var sl cluster.Slurm
	var k8 cluster.K8s
	if kind == "slurm" {
		fs.StringVar(&sl.Partition, "partition", "", "Slurm partition (default: the cluster's)")
		fs.StringVar(&sl.Gres, "gres", "", "generic resources per task, e.g. gpu:1 (default gpu:1 for a cuda sweep)")
		fs.StringVar(&sl.Time, "time", "", "time limit per task, e.g. 02:00:00")
		wholeVar(fs, &sl.CPUs, "cpus-per-task", 0, "CPUs per task")
		fs.StringVar(&sl.JobName, "job-name", "", "job name (default cnntime-sweep)")
		fs.StringVar(&sl.Shards, "shards", "", "folder for the shards, relative to the submit folder (default shards)")
		fs.StringVar(&sl.Binary, "cnntime", "", "the cnntime binary as the nodes see it: the headless build, cnntime-headless from make headless (default cnntime on PATH)")
	} else {
		fs.StringVar(&k8.Image, "image", "", "container image with cnntime on its PATH (and cnntime-gpu for cuda): make container builds one from the Containerfile")
		fs.StringVar(&k8.Name, "name", "", "the Job's name (default cnntime-sweep)")
		fs.StringVar(&k8.Namespace, "namespace", "", "namespace (default: the current one)")
		fs.StringVar(&k8.Claim, "claim", "", "PersistentVolumeClaim for the shards (default NAME-shards, written in the file)")
		fs.StringVar(&k8.Storage, "storage", "", "the claim's size (default 1Gi)")
		wholeVar(fs, &k8.Parallel, "parallel", 0, "pods at once (default all)")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected arguments %q", fs.Args())
	}
	if *out == "" {
		return Usagef("--out is required: the file to write the job to")
	}
	for _, err := range []error{
		inRange("repeats", sw.Repeats, 1, maxRepeats, true, "the timed runs per kernel"),
		inRange("cpus-per-task", sl.CPUs, 1, maxCPUs, true, "the CPUs of a task"),
		inRange("parallel", k8.Parallel, 1, maxParallel, true, "the pods at once"),
	} {
		if err != nil {
			return err
		}
	}
	if sw.MemoryFormat != "" { // the job passes the canonical word (nhwc, not channels_last or NHWC)
		f, err := predictor.ParseMemoryFormat(strings.ToLower(strings.TrimSpace(sw.MemoryFormat)))
		if err != nil {
			return Usagef("--memory-format: %v", err)
		}
		sw.MemoryFormat = string(f)
	}
	sw.Models = splitList(*models)
	for _, m := range sw.Models { // a custom model file is the nodes' to find; a zoo name is checked here
		if !app.IsModelFile(m) && cnn.Family(m) == "" {
			return Usagef("--models: unknown model %q%s: 'cnntime models' lists them, or give a custom model file (.json) as the nodes see it",
				m, app.Suggest(m, cnn.Names()))
		}
	}
	if *batches != "" {
		b, err := app.ParseBatches(*batches, 1<<20)
		if err != nil {
			return Usagef("--batches: %v", err)
		}
		sw.Batches = b
	}
	var text string
	var err error
	if kind == "slurm" {
		sl.Sweep, sl.Tasks = sw, *tasks
		text, err = sl.Script()
	} else {
		k8.Sweep, k8.Tasks = sw, *tasks
		text, err = k8.YAML()
	}
	if err != nil {
		return Usagef("%v", err)
	}
	if limit := maxJobBytes[kind]; len(text) > limit {
		return fmt.Errorf("the job would be %.1f MB, more than %s accepts (%s): sweep fewer models or batch sizes, or give the sizes as ranges (1-4096, 8-4096/8); nothing was written",
			float64(len(text))/1e6, map[string]string{"slurm": "Slurm", "k8s": "Kubernetes"}[kind], maxJobWhy[kind])
	}
	if err := writeJobFile(*out, text); err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, map[string]any{"file": *out, "kind": kind, "pairs": sw.Pairs()})
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%s); merge the shards afterwards with: cnntime cache import shard-*.db\n", *out, kind)
	return nil
}

// maxJobBytes bounds a job file by what its scheduler takes: Slurm refuses a batch
// script above its max_script_size (4 MB unless the cluster raised it), Kubernetes an
// object above etcd's request limit (1.5 MiB).
var (
	maxJobBytes = map[string]int{"slurm": 4 << 20, "k8s": 3 << 19}
	maxJobWhy   = map[string]string{"slurm": "max_script_size, 4 MB by default", "k8s": "an object is at most 1.5 MiB"}
)

// writeJobFile writes the job with outfile: a new file appears whole or not at all, with
// the user's umask (a script is executable), and a pipe or a terminal is written into.
func writeJobFile(path, text string) error {
	perm := os.FileMode(0o666)
	if strings.HasSuffix(path, ".sbatch") || strings.HasSuffix(path, ".sh") {
		perm = 0o777
	}
	err := outfile.WriteMode(path, perm, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", app.Printable(path), err)
	}
	return nil
}
