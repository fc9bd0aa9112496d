package firstrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/app/outfile"
	"cnntime/db"
	"cnntime/gpu"
	"cnntime/gpu/libfind"
	"cnntime/gpu/selftest"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
)

// Budget is the time a whole run may take on one GPU, and the share of it each check
// gets at most (a check that runs out of its share is failed and the next goes on). The
// sweep's share fits an H200's: the first run's three sweeps took 129 of their 180 s there,
// amp's convolutions compiling 1.8-3.3 s each, and it now sweeps bf16 and channels_last
// too, through the graph API.
const (
	Budget         = 15 * time.Minute
	selfTestBudget = 4 * time.Minute
	sweepBudget    = 6 * time.Minute
	pyTorchBudget  = 4 * time.Minute
)

// The run's two small CNNs and batch sizes: torchvision models PyTorch has too, with a
// plain and a depthwise-separable design; a small and a mid-sized batch.
var (
	DefaultModels  = []string{"resnet18", "mobilenet_v2"}
	DefaultBatches = []int{16, 64}
)

// Options say what to run, and where.
type Options struct {
	Dir     string // the folder of the run's cache, quarantine and report (created)
	Device  int    // the CUDA device index
	Models  []string
	Batches []int
	Input   int // the models' input size in pixels; 0: each model's own
	Repeats int
	Budget  time.Duration
	Log     io.Writer // a line per check as it starts and ends; nil for none
}

// DefaultOptions are the run's defaults into dir on device 0.
func DefaultOptions(dir string) Options {
	return Options{Dir: dir, Models: DefaultModels, Batches: DefaultBatches, Repeats: 5, Budget: Budget}
}

// PyTorchJob is what scripts/pytorch_sweep.py is asked to measure: the layers of the
// models (--layers) and their whole steps, at the batch sizes and training precisions.
type PyTorchJob struct {
	Device     int
	Models     []string
	Batches    []int
	Input      int                 // the input size; 0: each model's own
	Precisions []measure.Precision // training precisions
	LayersCSV  string              // where the layer rows go
	StepsCSV   string              // where the step rows go
	Log        string              // where the script's own output goes
}

// ErrNoPyTorch is wrapped by Machine.PyTorch's error when there is no PyTorch with
// torchvision that sees a CUDA GPU: the check is skipped, not failed.
var ErrNoPyTorch = errors.New("no PyTorch with CUDA")

// NoGPUError is the run's error when the machine has no usable GPU (the command exits 3);
// the report is written all the same.
type NoGPUError struct{ Reason string }

func (e *NoGPUError) Error() string { return e.Reason }
func (e *NoGPUError) Unwrap() error { return gpu.ErrNoGPU }

// Machine is what a run asks of the machine; System is this one.
type Machine struct {
	Libraries  func() []libfind.Candidate
	NVIDIA     func() (present, known bool)
	FindWorker func() (string, error)
	SelfTest   func(ctx context.Context, worker string, device int) (selftest.Report, error)
	// Sweeper opens the GPU through the worker, quarantining into the file quarantine.
	Sweeper func(ctx context.Context, worker string, device int, quarantine string) (gpu.Sweeper, error)
	// PyTorch runs scripts/pytorch_sweep.py and returns the PyTorch it ran.
	PyTorch func(ctx context.Context, job PyTorchJob) (string, error)
	// Validate is `cnntime validate --table steps` on a cache (the command line's
	// accuracy tables: app/cli gives it); nil skips the check.
	Validate func(ctx context.Context, d *db.DB) (Validation, error)
}

// Validation is what `cnntime validate --table steps` found in the run's cache.
type Validation struct {
	MAPEPct float64  `json:"mape_pct"`
	Steps   int      `json:"steps"`   // steps predicted
	Skipped []string `json:"skipped"` // steps not predicted, and why
	Table   string   `json:"table"`   // the table as the command prints it
}

