package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cnntime/assets"
	"cnntime/db"
	"cnntime/predictor/kernels"
)

// A few DeepBench rows of two catalog GPUs: enough for a quick fit and a
// leave-one-GPU-out table.
const smallDeepBench = `file,gpu,sheet,mode,cuda,cudnn,app,W,H,C,N,K,S_filter_w,R_filter_h,pad_w,pad_h,stride_w,stride_h,fwd_ms,bwd_input_ms,bwd_params_ms,total_ms,fwd_algo
x,NVIDIA V100,Results FP32,train,10.1,7.6,Resnet,56,56,64,8,256,1,1,0,0,1,1,0.086,0.084,0.143,0.313,
x,NVIDIA V100,Results FP32,train,10.1,7.6,Resnet,28,28,128,8,512,1,1,0,0,1,1,0.075,0.128,0.128,0.331,
x,NVIDIA V100,Results FP32,train,10.1,7.6,Vision,56,56,128,16,256,3,3,1,1,1,1,0.9,0.901,0.936,2.737,
x,NVIDIA T4,Results FP32,train,10.1,7.6,Resnet,56,56,64,8,256,1,1,0,0,1,1,0.241,0.252,0.37,0.863,
x,NVIDIA T4,Results FP32,train,10.1,7.6,Resnet,28,28,128,8,512,1,1,0,0,1,1,0.196,0.268,0.305,0.769,
x,NVIDIA T4,Results FP32,train,10.1,7.6,Vision,56,56,128,16,256,3,3,1,1,1,1,2.346,2.39,2.497,7.233,
`

func TestCalibrateCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "deepbench.csv")
	broken := filepath.Join(dir, "broken.csv")
	if err := os.WriteFile(good, []byte(smallDeepBench), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("gpu,mode\nV100,train\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "calibration.json")
	conv := filepath.Join(dir, "convergence.csv")
	if err := os.WriteFile(conv, assets.Convergence, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "cache.db")
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string // in stdout
		wantErr    string // in stderr
	}{
		{"no data", []string{"calibrate"}, 2, "", "--deepbench PATH is required"},
		{"stray argument", []string{"calibrate", "--deepbench", good, "extra"}, 2, "", `unexpected argument "extra"`},
		{"too few evaluations", []string{"calibrate", "--deepbench", good, "--evaluations", "5"}, 2, "", "too few"},
		{"missing file", []string{"calibrate", "--deepbench", filepath.Join(dir, "nope.csv")}, 1, "", "read DeepBench results"},
		{"not DeepBench", []string{"calibrate", "--deepbench", broken}, 1, "", "header lacks the columns"},
		{"unwritable output", []string{"calibrate", "--deepbench", good, "--evaluations", "200", "--out", filepath.Join(dir, "no", "such", "dir.json")}, 1, "", "write calibration"},
		{"fit and write", []string{"calibrate", "--deepbench", good, "--evaluations", "300", "--out", out}, 0, "NVIDIA T4", ""},
		{"convergence presets", []string{"calibrate", "--convergence", conv}, 0, "imagenet-1k", ""},
		{"convergence with deepbench", []string{"calibrate", "--convergence", conv, "--deepbench", good}, 2, "", "fits the epochs presets alone"},
		{"convergence not the figures", []string{"calibrate", "--convergence", broken}, 1, "", "header lacks the columns"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		status := RunCLI(context.Background(), append([]string{"--db", db}, tc.args...), strings.NewReader(""), &stdout, &stderr)
		if status != tc.wantStatus {
			t.Errorf("%s: exit %d, want %d; stderr: %s", tc.name, status, tc.wantStatus, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.wantOut) || !strings.Contains(stderr.String(), tc.wantErr) {
			t.Errorf("%s: stdout %q, stderr %q; want %q and %q", tc.name, stdout.String(), stderr.String(), tc.wantOut, tc.wantErr)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the calibration was not written: %v", err)
	}
	cal, err := kernels.ParseCalibration(data)
	if err != nil {
		t.Fatalf("the written calibration does not parse: %v", err)
	}
	if len(cal.Accuracy) != 2 || len(cal.Fitted) == 0 || !strings.Contains(cal.FittedOn, "6 rows") {
		t.Errorf("calibration: %d accuracy rows, %d fitted keys, fitted on %q", len(cal.Accuracy), len(cal.Fitted), cal.FittedOn)
	}
}

// calibrate --out is written as every export is (app/outfile): a new file with the
// user's umask (os.CreateTemp made it 0600), a replaced one keeping its permissions, a
// named pipe written into, and a cache database refused before the fit's work.
func TestCalibrateOutIsWrittenAsAnExport(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "deepbench.csv")
	if err := os.WriteFile(good, []byte(smallDeepBench), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(out string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := RunCLI(context.Background(), []string{"--db", filepath.Join(dir, "cache.db"), "calibrate", "--deepbench", good, "--evaluations", "200", "--out", out},
			strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)

	fresh := filepath.Join(dir, "fresh.json")
	if code, _, stderr := run(fresh); code != 0 {
		t.Fatalf("calibrate --out %s: exit %d: %s", fresh, code, stderr)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("a new calibration file: %v, mode %v; want 0640 (0666 less the umask 027)", err, st.Mode().Perm())
	}

	kept := filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, []byte("{}"), 0o604); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(kept, 0o604); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(kept); code != 0 {
		t.Fatalf("calibrate --out %s: exit %d: %s", kept, code, stderr)
	}
	if st, err := os.Stat(kept); err != nil || st.Mode().Perm() != 0o604 {
		t.Errorf("a replaced calibration file: %v, mode %v; want its own 0604", err, st.Mode().Perm())
	}

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			read <- nil
			return
		}
		defer f.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(f)
		read <- b.Bytes()
	}()
	if code, _, stderr := run(fifo); code != 0 {
		t.Fatalf("calibrate --out a named pipe: exit %d: %s", code, stderr)
	}
	select {
	case data := <-read:
		if _, err := kernels.ParseCalibration(data); err != nil {
			t.Errorf("what came through the named pipe is not a calibration: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("nothing came through the named pipe in 10 s")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v, %v", err, st.Mode())
	}

	cache := filepath.Join(dir, "other.db")
	if d, err := db.Open(cache); err != nil {
		t.Fatalf("make a cache: %v", err)
	} else {
		d.Close()
	}
	before, _ := os.ReadFile(cache)
	code, stdout, stderr := run(cache)
	after, _ := os.ReadFile(cache)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "it is an SQLite database") || !bytes.Equal(before, after) {
		t.Errorf("calibrate --out the cache: exit %d, stdout %q, stderr %q, cache changed %v; want it refused before fitting", code, stdout, stderr, !bytes.Equal(before, after))
	}
}

// The embedded calibration is what the app predicts with: it must parse and carry its
// leave-one-GPU-out report.
func TestEmbeddedCalibrationParses(t *testing.T) {
	cal, err := kernels.ParseCalibration(assets.Calibration)
	if err != nil {
		t.Fatalf("embedded calibration: %v", err)
	}
	if len(cal.Fitted) == 0 || len(cal.Accuracy) == 0 {
		t.Errorf("embedded calibration has %d fitted keys and %d accuracy rows: regenerate it with 'cnntime calibrate'", len(cal.Fitted), len(cal.Accuracy))
	}
}
