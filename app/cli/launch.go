package cli

import (
	"fmt"
	"strings"

	"cnntime/app"
	"cnntime/app/launch"
)

// launchKindChoices are the launch files `cnntime launch` writes.
var launchKindChoices = choicesOf(app.LaunchKinds, map[string]string{
	app.LaunchSkyPilot: "a SkyPilot task (YAML): sky launch FILE",
	app.LaunchSlurm:    "a Slurm batch script: sbatch FILE",
}, nil)

func launchCommands(register func(Command)) {
	register(Command{
		Name:    "launch",
		Summary: "write the file that launches a chosen run: a SkyPilot task or a Slurm batch script",
		Usage: "launch " + alternatives(launchKindChoices) + " --model M (--machine ID | --gpu ID) [--batch B] [--nodes N] [--spot] [--region R]\n" +
			"        [--train " + alternatives(trainModeChoices()) + " …] [the run flags predict takes] [--data D] [--checkpoints C] [--run CMD] --out FILE\n" +
			"  cnntime launch skypilot … [--data-copy]\n" +
			"  cnntime launch slurm … [--partition P] [--gres GRES|none] [--cpus-per-task N] [--mem M|none]",
		Details: `launch predicts one CNN on one machine (on --nodes instances of it) at one global batch (--batch,
or the batch best recommends), as predict does with the same flags, and writes the file that starts that training run with
cnntime's training script (scripts/cnntime_train.py, written into the file): the recipe's
optimizer, learning rate, warm-up and schedule, the precision, memory format, torch.compile
and loader workers predicted, checkpoints it resumes from, and its measured step times in the
step CSV that cache import reads. Where the script cannot run a setting (DALI, FFCV, NVIDIA's
optimised stack) or SkyPilot cannot launch the machine (RunPod's Community Cloud), the file
runs the nearest it can, its header gives cnntime's prediction for that run, and names what
differs with the prediction for what you asked.
  skypilot  a SkyPilot task: resources (infra cloud/region or k8s, instance type,
            accelerators such as A100:8, use_spot), num_nodes, file_mounts (a --data bucket,
            a --checkpoints bucket), envs (MODEL, GLOBAL_BATCH, BATCH_PER_GPU, EPOCHS, LR,
            PRECISION, DATA_PATH, PREDICTION, ...), a setup that installs a pinned PyTorch,
            and torchrun over every GPU of every node; with --spot, a managed job
            (sky jobs launch) that needs a --checkpoints bucket
  slurm     a Slurm batch script: nodes, one task per node, the GPUs (--gres gpu:N), the
            CPUs and memory the loader workers need, a time limit of the prediction's upper
            end plus evaluation and start-up, requeue, the same variables, srun
--run CMD runs your own command instead (needed for a CNN of your own); it finds the
variables in its environment. Every value you give is quoted.`,
		Run: runLaunch,
	})
}