// System is this machine; validate is `cnntime validate --table steps`.
func System(validate func(ctx context.Context, d *db.DB) (Validation, error)) Machine {
	return Machine{
		Libraries:  app.SearchLibraries,
		NVIDIA:     app.NVIDIAPresence,
		FindWorker: gpu.FindWorker,
		SelfTest:   gpu.SelfTest,
		Sweeper: func(ctx context.Context, worker string, device int, quarantine string) (gpu.Sweeper, error) {
			r, err := gpu.OpenRemote(ctx, worker, device)
			if err != nil {
				return nil, err
			}
			r.Quarantine = &gpu.Quarantine{Path: quarantine}
			return r, nil
		},
		PyTorch:  runPyTorch,
		Validate: validate,
	}
}

// The names of the files a run writes in its folder: each is checked before the run
// starts, and none is ever written through a link or into a named pipe planted there.
const (
	cacheFile      = "cache.db"
	quarantineFile = "quarantine.json"
	pyTorchLayers  = "pytorch-layers.csv"
	pyTorchSteps   = "pytorch-steps.csv"
	pyTorchLog     = "pytorch.log"
)

var fixedNames = []string{JSONFile, TextFile, cacheFile, cacheFile + "-wal", cacheFile + "-shm", cacheFile + "-journal",
	quarantineFile, pyTorchLayers, pyTorchSteps, pyTorchLog}

// run is one first run in progress.
type run struct {
	o     Options
	m     Machine
	rep   *Report
	cache *db.DB
	dev   measure.Device
}

// Run checks the GPU end to end (see the package comment) and writes the report into
// o.Dir, whatever happens; it returns a *NoGPUError when there is no usable GPU, and an
// error when the run itself could not be made (the folder, the cache).
func Run(ctx context.Context, o Options, m Machine) (*Report, error) {
	if o.Budget <= 0 {
		o.Budget = Budget
	}
	if len(o.Models) == 0 {
		o.Models = DefaultModels
	}
	if len(o.Batches) == 0 {
		o.Batches = DefaultBatches
	}
	if o.Repeats < 1 {
		o.Repeats = 5
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("first run folder %q: %w", o.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the first run's folder: %w", err)
	}
	for _, name := range fixedNames {
		if err := outfile.CheckFixed(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("first run folder %s: %w", dir, err)
		}
	}
	r := &run{o: o, m: m, rep: &Report{Version: ReportVersion, Started: time.Now().UTC(), Dir: dir, DeviceIdx: o.Device,
		Libraries: []libfind.Candidate{}, Checks: []Check{}}}
	ctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	runErr := r.all(ctx)
	if r.cache != nil {
		if err := r.cache.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	r.rep.Seconds = time.Since(r.rep.Started).Seconds()
	r.conclude(runErr)
	if err := r.rep.Save(); err != nil {
		return r.rep, errors.Join(runErr, err)
	}
	return r.rep, runErr
}

// all runs the checks in order.
func (r *run) all(ctx context.Context) error {
	r.libraries()
	worker, err := r.m.FindWorker()
	if err != nil {
		reason := "no CUDA worker: " + err.Error()
		if present, known := r.m.NVIDIA(); known && !present {
			r.rep.NoNVIDIA = true
			reason = "this computer has no NVIDIA GPU (its PCI bus lists none); and " + err.Error()
		}
		return &NoGPUError{Reason: reason}
	}
	r.rep.Worker = worker
	if err := r.selfTest(ctx, worker); err != nil {
		return err
	}
	cache, err := db.Open(filepath.Join(r.rep.Dir, cacheFile))
	if err != nil {
		return err
	}
	r.cache, r.rep.Cache = cache, cache.Path()
	if err := r.sweep(ctx, worker); err != nil {
		return err
	}
	pytorch := r.pytorch(ctx)
	if pytorch {
		if err := r.compare(ctx); err != nil {
			return err
		}
	}
	return r.validate(ctx)
}

// step runs one check and records its verdict and time.
func (r *run) step(name string, fn func(c *Check)) {
	c := Check{Name: name}
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, "first run: %s…\n", name)
	}
	start := time.Now()
	fn(&c)
	c.Seconds = time.Since(start).Seconds()
	if r.o.Log != nil {
		fmt.Fprintf(r.o.Log, "first run: %s: %s %s\n", name, c.Verdict, c.Why)
	}
	r.rep.Checks = append(r.rep.Checks, c)
}

