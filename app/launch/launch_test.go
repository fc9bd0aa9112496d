package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// skyTask is the part of a SkyPilot task (sky/task.py's schema) the tests read back.
type skyTask struct {
	Name      string `yaml:"name"`
	Resources struct {
		Cloud        string `yaml:"cloud"`
		Region       string `yaml:"region"`
		Accelerators string `yaml:"accelerators"`
		InstanceType string `yaml:"instance_type"`
		UseSpot      bool   `yaml:"use_spot"`
	} `yaml:"resources"`
	NumNodes int               `yaml:"num_nodes"`
	Envs     map[string]string `yaml:"envs"`
	Setup    string            `yaml:"setup"`
	Run      string            `yaml:"run"`
}

// p4d is four p4d.24xlarge training resnet50 to a target, as `best --nodes 1,4
// --train to-target` chooses it.
func p4d() Run {
	return Run{Model: "resnet50", Zoo: true, Machine: "aws/p4d.24xlarge", Cloud: "aws", Instance: "p4d.24xlarge", Accelerator: "A100",
		GPUs: 8, CPUs: 96, Nodes: 4, Region: "us-east-1", Batch: 3328, Epochs: 37.04, Precision: "amp", Workers: 11, Input: 224,
		Dataset: "imagenet-1k", Prediction: "31m01s ±20% to 75.9% top-1, $45.41", TotalS: 1861, ErrorPct: 20}
}

func parseTask(t *testing.T, r Run) skyTask {
	t.Helper()
	data, err := SkyPilot(r)
	if err != nil {
		t.Fatal(err)
	}
	var task skyTask
	if err := yaml.Unmarshal(data, &task); err != nil {
		t.Fatalf("the task is not YAML: %v\n%s", err, data)
	}
	return task
}

// A SkyPilot task reads back, with a YAML parser, as the resources, nodes and
// variables of the run it was written for.
func TestSkyPilotTaskReadsBack(t *testing.T) {
	spot := p4d()
	spot.Spot, spot.Region, spot.Instance = true, "", ""
	own := p4d()
	own.Command = "python my_train.py --lr $LR"
	single := p4d()
	single.Nodes, single.Batch, single.GPUs, single.Accelerator, single.Cloud, single.Instance = 1, 256, 1, "H100", "lambda", "gpu_1x_h100_pcie"
	for _, tc := range []struct {
		name                            string
		r                               Run
		cloud, region, acc, inst, batch string
		spot                            bool
		nodes                           int
		perGPU, lr, warmup              string
		runHas                          string
	}{
		{"4 × p4d", p4d(), "aws", "us-east-1", "A100:8", "p4d.24xlarge", "3328", false, 4, "104", "1.3", "5", "vision/references/classification/train.py"},
		{"spot anywhere", spot, "aws", "", "A100:8", "", "3328", true, 4, "104", "1.3", "5", "--nproc_per_node=\"$SKYPILOT_NUM_GPUS_PER_NODE\""},
		{"own command", own, "aws", "us-east-1", "A100:8", "p4d.24xlarge", "3328", false, 4, "104", "1.3", "5", "python my_train.py --lr $LR"},
		{"one H100", single, "lambda", "us-east-1", "H100:1", "gpu_1x_h100_pcie", "256", false, 1, "256", "0.1", "0", "train.py"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := parseTask(t, tc.r)
			res := task.Resources
			if res.Cloud != tc.cloud || res.Region != tc.region || res.Accelerators != tc.acc || res.InstanceType != tc.inst || res.UseSpot != tc.spot || task.NumNodes != tc.nodes {
				t.Errorf("resources %+v, %d nodes; want cloud %q region %q accelerators %q instance %q spot %v, %d nodes",
					res, task.NumNodes, tc.cloud, tc.region, tc.acc, tc.inst, tc.spot, tc.nodes)
			}
			e := task.Envs
			if e["MODEL"] != "resnet50" || e["GLOBAL_BATCH"] != tc.batch || e["BATCH_PER_GPU"] != tc.perGPU || e["LR"] != tc.lr || e["WARMUP_EPOCHS"] != tc.warmup ||
				e["EPOCHS"] != "38" || e["AMP"] != "--amp" || !strings.Contains(e["PREDICTION"], "31m01s ±20%") || !strings.Contains(e["LR_NOTE"], "linear scaling") {
				t.Errorf("envs %v", e)
			}
			if !strings.Contains(task.Run, tc.runHas) {
				t.Errorf("run %q lacks %q", task.Run, tc.runHas)
			}
			if (tc.r.Command == "") != strings.Contains(task.Setup, "pytorch/vision") {
				t.Errorf("setup %q: the reference script needs torchvision's clone, a command of your own does not", task.Setup)
			}
		})
	}
}

