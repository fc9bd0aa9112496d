package cluster

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"cnntime/gpu"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/timing"
	"cnntime/predictor"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// MaxTasks bounds the array size of a generated job.
const MaxTasks = 10000

// Sweep is what the whole job measures: every model at every batch size on the
// device each task runs on.
type Sweep struct {
	Models    []string // zoo names or custom model files (.json) as the nodes see them
	Batches   []int
	Device    string // "cpu" or "cuda:N" (N the GPU index on each node, usually 0)
	Precision string // fp32, tf32 or amp; "" for fp32
	Policy    string // heuristic or fastest; "" for the sweep's default
	Repeats   int    // timed runs per kernel; 0 for the sweep's default
	// MemoryFormat is the activations' layout a GPU measures in (nchw or nhwc);
	// "" for the sweep's default, nchw.
	MemoryFormat string
	// L2 is how a GPU times a phase that fits in its L2 (gpu/timing's modes); "" for
	// the sweep's default.
	L2 string
	// CuDNNAPI is the cuDNN API a GPU's convolutions choose their algorithm through
	// (gpu/convalgo's); "" for the sweep's default.
	CuDNNAPI string
	// Steps also times whole training steps of each model at each batch size.
	Steps bool
}

// Run is one `cnntime sweep` a task makes: one model at some batch sizes.
type Run struct {
	Model   string
	Batches []int
}

// Check reports the first thing wrong with the sweep, or nil.
func (s Sweep) Check() error {
	if len(s.Models) == 0 {
		return fmt.Errorf("no models to sweep: give --models, e.g. --models resnet18,squeezenet1_1")
	}
	seen := map[string]bool{}
	for _, m := range s.Models {
		switch {
		case strings.TrimSpace(m) == "":
			return fmt.Errorf("an empty model name in --models")
		case strings.ContainsAny(m, "\x00\n\r"):
			return fmt.Errorf("model %q: a name with a line break or NUL cannot be passed to a job", m)
		case seen[m]:
			return fmt.Errorf("model %q is listed twice", m)
		}
		seen[m] = true
	}
	if len(s.Batches) == 0 {
		return fmt.Errorf("no batch sizes to sweep: give --batches, e.g. --batches 1-64")
	}
	prev := 0
	for _, b := range s.Batches {
		if b <= prev {
			return fmt.Errorf("batch sizes must be positive and ascend without repeats: %d after %d", b, prev)
		}
		prev = b
	}
	if err := checkDevice(s.Device); err != nil {
		return err
	}
	if s.Precision != "" {
		if _, err := measure.ParsePrecision(s.Precision); err != nil {
			return fmt.Errorf("--precision: %w", err)
		}
	}
	if s.Policy != "" {
		if _, err := measure.ParsePolicy(s.Policy); err != nil {
			return fmt.Errorf("--policy: %w", err)
		}
	}
	if s.Repeats < 0 {
		return fmt.Errorf("--repeats %d: give a positive count", s.Repeats)
	}
	if s.MemoryFormat != "" {
		if _, err := predictor.ParseMemoryFormat(s.MemoryFormat); err != nil {
			return fmt.Errorf("--memory-format: %w", err)
		}
	}
	if s.L2 != "" {
		if err := timing.CheckL2Mode(s.L2); err != nil {
			return fmt.Errorf("--l2: %w", err)
		}
	}
	if s.CuDNNAPI != "" {
		if _, err := convalgo.ParseAPI(s.CuDNNAPI); err != nil {
			return fmt.Errorf("--cudnn-api: %w", err)
		}
	}
	return nil
}

func checkDevice(d string) error {
	if d == "cpu" {
		return nil
	}
	if n, ok := strings.CutPrefix(d, "cuda:"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < 1024 {
			return nil
		}
	}
	return fmt.Errorf("device %q: use cpu, or cuda:N with N the GPU's index on each node (cuda:0 with one GPU per task)", d)
}

// GPU reports whether the sweep runs on a GPU.
func (s Sweep) GPU() bool { return strings.HasPrefix(s.Device, "cuda:") }

// Split deals the (model, batch size) pairs round-robin to n tasks, model by model,
// so every task gets a similar share of every model; a task's pairs of one model
// become one Run. Tasks past the number of pairs get none.
func (s Sweep) Split(n int) [][]Run {
	out := make([][]Run, n)
	k := 0
	for _, m := range s.Models {
		per := make([][]int, n)
		for _, b := range s.Batches {
			per[k%n] = append(per[k%n], b)
			k++
		}
		for t := range per {
			if len(per[t]) > 0 {
				out[t] = append(out[t], Run{Model: m, Batches: per[t]})
			}
		}
	}
	return out
}

