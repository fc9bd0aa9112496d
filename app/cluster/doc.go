// Package cluster writes batch jobs that run `cnntime sweep` on many nodes: a Slurm
// array-job script and a Kubernetes Indexed Job. The planned (model, batch size)
// pairs are dealt round-robin to the tasks; each task sweeps its share into its own
// cache shard, named by job, task and host, and a requeued or retried task reopens
// the shard it started, so what it measured before is not measured again. The
// shards merge with `cnntime cache import`.
//
// Every name the user gives (models, paths, partitions, images) is checked or
// quoted: shell-quoted in scripts, JSON-quoted (valid YAML) in job files, and refused
// where neither can make it safe (a Slurm directive, a Kubernetes object name).
//
// Imports: predictor/measure, predictor/hw (what is printable), and gpu for the
// batch-size grammar (gpu.FormatBatches); it writes text and runs nothing.
package cluster