// Every value the task gets from the user or the catalog is a double-quoted string,
// even where YAML would read it bare: "on", "no" or "1e3" stay strings for every reader.
func TestTaskValuesAreDoubleQuoted(t *testing.T) {
	r := p4d()
	r.Model, r.Region = "on", "1e3"
	data, err := SkyPilot(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`MODEL: "on"`, `region: "1e3"`, `cloud: "aws"`, `accelerators: "A100:8"`, `instance_type: "p4d.24xlarge"`, `GLOBAL_BATCH: "3328"`} {
		if !strings.Contains(string(data), "  "+want+"\n") {
			t.Errorf("no %s in\n%s", want, data)
		}
	}
}

// hostile are names a user may give that a careless writer would let run or break the
// file: quotes, shell expansions, line breaks, YAML's own syntax.
var hostile = []string{`my"net`, `$(touch PWNED)`, "`touch PWNED`", "a\nb: c", `it's`, `# not a comment`, `back\slash`, `- [x]`, `{a: 1}`, "tab\there", " lead", "&anchor"}

// Every value the user gives comes back from the task as the same string, and from the
// Slurm script's environment as the same string, nothing of it run.
func TestUserValuesAreQuoted(t *testing.T) {
	for _, v := range hostile {
		r := p4d()
		r.Model, r.Zoo, r.Region, r.Command = v, false, v, `printf '%s\n' "$MODEL" > model.out`
		r.Prediction = v
		task := parseTask(t, r)
		if task.Envs["MODEL"] != v || task.Resources.Region != v || task.Envs["PREDICTION"] != v || task.Run != r.Command+"\n" {
			t.Errorf("%q: the task reads back model %q, region %q, prediction %q, run %q", v, task.Envs["MODEL"], task.Resources.Region, task.Envs["PREDICTION"], task.Run)
		}
		if strings.ContainsAny(task.Name, "\"$`'\n\\ #") {
			t.Errorf("%q: job name %q keeps characters a scheduler could misread", v, task.Name)
		}

		// The Slurm script, run by bash with srun and scontrol standing in: the command
		// sees MODEL as given, and nothing else ran.
		script, err := Slurm(r, SlurmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		stub := filepath.Join(dir, "bin")
		if err := os.Mkdir(stub, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{"srun": "#!/bin/bash\nexec \"$@\"\n", "scontrol": "#!/bin/bash\necho node1\n"} {
			if err := os.WriteFile(filepath.Join(stub, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "job.sbatch")
		if err := os.WriteFile(path, script, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", path)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + stub + ":/usr/bin:/bin", "SLURM_JOB_NODELIST=node1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%q: the script fails: %v\n%s\n%s", v, err, out, script)
		}
		got, err := os.ReadFile(filepath.Join(dir, "model.out"))
		if err != nil || string(got) != v+"\n" {
			t.Errorf("%q: the command saw MODEL %q (%v)", v, got, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
			t.Errorf("%q: a name given ran as a command", v)
		}
		for _, line := range strings.Split(string(script), "\n") {
			if _, value, _ := strings.Cut(line, "="); strings.HasPrefix(line, "#SBATCH ") && strings.ContainsAny(value, "\"$`'\\ \t") {
				t.Errorf("%q: %q: sbatch reads it without a shell", v, line)
			}
		}
	}
}

// A Slurm script asks for the run's nodes, one task on each, its GPUs and CPUs, and the
// predicted time plus its band.
func TestSlurmHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Run
		o    SlurmOptions
		want []string
		not  []string
	}{
		{"4 × p4d", p4d(), SlurmOptions{Partition: "gpu"}, []string{"#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=1", "#SBATCH --gres=gpu:8",
			"#SBATCH --cpus-per-task=96", "#SBATCH --time=0-00:38:00", "#SBATCH --partition=gpu", "--nproc_per_node=8", `export GLOBAL_BATCH='3328'`}, nil},
		{"no gres, one CPU", p4d(), SlurmOptions{Gres: "none", CPUs: 1}, []string{"#SBATCH --cpus-per-task=1"}, []string{"--gres", "--partition"}},
		{"own gres", p4d(), SlurmOptions{Gres: "gpu:a100:8"}, []string{"#SBATCH --gres=gpu:a100:8"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Slurm(tc.r, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(s), w+"\n") && !strings.Contains(string(s), w+" ") {
					t.Errorf("no %q in\n%s", w, s)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(string(s), n) {
					t.Errorf("%q in\n%s", n, s)
				}
			}
			if out, err := exec.Command("bash", "-n", "-c", string(s)).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v\n%s", err, out)
			}
		})
	}
}

func TestTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		totalS, errPct float64
		want           string
	}{
		{1861, 20, "0-00:38:00"},  // 37.2 minutes, rounded up
		{100000, 8, "1-06:00:00"}, // 108,000 s
		{1, 0, "0-00:01:00"},      // at least a minute
		{3600, 0, "0-01:00:00"},   // exactly an hour
		{86400 * 3, 50, "4-12:00:00"},
	} {
		if got := TimeLimit(tc.totalS, tc.errPct); got != tc.want {
			t.Errorf("TimeLimit(%v, %v) = %s, want %s", tc.totalS, tc.errPct, got, tc.want)
		}
	}
}

