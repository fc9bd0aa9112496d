package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/gpu"
	"cnntime/predictor/cnn"
)

func TestClusterWritesJobs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep.sbatch")
	code, stdout, stderr := runCLI(t, "cluster", "slurm", "--models", "squeezenet1_1", "--batches", "1,2", "--device", "cpu", "--array", "2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-1\n", "sweep --models 'squeezenet1_1' --batches '1' --device 'cpu'", "sweep --models 'squeezenet1_1' --batches '2' --device 'cpu'"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("stdout: %s", stdout)
	}
	y := filepath.Join(dir, "sweep.yaml")
	if code, _, stderr := runCLI(t, "cluster", "k8s", "--models", "resnet18", "--batches", "1-4", "--device", "cuda:0", "--image", "reg/cnntime:1", "--out", y); code != 0 {
		t.Fatalf("k8s: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(y); !strings.Contains(string(b), "completionMode: Indexed") || !strings.Contains(string(b), "nvidia.com/gpu: 1") {
		t.Errorf("k8s job:\n%s", b)
	}
	// The layout, L2 mode, cuDNN API and whole steps reach every task's sweep; a layout's
	// alias is passed as the sweep's own word.
	if code, _, stderr := runCLI(t, "cluster", "k8s", "--models", "resnet18", "--batches", "8", "--device", "cuda:0", "--image", "reg/cnntime:1",
		"--precision", "bf16", "--memory-format", "Channels_Last", "--l2", "producer-hot", "--cudnn-api", "legacy", "--step", "--out", y); code != 0 {
		t.Fatalf("k8s with a layout: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(y); !strings.Contains(string(b), "--precision 'bf16' --memory-format 'nhwc' --l2 'producer-hot' --cudnn-api 'legacy' --step") {
		t.Errorf("k8s job does not pass the sweep's settings:\n%s", b)
	}
	// Bad input: a usage error, and no file written.
	for _, args := range [][]string{
		{"cluster"},
		{"cluster", "pbs"},
		{"cluster", "slurm", "--models", "a", "--batches", "1", "--device", "gpu0", "--out", filepath.Join(dir, "x")},
		{"cluster", "slurm", "--models", "squeezenet1_1", "--batches", "1", "--partition", "a b", "--out", filepath.Join(dir, "x")},
		{"cluster", "slurm", "--models", "squeezenet1_1", "--batches", "1,2", "--array", "3", "--out", filepath.Join(dir, "x")},
		{"cluster", "k8s", "--models", "squeezenet1_1", "--batches", "1", "--out", filepath.Join(dir, "x")},
		{"cluster", "slurm", "--models", "squeezenet1_1", "--batches", "1"},
		{"cluster", "slurm", "--models", "squeezenet1_1", "--batches", "1", "--memory-format", "nwhc", "--out", filepath.Join(dir, "x")},
		{"cluster", "slurm", "--models", "squeezenet1_1", "--batches", "1", "--l2", "hot", "--out", filepath.Join(dir, "x")},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("a refused job left a file: %v", err)
	}
}

// A zoo name the zoo lacks is refused here, with the closest names, not on the cluster.
func TestClusterRefusesUnknownZooModels(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.sbatch")
	code, _, stderr := runCLI(t, "cluster", "slurm", "--models", "resnet18,resnt18", "--batches", "1-8", "--out", out)
	if code != 2 || !strings.Contains(stderr, `unknown model "resnt18" (did you mean "resnet18"?)`) {
		t.Errorf("exit %d, stderr %q; want a usage error that suggests resnet18", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused job left a file: %v", err)
	}
	// A custom model file is the nodes' to find: it is passed on as given.
	if code, _, stderr := runCLI(t, "cluster", "slurm", "--models", "/shared/my_net.json", "--batches", "1-8", "--out", out); code != 0 {
		t.Errorf("a custom model file: exit %d, %s", code, stderr)
	}
}

// The whole zoo at 1–65,536 is a script Slurm accepts (it was 26 MB, listing every
// size), whose tasks still sweep every (model, batch size) pair exactly once; a plan no
// range can shorten enough is refused with what to do, writing nothing.
func TestClusterJobsStaySmall(t *testing.T) {
	dir := t.TempDir()
	models := strings.Join(cnn.Names(), ",")
	out := filepath.Join(dir, "zoo.sbatch")
	if code, _, stderr := runCLI(t, "cluster", "slurm", "--models", models, "--batches", "1-65536", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<20 {
		t.Errorf("the script is %d bytes, want under 1 MB", len(b))
	}
	swept := map[string]int{} // "model@batch" → how many tasks sweep it
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.TrimSpace(line))
		if len(f) < 5 || f[0] != "sweep" || f[1] != "--models" || f[3] != "--batches" {
			continue
		}
		sizes, err := gpu.ParseBatches(strings.Trim(f[4], "'"))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for _, n := range sizes {
			swept[fmt.Sprintf("%s@%d", strings.Trim(f[2], "'"), n)]++
		}
	}
	if want := len(cnn.Names()) * 65536; len(swept) != want {
		t.Errorf("the tasks sweep %d pairs, want %d", len(swept), want)
	}
	for pair, n := range swept {
		if n != 1 {
			t.Errorf("%s is swept by %d tasks", pair, n)
			break
		}
	}
	var primes []string // sizes no range can shorten
	for n := 2; n <= 65536; n++ {
		prime := true
		for d := 2; d*d <= n; d++ {
			if n%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			primes = append(primes, fmt.Sprint(n))
		}
	}
	y := filepath.Join(dir, "primes.yaml")
	code, _, stderr := runCLI(t, "cluster", "k8s", "--models", models, "--batches", strings.Join(primes, ","), "--image", "reg/cnntime:1", "--out", y)
	if code != 1 || !strings.Contains(stderr, "more than Kubernetes accepts") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("a job past Kubernetes' limit: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(y); !os.IsNotExist(err) {
		t.Errorf("a refused job left a file: %v", err)
	}
}

// cache import takes several shards; a missing one stops it before anything merges.
func TestCacheImportTakesShards(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "shard-1-0-n1.db"), filepath.Join(dir, "shard-1-1-n2.db")
	putModels(t, a, [2]string{"net_a", tinyModelJSON("net_a")})
	putModels(t, b, [2]string{"net_b", tinyModelJSON("net_b")})
	merged := filepath.Join(dir, "merged.db")
	if code, _, stderr := runCLIWithDB(t, merged, "cache", "import", a, filepath.Join(dir, "missing.db"), b); code != 1 || !strings.Contains(stderr, "nothing was imported") {
		t.Fatalf("with a missing shard: exit %d, %s", code, stderr)
	}
	if code, out, stderr := runCLIWithDB(t, merged, "cache", "info"); (code != 0 && !strings.Contains(stderr, "no cache at")) || strings.Contains(out, "custom models: 1") || strings.Contains(out, "custom models: 2") {
		t.Errorf("after the refused import: exit %d, %s %s", code, out, stderr)
	}
	code, out, stderr := runCLIWithDB(t, merged, "cache", "import", a, b)
	if code != 0 || strings.Count(out, "imported cache") != 2 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if code, out, _ := runCLIWithDB(t, merged, "--json", "cache", "info"); code != 0 || !strings.Contains(out, `"custom_models": 2`) {
		t.Errorf("merged cache: %s", out)
	}
}

