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

	"cnntime/gpu/lifeline"
	"cnntime/gpu/protocol"
	"cnntime/gpu/selftest"
	"cnntime/predictor/measure"
)

// WorkerName is the CUDA worker's executable name.
const WorkerName = "cnntime-gpu"

// WorkerEnv names an environment variable that, when set, is the worker's path.
const WorkerEnv = "CNNTIME_GPU_WORKER"

// ErrNoWorker is wrapped by FindWorker's error when the worker is not installed.
var ErrNoWorker = errors.New("CUDA worker not found")

// ExitNoGPU is the worker's exit status when this machine has no usable GPU.
const ExitNoGPU = 3

// ErrNoGPU is wrapped by the error of a worker that found no usable GPU; the error's
// text is the worker's one sentence saying why.
var ErrNoGPU = errors.New("no usable NVIDIA GPU")

type noGPUError struct{ sentence string }

func (e *noGPUError) Error() string { return e.sentence }
func (e *noGPUError) Unwrap() error { return ErrNoGPU }

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
	err := talk(ctx, path, protocol.Request{Type: protocol.ListDevices}, 0, func(m protocol.Message) error {
		if m.Type == protocol.Device {
			devs = append(devs, *m.Device)
		}
		return nil
	}, nil)
	return devs, err
}

// SelfTest asks the worker at path to run its self-test on device index.
func SelfTest(ctx context.Context, path string, index int) (selftest.Report, error) {
	var rep *selftest.Report
	err := talk(ctx, path, protocol.Request{Type: protocol.SelfTest, Device: index}, 0, func(m protocol.Message) error {
		if m.Type == protocol.Report {
			rep = m.Report
		}
		return nil
	}, nil)
	if err == nil && rep == nil {
		err = fmt.Errorf("the CUDA worker %s finished its self-test without a report", path)
	}
	if rep == nil {
		return selftest.Report{}, err
	}
	return *rep, err
}

// DefaultStall is how long the app waits for the worker's next line before it calls
// the item in flight hung: far longer than any one kernel's search and timing.
const DefaultStall = 10 * time.Minute

// Remote runs sweeps on one CUDA device through the worker process: a crash of the
// worker (or of the driver in it) is an error here, never a dead app. An item that
// crashes or hangs the worker is quarantined: recorded, skipped by later sweeps, and
// named in a warning each time it is skipped.
type Remote struct {
	Path       string
	Index      int
	Quarantine *Quarantine   // nil: nothing is quarantined
	Stall      time.Duration // 0: DefaultStall
	device     measure.Device
	build      string // WorkerBuild of Path, read once
}

// workerBuild is the worker's identity in quarantine keys.
func (r *Remote) workerBuild() string {
	if r.build == "" {
		r.build = WorkerBuild(r.Path)
	}
	return r.build
}

// OpenRemote finds CUDA device index through the worker at path.
func OpenRemote(ctx context.Context, path string, index int) (*Remote, error) {
	return OpenRemoteNamed(ctx, path, fmt.Sprintf("cuda:%d", index))
}

// OpenRemoteNamed finds the CUDA device a sweep names (cuda:N in nvidia-smi's order, or
// cuda:GPU-<uuid> / cuda:MIG-<uuid>; DeviceIndex) through the worker at path.
func OpenRemoteNamed(ctx context.Context, path, name string) (*Remote, error) {
	devs, err := ListDevices(ctx, path)
	if err != nil {
		return nil, err
	}
	index, err := DeviceIndex(devs, name)
	if err != nil {
		return nil, err
	}
	return &Remote{Path: path, Index: index, Quarantine: DefaultQuarantine(), device: devs[index]}, nil
}

// Device describes the CUDA device.
func (r *Remote) Device() measure.Device { return r.device }

// Sweep sends the job to a new worker process and hands each measurement to the sink
// as it arrives. Cancelling ctx interrupts the worker, which stops after the kernel in
// flight. Quarantined items are skipped with a warning. An item whose measurement
// returns an error is quarantined and handed to sink.Failed (a warning without it), and
// the sweep goes on; after a sticky error, which leaves the worker's GPU context broken,
// the worker is restarted with the items left (not again when the first item after a
// restart fails that way too: the GPU itself is then in trouble). An item in flight when
// the worker crashes or hangs is quarantined and named in the error.
func (r *Remote) Sweep(ctx context.Context, job Job, sink Sink) error {
	items, err := r.skipQuarantined(job, sink)
	if err != nil {
		return err
	}
	for restarted := false; ; restarted = true {
		left, err := r.run(ctx, job, items, sink)
		var sticky *stickyStop
		if !errors.As(err, &sticky) {
			return err
		}
		if restarted && sticky.measured == 0 {
			return fmt.Errorf("the CUDA worker failed with a sticky error again right after a restart, so the GPU itself is in trouble (check nvidia-smi and the kernel log); both items are quarantined: %s", sticky.reason)
		}
		if len(left) == 0 {
			return nil
		}
		if sink.Warning != nil {
			sink.Warning(fmt.Sprintf("restarting the CUDA worker after a sticky error, with the %d items left", len(left)))
		}
		items = left
	}
}