// What cannot be launched is refused with what to do.
func TestRefusals(t *testing.T) {
	own := p4d()
	own.Zoo = false
	mine := p4d()
	mine.Cloud, mine.Machine = "", "user/lab-box"
	tiny := p4d()
	tiny.Batch = 16
	cpu := p4d()
	cpu.Accelerator, cpu.GPUs = "", 0
	for _, tc := range []struct {
		name  string
		write func() ([]byte, error)
		want  string
	}{
		{"your own CNN, no command", func() ([]byte, error) { return SkyPilot(own) }, "give your own training command (--run)"},
		{"your own machine on SkyPilot", func() ([]byte, error) { return SkyPilot(mine) }, "write a Slurm script"},
		{"a CPU on SkyPilot", func() ([]byte, error) { return SkyPilot(cpu) }, "no SkyPilot accelerator name"},
		{"batch below the GPUs", func() ([]byte, error) { return Slurm(tiny, SlurmOptions{}) }, "smaller than the 32 GPUs"},
		{"partition with a space", func() ([]byte, error) { return Slurm(p4d(), SlurmOptions{Partition: "gpu x"}) }, "without a shell"},
	} {
		if _, err := tc.write(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Each training precision sets the run's arithmetic as the prediction assumed it.
func TestPrecisionVariables(t *testing.T) {
	for _, tc := range []struct {
		precision, amp, name, value string
	}{
		{"fp32", "", "", ""},
		{"fp32-strict", "", "NVIDIA_TF32_OVERRIDE", "0"},
		{"tf32", "", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"},
		{"amp", "--amp", "", ""},
		{"bf16", "", "PRECISION_NOTE", "torch.bfloat16"},
	} {
		r := p4d()
		r.Precision = tc.precision
		e := parseTask(t, r).Envs
		if e["PRECISION"] != tc.precision || e["AMP"] != tc.amp {
			t.Errorf("%s: PRECISION %q, AMP %q", tc.precision, e["PRECISION"], e["AMP"])
		}
		for _, other := range []string{"NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "PRECISION_NOTE"} {
			if _, ok := e[other]; ok != (other == tc.name) {
				t.Errorf("%s: %s set %v", tc.precision, other, ok)
			}
		}
		if tc.name != "" && !strings.Contains(e[tc.name], tc.value) {
			t.Errorf("%s: %s = %q, want it to hold %q", tc.precision, tc.name, e[tc.name], tc.value)
		}
	}
}