// libraries records where each CUDA library is and whether the worker can load them.
func (r *run) libraries() {
	r.step("libraries", func(c *Check) {
		r.rep.Libraries = r.m.Libraries()
		var missing, found []string
		for _, l := range libfind.Libraries {
			var group []libfind.Candidate
			for _, cand := range r.rep.Libraries {
				if cand.Library == l.What {
					group = append(group, cand)
				}
			}
			if chosen, ok := libfind.Chosen(group); ok {
				found = append(found, l.What+" "+chosen.Path)
			} else {
				missing = append(missing, l.What)
			}
		}
		c.Verdict, c.Why = OK, "would load "+strings.Join(found, ", ")
		if len(missing) > 0 {
			c.Verdict = Problem
			c.Why = fmt.Sprintf("%s found nowhere (the report lists every place looked in); %s", strings.Join(missing, ", "), c.Why)
		}
	})
}

// selfTest runs the worker's self-test; no usable GPU ends the run.
func (r *run) selfTest(ctx context.Context, worker string) error {
	var noGPU error
	r.step("selftest", func(c *Check) {
		sctx, cancel := context.WithTimeout(ctx, selfTestBudget)
		defer cancel()
		rep, err := r.m.SelfTest(sctx, worker, r.o.Device)
		switch {
		case errors.Is(err, gpu.ErrNoGPU):
			noGPU = &NoGPUError{Reason: err.Error()}
			c.Verdict, c.Why = Skipped, err.Error()
			return
		case err != nil:
			c.Verdict, c.Why = Failed, err.Error()
			return
		}
		r.rep.SelfTest, r.rep.Versions = &rep, &rep.Versions
		r.dev = rep.Device
		r.rep.GPU = &r.dev
		c.Verdict, c.Why = OK, fmt.Sprintf("%d checks: %d ok, %d ran, %d unsupported; the measurements can be trusted", len(rep.Rows), rep.Count(selftest.Pass), rep.Count(selftest.Ran), rep.Count(selftest.Unsupported))
		if p := rep.Problems(); len(p) > 0 {
			c.Verdict, c.Why = Problem, "do not trust this GPU's measurements yet: "+strings.Join(p, "; ")
		}
	})
	return noGPU
}

// sweepRun is one of the short sweep's passes: a precision in a layout.
type sweepRun struct {
	prec   measure.Precision
	layout string // gpu.NCHW ("") or gpu.NHWC
}

// sweepRuns are the passes the short sweep makes on dev, what PyTorch users train in:
// fp32 (TF32 convolutions from compute capability 8.0, as PyTorch's fp32) and amp, bf16
// from 8.0 (Ampere's bfloat16 tensor cores), and amp in channels_last.
func sweepRuns(dev measure.Device) []sweepRun {
	out := []sweepRun{{prec: measure.FP32}, {prec: measure.AMP}}
	if hw.ParseComputeCapability(dev.ComputeCapability) >= 80 {
		out = append(out, sweepRun{prec: measure.BF16})
	}
	return append(out, sweepRun{prec: measure.AMP, layout: gpu.NHWC})
}