// --nodes on predict and best: the total GPU count, the network named, best's choice
// of a node count within a budget, and bad counts refused.
func TestNodesFlag(t *testing.T) {
	rows := predictRows(t, filepath.Join(t.TempDir(), "c.db"), "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "4", "--batch", "4096")
	one := predictRows(t, filepath.Join(t.TempDir(), "c.db"), "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batch", "1024")
	r := rows[0]
	if r.GPUCount != 32 || r.Nodes != 4 || r.Network == nil || r.Network.Fabric != "EFA" || r.Network.Gbps != 400 || r.Network.Assumed {
		t.Fatalf("4 nodes: %+v (network %+v)", r, r.Network)
	}
	if ratio := *r.ImagesPerS / *one[0].ImagesPerS; !(ratio > 2 && ratio < 4) {
		t.Errorf("4 nodes run %.2f× one node; want between 2× and 4×", ratio)
	}
	if one[0].Nodes != 0 || one[0].Network != nil {
		t.Errorf("one node carries nodes %d, network %+v", one[0].Nodes, one[0].Network)
	}
	lam := predictRows(t, filepath.Join(t.TempDir(), "c.db"), "--model", "resnet50", "--machine", "lambda/gpu_8x_a100", "--nodes", "2", "--batch", "512")
	if n := lam[0].Network; n == nil || !n.Assumed || !strings.Contains(n.Source, "ASSUMED") {
		t.Errorf("an unpublished network is not marked assumed: %+v", n)
	}
	mine := predictRows(t, filepath.Join(t.TempDir(), "c.db"), "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "2", "--network-gbps", "100", "--batch", "512")
	if n := mine[0].Network; n == nil || n.Gbps != 100 || !n.Assumed {
		t.Errorf("--network-gbps 100: %+v", n)
	}

	// best picks the fastest node count whose cost is within the budget.
	db := filepath.Join(t.TempDir(), "c.db")
	code, out, stderr := runCLIWithDB(t, db, "best", "--json", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "1,2,4", "--batches", "256,512,1024,2048,4096", "--epochs", "1")
	if code != 0 {
		t.Fatalf("best: exit %d: %s", code, stderr)
	}
	var free []BestRow
	if err := json.Unmarshal([]byte(out), &free); err != nil || len(free) != 1 || free[0].Nodes != 4 {
		t.Fatalf("best without a limit: %v %s; want 4 nodes (the fastest)", err, out)
	}
	cost1 := 0.0
	code, out, _ = runCLIWithDB(t, db, "best", "--json", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--batches", "256,512,1024", "--epochs", "1")
	var single []BestRow
	if code != 0 || json.Unmarshal([]byte(out), &single) != nil || single[0].Best == nil || single[0].Best.CostUSD == nil {
		t.Fatalf("one node: %s", out)
	}
	cost1 = *single[0].Best.CostUSD
	code, out, _ = runCLIWithDB(t, db, "best", "--json", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "1,2,4", "--batches", "256,512,1024,2048,4096", "--epochs", "1", "--budget", fmt.Sprint(cost1*1.001))
	var capped []BestRow
	if code != 0 || json.Unmarshal([]byte(out), &capped) != nil || capped[0].Best == nil || *capped[0].Best.CostUSD > cost1*1.001 {
		t.Fatalf("best within $%.2f: %s", cost1, out)
	}

	for _, args := range [][]string{
		{"predict", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "0", "--batch", "64"},
		{"predict", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "1,2", "--batch", "64"},
		{"predict", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "2", "--network-gbps", "-1", "--batch", "64"},
		{"best", "--model", "resnet50", "--machine", "aws/p4d.24xlarge", "--nodes", "auto", "--budget", "10", "--deadline", "1h"},
	} {
		if code, _, stderr := runCLIWithDB(t, db, args...); code != 2 || !strings.Contains(stderr, "--") {
			t.Errorf("%q: exit %d, %s; want a usage error", args, code, stderr)
		}
	}
}
