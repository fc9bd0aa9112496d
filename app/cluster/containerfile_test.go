package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Containerfile instruction: its keyword and its arguments, with the
// line continuations joined.
type instruction struct {
	line int
	cmd  string
	args string
}

// parseContainerfile reads a Containerfile's instructions (comments and blank lines
// dropped, continued lines joined).
func parseContainerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur *instruction
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur == nil && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		cont := strings.HasSuffix(line, "\\")
		line = strings.TrimSuffix(line, "\\")
		if cur == nil {
			cmd, args, _ := strings.Cut(line, " ")
			cur = &instruction{line: n, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		} else {
			cur.args += " " + line
		}
		if !cont {
			cur.args = strings.Join(strings.Fields(cur.args), " ")
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		t.Fatalf("%s ends in a continued line", path)
	}
	return out
}

// TestContainerfile lints the repository's Containerfile (no container builder runs in
// CI): the rules of hadolint that apply to it, and what cnntime needs of its image — a
// CUDA runtime base with cuDNN, the headless cnntime and the worker built as make
// builds them, on PATH, the scripts, files that exist, and the user the Kubernetes Job's
// fsGroup names.
func TestContainerfile(t *testing.T) {
	root := filepath.Join("..", "..")
	ins := parseContainerfile(t, filepath.Join(root, "Containerfile"))
	args := map[string]string{}
	var stages []string // each FROM's image, resolved
	var last []instruction
	for _, in := range ins {
		switch in.cmd {
		case "ARG":
			// A stage's ARG NAME brings the global default into it; only NAME=VALUE sets one.
			if name, val, ok := strings.Cut(in.args, "="); ok {
				args[name] = val
			}
		case "FROM":
			image := strings.Fields(in.args)[0]
			image = regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(image, func(m string) string {
				name := m[2 : len(m)-1]
				v, ok := args[name]
				if !ok || v == "" {
					t.Errorf("line %d: FROM uses ${%s}, which no ARG before it gives a default", in.line, name)
				}
				return v
			})
			// hadolint DL3006/DL3007: a pinned tag, never latest.
			if _, tag, ok := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":"); !ok || tag == "latest" {
				t.Errorf("line %d: base image %s has no pinned tag", in.line, image)
			}
			stages = append(stages, image)
			last = nil
		case "ADD": // hadolint DL3020
			t.Errorf("line %d: ADD: use COPY for local files", in.line)
		case "RUN":
			// hadolint DL3003 (WORKDIR, not cd), DL3009 and DL3015 (apt lists removed, no
			// recommends), DL4006 (pipes need pipefail, which no SHELL here sets).
			if regexp.MustCompile(`(^|&&|;)\s*cd\s`).MatchString(in.args) {
				t.Errorf("line %d: RUN cd: use WORKDIR", in.line)
			}
			if strings.Contains(in.args, "apt-get install") && (!strings.Contains(in.args, "--no-install-recommends") || !strings.Contains(in.args, "rm -rf /var/lib/apt/lists")) {
				t.Errorf("line %d: apt-get install without --no-install-recommends and removing /var/lib/apt/lists", in.line)
			}
			if strings.Contains(in.args, " | ") {
				t.Errorf("line %d: a pipe in RUN hides the first command's failure (no SHELL with pipefail)", in.line)
			}
		case "CMD", "ENTRYPOINT": // hadolint DL3025
			if !strings.HasPrefix(in.args, "[") {
				t.Errorf("line %d: %s in shell form: use the JSON form so signals reach cnntime", in.line, in.cmd)
			}
		case "COPY":
			if !strings.Contains(in.args, "--from=") {
				fields := strings.Fields(in.args)
				for _, src := range fields[:len(fields)-1] {
					if src == "." {
						continue
					}
					if _, err := os.Stat(filepath.Join(root, src)); err != nil {
						t.Errorf("line %d: COPY %s: no such file in the repository", in.line, src)
					}
				}
			}
		}
		last = append(last, in)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages: want a build stage and the image", len(stages))
	}
	if base := stages[len(stages)-1]; !strings.HasPrefix(base, "docker.io/nvidia/cuda:") || !strings.Contains(base, "-cudnn-runtime-") {
		t.Errorf("the image is based on %s: want NVIDIA's CUDA runtime image with cuDNN (nvidia/cuda:*-cudnn-runtime-*)", base)
	}
	// CUDA 12.8 is the first whose libraries and NVRTC have code for Blackwell (sm_100,
	// sm_120): 12.6's image measured no B200 or RTX 50.
	var major, minor int
	if _, err := fmt.Sscanf(args["CUDA_VERSION"], "%d.%d", &major, &minor); err != nil || major*100+minor < 1208 {
		t.Errorf("CUDA_VERSION %q: want 12.8 or later, for Blackwell", args["CUDA_VERSION"])
	}
	// PyTorch, pinned with its torchvision, so that the first run in the image compares
	// with PyTorch (without it pytorch and validate were always skipped).
	for _, name := range []string{"TORCH_VERSION", "TORCHVISION_VERSION"} {
		if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(args[name]) {
			t.Errorf("%s is %q: want a pinned x.y.z", name, args[name])
		}
	}
	text := ""
	for _, in := range ins {
		text += in.cmd + " " + in.args + "\n"
	}
	for _, want := range []string{
		"python3 python3-venv", // Python for the scripts
		`"torch==${TORCH_VERSION}" "torchvision==${TORCHVISION_VERSION}"`, // pinned
		"CNNTIME_PYTHON=/opt/torch/bin/python3",                           // cnntime runs the scripts there
		"VOLUME [\"/data\"]",                                              // the report and the cache outlive the container
		"CNNTIME_DB=/data/cache.db",                                       // the cache on the volume
		"CNNTIME_GPU_QUARANTINE=/data/gpu-quarantine.json",                // and the quarantine
		"chown 10001:10001 /data",                                         // the user may write it
		"CGO_ENABLED=0 go build -tags headless",                           // as make headless
		"go build -tags cuda -o /out/cnntime-gpu ./gpu/cmd/cnntime-gpu",
		"COPY --from=build /out/cnntime /out/cnntime-gpu /usr/local/bin/", // beside each other: cnntime finds the worker there
		"scripts/pytorch_sweep.py",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the Containerfile lacks %q", want)
		}
	}
	// How to run it with a GPU, in its header: podman through CDI, docker through the
	// toolkit's --gpus, each with the volume.
	raw, err := os.ReadFile(filepath.Join(root, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"podman run --rm --device nvidia.com/gpu=all -v ./out:/data:Z,U", "docker run --rm --gpus all", "nvidia-ctk cdi generate"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the Containerfile's header does not show %q", want)
		}
	}
	// NVIDIA's entrypoint runs first (its checks and entrypoint.d), then cnntime.
	for _, in := range last {
		if in.cmd == "ENTRYPOINT" && !strings.HasPrefix(in.args, `["/opt/nvidia/nvidia_entrypoint.sh", "cnntime"`) {
			t.Errorf("line %d: ENTRYPOINT %s bypasses NVIDIA's /opt/nvidia/nvidia_entrypoint.sh", in.line, in.args)
		}
	}
	// hadolint DL3002: the image does not run as root; its user is the Job's fsGroup.
	user := ""
	for _, in := range last {
		if in.cmd == "USER" {
			user = in.args
		}
	}
	if uid, err := strconv.Atoi(user); err != nil || uid == 0 || uid != ImageUID {
		t.Errorf("the image runs as user %q: want the numeric non-root %d the Kubernetes Job's fsGroup names", user, ImageUID)
	}
	// The build context leaves out what a build must not see, and keeps what it needs.
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", "cnntime-gpu"} {
		if !strings.Contains(string(ignore), "\n"+want+"\n") {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
	for _, kept := range []string{"go.mod", "assets", "scripts", "gpu"} {
		if strings.Contains(string(ignore), "\n"+kept+"\n") {
			t.Errorf(".dockerignore leaves out %s, which the build needs", kept)
		}
	}
}
