// Package launch writes the file that starts a training run chosen with cnntime: a
// SkyPilot task (YAML: the resources, the nodes, an environment that carries the
// batch, the epochs, the learning-rate scaling and the prediction the run was chosen
// from, and a run command) or a Slurm batch script (its #SBATCH header with nodes,
// GPUs and a time limit from the predicted time and its error band, then the same
// environment and command). The command is torchvision's reference training script
// (references/classification/train.py under torchrun) or the user's own.
//
// Every value the user gives is quoted: YAML strings double-quoted, shell words
// single-quoted, and an #SBATCH value (which sbatch reads without a shell) refused
// unless it is plain.
//
// Imports: app/cluster (shell quoting and the #SBATCH check), predictor/hw (what is
// printable) and gopkg.in/yaml.v3; it writes text and runs nothing.
package launch
