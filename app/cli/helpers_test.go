package cli

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"cnntime/db"
)

// putModels saves custom model files, in order, in the cache at path.
func putModels(t *testing.T, path string, models ...[2]string) {
	t.Helper()
	d, err := db.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, m := range models {
		if err := d.PutCustomModel(context.Background(), m[0], []byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
}

// tinyModelJSON is a custom model small enough to sweep on the CPU in a moment.
func tinyModelJSON(name string) string {
	return `{"name": "` + name + `", "input": [3, 8, 8], "classes": 4, "layers": [
		{"name": "conv", "op": "conv2d", "out": 4, "kernel": 3, "padding": 1},
		{"name": "relu", "op": "relu"},
		{"name": "pool", "op": "adaptiveavgpool2d", "size": 1},
		{"name": "flatten", "op": "flatten"},
		{"name": "fc", "op": "linear", "out": 4}
	]}`
}

// process the kill test kills); without it the test does nothing.
const childSweepEnv = "CNNTIME_TEST_SWEEP_CHILD_DB"

// readPipe makes a named pipe at path and reads it in the background, as a program
// reading a command's output would; the function it returns waits for what was read,
// failing the test when nothing arrives within 10 s.
func readPipe(t *testing.T, path string) func() string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(path)
		read <- string(b)
	}()
	return func() string {
		t.Helper()
		select {
		case s := <-read:
			return s
		case <-time.After(10 * time.Second):
			t.Error("nothing was written into the named pipe")
			return ""
		}
	}
}
