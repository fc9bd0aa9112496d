package cli

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"cnntime/db"
	"cnntime/predictor/measure"
)

// A cache in a folder the user may not write (a team's shared cache, a read-only
// mount): the commands that only read it work and write nothing; one that would change
// it says why it cannot. Where the test runs as root, which writes anywhere, the
// commands run as nobody.
func TestReadOnlyCacheServesReadingCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir, out := worldDir(t), worldDir(t)
	path := filepath.Join(dir, "shared.db")
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = d.PutSteps(context.Background(), []measure.Step{{DeviceKey: "gpu:t4", Model: "resnet18", Batch: 32,
		Precision: measure.FP32, Framework: "pytorch", Source: "lab", MedianMS: 50, Status: measure.OK}})
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	exe := cliBinaryForAnyone(t)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	before := listDir(t, dir)
	tests := []struct {
		args     []string
		wantCode int
		want     string
	}{
		{[]string{"predict", "--model", "resnet18", "--gpu", "t4", "--batch", "32", "--csv"}, 0, "resnet18,gpu/t4,t4,1,32,"},
		{[]string{"export", "--model", "resnet18", "--gpu", "t4", "--batches", "1-64", "--csv", filepath.Join(out, "r.csv")}, 0, "wrote"},
		{[]string{"cache", "info"}, 0, "1 step measurements"},
		{[]string{"machine", "set-price", "aws/p3.2xlarge", "2"}, 1, "is read-only (you may not write it or its folder)"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runAsNobody(t, exe, append([]string{"--db", path}, tc.args...)...)
		if code != tc.wantCode || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, tail(stdout), stderr, tc.wantCode, tc.want)
		}
	}
	if after := listDir(t, dir); !slices.Equal(after, before) {
		t.Errorf("the read-only folder held %q before and %q after", before, after)
	}
}

// worldDir is a new directory every user may enter and write.
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cnntime-world-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cliBinaryForAnyone is this test binary, where every user may run it: it runs as the
// command line with runAsCLIEnv.
func cliBinaryForAnyone(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return self
	}
	bin := filepath.Join(worldDir(t), "cnntime.test")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runAsNobody runs the command line of exe with args, as nobody where this test runs as
// root, and returns its exit status and output.
func runAsNobody(t *testing.T, exe string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runAsCLIEnv+"=1", "HOME="+worldDir(t), "TMPDIR="+os.TempDir())
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
