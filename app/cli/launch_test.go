package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"cnntime/app/launch"
)

// launchJSON is what `launch --json` writes.
type launchJSON struct {
	Written []ExportWritten `json:"written"`
	Run     LaunchRunJSON   `json:"run"`
}

// launchFile runs `launch KIND --json --out FILE ARGS…` and returns what it reports and
// the file.
func launchFile(t *testing.T, db, kind, out string, args ...string) (launchJSON, []byte) {
	t.Helper()
	code, stdout, stderr := runCLIWithDB(t, db, append([]string{"--json", "launch", kind, "--out", out}, args...)...)
	if code != 0 {
		t.Fatalf("launch %s %v: exit %d: %s", kind, args, code, stderr)
	}
	var j launchJSON
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("launch --json: %v\n%s", err, stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return j, data
}

// `launch skypilot` writes a task that a YAML parser reads with the chosen infra, accelerator and count, instance type, spot, nodes and mounts,
// and the batch, epochs and prediction predict gives for the run the file starts.
// (SkyPilot's schema checks every catalog machine's task: app's
// TestLaunchedTasksValidateAgainstSkyPilotsSchema; this test binary keeps the schema
// library out, since TestSuperviseTurnsCrashesIntoStatusOne caps its address space.)
func TestLaunchSkyPilotTask(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cache.db")
	for _, tc := range []struct {
		name                      string
		args, extra               []string // the run's flags (predict takes them too) and launch's own
		infra, acc, inst          string
		spot                      bool
		nodes                     int
		batch, perGPU, epochs, lr string
		mounts                    []string
		differs                   string
		predictArgs               []string // the flags of the run the file starts, where they differ from args
	}{
		{"4 × p4d to target", []string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "3328", "--nodes", "4", "--train", "to-target", "--precision", "amp"},
			[]string{"--data", "s3://my-bucket/imagenet"}, "aws/us-east-1", "A100:8", "p4d.24xlarge", false, 4, "3328", "104", "", "1.3", []string{"/data"}, "", nil},
		{"gcp V100 on spot in a region", []string{"--model", "resnet18", "--machine", "gcp/n1-standard-4-1x-nvidia-tesla-v100", "--batch", "128", "--spot", "--region", "us-central1", "--epochs", "30"},
			[]string{"--checkpoints", "gs://my-bucket/ckpt"}, "gcp/us-central1", "V100:1", "n1-standard-4", true, 1, "128", "128", "30", "0.05", []string{"/checkpoints"}, "", nil},
		{"lambda H100", []string{"--model", "vgg16", "--machine", "lambda/gpu_1x_h100_pcie", "--batch", "64"},
			nil, "lambda/us-east-1", "H100:1", "gpu_1x_h100_pcie", false, 1, "64", "64", "90", "0.0025", nil, "", nil}, // VGG trains at 0.01 per 256
		{"RunPod's Community Cloud launches as Secure Cloud", []string{"--model", "resnet50", "--machine", "runpod/rtx-4090-community-cloud", "--batch", "128"},
			nil, "runpod", "RTX4090:1", "1x_RTX4090_SECURE", false, 1, "128", "128", "90", "0.05", nil, "runpod/rtx-4090-secure-cloud",
			[]string{"--model", "resnet50", "--machine", "runpod/rtx-4090-secure-cloud", "--batch", "128"}},
		{"an older PyTorch launches on the one setup installs", []string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "2048", "--precision", "amp", "--software", "pytorch-1.13"},
			nil, "aws/us-east-1", "A100:8", "p4d.24xlarge", false, 1, "2048", "256", "90", "0.8", nil, "the software: pytorch-1.13 → pytorch-2.8, which setup installs",
			[]string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "2048", "--precision", "amp", "--framework", "pytorch2"}},
		{"CoreWeave through Kubernetes", []string{"--model", "resnet50", "--machine", "coreweave/gb200-4x", "--batch", "1024", "--precision", "amp"},
			nil, "k8s", "GB200:4", "", false, 1, "1024", "256", "90", "0.4", nil, "", nil},
		{"DALI and NVIDIA's stack run as the DataLoader and torch.compile", []string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "2048",
			"--precision", "amp", "--loader", "dali", "--framework", "optimized", "--memory-format", "nhwc", "--train", "to-target"},
			nil, "aws/us-east-1", "A100:8", "p4d.24xlarge", false, 1, "2048", "256", "", "0.8", nil, "NVIDIA's optimised implementation → torch.compile",
			[]string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "2048", "--precision", "amp", "--loader", "pytorch",
				"--framework", "compiled-graphs", "--memory-format", "nhwc", "--script", "reference", "--train", "to-target"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
			j, data := launchFile(t, db, "skypilot", out, append(append([]string{}, tc.args...), tc.extra...)...)
			var task struct {
				Resources struct {
					Infra, Accelerators string
					InstanceType        string `yaml:"instance_type"`
					UseSpot             bool   `yaml:"use_spot"`
				}
				NumNodes   int                       `yaml:"num_nodes"`
				FileMounts map[string]map[string]any `yaml:"file_mounts"`
				Envs       map[string]string         `yaml:"envs"`
				Run        string
			}
			if err := yaml.Unmarshal(data, &task); err != nil {
				t.Fatal(err)
			}
			res := task.Resources
			if res.Infra != tc.infra || res.Accelerators != tc.acc || res.InstanceType != tc.inst || res.UseSpot != tc.spot || task.NumNodes != tc.nodes {
				t.Errorf("resources %+v, %d nodes; want %s %s %q spot %v, %d nodes", res, task.NumNodes, tc.infra, tc.acc, tc.inst, tc.spot, tc.nodes)
			}
			for _, m := range tc.mounts {
				if task.FileMounts[m] == nil {
					t.Errorf("no file mount at %s: %v", m, task.FileMounts)
				}
			}
			// The prediction in the file is predict's for the run the file starts, on the
			// PyTorch its setup installs.
			started := tc.args
			if tc.predictArgs != nil {
				started = tc.predictArgs
			}
			started = append(append([]string{}, started...), "--software", installedSoftware(t))
			rows := predictRows(t, db, started...)
			if len(rows) != 1 || rows[0].TotalS == nil || rows[0].Epochs == nil {
				t.Fatalf("predict gives %v", rows)
			}
			band := *rows[0].ErrorPct // fixed epochs: the step's band is the run's
			if rows[0].RunErrorPct != nil {
				band = *rows[0].RunErrorPct
			}
			if j.Run.TotalS != *rows[0].TotalS || j.Run.RunErrorPct != band || j.Run.Epochs != *rows[0].Epochs {
				t.Errorf("the file's run: %v s ±%v%%, %v epochs; predict for it: %v s ±%v%%, %v epochs", j.Run.TotalS, j.Run.RunErrorPct, j.Run.Epochs,
					*rows[0].TotalS, band, *rows[0].Epochs)
			}
			if (tc.differs == "") != (len(j.Run.Differs) == 0) || tc.differs != "" && !strings.Contains(strings.Join(j.Run.Differs, "; "), tc.differs) {
				t.Errorf("differs %q, want %q", j.Run.Differs, tc.differs)
			}
			for _, d := range j.Run.Differs {
				if !strings.Contains(string(data), "# Not as asked: "+d) {
					t.Errorf("the header does not say %q", d)
				}
			}
			if !strings.Contains(string(data), "# Predicted for the run this file starts: "+j.Run.Prediction+".") {
				t.Errorf("the header does not give the prediction %q", j.Run.Prediction)
			}
			e := task.Envs
			epochs, err := strconv.ParseFloat(e["EPOCHS"], 64)
			if tc.epochs != "" && e["EPOCHS"] != tc.epochs || err != nil || epochs < j.Run.Epochs-0.005 || epochs > j.Run.Epochs+0.015 { // the prediction's, up to the hundredth
				t.Errorf("EPOCHS %q for a run predicted at %v epochs (want %q)", e["EPOCHS"], j.Run.Epochs, tc.epochs)
			}
			if e["MODEL"] != tc.args[1] || e["GLOBAL_BATCH"] != tc.batch || e["BATCH_PER_GPU"] != tc.perGPU || e["LR"] != tc.lr {
				t.Errorf("envs %v; want batch %s (%s per GPU), lr %s", e, tc.batch, tc.perGPU, tc.lr)
			}
			if !strings.Contains(task.Run, "cnntime_train.py") || !strings.Contains(task.Run, `--precision "$PRECISION"`) {
				t.Errorf("run %q", task.Run)
			}
		})
	}
}