// Pairs is the number of (model, batch size) pairs the job measures.
func (s Sweep) Pairs() int { return len(s.Models) * len(s.Batches) }

// args is the `cnntime sweep` arguments of one run, each shell-quoted.
func (s Sweep) args(r Run) string {
	// Ranges keep a task's share short: the zoo at 1–65,536 listed size by size made a
	// 26 MB script, past what Slurm accepts (max_script_size, 4 MB by default).
	a := []string{"--models", ShellQuote(r.Model), "--batches", ShellQuote(gpu.FormatBatches(r.Batches)), "--device", ShellQuote(s.Device)}
	if s.Precision != "" {
		a = append(a, "--precision", ShellQuote(s.Precision))
	}
	if s.Policy != "" {
		a = append(a, "--policy", ShellQuote(s.Policy))
	}
	if s.Repeats > 0 {
		a = append(a, "--repeats", strconv.Itoa(s.Repeats))
	}
	if s.MemoryFormat != "" {
		a = append(a, "--memory-format", ShellQuote(s.MemoryFormat))
	}
	if s.L2 != "" {
		a = append(a, "--l2", ShellQuote(s.L2))
	}
	if s.CuDNNAPI != "" {
		a = append(a, "--cudnn-api", ShellQuote(s.CuDNNAPI))
	}
	if s.Steps {
		a = append(a, "--step")
	}
	return strings.Join(a, " ")
}

// ShellQuote quotes s as one word for a POSIX shell: single quotes, with each single
// quote inside written as '\” (close, escaped quote, reopen).
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellQuoteText is s as one bash word that reads back as s exactly, with no character
// a terminal or a reader would act on written raw into the script: s single-quoted
// (ShellQuote) when it holds none, else ANSI-C quoted ($'…'), each byte of a control
// character (a line break, ESC, BEL, DEL, a C1 control), a Unicode line separator or a
// bidirectional override written as \xHH. For text that may come from a price catalog
// or a cache (a region in the prediction): a line break in it can then never start a
// line of the script (#SBATCH --partition=…). The script must be run by bash.
func ShellQuoteText(s string) string {
	if !strings.ContainsFunc(s, hw.Unprintable) {
		return ShellQuote(s)
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case hw.Unprintable(r):
			for _, c := range []byte(string(r)) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

// plainWord is a word a shell reads as it is: no quoting, expansion or globbing.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9._/:@%+=,-]+$`)

// shellWord is s as one shell word, quoted only where it needs to be: for the commands
// a generated file suggests in its comments, which people read and paste.
func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return ShellQuote(s)
}

// taskScript is the POSIX shell body every task runs: find or name its shard, then
// its share of the sweep. jobExpr, taskExpr and hostExpr are the shell expressions of
// the job's id, the task's index and the host's name; cnntime and shards are the binary and the shard folder
// (shell-quoted here).
func taskScript(s Sweep, n int, jobExpr, taskExpr, hostExpr, cnntime, shards string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "set -eu\n")
	fmt.Fprintf(&b, "cnntime=${CNNTIME:-%s}\n", ShellQuote(cnntime))
	fmt.Fprintf(&b, "shards=%s\n", ShellQuote(shards))
	fmt.Fprintf(&b, "job=%s\n", jobExpr)
	fmt.Fprintf(&b, "task=%s\n", taskExpr)
	fmt.Fprintf(&b, "host=%s\n", hostExpr)
	b.WriteString(`mkdir -p -- "$shards"
# A requeued or retried task reopens the shard it started (on whichever host), so the
# sweep finds what it measured before in the cache and does not measure it again.
shard=
for f in "$shards/shard-$job-$task-"*.db; do
	if [ -e "$f" ]; then shard=$f; break; fi
done
if [ -n "$shard" ]; then
	echo "task $task on $host: resuming in $shard"
else
	shard="$shards/shard-$job-$task-$host.db"
	echo "task $task on $host: sweeping into $shard"
fi
sweep() { "$cnntime" --db "$shard" sweep "$@"; }
case "$task" in
`)
	for t, runs := range s.Split(n) {
		if len(runs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%d)\n", t)
		for _, r := range runs {
			fmt.Fprintf(&b, "\tsweep %s\n", s.args(r))
		}
		b.WriteString("\t;;\n")
	}
	fmt.Fprintf(&b, "*)\n\techo \"task $task: nothing to do (the plan deals %d pairs to %d tasks)\"\n\t;;\nesac\n", s.Pairs(), n)
	return b.String()
}
