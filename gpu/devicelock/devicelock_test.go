package devicelock

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cnntime/predictor/measure"
)

func TestFileNameIsTheDevicesOwn(t *testing.T) {
	for _, c := range []struct {
		dev  measure.Device
		want string
	}{
		{measure.Device{Backend: "cpu", Key: "cpu:host:Xeon"}, "cpu.lock"},
		{measure.Device{Backend: "cuda", Key: "cuda:GPU-1234", UUID: "GPU-12ab-34cd"}, "gpu-GPU-12ab-34cd.lock"},
		{measure.Device{Backend: "cuda", Key: "cuda:../../etc/x y", UUID: ""}, "gpu-cuda_.._.._etc_x_y.lock"},
	} {
		if got := FileName(c.dev); got != c.want {
			t.Errorf("FileName(%+v) = %q, want %q", c.dev, got, c.want)
		}
	}
}

// A second holder waits and is told who holds the lock; a symbolic link planted at
// the lock's name is never followed; a folder others may write is refused.
func TestAcquire(t *testing.T) {
	run := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", run)
	dev := measure.Device{Backend: "cuda", Key: "cuda:GPU-a", UUID: "GPU-a"}
	first, err := Acquire(context.Background(), dev, "/caches/one.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var told Holder
	_, err = Acquire(ctx, dev, "/caches/two.db", func(h Holder) { told = h; cancel() })
	if err != context.Canceled || told.PID != os.Getpid() || told.Cache != "/caches/one.db" {
		t.Errorf("a second Acquire: %v, told %+v; want it to wait, told of this process and /caches/one.db", err, told)
	}
	first.Release()
	again, err := Acquire(context.Background(), dev, "/caches/two.db", nil)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	again.Release()

	target := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(target, []byte("keep"), 0o644)
	other := measure.Device{Backend: "cuda", Key: "cuda:GPU-b", UUID: "GPU-b"}
	if err := os.Symlink(target, filepath.Join(run, "cnntime", FileName(other))); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), other, "/c.db", nil); err == nil {
		t.Error("a symbolic link at the lock's name was followed")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target now holds %q", b)
	}

	os.Chmod(filepath.Join(run, "cnntime"), 0o777)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "only you may write") {
		t.Errorf("a folder anyone may write: %v", err)
	}
}