// sweep measures the models' layers with the worker into the run's cache.
func (r *run) sweep(ctx context.Context, worker string) error {
	var noGPU error
	r.step("sweep", func(c *Check) {
		sctx, cancel := context.WithTimeout(ctx, sweepBudget)
		defer cancel()
		sw, err := r.m.Sweeper(sctx, worker, r.o.Device, filepath.Join(r.rep.Dir, quarantineFile))
		if errors.Is(err, gpu.ErrNoGPU) {
			noGPU = &NoGPUError{Reason: err.Error()}
			c.Verdict, c.Why = Skipped, err.Error()
			return
		}
		if err != nil {
			c.Verdict, c.Why = Failed, err.Error()
			return
		}
		r.dev = sw.Device()
		r.rep.GPU = &r.dev
		s := &SweepSummary{Models: r.o.Models, Batches: r.o.Batches, Notes: map[string]int{}}
		runs := sweepRuns(r.dev)
		for _, run := range runs {
			if run.layout == gpu.NHWC {
				s.ChannelsLast = append(s.ChannelsLast, run.prec)
			} else {
				s.Precisions = append(s.Precisions, run.prec)
			}
		}
		r.rep.Sweep = s
		for _, run := range runs {
			prec := run.prec
			req := app.DefaultSweepRequest()
			req.Device = fmt.Sprintf("cuda:%d", r.o.Device)
			req.Models, req.Batches, req.Precision, req.Repeats, req.Input = r.o.Models, r.o.Batches, prec, r.o.Repeats, r.o.Input
			req.Layout = run.layout
			plan, err := app.PlanSweep(sctx, r.cache, r.dev, req)
			if err != nil {
				c.Verdict, c.Why = Failed, fmt.Sprintf("plan the %s sweep: %v", prec, err)
				return
			}
			res, err := app.RunSweep(sctx, r.cache, sw, plan, func(p app.SweepProgress) {
				if p.Message != "" && p.Measurement == nil && len(s.Warnings) < 20 {
					s.Warnings = append(s.Warnings, p.Message)
				}
			})
			s.Failures = append(s.Failures, res.Failures...)
			if err != nil || res.State != db.SweepDone {
				why := res.State
				if err != nil {
					why = err.Error()
				}
				if sctx.Err() != nil {
					why = fmt.Sprintf("it ran out of its %v", sweepBudget)
				}
				c.Verdict, c.Why = Failed, fmt.Sprintf("the %s sweep stopped: %s", prec, why)
				break
			}
		}
		ms, err := r.cache.Measurements(ctx, r.dev.Key, nil)
		if err != nil {
			c.Verdict, c.Why = Failed, err.Error()
			return
		}
		nhwc, err := r.cache.Measurements(ctx, gpu.LayoutKey(r.dev.Key, gpu.NHWC), nil)
		if err != nil {
			c.Verdict, c.Why = Failed, err.Error()
			return
		}
		ms = append(ms, nhwc...)
		for _, m := range ms {
			switch m.Status {
			case measure.OK:
				s.Measured++
			case measure.OutOfMemory:
				s.OutOfMemory++
			case measure.Unsupported:
				s.Unsupported++
			}
			for _, n := range strings.Split(m.Notes, ",") {
				if n != "" && !strings.HasPrefix(n, "sm-mhz=") { // a clock per row: not a count
					s.Notes[n]++
				}
			}
		}
		s.Failed = len(s.Failures)
		if c.Verdict == Failed {
			return
		}
		c.Verdict, c.Why = OK, fmt.Sprintf("%d kernels measured, %d out of memory, %d unsupported", s.Measured, s.OutOfMemory, s.Unsupported)
		if s.Failed > 0 {
			c.Verdict, c.Why = Problem, fmt.Sprintf("%d items failed (first: %s); %s", s.Failed, s.Failures[0], c.Why)
		}
	})
	return noGPU
}

// trainingPrecisions are what PyTorch trains in: fp32 (TF32 convolutions on Ampere and
// later) and amp.
var trainingPrecisions = []measure.Precision{measure.FP32, measure.AMP}

