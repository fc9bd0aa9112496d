package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"cnntime/app/launch"
)

// `launch skypilot` writes a task that a YAML parser reads with the chosen
// accelerator and count, cloud, region, spot and nodes, and the batch, epochs and
// prediction predict gives for the same flags.
func TestLaunchSkyPilotTask(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cache.db")
	for _, tc := range []struct {
		name                       string
		args                       []string
		cloud, region, acc, inst   string
		spot                       bool
		nodes                      int
		batch, perGPU, epochs, amp string
	}{
		{"4 × p4d to target", []string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "3328", "--nodes", "4", "--train", "to-target", "--precision", "amp"},
			"aws", "us-east-1", "A100:8", "p4d.24xlarge", false, 4, "3328", "104", "", "--amp"},
		{"gcp V100 on spot in a region", []string{"--model", "resnet18", "--machine", "gcp/n1-standard-4-1x-nvidia-tesla-v100", "--batch", "128", "--spot", "--region", "us-central1", "--epochs", "30"},
			"gcp", "us-central1", "V100:1", "n1-standard-4", true, 1, "128", "128", "30", ""},
		{"lambda H100", []string{"--model", "vgg16", "--machine", "lambda/gpu_1x_h100_pcie", "--batch", "64"},
			"lambda", "", "H100:1", "gpu_1x_h100_pcie", false, 1, "64", "64", "90", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			code, stdout, stderr := runCLIWithDB(t, db, append([]string{"launch", "skypilot", "--out", out}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "sky launch "+out) {
				t.Errorf("stdout %q does not say how to start it", stdout)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var task struct {
				Resources struct {
					Cloud, Region, Accelerators string
					InstanceType                string `yaml:"instance_type"`
					UseSpot                     bool   `yaml:"use_spot"`
				}
				NumNodes int               `yaml:"num_nodes"`
				Envs     map[string]string `yaml:"envs"`
				Run      string
			}
			if err := yaml.Unmarshal(data, &task); err != nil {
				t.Fatalf("not YAML: %v\n%s", err, data)
			}
			res := task.Resources
			region := tc.region
			if region == "" { // the region whose price the prediction used
				region = res.Region
			}
			if res.Cloud != tc.cloud || res.Region != region || res.Region == "" || res.Accelerators != tc.acc || res.InstanceType != tc.inst || res.UseSpot != tc.spot || task.NumNodes != tc.nodes {
				t.Errorf("resources %+v, %d nodes; want %s %s %s %s spot %v, %d nodes", res, task.NumNodes, tc.cloud, region, tc.acc, tc.inst, tc.spot, tc.nodes)
			}
			// The same run as predict predicts it.
			rows := predictRows(t, db, append([]string{"--json"}, tc.args...)...)
			if len(rows) != 1 || rows[0].TotalS == nil {
				t.Fatalf("predict gives %v", rows)
			}
			epochs := tc.epochs
			if epochs == "" { // to a target: the epochs this batch needs, rounded up for the script
				epochs = strconv.Itoa(int(*rows[0].Epochs + 0.999999))
			}
			e := task.Envs
			if e["MODEL"] != tc.args[1] || e["GLOBAL_BATCH"] != tc.batch || e["BATCH_PER_GPU"] != tc.perGPU || e["EPOCHS"] != epochs || e["AMP"] != tc.amp {
				t.Errorf("envs %v; want batch %s (%s per GPU), %s epochs, amp %q", e, tc.batch, tc.perGPU, epochs, tc.amp)
			}
			if want := strconv.FormatFloat(0.1*float64(rows[0].Batch)/256, 'g', 6, 64); e["LR"] != want {
				t.Errorf("LR %s, want %s (0.1 × batch/256)", e["LR"], want)
			}
			if !strings.Contains(e["PREDICTION"], "±") || !strings.Contains(task.Run, "train.py") {
				t.Errorf("prediction %q, run %q", e["PREDICTION"], task.Run)
			}
		})
	}
}

