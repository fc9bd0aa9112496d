package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/app/firstrun"
	"cnntime/app/validate"
	"cnntime/db"
	"cnntime/gpu"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/libfind"
	"cnntime/gpu/timing"
	"cnntime/predictor"
	"cnntime/predictor/measure"
)

func sweepCommands(register func(Command)) {
	register(Command{
		Name:    "devices",
		Summary: "list the devices a sweep can measure: the CPU and the CUDA GPUs; --check runs the CUDA worker's self-test; --first-run DIR checks a new GPU machine end to end",
		Usage:   "devices [--check | --first-run DIR] [--device N] [--python PATH] [--json]",
		Details: "--check lists where the CUDA libraries were looked for and what the worker would load (also\n" +
			"without a GPU), runs the worker's self-test and lists the items earlier sweeps quarantined; it\n" +
			"exits 1 when the measurements cannot be trusted or there is no GPU.\n" +
			"--first-run DIR runs, within fifteen minutes on one GPU, the self-test, a short sweep of\n" +
			"resnet18 and mobilenet_v2 (fp32 and amp; bf16 on Ampere and later; amp in channels_last),\n" +
			"scripts/pytorch_sweep.py on the same layers and steps when PyTorch with CUDA is there, and\n" +
			"validate --table steps, into a cache and a quarantine in DIR; it writes DIR/first-run.json and\n" +
			"DIR/first-run.txt and exits 0 when every check passed, 1 when one did not or was skipped, 3\n" +
			"when there is no usable GPU (the report says why).\n" +
			"--python names the Python whose pip wheels (PyTorch's cuDNN, cuBLAS, NVRTC) are searched and\n" +
			"which runs pytorch_sweep.py (default $CNNTIME_PYTHON, else python3 on PATH).",
		Run: runDevices,
	})
	register(Command{
		Name:    "sweep",
		Summary: "measure layer kernels (and whole training steps) on this machine's CPU or GPU into the cache",
		Usage: "sweep --models a,b [--device cpu|cuda:N] [--batches 1-64,96,128] [--precision " + alternatives(kernelPrecisionChoices()) + "]\n" +
			"        [--memory-format " + alternatives(memoryFormatChoices()) + "] [--policy " + alternatives(policyChoices()) + "] [--cudnn-api " + alternatives(cudnnAPIChoices()) + "]\n" +
			"        [--l2 " + alternatives(l2Choices()) + "] [--repeats K] [--input N] [--step] [--json]",
		Run: runSweep,
	})
}

func runDevices(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["devices"])
	check := fs.Bool("check", false, "run the CUDA worker's self-test: every layer kind against the CPU reference, a short timed sweep, the versions found, where the CUDA libraries are")
	firstRun := fs.String("first-run", "", "check a new GPU machine end to end into the folder `DIR` (its own cache, quarantine and report)")
	device := wholeFlag(fs, "device", 0, "the GPU --check and --first-run test (cuda:N's N)")
	python := fs.String("python", "", "the Python interpreter whose pip wheels are searched for CUDA libraries and which runs pytorch_sweep.py (default $CNNTIME_PYTHON, else python3 on PATH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("devices takes no arguments, got %q", fs.Args())
	}
	if *device < 0 {
		return Usagef("--device is %d: give a GPU's index (0 for cuda:0, see cnntime devices)", *device)
	}
	if *check && *firstRun != "" {
		return Usagef("give --check or --first-run DIR, not both: the first run includes the check")
	}
	if *python != "" {
		// The worker (a child process) and pytorch_sweep.py's runner read it too.
		if err := os.Setenv(libfind.PythonEnv, *python); err != nil {
			return err
		}
	}
	if *firstRun != "" {
		return runFirstRun(env, *firstRun, *device)
	}
	if *check {
		return runDevicesCheck(env, *device)
	}
	list := app.ListSweepDevices(env.Ctx)
	if env.JSON {
		return WriteJSON(env.Stdout, list)
	}
	t := app.NewTable(env.Stdout, "ID", "NAME", "CORES/SMS", "MEMORY", "KEY")
	for _, d := range list.Devices {
		t.Row(d.ID, d.Device.Name, fmt.Sprint(d.Device.SMs), fmt.Sprintf("%.1f GiB", float64(d.Device.MemoryBytes)/(1<<30)), d.Device.Key)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	if list.CUDA != "" {
		fmt.Fprintf(env.Stdout, "\nno CUDA devices: %s\n", list.CUDA)
	}
	return nil
}

