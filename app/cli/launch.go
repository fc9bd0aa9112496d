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
		Usage: "launch " + alternatives(launchKindChoices) + " --model M (--machine ID | --gpu ID) --batch B [--nodes N] [--spot] [--region R]\n" +
			"        [--train " + alternatives(trainModeChoices()) + " …] [the run flags predict takes] [--run CMD] --out FILE\n" +
			"  cnntime launch slurm … [--partition P] [--gres GRES|none] [--cpus-per-task N]",
		Details: `launch predicts one CNN on one machine (on --nodes instances of it) at one global batch, as
predict does with the same flags, and writes the file that starts that training run:
  skypilot  a SkyPilot task: resources (cloud, region, instance type, accelerators such as
            A100:8, use_spot), num_nodes, envs (MODEL, GLOBAL_BATCH, BATCH_PER_GPU, EPOCHS,
            LR scaled linearly from torchvision's recipe with LR_NOTE saying how, PRECISION,
            DATA_PATH, PREDICTION) and a run command
  slurm     a Slurm batch script: nodes, one task per node, the GPUs (--gres gpu:N), CPUs and
            a time limit of the predicted time plus its error band, the same variables, srun
The command is torchvision's reference script (references/classification/train.py under
torchrun on every GPU of every node), or your own (--run CMD, which finds the variables in
its environment; needed for a CNN of your own). Every value you give is quoted.`,
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
	rf.oneBatch = true
	rf.register(fs, true)
	req := app.LaunchRequest{Kind: kind}
	fs.StringVar(&req.Command, "run", "", "your own training command, run on every node with the run's variables in its environment (default: torchvision's reference script)")
	out := fs.String("out", "", "the file to write")
	if kind == app.LaunchSlurm {
		fs.StringVar(&req.Slurm.Partition, "partition", "", "the Slurm partition (default: the cluster's)")
		fs.StringVar(&req.Slurm.Gres, "gres", "", "generic resources per node (default gpu:N, the machine's GPUs; none for none)")
		wholeVar(fs, &req.Slurm.CPUs, "cpus-per-task", 0, "CPUs per node's task (default: the machine's vCPUs)")
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
	r, err := eng.LaunchRun(env.Ctx, q, req.Command)
	if err != nil {
		return err
	}
	content, err := app.LaunchFile(r, req)
	if err != nil {
		return Usagef("%v", err)
	}
	if err := app.ExportLaunchFile(*out, content); err != nil {
		return err
	}
	if env.JSON {
		return WriteJSON(env.Stdout, map[string]any{"written": []ExportWritten{{Path: *out, What: launchWhat(kind), Format: launchFormat[kind], Bytes: int64(len(content))}}})
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
