package cluster

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// K8s is a Kubernetes Indexed Job that sweeps, one pod per index, with a
// persistent volume claim for the shards.
type K8s struct {
	Sweep
	Tasks     int    // completions; 0: one per (model, batch) pair, at most 16
	Name      string // the Job's name (a DNS label); "" for cnntime-sweep
	Namespace string // "" for the current namespace
	Image     string // a container image with cnntime (and for cuda, the cnntime-gpu worker) on PATH: the Containerfile's
	Claim     string // the PersistentVolumeClaim for the shards; "" for NAME-shards
	Storage   string // the claim's size, e.g. 1Gi; "" for 1Gi
	Parallel  int    // pods at once; 0 for all
}

// dnsLabel is a Kubernetes object name (RFC 1123 label).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// quantity is a Kubernetes storage quantity such as 500Mi or 2Gi.
var quantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$`)

const shardMount = "/shards"

// ImageUID is the user the Containerfile's image runs as: the Job's pods get it as
// their fsGroup, so that the claim's shards are writable by it (an image running as
// root writes them anyway).
const ImageUID = 10001

func (k K8s) tasks() int {
	if k.Tasks > 0 {
		return k.Tasks
	}
	return min(k.Pairs(), 16)
}

// Check reports the first thing wrong with the job, or nil.
func (k K8s) Check() error {
	if err := k.Sweep.Check(); err != nil {
		return err
	}
	if k.Tasks < 0 || k.Tasks > MaxTasks {
		return fmt.Errorf("--array %d: give a task count from 1 to %d", k.Tasks, MaxTasks)
	}
	if k.Tasks > k.Pairs() {
		return fmt.Errorf("--array %d: the sweep has only %d (model, batch) pairs to share; give at most %d tasks", k.Tasks, k.Pairs(), k.Pairs())
	}
	if k.Parallel < 0 {
		return fmt.Errorf("--parallel %d: give a positive count", k.Parallel)
	}
	if strings.TrimSpace(k.Image) == "" || strings.ContainsAny(k.Image, " \t\n\r\x00") {
		return fmt.Errorf("--image %q: give the container image that has cnntime on its PATH, e.g. registry.example.com/cnntime:1.0", k.Image)
	}
	for _, n := range []struct{ flag, v string }{{"--name", k.Name}, {"--namespace", k.Namespace}, {"--claim", k.Claim}} {
		// The Job's pods are named NAME-INDEX-xxxxx: keep room under 63 characters.
		if n.v != "" && (!dnsLabel.MatchString(n.v) || len(n.v) > 50) {
			return fmt.Errorf("%s %q: Kubernetes names are lower-case letters, digits and '-', starting and ending with a letter or digit, at most 50 characters here", n.flag, n.v)
		}
	}
	if k.Storage != "" && !quantity.MatchString(k.Storage) {
		return fmt.Errorf("--storage %q: give a size such as 1Gi or 500Mi", k.Storage)
	}
	return nil
}

// YAML writes the claim and the Indexed Job, or says what is wrong with the job.
// Every user-given string is written as a JSON string, which YAML reads as is.
func (k K8s) YAML() (string, error) {
	if err := k.Check(); err != nil {
		return "", err
	}
	n := k.tasks()
	name := or(k.Name, "cnntime-sweep")
	claim := or(k.Claim, name+"-shards")
	par := k.Parallel
	if par == 0 || par > n {
		par = n
	}
	q := func(s string) string {
		b, _ := json.Marshal(s) // a string always marshals
		return string(b)
	}
	script := taskScript(k.Sweep, n,
		`${JOB_NAME:?}-${JOB_UID:?}`,
		`${JOB_COMPLETION_INDEX:?run this in an Indexed Job}`,
		`$(hostname)`, "cnntime", shardMount)
	ns := ""
	if k.Namespace != "" {
		ns = "\n  namespace: " + q(k.Namespace)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `cnntime cluster k8s`: %d indexed pods sweep %d models at %d batch sizes on %s.\n", n, len(k.Models), len(k.Batches), k.Device)
	b.WriteString("# Apply with `kubectl apply -f FILE`. Each pod sweeps into its own shard on the claim below\n")
	b.WriteString("# (ReadWriteMany: the pods may run on different nodes); a retried pod resumes in its shard.\n")
	fmt.Fprintf(&b, "# Merge when the Job is complete: copy %s/shard-*.db out of the claim, then\n", shardMount)
	b.WriteString("#   cnntime cache import shard-*.db\n")
	b.WriteString("# The image: `make container` builds one from the repository's Containerfile (the headless\n")
	b.WriteString("# cnntime, cnntime-gpu and the scripts on NVIDIA's CUDA runtime image with cuDNN).\n")
	fmt.Fprintf(&b, `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s%s
spec:
  accessModes: ["ReadWriteMany"]
  resources:
    requests:
      storage: %s
---
apiVersion: batch/v1
kind: Job
metadata:
  name: %s%s
spec:
  completionMode: Indexed
  completions: %d
  parallelism: %d
  backoffLimit: %d
  template:
    spec:
      restartPolicy: OnFailure
      securityContext:
        fsGroup: %d
      containers:
        - name: sweep
          image: %s
          command: ["/bin/sh", "-c", %s]
          env:
            - name: JOB_NAME
              value: %s
            - name: JOB_UID
              valueFrom:
                fieldRef:
                  fieldPath: metadata.labels['batch.kubernetes.io/controller-uid']
          volumeMounts:
            - name: shards
              mountPath: %s
`, q(claim), ns, q(or(k.Storage, "1Gi")), q(name), ns, n, par, 3*n, ImageUID, q(k.Image), q(script), q(name), q(shardMount))
	if k.GPU() {
		b.WriteString("          resources:\n            limits:\n              nvidia.com/gpu: 1\n")
	}
	fmt.Fprintf(&b, `      volumes:
        - name: shards
          persistentVolumeClaim:
            claimName: %s
`, q(claim))
	return b.String(), nil
}