func runLaunch(env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return Usagef("say which file to write: launch skypilot … or launch slurm …")
	}
	kind, args := args[0], args[1:]
	if !isChoice(launchKindChoices, kind) {
		return Usagef("unknown launch file %q: use %s", kind, strings.Join(app.LaunchKinds, " or "))
	}
	fs := env.Flags(Command{Name: "launch " + kind, Summary: commandIndex()["launch"].Summary, Usage: commandIndex()["launch"].Usage})
	var rf runFlags
	rf.oneBatch, rf.batchOrRecommended = true, true
	rf.register(fs, true)
	req := app.LaunchRequest{Kind: kind}
	fs.StringVar(&req.Command, "run", "", "your own training command, run on every node with the run's variables in its environment (default: cnntime's training script, written into the file)")
	out := fs.String("out", "", "the file to write (- for standard output)")
	if kind == app.LaunchSkyPilot {
		fs.StringVar(&req.Data, "data", "", "the images, an ImageFolder tree (train/, val/): a bucket SkyPilot mounts (s3://BUCKET/PATH, gs://..., r2://...) or a path the nodes see (default: DATA_PATH, set when starting)")
		fs.BoolVar(&req.DataCopy, "data-copy", false, "copy the --data bucket to the nodes' disks before the run instead of mounting it")
		fs.StringVar(&req.Checkpoints, "checkpoints", "", "where checkpoints and the measured step times go, and a restart resumes from: a bucket (needed with --spot) or a path the nodes share (default: the head node's home)")
	} else {
		fs.StringVar(&req.Data, "data", "", "the images, an ImageFolder tree (train/, val/) at a path the nodes see (default: DATA_PATH, set when submitting)")
		fs.StringVar(&req.Checkpoints, "checkpoints", "", "a folder the nodes share for checkpoints and the measured step times, which a requeued job resumes from (default: cnntime-MODEL in the submit folder)")
		fs.StringVar(&req.Slurm.Partition, "partition", "", "the Slurm partition (default: the cluster's)")
		fs.StringVar(&req.Slurm.Gres, "gres", "", "generic resources per node (default gpu:N, the machine's GPUs; none for none)")
		wholeVar(fs, &req.Slurm.CPUs, "cpus-per-task", 0, "CPUs per node's task (default: one per GPU's process and per loader worker, at most the machine's vCPUs)")
		fs.StringVar(&req.Slurm.Mem, "mem", "", "memory per node, e.g. 64G (default: what the processes and their loader workers need; none for none)")
	}
	if err := checkFlagValues(fs, args); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return Usagef("--out is required: the file to write the %s to", launchWhat(kind))
	}
	if req.Slurm.CPUs > maxCPUs {
		return inRange("cpus-per-task", req.Slurm.CPUs, 1, maxCPUs, true, "the CPUs of a node's task")
	}
	if n := len(splitList(rf.models)); n > 1 {
		return Usagef("--model: a launch file trains one CNN (got %d)", n)
	}
	if n := len(splitList(rf.machines)) + len(splitList(rf.gpus)); n > 1 {
		return Usagef("--machine: a launch file is for one machine (got %d); --nodes N trains on N of it", n)
	}
	eng, done, err := openEngine(env)
	if err != nil {
		return err
	}
	defer done()
	q, err := rf.query(env.Ctx, eng, fs)
	if err != nil {
		return err
	}
	if len(q.Models) > 1 || len(q.Targets) > 1 { // "all", a provider, gpu:ID
		return Usagef("a launch file trains one CNN on one machine (%s named %d CNNs and %d machines): pick one with best first",
			"the command line", len(q.Models), len(q.Targets))
	}
	if len(q.Batches) == 0 { // no --batch: the recommended one
		b, err := eng.RecommendedBatch(env.Ctx, q)
		if err != nil {
			return err
		}
		q.Batches, q.Span = []int{b.Batch}, app.BatchSpan{}
		req.BatchNote = b.Note()
	} else {
		req.BatchNote = app.LaunchBatch{Batch: q.Batches[0], ChosenBy: "given with --batch"}.Note()
	}
	r, err := eng.LaunchRun(env.Ctx, q, req)
	if err != nil {
		return err
	}
	content, err := app.LaunchFile(r, req)
	if err != nil {
		return Usagef("%v", err)
	}
	if *out == "-" { // the file itself on standard output, to read or pipe
		if env.JSON {
			return Usagef("--out - writes the file to standard output, which --json needs for its report: give --out FILE")
		}
		_, err := env.Stdout.Write(content)
		return err
	}
	if err := app.ExportLaunchFile(*out, content); err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, map[string]any{"written": []ExportWritten{{Path: *out, What: launchWhat(kind), Format: launchFormat[kind], Bytes: int64(len(content))}},
			"run": launchRunJSON(r)})
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%s: %s on %s at batch %d; %s)\nstart it with: %s %s\n", *out, launchWhat(kind), r.Model, nodesOf(r), r.Batch, r.Prediction, launchStart[kind], *out)
	return nil
}

var (
	launchFormat = map[string]string{app.LaunchSkyPilot: "yaml", app.LaunchSlurm: "sbatch"}
	launchStart  = map[string]string{app.LaunchSkyPilot: "sky launch", app.LaunchSlurm: "sbatch"}
)

// launchWhat names a launch file.
func launchWhat(kind string) string {
	if kind == app.LaunchSlurm {
		return "Slurm batch script"
	}
	return "SkyPilot task"
}

// nodesOf says which machines a run takes: "aws/p4d.24xlarge" or "4 × aws/p4d.24xlarge".
func nodesOf(r launch.Run) string {
	if r.Nodes > 1 {
		return fmt.Sprintf("%d × %s", r.Nodes, r.Machine)
	}
	return r.Machine
}

// LaunchRunJSON is the run a launch file starts, as `launch --json` reports it: the
// prediction for that run (total_s and run_error_pct rounded as predict's JSON rounds
// them), the time a job is given, and what differs from the run asked.
type LaunchRunJSON struct {
	Model       string   `json:"model"`
	Machine     string   `json:"machine"`
	Nodes       int      `json:"nodes"`
	Batch       int      `json:"batch"`
	Epochs      float64  `json:"epochs"`
	TotalS      float64  `json:"total_s"`
	RunErrorPct float64  `json:"run_error_pct"`
	JobS        float64  `json:"job_s"`
	Prediction  string   `json:"prediction"`
	Differs     []string `json:"differs"`
}

func launchRunJSON(r launch.Run) LaunchRunJSON {
	return LaunchRunJSON{Model: r.Model, Machine: r.Machine, Nodes: r.Nodes, Batch: r.Batch, Epochs: round(r.Epochs, 2),
		TotalS: round(r.TotalS, 1), RunErrorPct: round(r.ErrorPct, 1), JobS: round(r.JobSeconds(), 1),
		Prediction: r.Prediction, Differs: append([]string{}, r.Differs...)}
}
