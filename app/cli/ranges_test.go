package cli

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor"
)

// Every numeric flag has a range that keeps what is derived from it finite: outside it
// the command is a usage error (exit 2) that says the range, never a crash (a network
// of 1e-300 Gbit/s made the all-reduce +Inf and predict --json panicked with "[" on
// standard output) nor a 300-digit number.
func TestNumericFlagRanges(t *testing.T) {
	predict := []string{"predict", "--model", "resnet18", "--machine", "aws/p3.2xlarge", "--batches", "32,64"}
	target := append(append([]string{}, predict...), "--train", "to-target")
	add := []string{"machine", "add", "--name", "box", "--gpu", "t4", "--price", "1"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	tests := []struct {
		args []string
		want string
	}{
		{with(predict, "--json", "--nodes", "2", "--network-gbps", "1e-300"), "--network-gbps 1e-300: give 0.1 to 100000 Gbit/s per node"},
		{with(predict, "--nodes", "2", "--network-gbps", "1e-320"), "--network-gbps 1e-320: give 0.1 to 100000"},
		{with(predict, "--nodes", "2", "--network-gbps", "1e300"), "--network-gbps 1e+300: give 0.1 to 100000"},
		{with(target, "--ref-epochs", "1e-300", "--ref-batch", "256", "--critical-batch", "1000"), "--ref-epochs 1e-300: give the epochs your recipe takes at --ref-batch, from 0.01 up"},
		{with(target, "--ref-epochs", "30", "--ref-batch", "9223372036854775807", "--critical-batch", "1000"), "--ref-batch 9223372036854775807: give the global batch your recipe reached its target at, 1 to 16777216"},
		{with(target, "--ref-epochs", "30", "--ref-batch", "256", "--critical-batch", "1e300"), "--critical-batch 1e+300: give the batch at which the epochs double, 1 to 1e+09"},
		{with(target, "--ref-epochs", "0x1p4", "--ref-batch", "256", "--critical-batch", "1000"), `"0x1p4" is not a decimal number`},
		{with(add, "--vcpus", "99999999999"), "--vcpus 99999999999: give the machine's CPU threads, 1 to 4096 (0: unknown)"},
		{with(add, "--vcpus", "-1"), "--vcpus -1: give the machine's CPU threads"},
		{with(add, "--memory", "1e300"), "--memory 1e+300: give the machine's RAM in GiB, up to 65536 (0: unknown)"},
		// Counts: 99999999999 repeats ran out of memory; huge CPUs and pods went into job files.
		{[]string{"sweep", "--device", "cpu", "--models", "resnet18", "--batches", "1", "--repeats", "99999999999"}, "99999999999 repeats: measure each kernel at most 1000 times"},
		{[]string{"validate", "--repeats", "99999999999"}, "--repeats 99999999999: give the timed repeats of each CPU measurement, 1 to 1000"},
		{[]string{"validate", "--rounds", "1000000"}, "--rounds 1000000: give the CPU rounds, 1 to 100"},
		{[]string{"cluster", "slurm", "--models", "resnet18", "--batches", "1-4", "--out", "s.sbatch", "--repeats", "99999999999"}, "--repeats 99999999999: give the timed runs per kernel, 1 to 1000"},
		{[]string{"cluster", "slurm", "--models", "resnet18", "--batches", "1-4", "--out", "s.sbatch", "--cpus-per-task", "99999999999"}, "--cpus-per-task 99999999999: give the CPUs of a task, 1 to 4096"},
		{[]string{"cluster", "k8s", "--models", "resnet18", "--batches", "1-4", "--image", "x", "--out", "k.yaml", "--parallel", "99999999999"}, "--parallel 99999999999: give the pods at once, 1 to 10000"},
		{[]string{"launch", "slurm", "--model", "resnet50", "--machine", "aws/p3.2xlarge", "--batch", "64", "--out", "l.sh", "--cpus-per-task", "99999999999"}, "--cpus-per-task 99999999999: give the CPUs of a node's task, 1 to 4096"},
		{[]string{"prices", "update", "--max-mib", "99999999999999"}, "--max-mib 99999999999999: give the largest price file to take, in MiB, 1 to 4096"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runExportCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "internal error") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if stdout != "" {
			t.Errorf("%s: a refused command wrote %q", strings.Join(tc.args, " "), stdout)
		}
	}

	// machine add --price 0 says what a price of 0 means: no price, costs unknown.
	code, stdout, stderr := runExportCLI(t, "machine", "add", "--name", "free", "--gpu", "t4", "--price", "0")
	if code != 0 || !strings.Contains(stdout, "with no price (0): its costs show as unknown") || strings.Contains(stdout, "$0/h") {
		t.Errorf("machine add --price 0: exit %d, %q %q", code, stdout, stderr)
	}
}

// A figure that is not finite never reaches JSON: predict --json's rows refuse it with
// a sentence instead of panicking half-way through the array.
func TestPredictJSONRefusesNonFiniteNumbers(t *testing.T) {
	c := predictor.Curve{Model: "resnet18", Machine: "aws/p3.2xlarge", Points: []predictor.Point{
		{Batch: 32, Fits: true, IterMS: math.Inf(1), TotalS: math.Inf(1), EpochS: 1, ImagesPerS: 1},
	}}
	_, err := jsonRows{}.curve(nil, &c)
	if err == nil || !strings.Contains(err.Error(), "a prediction of resnet18 on aws/p3.2xlarge is not a finite number") {
		t.Errorf("err %v", err)
	}
}
