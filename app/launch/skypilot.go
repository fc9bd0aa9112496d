package launch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"cnntime/scripts"
)

// Wheel is the PyTorch a SkyPilot task installs with pip: the pinned torch and
// torchvision, from PyTorch's index for one CUDA version.
type Wheel struct {
	Torch, Vision, Index string
}

// The pinned PyTorch and its indexes. PyTorch's support matrix (pytorch/pytorch
// RELEASE.md, "PyTorch CUDA Support Matrix"; issue #172352 quotes it) builds its
// CUDA 12.6 wheels for compute capability 5.0 to 9.0 (Maxwell to Hopper) and its
// CUDA 12.8 wheels of 2.8 for 7.0 to 12.0 (Volta to Blackwell); nothing current runs
// on a Kepler (3.7, the K80).
const (
	torchVersion  = "2.8.0"
	visionVersion = "0.23.0"
	indexCUDA126  = "https://download.pytorch.org/whl/cu126"
	indexCUDA128  = "https://download.pytorch.org/whl/cu128"
	indexCPU      = "https://download.pytorch.org/whl/cpu"
)

// WheelFor is the PyTorch for a GPU of compute capability cc (major×10 + minor, 80
// for 8.0; 0 for a CPU), or an error naming what runs there.
func WheelFor(cc int) (Wheel, error) {
	w := Wheel{Torch: torchVersion, Vision: visionVersion}
	switch {
	case cc == 0:
		w.Index = indexCPU
	case cc < 50:
		return Wheel{}, fmt.Errorf("compute capability %d.%d: PyTorch %s's wheels start at 5.0 (the last for Kepler was PyTorch 1.12 with CUDA 11.3); pick a newer GPU, or run your own command (--run) with your own PyTorch", cc/10, cc%10, torchVersion)
	case cc < 70:
		w.Index = indexCUDA126
	default:
		w.Index = indexCUDA128
	}
	return w, nil
}

// trainHeredoc is the here-document delimiter that writes the training script out;
// the script never holds a line equal to it (TestTrainScriptHeredoc).
const trainHeredoc = "CNNTIME_TRAIN_PY"

// writeScript is shell that writes the training script to path, quoted as it is.
func writeScript(path string) string {
	return "cat > " + path + " <<'" + trainHeredoc + "'\n" + strings.TrimRight(scripts.TrainScript(), "\n") + "\n" + trainHeredoc + "\n"
}

// SkyPilot writes a SkyPilot task: resources (infra, instance type, accelerators,
// spot), nodes, file mounts for the data and the checkpoints, the run's variables, a
// setup that installs the pinned PyTorch and writes the training script, and a run
// command, with the prediction and how to start it in comments at the top.
func SkyPilot(r Run) ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	switch {
	case r.Cloud == "" && !r.Kubernetes:
		return nil, fmt.Errorf("%s is not a cloud machine, so SkyPilot cannot launch it: pick a machine of aws, gcp, azure, lambda, runpod or coreweave, or write a Slurm script (launch slurm)", r.Machine)
	case r.Accelerator == "" || r.GPUs < 1:
		return nil, fmt.Errorf("cnntime knows no SkyPilot accelerator name for %s's GPU: pick a machine whose GPU SkyPilot lists", r.Machine)
	case r.Spot && r.Kubernetes:
		return nil, fmt.Errorf("%s runs through SkyPilot's Kubernetes support, which has no spot instances: leave --spot out", r.Machine)
	case r.Spot && r.Command == "" && !bucket(r.Checkpoints):
		return nil, fmt.Errorf("--spot: a preempted spot instance loses its disk, so the managed job resumes only from checkpoints on a bucket: give --checkpoints s3://BUCKET/PATH (or gs://, r2://, ...)")
	case r.Data != "" && !bucket(r.Data) && !strings.HasPrefix(r.Data, "/"):
		return nil, fmt.Errorf("--data %q: give a bucket (s3://BUCKET/PATH, gs://...) that SkyPilot mounts, or an absolute path the nodes already see", r.Data)
	case r.Checkpoints != "" && !bucket(r.Checkpoints) && !strings.HasPrefix(r.Checkpoints, "/"):
		return nil, fmt.Errorf("--checkpoints %q: give a bucket (s3://BUCKET/PATH, gs://...) or an absolute path the nodes share", r.Checkpoints)
	}
	if r.Wheel.Torch == "" {
		return nil, fmt.Errorf("no PyTorch to install for %s", r.Machine)
	}
	resources := mapping("infra", quoted(r.infra()), "accelerators", quoted(fmt.Sprintf("%s:%d", r.Accelerator, r.GPUs)))
	if r.Instance != "" && !r.Kubernetes {
		resources.Content = append(resources.Content, key("instance_type"), quoted(r.Instance))
	}
	if r.Kubernetes { // a pod asks for its CPUs and memory; a VM has its instance type's
		cpus, mem := r.hostRequest()
		resources.Content = append(resources.Content, key("cpus"), quoted(strconv.Itoa(cpus)), key("memory"), quoted(strconv.Itoa(mem)))
	}
	resources.Content = append(resources.Content, key("use_spot"), boolean(r.Spot))
	doc := mapping("name", quoted(jobName(r.Model)), "resources", resources, "num_nodes", integer(r.Nodes))
	if mounts := r.fileMounts(); len(mounts.Content) > 0 {
		doc.Content = append(doc.Content, key("file_mounts"), mounts)
	}
	envs := mapping()
	for _, v := range r.env() {
		envs.Content = append(envs.Content, key(v[0]), quoted(v[1]))
	}
	if ckpt := r.skyCheckpoints(); ckpt != "" { // else the run's default, in the node's home
		envs.Content = append(envs.Content, key("CHECKPOINT_DIR"), quoted(ckpt))
	}
	doc.Content = append(doc.Content, key("envs"), envs, key("setup"), literal(r.skySetup()), key("run"), literal(r.skyRun()))
	doc.HeadComment = strings.Join(header(r, r.skyStart()), "\n")
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("write the SkyPilot task: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the SkyPilot task: %w", err)
	}
	return b.Bytes(), nil
}