// `launch slurm` asks for the run's nodes and GPUs and a time limit of the time predict
// gives plus its band.
func TestLaunchSlurmScript(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cache.db")
	args := []string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "2048", "--nodes", "2", "--train", "to-target"}
	out := filepath.Join(dir, "train.sbatch")
	if code, _, stderr := runCLIWithDB(t, db, append([]string{"launch", "slurm", "--out", out, "--partition", "gpu"}, args...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := predictRows(t, db, append([]string{"--json"}, args...)...)
	if len(rows) != 1 || rows[0].TotalS == nil || rows[0].RunErrorPct == nil {
		t.Fatalf("predict gives %+v", rows)
	}
	script, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --nodes=2\n", "#SBATCH --gres=gpu:8\n", "#SBATCH --cpus-per-task=96\n", "#SBATCH --partition=gpu\n",
		"export GLOBAL_BATCH='2048'\n", "export BATCH_PER_GPU='128'\n"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("no %q in\n%s", want, script)
		}
	}
	// The time limit is the band's upper end, to the minute (predict's JSON rounds both
	// figures, so its limit may be a minute off).
	upper := *rows[0].TotalS * (1 + *rows[0].RunErrorPct/100)
	var d, h, m, sec int
	line := regexp.MustCompile(`(?m)^#SBATCH --time=(.*)$`).FindStringSubmatch(string(script))
	if line == nil {
		t.Fatalf("no time limit in\n%s", script)
	}
	if _, err := fmt.Sscanf(line[1], "%d-%d:%d:%d", &d, &h, &m, &sec); err != nil {
		t.Fatalf("time limit %q: %v", line[1], err)
	}
	limit := float64(((d*24+h)*60+m)*60 + sec)
	if !(limit >= upper-60 && limit < upper+120) || line[1] != launch.TimeLimit(limit, 0) {
		t.Errorf("time limit %s (%v s) for a run predicted at %v s ±%v%% (upper end %v s)", line[1], limit, *rows[0].TotalS, *rows[0].RunErrorPct, upper)
	}
}

// Mistakes are usage errors (exit 2) that say what to do, and write nothing.
func TestLaunchRefusals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cache.db")
	custom := filepath.Join(dir, "tiny.json")
	if err := os.WriteFile(custom, []byte(tinyModelJSON("tiny")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.out")
	base := []string{"--out", out, "--batch", "64"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no kind", []string{"--model", "resnet50"}, 2, "launch skypilot … or launch slurm …"},
		{"unknown kind", []string{"kubernetes", "--model", "resnet50"}, 2, "use skypilot or slurm"},
		{"no out", []string{"skypilot", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batch", "64"}, 2, "--out is required"},
		{"two models", append([]string{"skypilot", "--model", "resnet50,vgg16", "--machine", "aws/p3.2xlarge"}, base...), 2, "one CNN"},
		{"two machines", append([]string{"slurm", "--model", "resnet50", "--machine", "aws/p3.2xlarge,aws/p3.8xlarge"}, base...), 2, "one machine"},
		{"a bare GPU on SkyPilot", append([]string{"skypilot", "--model", "resnet50", "--gpu", "t4"}, base...), 2, "not a cloud machine"},
		{"your own CNN without a command", append([]string{"skypilot", "--model", custom, "--machine", "aws/p3.2xlarge"}, base...), 2, "give your own training command (--run)"},
		{"a partition sbatch would misread", append([]string{"slurm", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--partition", "gpu;x"}, base...), 2, "without a shell"},
		{"a batch that does not fit", []string{"skypilot", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batch", "4096", "--out", out}, 1, "the largest that fits is 180"},
	} {
		code, _, stderr := runCLIWithDB(t, db, append([]string{"launch"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, %q; want %d and %q", tc.name, code, stderr, tc.code, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: wrote %s", tc.name, out)
		}
	}
	// Your own CNN trains with your own command.
	if code, _, stderr := runCLIWithDB(t, db, "launch", "skypilot", "--model", custom, "--machine", "aws/p3.2xlarge", "--batch", "64", "--run", "python train.py --model \"$MODEL\"", "--out", out); code != 0 {
		t.Errorf("your own CNN with --run: exit %d: %s", code, stderr)
	}
}
