package cluster

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitDealsEveryPairOnce(t *testing.T) {
	s := Sweep{Models: []string{"a", "b"}, Batches: []int{1, 2, 3}, Device: "cpu"}
	got := s.Split(2)
	want := [][]Run{
		{{"a", []int{1, 3}}, {"b", []int{2}}},
		{{"a", []int{2}}, {"b", []int{1, 3}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Split(2) = %v, want %v", got, want)
	}
	if got := s.Split(7); len(got) != 7 || len(got[6]) != 0 || len(got[5]) != 1 {
		t.Errorf("Split(7) = %v; want 6 tasks of one pair and an empty one", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"resnet18":         `'resnet18'`,
		"my model.json":    `'my model.json'`,
		"it's":             `'it'\''s'`,
		"$(rm -rf /); `x`": `'$(rm -rf /); ` + "`x`'",
		"":                 `''`,
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSlurmScript(t *testing.T) {
	j := Slurm{Sweep: Sweep{Models: []string{"squeezenet1_1"}, Batches: []int{1, 2}, Device: "cpu"}, Tasks: 2}
	s, err := j.Script()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#!/bin/bash\n",
		"#SBATCH --array=0-1\n",
		"#SBATCH --requeue\n",
		"#SBATCH --job-name=cnntime-sweep\n",
		`shard="$shards/shard-$job-$task-$host.db"`,
		"0)\n\tsweep --models 'squeezenet1_1' --batches '1' --device 'cpu'\n\t;;\n",
		"1)\n\tsweep --models 'squeezenet1_1' --batches '2' --device 'cpu'\n\t;;\n",
		"cnntime cache import shards/shard-*.db",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	for _, absent := range []string{"--partition", "--gres", "--time"} {
		if strings.Contains(s, absent) {
			t.Errorf("script sets %s though none was asked for", absent)
		}
	}
	g := Slurm{Sweep: Sweep{Models: []string{"resnet50"}, Batches: []int{8, 16}, Device: "cuda:0", Precision: "amp"},
		Partition: "gpu-a100", Time: "02:00:00"}
	s, err = g.Script()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --partition=gpu-a100\n", "#SBATCH --gres=gpu:1\n", "#SBATCH --time=02:00:00\n",
		"#SBATCH --array=0-1\n", "--device 'cuda:0' --precision 'amp'"} {
		if !strings.Contains(s, want) {
			t.Errorf("GPU script lacks %q", want)
		}
	}
	for _, absent := range []string{"--memory-format", "--l2", "--cudnn-api", "--step"} {
		if strings.Contains(s, absent) {
			t.Errorf("GPU script passes %s though none was asked for", absent)
		}
	}
	// What a single-GPU sweep can be asked for, a cluster's tasks are asked for too.
	g.Sweep.Precision, g.Sweep.MemoryFormat, g.Sweep.L2, g.Sweep.CuDNNAPI, g.Sweep.Steps = "bf16", "nhwc", "producer-hot", "v8", true
	if s, err = g.Script(); err != nil {
		t.Fatal(err)
	}
	if want := "--device 'cuda:0' --precision 'bf16' --memory-format 'nhwc' --l2 'producer-hot' --cudnn-api 'v8' --step\n"; strings.Count(s, want) != 2 {
		t.Errorf("each of the 2 tasks should run a sweep ending %q:\n%s", want, s)
	}
}

func TestBadJobsAreRefused(t *testing.T) {
	ok := Sweep{Models: []string{"resnet18"}, Batches: []int{1, 2}, Device: "cpu"}
	for _, tc := range []struct {
		name string
		job  Slurm
		want string
	}{
		{"no models", Slurm{Sweep: Sweep{Batches: []int{1}, Device: "cpu"}}, "no models"},
		{"no batches", Slurm{Sweep: Sweep{Models: []string{"a"}, Device: "cpu"}}, "no batch"},
		{"descending", Slurm{Sweep: Sweep{Models: []string{"a"}, Batches: []int{2, 1}, Device: "cpu"}}, "ascend"},
		{"bad device", Slurm{Sweep: Sweep{Models: []string{"a"}, Batches: []int{1}, Device: "gpu0"}}, "cuda:N"},
		{"bad precision", Slurm{Sweep: Sweep{Models: []string{"a"}, Batches: []int{1}, Device: "cpu", Precision: "fp8"}}, "--precision"},
		{"bad memory format", Slurm{Sweep: Sweep{Models: []string{"a"}, Batches: []int{1}, Device: "cpu", MemoryFormat: "nchw'; rm -rf ~"}}, "--memory-format"},
		{"bad l2 mode", Slurm{Sweep: Sweep{Models: []string{"a"}, Batches: []int{1}, Device: "cpu", L2: "warm"}}, "--l2"},
		{"bad cudnn api", Slurm{Sweep: Sweep{Models: []string{"a"}, Batches: []int{1}, Device: "cpu", CuDNNAPI: "v7"}}, "--cudnn-api"},
		{"newline model", Slurm{Sweep: Sweep{Models: []string{"a\nrm -rf /"}, Batches: []int{1}, Device: "cpu"}}, "line break"},
		{"twice", Slurm{Sweep: Sweep{Models: []string{"a", "a"}, Batches: []int{1}, Device: "cpu"}}, "twice"},
		{"partition with space", Slurm{Sweep: ok, Partition: "gpu x"}, "--partition"},
		{"partition injection", Slurm{Sweep: ok, Partition: "gpu\n#SBATCH --uid=0"}, "--partition"},
		{"gres quote", Slurm{Sweep: ok, Gres: "gpu:'1"}, "--gres"},
		{"too many tasks", Slurm{Sweep: ok, Tasks: 3}, "only 2"},
		{"negative tasks", Slurm{Sweep: ok, Tasks: -1}, "--array"},
	} {
		_, err := tc.job.Script()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		job  K8s
		want string
	}{
		{"no image", K8s{Sweep: ok}, "--image"},
		{"upper-case name", K8s{Sweep: ok, Image: "x", Name: "Sweep"}, "--name"},
		{"name with dot", K8s{Sweep: ok, Image: "x", Name: "a.b"}, "--name"},
		{"bad claim", K8s{Sweep: ok, Image: "x", Claim: "shards/x"}, "--claim"},
		{"bad storage", K8s{Sweep: ok, Image: "x", Storage: "lots"}, "--storage"},
	} {
		_, err := tc.job.YAML()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("k8s %s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

// The task body runs under sh with a stand-in cnntime: each task sweeps its share
// into its own shard with the hostile model name passed as one argument, and a
// second run of the same task (a requeue, on another host) reopens its first shard.
func TestTaskScriptRunsAndResumes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "cnntime")
	// The stand-in records its arguments, one per line, and touches the shard.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$LOG\"\necho --- >> \"$LOG\"\ntouch \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostile := "it's $(echo pwned) `x`.json"
	s := Sweep{Models: []string{hostile, "b"}, Batches: []int{1, 2}, Device: "cpu"}
	shards := filepath.Join(dir, "my shards")
	body := taskScript(s, 2, "${JOB:?}", "${TASK:?}", "${HOST:?}", fake, shards)
	run := func(task, host string) string {
		log := filepath.Join(dir, "log-"+task+"-"+host)
		cmd := exec.Command(sh, "-c", body)
		cmd.Env = append(os.Environ(), "JOB=77", "TASK="+task, "HOST="+host, "LOG="+log)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("task %s on %s: %v\n%s", task, host, err, out)
		}
		b, _ := os.ReadFile(log)
		return string(out) + "|" + string(b)
	}
	got0 := run("0", "n1")
	want0 := "--db\n" + filepath.Join(shards, "shard-77-0-n1.db") + "\nsweep\n--models\n" + hostile + "\n--batches\n1\n--device\ncpu\n---\n" +
		"--db\n" + filepath.Join(shards, "shard-77-0-n1.db") + "\nsweep\n--models\nb\n--batches\n1\n--device\ncpu\n---\n"
	if !strings.HasSuffix(got0, "|"+want0) || strings.Contains(got0, "pwned\n") {
		t.Errorf("task 0 ran:\n%s\nwant the arguments\n%s", got0, want0)
	}
	if got1 := run("1", "n2"); !strings.Contains(got1, "shard-77-1-n2.db") || !strings.Contains(got1, "--batches\n2\n--device\ncpu\n---\n--db") {
		t.Errorf("task 1 ran:\n%s", got1)
	}
	// Task 0 requeued onto n3 resumes in the shard it began on n1.
	again := run("0", "n3")
	if !strings.Contains(again, "resuming in "+filepath.Join(shards, "shard-77-0-n1.db")) || strings.Contains(again, "n3.db") {
		t.Errorf("requeued task 0:\n%s\nwant it to resume in shard-77-0-n1.db", again)
	}
	if got := run("5", "n1"); !strings.Contains(got, "nothing to do") {
		t.Errorf("task 5 of 2: %s", got)
	}
}

func TestK8sIndexedJob(t *testing.T) {
	k := K8s{Sweep: Sweep{Models: []string{"resnet18", "it's"}, Batches: []int{1, 2}, Device: "cuda:0"}, Tasks: 2,
		Image: `registry.example.com/cnntime:1.0`, Namespace: "ml"}
	y, err := k.YAML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"kind: PersistentVolumeClaim\n", `  name: "cnntime-sweep-shards"` + "\n", `  namespace: "ml"` + "\n",
		"kind: Job\n", "  completionMode: Indexed\n", "  completions: 2\n", "  parallelism: 2\n",
		`          image: "registry.example.com/cnntime:1.0"` + "\n", "              nvidia.com/gpu: 1\n",
		`            claimName: "cnntime-sweep-shards"` + "\n", `              mountPath: "/shards"` + "\n",
		"      securityContext:\n        fsGroup: 10001\n", // the Containerfile's user writes the claim
	} {
		if !strings.Contains(y, want) {
			t.Errorf("YAML lacks %q:\n%s", want, y)
		}
	}
	// The command's script is one JSON string that decodes to the task body.
	const prefix = `          command: ["/bin/sh", "-c", `
	i := strings.Index(y, prefix)
	if i < 0 {
		t.Fatalf("no command line:\n%s", y)
	}
	line := y[i+len(prefix):]
	line = line[:strings.Index(line, "\n")]
	var cmd string
	if err := json.Unmarshal([]byte(strings.TrimSuffix(line, "]")), &cmd); err != nil {
		t.Fatalf("command is not one quoted string: %v\n%s", err, line)
	}
	if !strings.Contains(cmd, "sweep --models 'it'\\''s' --batches") || !strings.Contains(cmd, "task=${JOB_COMPLETION_INDEX:?") {
		t.Errorf("script in the command:\n%s", cmd)
	}
	cpu := K8s{Sweep: Sweep{Models: []string{"resnet18"}, Batches: []int{1}, Device: "cpu"}, Image: "x"}
	if y, err := cpu.YAML(); err != nil || strings.Contains(y, "nvidia.com/gpu") || !strings.Contains(y, "completions: 1\n") {
		t.Errorf("CPU job: %v\n%s", err, y)
	}
}
