package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"cnntime/scripts"
)

// skyTask is the part of a SkyPilot task (sky/utils/schemas.py's task schema) the
// tests read back.
type skyTask struct {
	Name      string `yaml:"name"`
	Resources struct {
		Infra        string `yaml:"infra"`
		Accelerators string `yaml:"accelerators"`
		InstanceType string `yaml:"instance_type"`
		UseSpot      bool   `yaml:"use_spot"`
		CPUs         string `yaml:"cpus"`
		Memory       string `yaml:"memory"`
	} `yaml:"resources"`
	NumNodes   int                          `yaml:"num_nodes"`
	FileMounts map[string]map[string]string `yaml:"file_mounts"`
	Envs       map[string]string            `yaml:"envs"`
	Setup      string                       `yaml:"setup"`
	Run        string                       `yaml:"run"`
}

// p4d is four p4d.24xlarge training resnet50 to a target, as `best --nodes 1,4
// --train to-target` chooses it.
func p4d() Run {
	return Run{Model: "resnet50", Zoo: true, Machine: "aws/p4d.24xlarge", Cloud: "aws", Instance: "p4d.24xlarge", Accelerator: "A100",
		GPUs: 8, CPUs: 96, MemoryGiB: 1152, Nodes: 4, Region: "us-east-1", Batch: 3328, Epochs: 37.04, Precision: "amp", Workers: 11, Input: 224,
		Dataset: "imagenet-1k", Images: 1281167, ValImages: 50000, Classes: 1000, GPUID: "a100-sxm4-40gb",
		Recipe:     Recipe{Optimizer: "sgd", LR: 1.3, Momentum: 0.9, WeightDecay: 1e-4, Schedule: "multistep", Milestones: []float64{12.35, 24.69, 32.92}, Gamma: 0.1, WarmupEpochs: 5, Note: "torchvision's ResNet recipe, linear scaling"},
		Wheel:      Wheel{Torch: "2.8.0", Vision: "0.23.0", Index: indexCUDA128},
		Prediction: "31m01s ±20% to 75.9% top-1, $45.41", TotalS: 1861, ErrorPct: 20}
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

// A SkyPilot task reads back, with a YAML parser, as the resources, nodes, mounts and
// variables of the run it was written for, and runs cnntime's training script with the
// run's settings.
func TestSkyPilotTaskReadsBack(t *testing.T) {
	spot := p4d()
	spot.Spot, spot.Region, spot.Instance, spot.Checkpoints = true, "", "", "s3://ckpt-bucket/resnet50"
	spot.Data, spot.DataCopy = "gs://imagenet-bucket/folder", true
	own := p4d()
	own.Command = "python my_train.py --lr $LR"
	single := p4d()
	single.Nodes, single.Batch, single.GPUs, single.Accelerator, single.Cloud, single.Instance = 1, 256, 1, "H100", "lambda", "gpu_1x_h100_pcie"
	single.Recipe.LR, single.Recipe.WarmupEpochs, single.ChannelsLast, single.Compile = 0.1, 0, true, "reduce-overhead"
	coreweave := p4d()
	coreweave.Cloud, coreweave.Kubernetes, coreweave.Instance, coreweave.Region, coreweave.Accelerator, coreweave.GPUs = "", true, "gb200-4x", "", "GB200", 4
	coreweave.CPUs, coreweave.MemoryGiB, coreweave.Nodes, coreweave.Batch, coreweave.Workers = 144, 894, 1, 1024, 35
	for _, tc := range []struct {
		name                      string
		r                         Run
		infra, acc, inst          string
		spot                      bool
		nodes                     int
		batch, perGPU, lr, warmup string
		runHas                    []string
		mounts                    map[string][2]string // mount point: source, mode
	}{
		{"4 × p4d", p4d(), "aws/us-east-1", "A100:8", "p4d.24xlarge", false, 4, "3328", "104", "1.3", "5",
			[]string{`--nproc_per_node="$SKYPILOT_NUM_GPUS_PER_NODE"`, "cnntime_train.py", `--precision "$PRECISION"`, "--optimizer sgd", "--lr-milestones 12.35,24.69,32.92", "--eval-every 1", `--gpu-id "$GPU_ID"`}, nil},
		{"spot, buckets", spot, "aws", "A100:8", "", true, 4, "3328", "104", "1.3", "5", []string{`--checkpoint-dir "$CHECKPOINT_DIR"`},
			map[string][2]string{"/data": {"gs://imagenet-bucket/folder", "COPY"}, "/checkpoints": {"s3://ckpt-bucket/resnet50", "MOUNT_CACHED"}}},
		{"own command", own, "aws/us-east-1", "A100:8", "p4d.24xlarge", false, 4, "3328", "104", "1.3", "5", []string{"python my_train.py --lr $LR"}, nil},
		{"one H100, compiled NHWC", single, "lambda/us-east-1", "H100:1", "gpu_1x_h100_pcie", false, 1, "256", "256", "0.1", "0",
			[]string{"--channels-last", "--compile --compile-mode reduce-overhead"}, nil},
		{"CoreWeave through Kubernetes", coreweave, "k8s", "GB200:4", "", false, 1, "1024", "256", "1.3", "5", []string{"cnntime_train.py"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := parseTask(t, tc.r)
			res := task.Resources
			if res.Infra != tc.infra || res.Accelerators != tc.acc || res.InstanceType != tc.inst || res.UseSpot != tc.spot || task.NumNodes != tc.nodes {
				t.Errorf("resources %+v, %d nodes; want infra %q accelerators %q instance %q spot %v, %d nodes",
					res, task.NumNodes, tc.infra, tc.acc, tc.inst, tc.spot, tc.nodes)
			}
			e := task.Envs
			if e["MODEL"] != "resnet50" || e["GLOBAL_BATCH"] != tc.batch || e["BATCH_PER_GPU"] != tc.perGPU || e["LR"] != tc.lr || e["WARMUP_EPOCHS"] != tc.warmup ||
				e["EPOCHS"] != "37.04" || e["PRECISION"] != "amp" || !strings.Contains(e["PREDICTION"], "31m01s ±20%") || e["GPU_ID"] != "a100-sxm4-40gb" {
				t.Errorf("envs %v", e)
			}
			for _, want := range tc.runHas {
				if !strings.Contains(task.Run, want) {
					t.Errorf("run lacks %q:\n%s", want, task.Run)
				}
			}
			if !strings.Contains(task.Setup, "pip install --quiet torch==2.8.0 torchvision==0.23.0 --index-url "+indexCUDA128) {
				t.Errorf("setup installs no pinned PyTorch:\n%.300s", task.Setup)
			}
			if ownScript := strings.Contains(task.Setup, scripts.TrainScript()); ownScript == (tc.r.Command != "") {
				t.Errorf("setup writes the training script: %v; the run's own command: %q", ownScript, tc.r.Command)
			}
			if len(task.FileMounts) != len(tc.mounts) {
				t.Errorf("file mounts %v, want %v", task.FileMounts, tc.mounts)
			}
			for at, want := range tc.mounts {
				if got := task.FileMounts[at]; got["source"] != want[0] || got["mode"] != want[1] {
					t.Errorf("file mount %s: %v, want %v", at, got, want)
				}
			}
			if tc.r.Kubernetes && (res.CPUs != "144" || res.Memory == "") { // 4 × (35 workers + 1), all the machine's
				t.Errorf("a Kubernetes pod asks for cpus %q memory %q", res.CPUs, res.Memory)
			}
		})
	}
}

// The training script goes into the setup as it is: the here-document's quoted
// delimiter expands nothing and never occurs in the script as a line, and YAML keeps it
// as a literal block.
func TestTrainScriptHeredoc(t *testing.T) {
	for _, line := range strings.Split(scripts.TrainScript(), "\n") {
		if strings.TrimSpace(line) == trainHeredoc {
			t.Fatalf("the training script holds a line %q, which would end the here-document early", line)
		}
	}
	data, err := SkyPilot(p4d())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nsetup: |\n") {
		t.Errorf("the setup is not a literal block: YAML quoted the script\n%.400s", data)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "out.py")
	cmd := exec.Command("bash", "-c", writeScript(`"$1"`), "bash", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != strings.TrimRight(scripts.TrainScript(), "\n")+"\n" {
		t.Errorf("the here-document wrote %d bytes (%v), not the script's %d", len(got), err, len(scripts.TrainScript()))
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
	for _, want := range []string{`MODEL: "on"`, `infra: "aws/1e3"`, `accelerators: "A100:8"`, `instance_type: "p4d.24xlarge"`, `GLOBAL_BATCH: "3328"`} {
		if !strings.Contains(string(data), "  "+want+"\n") {
			t.Errorf("no %s in\n%.2000s", want, data)
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
		r.Model, r.Zoo, r.Region, r.Command = v, false, v, `printf '%s\n' "$MODEL" "$DATA_PATH" "$CHECKPOINT_DIR" > model.out`
		r.Prediction = v
		if !strings.ContainsAny(v, "\n") {
			r.Data, r.Checkpoints = "/data/"+v, "/ckpt/"+v
		}
		task := parseTask(t, r)
		if task.Envs["MODEL"] != v || task.Resources.Infra != "aws/"+v || task.Envs["PREDICTION"] != v || !strings.HasSuffix(task.Run, r.Command+"\n") ||
			task.Envs["DATA_PATH"] != or(r.Data, "/data/imagenet-1k") || task.Envs["CHECKPOINT_DIR"] != r.Checkpoints {
			t.Errorf("%q: the task reads back model %q, infra %q, prediction %q, data %q, checkpoints %q, run %q", v, task.Envs["MODEL"], task.Resources.Infra,
				task.Envs["PREDICTION"], task.Envs["DATA_PATH"], task.Envs["CHECKPOINT_DIR"], task.Run)
		}
		if strings.ContainsAny(task.Name, "\"$`'\n\\ #") {
			t.Errorf("%q: job name %q keeps characters a scheduler could misread", v, task.Name)
		}

		// The Slurm script, run by bash with srun and scontrol standing in: the command
		// sees MODEL, DATA_PATH and CHECKPOINT_DIR as given, and nothing else ran.
		r.Region = ""
		script, err := Slurm(r, SlurmOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		out := runSlurmScript(t, dir, script, nil)
		got, err := os.ReadFile(filepath.Join(dir, "model.out"))
		wantCkpt := or(r.Checkpoints, dir+"/"+jobName(v))
		if want := v + "\n" + or(r.Data, "/data/imagenet-1k") + "\n" + wantCkpt + "\n"; err != nil || string(got) != want {
			t.Errorf("%q: the command saw %q (%v), want %q\n%s", v, got, err, want, out)
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

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// runSlurmScript runs a Slurm script with bash in dir, srun and scontrol standing in
// (srun runs its command; scontrol names one node) and python the stub given (nil:
// none), as the submit folder; it returns the output and fails the test on an error.
func runSlurmScript(t *testing.T, dir string, script []byte, python []byte) string {
	t.Helper()
	stub := filepath.Join(dir, "bin")
	if err := os.MkdirAll(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	stubs := map[string]string{"srun": "#!/bin/bash\nexec \"$@\"\n", "scontrol": "#!/bin/bash\necho node1\n"}
	if python != nil {
		stubs["python3"] = string(python)
	}
	for name, body := range stubs {
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
	cmd.Env = []string{"PATH=" + stub + ":/usr/bin:/bin", "SLURM_JOB_NODELIST=node1", "SLURM_SUBMIT_DIR=" + dir, "SLURM_NNODES=1", "SLURM_JOB_ID=7"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the script fails: %v\n%s\n%.3000s", err, out, script)
	}
	return string(out)
}

// The Slurm script writes cnntime's training script beside the checkpoints, as it is,
// and starts it with the run's arguments: one process directly, several through
// torch.distributed.run on every node.
func TestSlurmRunsTheTrainingScript(t *testing.T) {
	// python3 stands in: it prints its arguments, one a line.
	argv := []byte("#!/bin/bash\nprintf '%s\\n' \"$@\" > \"$CHECKPOINT_DIR/argv\"\n")
	cpu := p4d()
	cpu.Machine, cpu.Cloud, cpu.Instance, cpu.Accelerator, cpu.GPUs, cpu.CPUs, cpu.Nodes, cpu.Batch, cpu.Workers = "local/cpu", "", "", "", 0, 2, 1, 8, 1
	cpu.GPUID, cpu.Input, cpu.Data = "", 32, "/tmp/imgs"
	for _, tc := range []struct {
		name string
		r    Run
		want []string // lines of argv, in order
	}{
		{"one CPU process", cpu, []string{"DIR/cnntime-resnet50/cnntime_train.py", "--model", "resnet50", "--data", "/tmp/imgs", "--batch-size", "8",
			"--epochs", "37.04", "--workers", "1", "--precision", "amp", "--train-crop-size", "32", "--device", "cpu", "--optimizer", "sgd", "--lr", "1.3"}},
		{"4 × 8 GPUs", p4d(), []string{"-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=8", "--rdzv_id=7", "--rdzv_backend=c10d",
			"--rdzv_endpoint=node1:29500", "DIR/cnntime-resnet50/cnntime_train.py", "--model", "resnet50", "--data", "/data/imagenet-1k", "--batch-size", "104"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script, err := Slurm(tc.r, SlurmOptions{})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			runSlurmScript(t, dir, script, argv)
			ckpt := filepath.Join(dir, "cnntime-resnet50")
			written, err := os.ReadFile(filepath.Join(ckpt, "cnntime_train.py"))
			if err != nil || string(written) != strings.TrimRight(scripts.TrainScript(), "\n")+"\n" {
				t.Errorf("the training script beside the checkpoints: %d bytes (%v), want the embedded %d", len(written), err, len(scripts.TrainScript()))
			}
			got, err := os.ReadFile(filepath.Join(ckpt, "argv"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.ReplaceAll(string(got), dir, "DIR"), "\n")
			if len(lines) < len(tc.want) || strings.Join(lines[:len(tc.want)], " ") != strings.Join(tc.want, " ") {
				t.Errorf("python3 ran with\n%s\nwant it to start with\n%s", strings.Join(lines, " "), strings.Join(tc.want, " "))
			}
			for _, flag := range []string{"--checkpoint-dir", "--steps-csv"} {
				if i := index(lines, flag); i < 0 || !strings.HasPrefix(lines[i+1], "DIR/cnntime-resnet50") {
					t.Errorf("%s is not in the checkpoint folder: %v", flag, lines)
				}
			}
		})
	}
}

func index(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}

// A Slurm script asks for the run's nodes, one task on each, its GPUs, the CPUs and
// memory its processes and loader workers need, a time limit of the prediction's upper
// end plus evaluation and start-up, and requeue.
func TestSlurmHeader(t *testing.T) {
	bare := p4d() // a bare --gpu: no vCPUs or memory known
	bare.Machine, bare.Cloud, bare.Instance, bare.CPUs, bare.MemoryGiB, bare.GPUs, bare.Nodes, bare.Batch, bare.Workers = "gpu/a100-sxm4-40gb", "", "", 0, 0, 1, 1, 256, 8
	cpu := p4d()
	cpu.GPUs, cpu.CPUs, cpu.MemoryGiB, cpu.Nodes, cpu.Batch, cpu.Workers, cpu.Input = 0, 2, 23, 1, 8, 1, 32
	for _, tc := range []struct {
		name string
		r    Run
		o    SlurmOptions
		want []string
		not  []string
	}{
		// 8 × (11 workers + 1) = 96 CPUs; memory 8 × (4 + 11 × (0.5 + 2 × 104 × 3 × 224² × 4 B)) = 86.3 GiB;
		// time 1861 s × 1.2 + 38 evaluations × 50,000/1,281,167 × 2233.2 s/37.04 + 600 s = 2922 s, 49 minutes.
		{"4 × p4d", p4d(), SlurmOptions{Partition: "gpu"}, []string{"#SBATCH --nodes=4", "#SBATCH --ntasks-per-node=1", "#SBATCH --gres=gpu:8",
			"#SBATCH --cpus-per-task=96", "#SBATCH --mem=87G", "#SBATCH --time=0-00:49:00", "#SBATCH --partition=gpu", "#SBATCH --requeue",
			"--nproc_per_node=8", `export GLOBAL_BATCH='3328'`}, nil},
		{"no gres, one CPU, no memory", p4d(), SlurmOptions{Gres: "none", CPUs: 1, Mem: "none"}, []string{"#SBATCH --cpus-per-task=1"}, []string{"--gres", "--partition", "--mem"}},
		{"own gres and memory", p4d(), SlurmOptions{Gres: "gpu:a100:8", Mem: "64G"}, []string{"#SBATCH --gres=gpu:a100:8", "#SBATCH --mem=64G"}, nil},
		// a bare GPU sets 8 workers: it asks for 9 CPUs, 4 + 8 × (0.5 + 2 × 256 × 3 × 224² × 4 B) = 10.3 GiB
		{"bare GPU", bare, SlurmOptions{}, []string{"#SBATCH --gres=gpu:1", "#SBATCH --cpus-per-task=9", "#SBATCH --mem=11G"}, nil},
		// the CPU trains: all its 2 cores; 4 + 1 × (0.5 + 2 × 8 × 3 × 32² × 4 B) GiB
		{"CPU", cpu, SlurmOptions{}, []string{"#SBATCH --cpus-per-task=2", "#SBATCH --mem=5G"}, []string{"--gres"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Slurm(tc.r, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(s), w+"\n") && !strings.Contains(string(s), w+" ") {
					t.Errorf("no %q in\n%.2500s", w, s)
				}
			}
			for _, n := range tc.not {
				if regexp.MustCompile(`(?m)^#SBATCH ` + n).Match(s) {
					t.Errorf("%q in\n%.2500s", n, s)
				}
			}
			if out, err := exec.Command("bash", "-n", "-c", string(s)).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v\n%s", err, out)
			}
		})
	}
}

// A job's time is the prediction's upper end, the evaluation passes (every epoch on
// ImageNet, every 4 on CIFAR, none on synthetic data) and the start-up, with more for
// torch.compile.
func TestJobSeconds(t *testing.T) {
	cifar := p4d()
	cifar.Images, cifar.ValImages, cifar.Epochs, cifar.TotalS, cifar.ErrorPct = 50000, 10000, 30, 3000, 0
	synthetic := cifar
	synthetic.Synthetic = true
	compiled := synthetic
	compiled.Compile = "default"
	for _, tc := range []struct {
		name          string
		r             Run
		every, passes int
		want          float64
	}{
		{"ImageNet", p4d(), 1, 38, 1861*1.2 + 38*50000.0/1281167*1861*1.2/37.04 + 600},
		{"CIFAR: 10,000 of 50,000 a pass", cifar, 4, 8, 3000 + 8*0.2*100 + 600},
		{"synthetic", synthetic, 0, 0, 3000 + 600},
		{"compiled", compiled, 0, 0, 3000 + 1200},
	} {
		if every, passes, got := tc.r.evalEvery(), tc.r.evalPasses(), tc.r.JobSeconds(); every != tc.every || passes != tc.passes || got < tc.want-1e-6 || got > tc.want+1e-6 {
			t.Errorf("%s: every %d epochs, %d passes, %v s; want %d, %d, %v", tc.name, every, passes, got, tc.every, tc.passes, tc.want)
		}
	}
}

func TestTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		want    string
	}{
		{2233.2, "0-00:38:00"}, // 37.2 minutes, rounded up
		{108000, "1-06:00:00"},
		{1, "0-00:01:00"},    // at least a minute
		{3600, "0-01:00:00"}, // exactly an hour
		{86400 * 4.5, "4-12:00:00"},
		{86400 * 365, "365-00:00:00"},
	} {
		if got, err := TimeLimit(tc.seconds); err != nil || got != tc.want {
			t.Errorf("TimeLimit(%v) = %s, %v; want %s", tc.seconds, got, err, tc.want)
		}
	}
	// Longer than a year (issue 44's 1514010609-05:43:00) is refused with what to do.
	for _, s := range []float64{86400*365 + 60, 1.3e14} {
		if got, err := TimeLimit(s); err == nil || !strings.Contains(err.Error(), "more nodes") {
			t.Errorf("TimeLimit(%v) = %q, %v; want a refusal", s, got, err)
		}
	}
}

func TestWheelFor(t *testing.T) {
	for _, tc := range []struct {
		cc    int
		index string
	}{{0, indexCPU}, {60, indexCUDA126}, {61, indexCUDA126}, {70, indexCUDA128}, {80, indexCUDA128}, {90, indexCUDA128}, {100, indexCUDA128}} {
		if w, err := WheelFor(tc.cc); err != nil || w.Index != tc.index || w.Torch != torchVersion || w.Vision != visionVersion {
			t.Errorf("WheelFor(%d) = %+v, %v; want %s", tc.cc, w, err, tc.index)
		}
	}
	if _, err := WheelFor(37); err == nil || !strings.Contains(err.Error(), "3.7") {
		t.Errorf("a K80 (3.7) gets a wheel: %v", err)
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
	spot := p4d()
	spot.Spot = true
	k8sSpot := p4d()
	k8sSpot.Kubernetes, k8sSpot.Spot, k8sSpot.Checkpoints = true, true, "s3://b/c"
	relative := p4d()
	relative.Data = "imagenet"
	bucketOnSlurm := p4d()
	bucketOnSlurm.Data = "s3://bucket/imagenet"
	year := p4d()
	year.TotalS = 400 * 86400
	badRecipe := p4d()
	badRecipe.Recipe.Optimizer = "sgd; rm -rf /"
	badPrecision := p4d()
	badPrecision.Precision = "fp8"
	for _, tc := range []struct {
		name  string
		write func() ([]byte, error)
		want  string
	}{
		{"your own CNN, no command", func() ([]byte, error) { return SkyPilot(own) }, "give your own training command (--run)"},
		{"your own machine on SkyPilot", func() ([]byte, error) { return SkyPilot(mine) }, "write a Slurm script"},
		{"a CPU on SkyPilot", func() ([]byte, error) { return SkyPilot(cpu) }, "no SkyPilot accelerator name"},
		{"spot without a checkpoint bucket", func() ([]byte, error) { return SkyPilot(spot) }, "give --checkpoints s3://"},
		{"spot on Kubernetes", func() ([]byte, error) { return SkyPilot(k8sSpot) }, "no spot instances"},
		{"a relative data path", func() ([]byte, error) { return SkyPilot(relative) }, "an absolute path"},
		{"a bucket on Slurm", func() ([]byte, error) { return Slurm(bucketOnSlurm, SlurmOptions{}) }, "a path its nodes see"},
		{"batch below the GPUs", func() ([]byte, error) { return Slurm(tiny, SlurmOptions{}) }, "smaller than the 32 GPUs"},
		{"partition with a space", func() ([]byte, error) { return Slurm(p4d(), SlurmOptions{Partition: "gpu x"}) }, "without a shell"},
		{"memory with a space", func() ([]byte, error) { return Slurm(p4d(), SlurmOptions{Mem: "64 G"}) }, "without a shell"},
		{"longer than a year", func() ([]byte, error) { return Slurm(year, SlurmOptions{}) }, "longer than the 365 days"},
		{"a recipe word the script refuses", func() ([]byte, error) { return SkyPilot(badRecipe) }, "the training script takes sgd, nesterov"},
		{"a precision the script refuses", func() ([]byte, error) { return Slurm(badPrecision, SlurmOptions{}) }, "runs fp32, fp32-strict, tf32, amp, bf16"},
	} {
		if _, err := tc.write(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Every flag the launch files give the training script is one its parser takes, with
// the value meant: the arguments are expanded by bash from the run's variables, as on a
// node, and parsed by the script's own parse_args (which needs no PyTorch).
func TestScriptAcceptsTheFlags(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to parse the training script's flags")
	}
	nine := 0.0
	full := p4d()
	full.ChannelsLast, full.Compile, full.CUDNNBenchmark, full.Precision = true, "reduce-overhead", true, "bf16"
	full.Recipe = Recipe{Optimizer: "lamb", LR: 0.004, WeightDecay: 0.05, NormWeightDecay: &nine, Eps: 1e-6, Schedule: "cosine", WarmupEpochs: 5,
		WarmupMethod: "constant", WarmupStart: 0.033, MinFactor: 0.01, LabelSmoothing: 0.1, MixupAlpha: 0.8, CutmixAlpha: 1, AutoAugment: "ta_wide",
		RandomErase: 0.25, RAReps: 4, Interpolation: "bicubic", EMADecay: 0.99998, EMAEvery: 32, ValCrop: 224, ValResize: 232}
	synthetic := p4d()
	synthetic.Synthetic, synthetic.Recipe = true, Recipe{Optimizer: "rmsprop", LR: 0.064, Momentum: 0.9, Eps: 0.0316, WeightDecay: 1e-5,
		Schedule: "exponential", Gamma: 0.973, WarmupEpochs: 0}
	step := p4d()
	step.Recipe.Schedule, step.Recipe.Milestones, step.Recipe.StepSize = "step", nil, 30
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "scripts")
	probe := `import sys; sys.path.insert(0, sys.argv[1]); import cnntime_train as c; a = c.parse_args(sys.argv[2:]); ` +
		`print(a.model, a.optimizer, a.lr, a.lr_schedule, a.warmup_epochs, a.precision, a.channels_last, a.compile_mode if a.compile else "eager", ` +
		`a.batch_size, a.epochs, a.train_crop_size, a.synthetic, a.ra_reps, a.interpolation, a.norm_weight_decay, a.eval_every)`
	for _, tc := range []struct {
		name string
		r    Run
		want string
	}{
		{"multistep SGD", p4d(), "resnet50 sgd 1.3 multistep 5.0 amp False eager 104 37.04 224 False 1 bilinear None 1"},
		{"every recipe field", full, "resnet50 lamb 0.004 cosine 5.0 bf16 True reduce-overhead 104 37.04 224 False 4 bicubic 0.0 1"},
		{"synthetic RMSProp", synthetic, "resnet50 rmsprop 0.064 exponential 0 amp False eager 104 37.04 224 True 1 bilinear None 1"},
		{"step", step, "resnet50 sgd 1.3 step 5.0 amp False eager 104 37.04 224 False 1 bilinear None 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for _, v := range tc.r.env() {
				b.WriteString("export " + v[0] + "=" + shellQuoteForTest(v[1]) + "\n")
			}
			b.WriteString(`CHECKPOINT_DIR=/tmp/ckpt` + "\n")
			b.WriteString(py + ` -c '` + probe + `' "$SCRIPTS" ` + argLines("  ", tc.r.trainArgs("$CHECKPOINT_DIR")) + "\n")
			cmd := exec.Command("bash", "-c", b.String())
			cmd.Env = append(os.Environ(), "SCRIPTS="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tc.want {
				t.Errorf("the script parses %q (%v)\nwant %q", strings.TrimSpace(string(out)), err, tc.want)
			}
		})
	}
}

func shellQuoteForTest(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