// stickyStop is a worker run that ended after a sticky failure: the worker must restart.
type stickyStop struct {
	reason   string
	measured int // measurements in the run before it
}

func (e *stickyStop) Error() string {
	return "the CUDA worker stopped after a sticky error: " + e.reason
}

// run sweeps items in one worker process. After a sticky failure it returns the items
// after the failed one and a *stickyStop.
func (r *Remote) run(ctx context.Context, job Job, items []Item, sink Sink) ([]Item, error) {
	req := protocol.Request{
		Type: protocol.Sweep, Device: r.Index, Precision: job.Precision, Policy: job.Policy, CuDNNAPI: job.CuDNNAPI,
		Layout: job.Layout, L2: job.L2, Repeats: job.Repeats, Items: make([]protocol.Item, len(items)),
	}
	for i, it := range items {
		req.Items[i] = protocol.Item{Config: it.Config, Batch: it.Batch, Phase: it.Phase, Precision: it.Precision}
	}
	measuredKey := LayoutKey(r.device.Key, job.Layout)
	inFlight, measured := -1, 0
	var sticky *stickyStop
	var left []Item
	err := talk(ctx, r.Path, req, r.Stall, func(m protocol.Message) error {
		switch m.Type {
		case protocol.Start:
			inFlight = m.Done
		case protocol.Device:
			if m.Device.Key != r.device.Key {
				return fmt.Errorf("the worker swept device %s, not %s: did the GPUs change? run cnntime devices", m.Device.Key, r.device.Key)
			}
		case protocol.Measurement:
			inFlight = -1
			measured++
			if m.Measurement.DeviceKey != measuredKey {
				return fmt.Errorf("the worker measured device %s, not %s", m.Measurement.DeviceKey, measuredKey)
			}
			return sink.Measured(*m.Measurement)
		case protocol.Failed:
			inFlight = -1
			if m.Done >= len(items) {
				return fmt.Errorf("the worker reported a failure of item %d of %d", m.Done, len(items))
			}
			if m.Sticky {
				sticky, left = &stickyStop{reason: m.Message, measured: measured}, items[m.Done+1:]
			}
			return r.failed(job, items[m.Done], m, sink)
		case protocol.Warning:
			if sink.Warning != nil {
				sink.Warning(m.Message)
			}
		}
		return nil
	}, func() int { return inFlight })
	if sticky != nil && ctx.Err() == nil {
		return left, sticky // the worker ends itself after a sticky error
	}
	var crash *WorkerCrash
	if errors.As(err, &crash) && crash.Item >= 0 && crash.Item < len(items) {
		q := quarantineKey(r.device, r.workerBuild(), job, items[crash.Item])
		q.Reason, q.At = crash.Reason(), time.Now().UTC()
		crash.Quarantined = &q
		if r.Quarantine != nil {
			if qerr := r.Quarantine.Add(q); qerr != nil {
				return nil, errors.Join(err, qerr)
			}
			crash.File = r.Quarantine.Path
		}
	}
	return nil, err
}

// failed quarantines an item whose measurement returned an error and hands it on; an
// item that failed because the libraries are broken as installed is not quarantined.
func (r *Remote) failed(job Job, it Item, m protocol.Message, sink Sink) error {
	f := Failure{Index: m.Done, Item: it, Reason: m.Message, Sticky: m.Sticky, Install: m.Install}
	if r.Quarantine != nil && !m.Install {
		q := quarantineKey(r.device, r.workerBuild(), job, it)
		q.Reason, q.At = "failed ("+m.Message+")", time.Now().UTC()
		if err := r.Quarantine.Add(q); err != nil {
			return err
		}
		f.Quarantine = r.Quarantine.Path
	}
	if sink.Failed != nil {
		return sink.Failed(f)
	}
	if sink.Warning != nil {
		sink.Warning(f.String())
	}
	return nil
}

// skipQuarantined returns the job's items minus the quarantined ones, warning for each.
func (r *Remote) skipQuarantined(job Job, sink Sink) ([]Item, error) {
	if r.Quarantine == nil {
		return job.Items, nil
	}
	list, err := r.Quarantine.List()
	if err != nil || len(list) == 0 {
		return job.Items, err
	}
	var keep []Item
	for _, it := range job.Items {
		k := quarantineKey(r.device, r.workerBuild(), job, it)
		skipped := false
		for _, q := range list {
			if q.same(k) {
				skipped = true
				if sink.Warning != nil {
					sink.Warning(fmt.Sprintf("skipped %s: it %s on %s and is quarantined (delete it from %s to try again)", q, q.Reason, q.At.Format("2006-01-02 15:04"), r.Quarantine.Path))
				}
				break
			}
		}
		if !skipped {
			keep = append(keep, it)
		}
	}
	return keep, nil
}

