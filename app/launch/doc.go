// Package launch writes the file that starts a training run chosen with cnntime: a
// SkyPilot task (YAML: infra, accelerators and instance type, nodes, file mounts for a
// data bucket and a checkpoint bucket, the run's variables, a setup that installs a
// pinned PyTorch and writes cnntime's training script, and the command under torchrun)
// or a Slurm batch script (its #SBATCH header with nodes, GPUs, the CPUs and memory the
// loader workers need and a time limit from the prediction's upper end plus evaluation
// and start-up, then the same variables, script and command). The training script is
// scripts/cnntime_train.py, embedded, so the file runs the run cnntime predicted and
// records its measured step time; the header gives the prediction for the run the file
// starts and says what differs from the one asked.
//
// Every value the user gives is quoted: YAML strings double-quoted, shell words
// single-quoted or passed through variables, and an #SBATCH value (which sbatch reads
// without a shell) refused unless it is plain.
//
// Imports: app/cluster (shell quoting and the #SBATCH check), predictor/hw (what is
// printable), scripts (the embedded training script) and gopkg.in/yaml.v3; it writes
// text and runs nothing.
package launch
