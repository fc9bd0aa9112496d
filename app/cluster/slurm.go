package cluster

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Slurm is an array job that sweeps on a Slurm cluster.
type Slurm struct {
	Sweep
	Tasks     int    // array size; 0: one task per (model, batch) pair, at most 16
	JobName   string // "" for cnntime-sweep
	Partition string // "" for the cluster's default
	Gres      string // e.g. gpu:1; "" for none (a cuda sweep defaults to gpu:1)
	Time      string // time limit, e.g. 02:00:00; "" for the partition's default
	CPUs      int    // --cpus-per-task; 0 for the cluster's default
	Shards    string // folder the shards go to, relative to the submit folder or absolute; "" for shards
	Binary    string // the cnntime binary as the nodes see it (the headless build); "" for cnntime on PATH
}

// MaxTimeMinutes bounds a Slurm time limit: a year. Slurm keeps a limit in minutes in 32
// bits, and a job of more than a year is a mistake (1514010609-05:43:00 was written
// into a script as it was).
const MaxTimeMinutes = 365 * 24 * 60

// slurmTime is a time limit as sbatch reads one: M, M:S, H:M:S, D-H, D-H:M or D-H:M:S.
// Compiled when first used: its bounded repeats make a large program (0.4 ms), which
// every command's start would otherwise pay.
var slurmTime = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:([0-9]{1,12})-)?([0-9]{1,12})(?::([0-9]{1,12}))?(?::([0-9]{1,12}))?$`)
})

// CheckTime refuses a --time that is not a Slurm time limit (M, M:S, H:M:S, D-H, D-H:M,
// D-H:M:S, or INFINITE / UNLIMITED for the partition's maximum), or one of more than
// MaxTimeMinutes; "" (the partition's default) passes.
func CheckTime(v string) error {
	switch strings.ToUpper(v) {
	case "", "INFINITE", "UNLIMITED":
		return nil
	}
	m := slurmTime().FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("--time %q: give a Slurm time limit, e.g. 90 (minutes), 02:00:00 or 1-12:00:00", v)
	}
	n := func(i int) int64 {
		x, _ := strconv.ParseInt(m[i], 10, 64)
		return x
	}
	var minutes int64
	switch {
	case m[1] != "": // D-H[:M[:S]]
		minutes = n(1)*24*60 + n(2)*60 + n(3) + (n(4)+59)/60
	case m[4] != "": // H:M:S
		minutes = n(2)*60 + n(3) + (n(4)+59)/60
	default: // M[:S]
		minutes = n(2) + (n(3)+59)/60
	}
	if minutes > MaxTimeMinutes {
		return fmt.Errorf("--time %s is %d days, more than a job may ask for (%d days): give a shorter limit, or INFINITE for the partition's maximum", v, minutes/(24*60), MaxTimeMinutes/(24*60))
	}
	return nil
}

// directiveValue is what an #SBATCH value may hold: sbatch reads these lines itself,
// without a shell, so nothing can be quoted there.
var directiveValue = regexp.MustCompile(`^[A-Za-z0-9._:=+@/,%-]+$`)

// CheckDirective refuses a value for an #SBATCH line (given by flag) that sbatch could
// misread: "" (left out) and plain values pass.
func CheckDirective(flag, v string) error {
	if v != "" && !directiveValue.MatchString(v) {
		return fmt.Errorf("%s %q: Slurm reads #SBATCH lines without a shell, so only letters, digits and . _ : = + @ / , %% - are allowed", flag, v)
	}
	return nil
}

// tasks is the array size the job uses.
func (j Slurm) tasks() int {
	if j.Tasks > 0 {
		return j.Tasks
	}
	return min(j.Pairs(), 16)
}

// Check reports the first thing wrong with the job, or nil.
func (j Slurm) Check() error {
	if err := j.Sweep.Check(); err != nil {
		return err
	}
	if j.Tasks < 0 || j.Tasks > MaxTasks {
		return fmt.Errorf("--array %d: give a task count from 1 to %d", j.Tasks, MaxTasks)
	}
	if j.Tasks > j.Pairs() {
		return fmt.Errorf("--array %d: the sweep has only %d (model, batch) pairs to share; give at most %d tasks", j.Tasks, j.Pairs(), j.Pairs())
	}
	for _, d := range []struct{ flag, v string }{{"--job-name", j.JobName}, {"--partition", j.Partition}, {"--gres", j.Gres}, {"--time", j.Time}} {
		if err := CheckDirective(d.flag, d.v); err != nil {
			return err
		}
	}
	if err := CheckTime(j.Time); err != nil {
		return err
	}
	if j.CPUs < 0 {
		return fmt.Errorf("--cpus-per-task %d: give a positive count", j.CPUs)
	}
	for _, p := range []struct{ flag, v string }{{"--shards", j.Shards}, {"--cnntime", j.Binary}} {
		if strings.ContainsAny(p.v, "\x00\n\r") {
			return fmt.Errorf("%s %q: a path with a line break or NUL cannot be passed to a job", p.flag, p.v)
		}
	}
	return nil
}

// Script writes the sbatch script, or says what is wrong with the job.
func (j Slurm) Script() (string, error) {
	if err := j.Check(); err != nil {
		return "", err
	}
	n := j.tasks()
	name := or(j.JobName, "cnntime-sweep")
	gres := j.Gres
	if gres == "" && j.GPU() {
		gres = "gpu:1"
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "# Written by `cnntime cluster slurm`: %d array tasks sweep %d models at %d batch sizes on %s.\n", n, len(j.Models), len(j.Batches), j.Device)
	b.WriteString("# Submit with `sbatch FILE`; each task sweeps into its own cache shard, and a requeued task\n")
	b.WriteString("# resumes in its shard without measuring again. Merge the shards when all are done:\n")
	fmt.Fprintf(&b, "#   cnntime cache import %s/shard-*.db\n", shellWord(or(j.Shards, "shards"))) // people paste it
	b.WriteString("# The nodes run the headless cnntime (make headless: cnntime-headless, no graphics library\n")
	b.WriteString("# needed; the desktop build needs OpenGL and X11, which compute nodes lack), named by --cnntime.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", name)
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", n-1)
	b.WriteString("#SBATCH --requeue\n")
	b.WriteString("#SBATCH --open-mode=append\n")
	b.WriteString("#SBATCH --output=%x-%A_%a.out\n")
	b.WriteString("#SBATCH --ntasks=1\n")
	if j.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", j.Partition)
	}
	if gres != "" {
		fmt.Fprintf(&b, "#SBATCH --gres=%s\n", gres)
	}
	if j.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", j.Time)
	}
	if j.CPUs > 0 {
		fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", j.CPUs)
	}
	b.WriteString(taskScript(j.Sweep, n,
		`${SLURM_ARRAY_JOB_ID:?submit this script with sbatch: it is an array job}`,
		`${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is an array job}`,
		`$(hostname -s)`, or(j.Binary, "cnntime"), or(j.Shards, "shards")))
	return b.String(), nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