// `launch slurm` asks for the run's nodes and GPUs, the CPUs its loader workers need,
// and a time limit that covers the upper end of predict's band, the evaluation passes
// and the start-up.
func TestLaunchSlurmScript(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "cache.db")
	args := []string{"--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "2048", "--nodes", "2", "--train", "to-target"}
	out := filepath.Join(dir, "train.sbatch")
	j, script := launchFile(t, db, "slurm", out, append([]string{"--partition", "gpu", "--checkpoints", "/shared/ckpt"}, args...)...)
	rows := predictRows(t, db, args...)
	if len(rows) != 1 || rows[0].TotalS == nil || rows[0].RunErrorPct == nil {
		t.Fatalf("predict gives %+v", rows)
	}
	for _, want := range []string{"#SBATCH --nodes=2\n", "#SBATCH --gres=gpu:8\n", "#SBATCH --cpus-per-task=96\n", "#SBATCH --partition=gpu\n",
		"#SBATCH --requeue\n", "export GLOBAL_BATCH='2048'\n", "export BATCH_PER_GPU='128'\n", "CHECKPOINT_DIR='/shared/ckpt'"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("no %q in\n%.3000s", want, script)
		}
	}
	upper := *rows[0].TotalS * (1 + *rows[0].RunErrorPct/100)
	line := regexp.MustCompile(`(?m)^#SBATCH --time=(.*)$`).FindStringSubmatch(string(script))
	if line == nil {
		t.Fatalf("no time limit in\n%s", script)
	}
	var d, h, m, sec int
	if _, err := fmt.Sscanf(line[1], "%d-%d:%d:%d", &d, &h, &m, &sec); err != nil {
		t.Fatalf("time limit %q: %v", line[1], err)
	}
	limit := float64(((d*24+h)*60+m)*60 + sec)
	want, err := launch.TimeLimit(j.Run.JobS)
	if err != nil || line[1] != want || !(limit >= upper+600) || !(j.Run.JobS >= upper+600) {
		t.Errorf("time limit %s (%v s) for a job of %v s; predict's upper end %v s plus 10 minutes' start-up", line[1], limit, j.Run.JobS, upper)
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
		{"spot without a checkpoint bucket", append([]string{"skypilot", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--spot"}, base...), 2, "give --checkpoints s3://"},
		{"a bucket on Slurm", append([]string{"slurm", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--data", "s3://b/imagenet"}, base...), 2, "a path its nodes see"},
		{"a K80 on SkyPilot", append([]string{"skypilot", "--model", "resnet18", "--machine", "aws/p2.xlarge"}, base...), 1, "wheels start at 5.0"},
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

// writeImageFolder makes a tiny ImageFolder of 64-pixel JPEGs: per split, classes
// folders of n images each, each class its own colour.
func writeImageFolder(t *testing.T, root string, classes, train, val int) {
	t.Helper()
	for split, n := range map[string]int{"train": train, "val": val} {
		for c := range classes {
			d := filepath.Join(root, split, fmt.Sprintf("class%d", c))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				img := image.NewRGBA(image.Rect(0, 0, 64, 64))
				for p := range 64 * 64 {
					img.Set(p%64, p/64, color.RGBA{uint8(80 * c), uint8(p % 251), uint8(i * 40), 255})
				}
				var b bytes.Buffer
				if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("%d.jpg", i)), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// The Slurm script `launch slurm` writes for this computer's CPU trains with cnntime's
// training script on a tiny ImageFolder (bash with srun standing in, PyTorch on the
// CPU), and the step CSV it writes imports into the cache as the run's measured step.
// make test-cluster does the same under a real Slurm.
func TestLaunchedRunMeasuresItself(t *testing.T) {
	py, why := pythonWithTorch()
	if py == "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("trains a small CNN for a few steps with PyTorch (seconds); not with -short")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "cache.db")
	if code, _, stderr := runCLIWithDB(t, db, "sweep", "--models", "resnet18", "--batches", "4", "--input", "32", "--device", "cpu"); code != 0 {
		t.Fatalf("sweep: %s", stderr)
	}
	writeImageFolder(t, filepath.Join(dir, "imgs"), 2, 4, 1)
	ckpt := filepath.Join(dir, "ckpt")
	out := filepath.Join(dir, "train.sbatch")
	j, script := launchFile(t, db, "slurm", out, "--model", "resnet18", "--machine", "local/cpu", "--batch", "4", "--input", "32",
		"--images", "8", "--classes", "2", "--epochs", "1", "--workers", "1", "--data", filepath.Join(dir, "imgs"), "--checkpoints", ckpt)
	if j.Run.Batch != 4 || !strings.Contains(string(script), "--device cpu") {
		t.Fatalf("run %+v\n%.2000s", j.Run, script)
	}
	stub := filepath.Join(dir, "bin")
	if err := os.Mkdir(stub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stub, "srun"), []byte("#!/bin/bash\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+stub+":"+os.Getenv("PATH"), "PYTHON="+py, "SLURM_SUBMIT_DIR="+dir, "SLURM_JOB_ID=1", "OMP_NUM_THREADS=1")
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the job fails: %v\n%s", err, o)
	}
	steps := filepath.Join(ckpt, "steps.csv")
	if code, _, stderr := runCLIWithDB(t, db, "cache", "import", steps); code != 0 {
		t.Fatalf("cache import %s: %s", steps, stderr)
	}
	code, stdout, stderr := runCLIWithDB(t, db, "--json", "cache", "info")
	if code != 0 {
		t.Fatal(stderr)
	}
	var info struct {
		Steps   int `json:"steps"`
		Sources []struct {
			Source string `json:"source"`
			Steps  int    `json:"steps"`
		} `json:"step_sources"`
	}
	if err := json.Unmarshal([]byte(stdout), &info); err != nil {
		t.Fatal(err)
	}
	if info.Steps != 1 || len(info.Sources) != 1 || !strings.HasPrefix(info.Sources[0].Source, "cnntime_train.py on ") || !strings.Contains(info.Sources[0].Source, "1 workers each, input 32") {
		t.Errorf("the cache holds %d steps from %+v; want the run's one", info.Steps, info.Sources)
	}
	code, csvOut, _ := runCLIWithDB(t, db, "cache", "export", "--csv", "-")
	if code != 0 || !regexp.MustCompile(`(?m)^cpu:[^,]*:pytorch-[0-9]+-threads,resnet18,4,fp32,pytorch [^,]*cnntime_train\.py,[0-9.]+,`).MatchString(csvOut) {
		t.Errorf("the exported step is not resnet18 at batch 4 on this CPU:\n%s", csvOut)
	}
}

// installedSoftware is the release a SkyPilot task's setup installs, as --software names
// it: pytorch-X.Y of launch.WheelFor's torch.
func installedSoftware(t *testing.T) string {
	t.Helper()
	w, err := launch.WheelFor(90)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(w.Torch, ".")
	if len(parts) < 2 {
		t.Fatalf("torch %q is not X.Y.Z", w.Torch)
	}
	return "pytorch-" + parts[0] + "." + parts[1]
}