// infra is SkyPilot's infra of the machine: cloud/region, or k8s for a Kubernetes
// cluster (SkyPilot's current spelling; cloud and region are deprecated).
func (r Run) infra() string {
	switch {
	case r.Kubernetes:
		return "k8s"
	case r.Region != "":
		return r.Cloud + "/" + r.Region
	}
	return r.Cloud
}

// fileMounts mounts the data bucket (or copies it to the nodes' disks) and the
// checkpoint bucket, whose writes go back to the bucket from a local cache.
func (r Run) fileMounts() *yaml.Node {
	m := mapping()
	if bucket(r.Data) && !r.Synthetic {
		mode := "MOUNT"
		if r.DataCopy {
			mode = "COPY"
		}
		m.Content = append(m.Content, key(dataMount), mapping("source", quoted(r.Data), "mode", quoted(mode)))
	}
	if bucket(r.Checkpoints) {
		m.Content = append(m.Content, key(checkpointMount), mapping("source", quoted(r.Checkpoints), "mode", quoted("MOUNT_CACHED")))
	}
	return m
}

// skyCheckpoints is CHECKPOINT_DIR on a SkyPilot node; "" for the run to put them in
// the node's home.
func (r Run) skyCheckpoints() string {
	if bucket(r.Checkpoints) {
		return checkpointMount
	}
	return r.Checkpoints
}

// skySetup installs the pinned PyTorch and writes the training script.
func (r Run) skySetup() string {
	s := "set -euo pipefail\n" +
		fmt.Sprintf("python3 -m pip install --quiet torch==%s torchvision==%s --index-url %s\n", r.Wheel.Torch, r.Wheel.Vision, r.Wheel.Index) +
		`mkdir -p "$HOME/cnntime"` + "\n"
	if r.Command == "" {
		s += writeScript(`"$HOME/cnntime/` + scripts.TrainScriptName + `"`)
	}
	return s
}

