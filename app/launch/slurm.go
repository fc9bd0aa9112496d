package launch

import (
	"fmt"
	"strconv"
	"strings"

	"cnntime/app/cluster"
	"cnntime/scripts"
)

// SlurmOptions are a Slurm script's settings beside the run's own.
type SlurmOptions struct {
	Partition string // "" for the cluster's default
	// Gres is the generic resources per node; "" asks for the run's GPUs (gpu:N),
	// "none" for none (a cluster that hands out GPUs another way).
	Gres string
	// CPUs is --cpus-per-task; 0 for what the run's processes and loader workers need.
	CPUs int
	// Mem is --mem (per node, e.g. 64G); "" for what the run needs, "none" for none (a
	// cluster that does not schedule memory).
	Mem string
}

// Slurm writes a Slurm batch script: its #SBATCH header (nodes, one task per node,
// the GPUs, the CPUs and memory the processes and their loader workers need, a time
// limit of the predicted time's upper end plus evaluation and start-up, requeue), the
// run's variables, the training script written out beside the checkpoints, and the
// command, run on every node by srun.
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
	cpus, memGiB := r.hostRequest()
	if o.CPUs > 0 {
		cpus = o.CPUs
	}
	mem := strconv.Itoa(memGiB) + "G"
	switch o.Mem {
	case "none":
		mem = ""
	case "":
	default:
		mem = o.Mem
	}
	for _, d := range []struct{ flag, v string }{{"--partition", o.Partition}, {"--gres", gres}, {"--mem", mem}} {
		if err := cluster.CheckDirective(d.flag, d.v); err != nil {
			return nil, err
		}
	}
	switch {
	case o.CPUs < 0:
		return nil, fmt.Errorf("--cpus-per-task %d: give a positive count", o.CPUs)
	case bucket(r.Data):
		return nil, fmt.Errorf("--data %q is a bucket: a Slurm job reads a path its nodes see; copy the images there and give that path", r.Data)
	case bucket(r.Checkpoints):
		return nil, fmt.Errorf("--checkpoints %q is a bucket: give a folder the nodes share", r.Checkpoints)
	}
	limit, err := TimeLimit(r.JobSeconds())
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", r.Model, r.Machine, err)
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	start := []string{fmt.Sprintf("Time limit %s: the prediction's upper end (%s), evaluation (%s) and start-up (%s).",
		limit, durationText(r.upperS()), durationText(r.evalUpperS()), durationText(r.startUpS())),
		"Start it with: sbatch FILE (DATA_PATH=... sbatch FILE points it at your data; PYTHON=... names a Python with PyTorch and torchvision).",
		"A requeued or resubmitted job resumes from the latest checkpoint in CHECKPOINT_DIR."}
	if r.Command == "" {
		where := jobName(r.Model) + "/steps.csv in the folder you submit from"
		if r.Checkpoints != "" {
			where = strings.TrimRight(oneLine(r.Checkpoints), "/") + "/steps.csv"
		}
		start = append(start, "Afterwards: cnntime cache import "+where+" (the run's own measured step time).")
	}
	for _, line := range header(r, start) {
		b.WriteString("# " + line + "\n")
	}
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", jobName(r.Model))
	fmt.Fprintf(&b, "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n", r.Nodes)
	if gres != "" {
		fmt.Fprintf(&b, "#SBATCH --gres=%s\n", gres)
	}
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", cpus)
	if mem != "" {
		fmt.Fprintf(&b, "#SBATCH --mem=%s\n", mem)
	}
	fmt.Fprintf(&b, "#SBATCH --time=%s\n", limit)
	if o.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", o.Partition)
	}
	b.WriteString("#SBATCH --requeue\n#SBATCH --output=cnntime-train-%j.out\nset -euo pipefail\n\n")
	for _, v := range r.env() {
		if v[0] == "DATA_PATH" && r.Data == "" { // the submitter's own DATA_PATH wins
			fmt.Fprintf(&b, "export DATA_PATH=\"${DATA_PATH:-%s}\"\n", v[1]) // dataFolder keeps it plain
			continue
		}
		fmt.Fprintf(&b, "export %s=%s\n", v[0], cluster.ShellQuoteText(v[1])) // a line break in a region never starts a line
	}
	ckpt := `"$SLURM_SUBMIT_DIR"/` + jobName(r.Model) // jobName keeps it plain
	if r.Checkpoints != "" {
		ckpt = cluster.ShellQuote(r.Checkpoints)
	}
	b.WriteString(`if [ -z "${CHECKPOINT_DIR:-}" ]; then CHECKPOINT_DIR=` + ckpt + "; fi # the submitter's own wins\n")
	b.WriteString(`export CHECKPOINT_DIR` + "\n" + `mkdir -p "$CHECKPOINT_DIR"` + "\n\n")
	if r.Command != "" {
		fmt.Fprintf(&b, "srun bash -c %s\n", cluster.ShellQuote(r.Command))
		return []byte(b.String()), nil
	}
	b.WriteString(`PYTHON="${PYTHON:-python3}"` + "\n")
	b.WriteString(`TRAIN="${TRAIN_SCRIPT:-$CHECKPOINT_DIR/` + scripts.TrainScriptName + `}"` + "\n")
	b.WriteString(`if [ -z "${TRAIN_SCRIPT:-}" ]; then # cnntime's training script, as this file was written with it` + "\n")
	b.WriteString(writeScript(`"$TRAIN"`))
	b.WriteString("fi\n")
	args := argLines("  ", r.trainArgs("$CHECKPOINT_DIR"))
	if r.procs()*r.Nodes == 1 { // one process: no rendezvous to run
		b.WriteString(`srun "$PYTHON" "$TRAIN" ` + args + "\n")
		return []byte(b.String()), nil
	}
	b.WriteString(`MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)` + "\n")
	fmt.Fprintf(&b, `srun "$PYTHON" -m torch.distributed.run --nnodes="$SLURM_NNODES" --nproc_per_node=%d \`+"\n", r.procs())
	b.WriteString(`  --rdzv_id="$SLURM_JOB_ID" --rdzv_backend=c10d --rdzv_endpoint="$MASTER_ADDR:29500" \` + "\n")
	b.WriteString(`  "$TRAIN" ` + args + "\n")
	return []byte(b.String()), nil
}