// pytorch runs pytorch_sweep.py on the same layers and steps and imports its rows into
// the run's cache; false when it did not run.
func (r *run) pytorch(ctx context.Context) bool {
	ran := false
	r.step("pytorch", func(c *Check) {
		pctx, cancel := context.WithTimeout(ctx, pyTorchBudget)
		defer cancel()
		// The script writes its CSVs where it is told, following links: into a folder of
		// this run's own, from which they move to their names in the run's folder.
		private, err := os.MkdirTemp(r.rep.Dir, ".pytorch-")
		if err != nil {
			c.Verdict, c.Why = Failed, fmt.Sprintf("make a folder for pytorch_sweep.py's output: %v", err)
			return
		}
		defer os.RemoveAll(private)
		job := PyTorchJob{Device: r.o.Device, Models: r.o.Models, Batches: r.o.Batches, Input: r.o.Input, Precisions: trainingPrecisions,
			LayersCSV: filepath.Join(private, pyTorchLayers), StepsCSV: filepath.Join(private, pyTorchSteps),
			Log: filepath.Join(r.rep.Dir, pyTorchLog)}
		version, err := r.m.PyTorch(pctx, job)
		r.rep.PyTorch = version
		switch {
		case errors.Is(err, ErrNoPyTorch):
			c.Verdict, c.Why = Skipped, err.Error()
			return
		case err != nil && pctx.Err() != nil:
			c.Verdict, c.Why = Failed, fmt.Sprintf("pytorch_sweep.py ran out of its %v (%v); %s has its output", pyTorchBudget, err, job.Log)
		case err != nil:
			c.Verdict, c.Why = Failed, fmt.Sprintf("%v; %s has its output", err, job.Log)
		}
		var imported []string
		for _, f := range []string{job.LayersCSV, job.StepsCSV} { // what it wrote before it stopped counts too
			if _, statErr := os.Stat(f); statErr != nil {
				continue
			}
			kept := filepath.Join(r.rep.Dir, filepath.Base(f))
			if err := os.Rename(f, kept); err != nil { // a rename replaces a link planted there, never its target
				c.Verdict, c.Why = Failed, fmt.Sprintf("keep %s: %v", kept, err)
				return
			}
			if _, err := r.cache.Import(ctx, kept); err != nil {
				c.Verdict, c.Why = Failed, fmt.Sprintf("import %s: %v", kept, err)
				return
			}
			imported = append(imported, filepath.Base(f))
		}
		ran = len(imported) > 0
		if c.Verdict == "" {
			c.Verdict, c.Why = OK, fmt.Sprintf("%s timed the same layers and steps (%s)", version, strings.Join(imported, ", "))
		}
	})
	return ran
}

// validate runs `cnntime validate --table steps` on the run's cache.
func (r *run) validate(ctx context.Context) error {
	r.step("validate", func(c *Check) {
		if r.m.Validate == nil {
			c.Verdict, c.Why = Skipped, "no validate here"
			return
		}
		v, err := r.m.Validate(ctx, r.cache)
		if err != nil {
			c.Verdict, c.Why = Failed, err.Error()
			return
		}
		r.rep.Validate = &v
		if v.Steps == 0 {
			c.Verdict, c.Why = Skipped, fmt.Sprintf("no whole step in the run's cache could be predicted (%d skipped): PyTorch's steps come from the pytorch check", len(v.Skipped))
			return
		}
		c.Verdict, c.Why = OK, fmt.Sprintf("MAPE %.1f%% over %d steps", v.MAPEPct, v.Steps)
	})
	return nil
}

// conclude sets the run's verdict and its one sentence.
func (r *run) conclude(err error) {
	rep := r.rep
	var noGPU *NoGPUError
	switch {
	case errors.As(err, &noGPU):
		rep.Verdict, rep.Reason = NoGPU, "no usable GPU, so nothing was measured: "+noGPU.Reason
		return
	case err != nil:
		rep.Verdict, rep.Reason = Failed, "the run stopped: "+err.Error()
		return
	}
	var failed, problems, skipped []string
	for _, c := range rep.Checks {
		switch c.Verdict {
		case Failed:
			failed = append(failed, c.Name+": "+c.Why)
		case Problem:
			problems = append(problems, c.Name+": "+c.Why)
		case Skipped:
			skipped = append(skipped, c.Name+": "+c.Why)
		}
	}
	switch {
	case len(failed) > 0:
		rep.Verdict, rep.Reason = Failed, "a check could not run to the end: "+strings.Join(failed, "; ")
	case len(problems) > 0:
		rep.Verdict, rep.Reason = Problem, "a check found something to fix: "+strings.Join(problems, "; ")
	case len(skipped) > 0: // a check that did not run passed nothing
		rep.Verdict, rep.Reason = Problem, "a check was skipped, so the run did not check everything (nothing was compared with PyTorch without it): "+strings.Join(skipped, "; ")
	default:
		rep.Verdict, rep.Reason = OK, "every check passed: this GPU's measurements can be trusted"
	}
}