// runDevicesCheck runs the self-test; without a GPU (or a worker) it fails with the one
// sentence saying why, as does a report with mismatches (after printing it).
func runDevicesCheck(env *Env, device int) error {
	res := app.CheckGPU(env.Ctx, device)
	var err error
	if env.JSON {
		err = WriteJSON(env.Stdout, res)
	} else if res.Report != nil {
		err = res.Write(env.Stdout)
	} else { // the reason goes to stderr below; where the libraries are and what earlier sweeps quarantined is still news
		if err = app.WriteLibraries(env.Stdout, res.Libraries); err == nil {
			err = res.WriteQuarantined(env.Stdout)
		}
	}
	if err != nil {
		return err
	}
	if !res.Trusted {
		return errors.New(res.Reason)
	}
	return nil
}

// runFirstRun checks the GPU end to end into dir (package firstrun) and prints the
// report; no usable GPU exits 3, a check that did not pass 1.
func runFirstRun(env *Env, dir string, device int) error {
	o := firstrun.DefaultOptions(dir)
	o.Device, o.Log = device, env.Stderr
	rep, err := firstrun.Run(env.Ctx, o, firstrun.System(validateStepsOf))
	if rep != nil {
		var werr error
		if env.JSON {
			werr = WriteJSON(env.Stdout, rep)
		} else {
			werr = rep.Write(env.Stdout)
		}
		if werr != nil {
			return werr
		}
		if len(rep.Saved) > 0 { // what could not be written is not there to be read (the error says why)
			fmt.Fprintf(env.Stderr, "the report is in %s\n", strings.Join(rep.Saved, " and "))
		}
	}
	var noGPU *firstrun.NoGPUError
	switch {
	case errors.As(err, &noGPU):
		return &ExitError{Code: 3, Err: err}
	case err != nil:
		return err
	case rep.Verdict != firstrun.OK:
		return errors.New(rep.Reason)
	}
	return nil
}

// validateStepsOf is `cnntime validate --table steps` on cache d, for the first run.
func validateStepsOf(ctx context.Context, d *db.DB) (firstrun.Validation, error) {
	eng, err := app.NewEngine(ctx, nil) // the embedded calibration alone, as cnntime validate
	if err != nil {
		return firstrun.Validation{}, err
	}
	v, err := validate.Steps(ctx, d, eng.Kernels().Calibration())
	if err != nil {
		return firstrun.Validation{}, err
	}
	var table strings.Builder
	if err := validate.WriteStepsTable(&table, &v); err != nil {
		return firstrun.Validation{}, err
	}
	return firstrun.Validation{MAPEPct: v.MAPEPct, Steps: len(v.Rows), Skipped: v.Skipped, Table: table.String()}, nil
}

func runSweep(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["sweep"])
	req := app.DefaultSweepRequest()
	models := fs.String("models", "", "comma-separated models: zoo names or custom model files (.json)")
	fs.StringVar(models, "model", "", "the same as --models")
	fs.StringVar(&req.Device, "device", req.Device, "cpu, cuda:N for nvidia-smi's GPU N, or cuda:GPU-<uuid> (a MIG slice: cuda:MIG-<uuid>; see cnntime devices)")
	batches := fs.String("batches", "", "batch sizes, e.g. 1-64,96,128 (default: 1-16 and multiples of 8 with neighbours up to 64)")
	var precision, policy, api, format, l2 string
	choiceVar(fs, &precision, "precision", string(req.Precision), "the kernels' precision", kernelPrecisionChoices(), errorOf(measure.ParsePrecision))
	choiceVar(fs, &format, "memory-format", string(predictor.NCHW), "the activations' layout a GPU measures in (the CPU: nchw)", memoryFormatChoices(), normalised(errorOf(predictor.ParseMemoryFormat)))
	choiceVar(fs, &policy, "policy", string(req.Policy), "cuDNN's convolution algorithm choice (a GPU's)", policyChoices(), errorOf(measure.ParsePolicy))
	choiceVar(fs, &l2, "l2", timing.L2Cold, "how a GPU times a phase that fits in its L2", l2Choices(), timing.CheckL2Mode)
	choiceVar(fs, &api, "cudnn-api", convalgo.Auto, "the cuDNN API a GPU's convolutions choose their algorithm through", cudnnAPIChoices(), errorOf(convalgo.ParseAPI))
	wholeVar(fs, &req.Repeats, "repeats", req.Repeats, "timed runs per kernel after warm-up (the median is kept)")
	wholeVar(fs, &req.Input, "input", 0, "input resolution in pixels (default: each model's own)")
	fs.BoolVar(&req.Steps, "step", false, "also time whole training steps of each model at each batch size")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected arguments %q: every value follows its flag, e.g. --models resnet18,mobilenet_v2 --batches 1-64", fs.Args())
	}
	if *models == "" {
		return Usagef("--models is required, e.g. --models resnet18,mobilenet_v2")
	}
	for _, m := range strings.Split(*models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			req.Models = append(req.Models, m)
		}
	}
	if *batches != "" {
		b, err := gpu.ParseBatches(*batches)
		if err != nil {
			return Usagef("--batches: %v", err)
		}
		req.Batches = b
	}
	p, err := measure.ParsePrecision(precision)
	if err != nil {
		return Usagef("--precision: %v", err)
	}
	req.Precision = p
	f, err := predictor.ParseMemoryFormat(strings.ToLower(strings.TrimSpace(format)))
	if err != nil {
		return Usagef("--memory-format: %v", err)
	}
	if f == predictor.NHWC {
		req.Layout = gpu.NHWC
	}
	req.L2 = l2
	if req.Policy, err = measure.ParsePolicy(policy); err != nil {
		return Usagef("--policy: %v", err)
	}
	if req.CuDNNAPI, err = convalgo.ParseAPI(api); err != nil {
		return Usagef("--cudnn-api: %v", err)
	}
	cache, err := env.Cache()
	if err != nil {
		return err
	}
	sw, err := app.OpenSweeper(env.Ctx, req.Device)
	if err != nil {
		return err
	}
	plan, err := app.PlanSweep(env.Ctx, cache, sw.Device(), req)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "sweep of %s on %s: %d kernels of %d layer configurations (%d already in the cache%s), %d steps; estimate %s\n",
		strings.Join(req.Models, ", "), sw.Device().Name, len(plan.Kernels.Items), plan.Kernels.Configs, plan.Kernels.Cached, app.RetriedNote(plan), len(plan.Steps), roundDuration(plan.Kernels.Estimate))
	bar := sweepProgress{newProgressLine(env.Stderr, "sweep", 0, true)}
	res, err := app.RunSweep(env.Ctx, cache, sw, plan, bar.update)
	bar.finish()
	if res.SweepID == 0 && err != nil {
		return err // refused or failed before it was recorded: there is no sweep to report
	}
	if env.JSON {
		if jerr := WriteJSON(env.Stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		fmt.Fprintf(env.Stdout, "sweep %d %s: %d of %d measured in %s (%d out of memory), %d were already cached; %s\n",
			res.SweepID, res.State, res.Done, res.Total, roundDuration(res.Elapsed), res.OOM, res.Cached, sweptInto(cache, err))
		for _, f := range res.Failures {
			fmt.Fprintf(env.Stdout, "  failed: %s\n", f)
		}
	}
	if err != nil {
		return err
	}
	if res.State == db.SweepCancelled || res.State == db.SweepPaused {
		return errors.New("sweep interrupted; what was measured is in the cache, and the same command resumes it")
	}
	return nil
}