// WorkerCrash is a worker that died or hung before it finished.
type WorkerCrash struct {
	Path        string
	Item        int  // the item in flight, -1 when none was
	Hung        bool // no line for the stall time: the worker was killed
	Detail      string
	Quarantined *Quarantined // the item quarantined for it, if any
	File        string       // the quarantine file
}

// Reason is what the item did to the worker.
func (e *WorkerCrash) Reason() string {
	if e.Hung {
		return "hung the worker"
	}
	return "crashed the worker"
}

func (e *WorkerCrash) Error() string {
	what := "stopped before it finished"
	if e.Hung {
		what = "stopped answering and was killed"
	}
	s := fmt.Sprintf("the CUDA worker %s %s%s", e.Path, what, e.Detail)
	if e.Quarantined != nil {
		s += fmt.Sprintf("; the item in flight, %s, is quarantined: later sweeps skip it", e.Quarantined)
		if e.File != "" {
			s += fmt.Sprintf(" (listed in %s)", e.File)
		}
	}
	return s
}

// talk runs the worker at path, sends it req and hands each message to handle until the
// worker says done. Whatever goes wrong, the worker is stopped and the error says why.
// A worker that dies, or sends no line for stall (0: DefaultStall), is a *WorkerCrash
// naming the item inFlight reports (nil: none).
func talk(ctx context.Context, path string, req protocol.Request, stall time.Duration, handle func(protocol.Message) error, inFlight func() int) error {
	if stall <= 0 {
		stall = DefaultStall
	}
	line, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode the worker request: %w", err)
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = bytes.NewReader(append(line, '\n'))
	cmd.Env = WorkerEnviron(os.Environ()) // cuda:N is nvidia-smi's GPU N
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	lifeline.Tie(cmd) // the worker dies with this process, and checks between items that it lives
	stderr := &tail{max: 4096}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("connect to the CUDA worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the CUDA worker %s: %w", path, err)
	}
	type read struct {
		m   protocol.Message
		err error
	}
	lines := make(chan read)
	stop := make(chan struct{})
	go func() {
		defer close(lines)
		rd := protocol.NewReader(stdout)
		for {
			m, err := rd.ReadMessage()
			var le *protocol.LineError
			select {
			case lines <- read{m, err}:
			case <-stop:
				return
			}
			if err != nil && !errors.As(err, &le) {
				return // EOF or a broken stream: nothing more can be read
			}
		}
	}()
	var (
		done      bool
		hung      bool
		workerErr string
		readErr   error
		stray     []string // lines that are not protocol messages
		handleErr error
	)
	timer := time.NewTimer(stall)
	defer timer.Stop()
loop:
	for {
		select {
		case <-timer.C:
			hung = true
			_ = cmd.Process.Kill()
			break loop
		case r, ok := <-lines:
			if !ok {
				break loop
			}
			timer.Reset(stall)
			var le *protocol.LineError
			switch {
			case errors.Is(r.err, io.EOF):
				break loop
			case errors.As(r.err, &le):
				if len(stray) < 5 {
					stray = append(stray, r.err.Error())
				}
				continue
			case r.err != nil:
				readErr = r.err
				_ = cmd.Process.Kill()
				break loop
			}
			switch r.m.Type {
			case protocol.Done:
				done = true
			case protocol.Error:
				workerErr = r.m.Message
			default:
				if handleErr = handle(r.m); handleErr != nil {
					_ = cmd.Process.Kill()
					break loop
				}
			}
		}
	}
	close(stop)
	waitErr := cmd.Wait()
	item := -1
	if inFlight != nil {
		item = inFlight()
	}
	switch {
	case handleErr != nil:
		return handleErr
	case ctx.Err() != nil:
		return ctx.Err()
	case hung:
		return &WorkerCrash{Path: path, Item: item, Hung: true, Detail: fmt.Sprintf(" (no line for %v)%s", stall, explain(stderr.String(), stray))}
	case readErr != nil:
		return fmt.Errorf("read the CUDA worker's output: %w%s", readErr, explain(stderr.String(), stray))
	case workerErr != "" && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == ExitNoGPU:
		return &noGPUError{workerErr}
	case workerErr != "":
		return fmt.Errorf("CUDA worker: %s", workerErr)
	case !done || waitErr != nil:
		return &WorkerCrash{Path: path, Item: item, Detail: fmt.Sprintf(" (%v)%s", waitErr, explain(stderr.String(), stray))}
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