// skyRun starts the training script under torchrun on every GPU of every node, or the
// user's own command.
func (r Run) skyRun() string {
	s := "set -euo pipefail\n" + `export CHECKPOINT_DIR="${CHECKPOINT_DIR:-$HOME/cnntime/checkpoints}"` + "\n" + `mkdir -p "$CHECKPOINT_DIR"` + "\n"
	if r.Command != "" {
		return s + r.Command + "\n"
	}
	return s + `cd "$HOME/cnntime"` + "\n" +
		`MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n 1)` + "\n" +
		`python3 -m torch.distributed.run --nnodes="$SKYPILOT_NUM_NODES" --node_rank="$SKYPILOT_NODE_RANK" \` + "\n" +
		`  --nproc_per_node="$SKYPILOT_NUM_GPUS_PER_NODE" --master_addr="$MASTER_ADDR" --master_port=8008 \` + "\n" +
		"  " + scripts.TrainScriptName + " " + argLines("  ", r.trainArgs("$CHECKPOINT_DIR")) + "\n"
}

// skyStart is the header's lines on the data, the checkpoints and how to start the
// task and fetch its measurement.
func (r Run) skyStart() []string {
	var lines []string
	switch {
	case r.Synthetic:
	case bucket(r.Data) && r.DataCopy:
		lines = append(lines, "Data: "+oneLine(r.Data)+", copied to the nodes' disks at "+dataMount+" before the run (an ImageFolder tree: train/, val/).")
	case bucket(r.Data):
		lines = append(lines, "Data: "+oneLine(r.Data)+", mounted at "+dataMount+" (an ImageFolder tree: train/, val/; --data-copy copies it to local disk instead, faster to read).")
	case r.Data != "":
		lines = append(lines, "Data: "+oneLine(r.Data)+" on the nodes (an ImageFolder tree: train/, val/).")
	default:
		lines = append(lines, "Data: none given; DATA_PATH must name an ImageFolder tree the nodes see (sky launch --env DATA_PATH=...), or write this file again with --data s3://BUCKET/PATH.")
	}
	fetch := "scp " + jobName(r.Model) + ":cnntime/checkpoints/steps.csv ."
	if bucket(r.Checkpoints) {
		lines = append(lines, "Checkpoints: "+oneLine(r.Checkpoints)+" (every 30 minutes and each epoch; a restart resumes from the latest).")
		fetch = "copy " + oneLine(strings.TrimRight(r.Checkpoints, "/")) + "/steps.csv here"
	} else if r.Checkpoints != "" {
		fetch = "copy " + oneLine(r.Checkpoints) + "/steps.csv here"
	}
	if r.Spot {
		lines = append(lines, "Start it with: sky jobs launch FILE (a managed job: a preempted spot instance is replaced and the run resumes from its checkpoints).")
	} else {
		lines = append(lines, "Start it with: sky launch -c "+jobName(r.Model)+" FILE.")
	}
	if r.Command == "" {
		lines = append(lines, "Afterwards: "+fetch+", then cnntime cache import steps.csv (the run's own measured step time).")
	}
	return lines
}

// hostRequest is the CPUs and memory (GiB) a node's processes need: each GPU's
// process and its loader workers, and their memory (see memoryGiB).
func (r Run) hostRequest() (cpus, memGiB int) {
	workers := r.Workers
	if r.Synthetic {
		workers = 0
	}
	cpus = r.procs() * (workers + 1)
	if r.GPUs == 0 && r.CPUs > cpus { // the CPU trains: all its cores compute
		cpus = r.CPUs
	}
	if r.CPUs > 0 && cpus > r.CPUs {
		cpus = r.CPUs
	}
	return cpus, r.memoryGiB(workers)
}

// Host memory a training process needs: the main process (PyTorch, the CUDA context,
// pinned buffers) and each loader worker (its interpreter and PyTorch, and the
// batches it prefetches: PyTorch's default prefetch factor 2, as float32 tensors).
const (
	mainProcessGiB = 4.0
	workerGiB      = 0.5
	prefetch       = 2
)

// memoryGiB is the host memory a node's processes need, rounded up, at most the
// machine's where known.
func (r Run) memoryGiB(workers int) int {
	batchGiB := float64(r.perGPUBatch()) * 3 * float64(r.Input*r.Input) * 4 / (1 << 30)
	need := float64(r.procs()) * (mainProcessGiB + float64(workers)*(workerGiB+prefetch*batchGiB))
	if r.MemoryGiB > 0 && need > r.MemoryGiB {
		need = r.MemoryGiB
	}
	return max(int(need+0.999), 1)
}

// YAML nodes.

func key(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }

// quoted is a string double-quoted, whatever it holds.
func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func literal(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.LiteralStyle}
}

func integer(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n)}
}

func boolean(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
}

// mapping is a YAML mapping of keys and values, in order.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, key(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}