// sweptInto says where a sweep's measurements are: its cache, or, when the cache file
// was deleted, moved or replaced under it (err), where they went.
func sweptInto(cache *db.DB, err error) string {
	var changed *db.CacheChangedError
	switch {
	case !errors.As(err, &changed):
		return "cache " + cache.Path()
	case changed.Rescued != "":
		return fmt.Sprintf("the cache file was %s: they are saved in %s", changed.What, changed.Rescued)
	case strings.HasPrefix(changed.What, "moved to "):
		return fmt.Sprintf("the cache file was %s, with them", changed.What)
	}
	return fmt.Sprintf("the cache file was %s, and they could not be saved elsewhere", changed.What)
}

// sweepProgress shows a sweep's progress: a redrawn bar on a terminal, a line at each
// tenth in a pipe or a log file, and every warning as a line of its own.
type sweepProgress struct{ line *progressLine }

func (b sweepProgress) update(p app.SweepProgress) {
	if p.Message != "" {
		b.line.message("warning: " + p.Message)
		return
	}
	what := ""
	if m := p.Measurement; m != nil {
		what = fmt.Sprintf("%s b=%d %s", strings.SplitN(m.ConfigKey, ",", 2)[0], m.Batch, m.Phase)
	} else if s := p.Step; s != nil {
		what = fmt.Sprintf("step %s b=%d", s.Model, s.Batch)
	}
	b.line.update(p.Done, p.Total, p.ETA, what)
}

func (b sweepProgress) finish() { b.line.clear() }

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// l2Choices are --l2's values (package gpu/timing).
func l2Choices() []choice {
	return choicesOf(timing.L2Modes, map[string]string{
		timing.L2Cold:        "flush the L2 before each run of a phase that fits in it: nothing of the phase is cached",
		timing.L2ProducerHot: "flush it, then read the phase's input back in, as a step's previous layer leaves it",
	}, nil)
}

// cudnnAPIChoices are --cudnn-api's values (package gpu/convalgo).
func cudnnAPIChoices() []choice {
	return choicesOf(convalgo.APIs, map[string]string{
		convalgo.Auto:   "what PyTorch 2 uses with the GPU's cuDNN: the graph API (v8) on cuDNN 8 and 9, else the legacy calls",
		convalgo.Legacy: "cuDNN's legacy cudnnGet/Find*Algorithm calls, recorded by algorithm name",
		convalgo.V8:     "cuDNN's graph API, as PyTorch 2 chooses: the heuristics' engines, recorded by engine and knobs",
	}, nil)
}
