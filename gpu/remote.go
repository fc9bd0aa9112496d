package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"cnntime/gpu/protocol"
	"cnntime/predictor/measure"
)

// WorkerName is the CUDA worker's executable name.
const WorkerName = "cnntime-gpu"

// WorkerEnv names an environment variable that, when set, is the worker's path.
const WorkerEnv = "CNNTIME_GPU_WORKER"

// ErrNoWorker is wrapped by FindWorker's error when the worker is not installed.
var ErrNoWorker = errors.New("CUDA worker not found")

// FindWorker returns the worker's path: $CNNTIME_GPU_WORKER, else cnntime-gpu next to
// this executable, else cnntime-gpu on PATH.
func FindWorker() (string, error) {
	if p := os.Getenv(WorkerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrNoWorker, WorkerEnv, p, err)
		}
		return p, nil
	}
	self, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(self), WorkerName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(WorkerName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s is neither next to %s nor on PATH; build it with 'make gpu-worker' (needs an NVIDIA driver) and put it beside cnntime", ErrNoWorker, WorkerName, self)
}

// ListDevices asks the worker at path for its CUDA devices.
func ListDevices(ctx context.Context, path string) ([]measure.Device, error) {
	var devs []measure.Device
	err := talk(ctx, path, protocol.Request{Type: protocol.ListDevices}, func(m protocol.Message) error {
		if m.Type == protocol.Device {
			devs = append(devs, *m.Device)
		}
		return nil
	})
	return devs, err
}

// Remote runs sweeps on one CUDA device through the worker process: a crash of the
// worker (or of the driver in it) is an error here, never a dead app.
type Remote struct {
	Path   string
	Index  int
	device measure.Device
}

// OpenRemote finds CUDA device index through the worker at path.
func OpenRemote(ctx context.Context, path string, index int) (*Remote, error) {
	devs, err := ListDevices(ctx, path)
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= len(devs) {
		return nil, fmt.Errorf("there is no CUDA device %d: the worker found %d (use cnntime devices to list them)", index, len(devs))
	}
	return &Remote{Path: path, Index: index, device: devs[index]}, nil
}

// Device describes the CUDA device.
func (r *Remote) Device() measure.Device { return r.device }

// Sweep sends the job to a new worker process and hands each measurement to the sink
// as it arrives. Cancelling ctx interrupts the worker, which stops after the kernel in
// flight.
func (r *Remote) Sweep(ctx context.Context, job Job, sink Sink) error {
	req := protocol.Request{
		Type: protocol.Sweep, Device: r.Index, Precision: job.Precision, Policy: job.Policy,
		Repeats: job.Repeats, Items: make([]protocol.Item, len(job.Items)),
	}
	for i, it := range job.Items {
		req.Items[i] = protocol.Item{Config: it.Config, Batch: it.Batch, Phase: it.Phase}
	}
	return talk(ctx, r.Path, req, func(m protocol.Message) error {
		switch m.Type {
		case protocol.Device:
			if m.Device.Key != r.device.Key {
				return fmt.Errorf("the worker swept device %s, not %s: did the GPUs change? run cnntime devices", m.Device.Key, r.device.Key)
			}
		case protocol.Measurement:
			if m.Measurement.DeviceKey != r.device.Key {
				return fmt.Errorf("the worker measured device %s, not %s", m.Measurement.DeviceKey, r.device.Key)
			}
			return sink.Measured(*m.Measurement)
		case protocol.Warning:
			if sink.Warning != nil {
				sink.Warning(m.Message)
			}
		}
		return nil
	})
}

// talk runs the worker at path, sends it req and hands each message to handle until the
// worker says done. Whatever goes wrong, the worker is stopped and the error says why.
func talk(ctx context.Context, path string, req protocol.Request, handle func(protocol.Message) error) error {
	line, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode the worker request: %w", err)
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = bytes.NewReader(append(line, '\n'))
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr := &tail{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("connect to the CUDA worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the CUDA worker %s: %w", path, err)
	}
	var (
		done      bool
		workerErr string
		stray     []string // lines that are not protocol messages (a library printing)
		handleErr error
	)
	rd := protocol.NewReader(stdout)
	for {
		m, err := rd.ReadMessage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(stray) < 5 {
				stray = append(stray, err.Error())
			}
			continue
		}
		switch m.Type {
		case protocol.Done:
			done = true
		case protocol.Error:
			workerErr = m.Message
		default:
			if handleErr = handle(m); handleErr != nil {
				_ = cmd.Process.Kill()
			}
		}
		if handleErr != nil {
			break
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	waitErr := cmd.Wait()
	switch {
	case handleErr != nil:
		return handleErr
	case workerErr != "":
		return fmt.Errorf("CUDA worker: %s", workerErr)
	case ctx.Err() != nil:
		return ctx.Err()
	case !done || waitErr != nil:
		return fmt.Errorf("the CUDA worker %s stopped before it finished (%v)%s", path, waitErr, explain(stderr.String(), stray))
	}
	return nil
}

// explain turns what a failed worker printed into a hint for the user.
func explain(stderr string, stray []string) string {
	if strings.Contains(stderr, "libcuda.so") {
		return ": the NVIDIA driver library libcuda.so.1 is not installed, so this machine cannot run CUDA"
	}
	var parts []string
	if s := strings.TrimSpace(stderr); s != "" {
		parts = append(parts, s)
	}
	parts = append(parts, stray...)
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, "; ")
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
