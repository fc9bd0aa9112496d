package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"cnntime/app"
	"cnntime/db"
	"cnntime/gpu"
	"cnntime/predictor/measure"
)

func sweepCommands(register func(Command)) {
	register(Command{
		Name:    "devices",
		Summary: "list the devices a sweep can measure: the CPU and the CUDA GPUs; --check runs the CUDA worker's self-test",
		Usage:   "devices [--check [--device N]] [--json]",
		Run:     runDevices,
	})
	register(Command{
		Name:    "sweep",
		Summary: "measure layer kernels (and whole training steps) on this machine's CPU or GPU into the cache",
		Usage: "sweep --models a,b [--device cpu|cuda:N] [--batches 1-64,96,128] [--precision " + alternatives(kernelPrecisionChoices()) + "]\n" +
			"        [--policy " + alternatives(policyChoices()) + "] [--repeats K] [--input N] [--step] [--json]",
		Run: runSweep,
	})
}

func runDevices(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["devices"])
	check := fs.Bool("check", false, "run the CUDA worker's self-test: every layer kind against the CPU reference, a short timed sweep, the versions found")
	device := fs.Int("device", 0, "the GPU --check tests (cuda:N's N)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("devices takes no arguments, got %q", fs.Args())
	}
	if *device < 0 {
		return Usagef("--device is %d: give a GPU's index (0 for cuda:0, see cnntime devices)", *device)
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
	} else { // the reason goes to stderr below; what earlier sweeps quarantined is still news
		err = res.WriteQuarantined(env.Stdout)
	}
	if err != nil {
		return err
	}
	if !res.Trusted {
		return errors.New(res.Reason)
	}
	return nil
}

func runSweep(env *Env, args []string) error {
	fs := env.Flags(commandIndex()["sweep"])
	req := app.DefaultSweepRequest()
	models := fs.String("models", "", "comma-separated models: zoo names or custom model files (.json)")
	fs.StringVar(models, "model", "", "the same as --models")
	fs.StringVar(&req.Device, "device", req.Device, "cpu, or cuda:N for GPU N (see cnntime devices)")
	batches := fs.String("batches", "", "batch sizes, e.g. 1-64,96,128 (default: 1-16 and multiples of 8 with neighbours up to 64)")
	var precision, policy string
	choiceVar(fs, &precision, "precision", string(req.Precision), "the kernels' precision", kernelPrecisionChoices(), errorOf(measure.ParsePrecision))
	choiceVar(fs, &policy, "policy", string(req.Policy), "cuDNN's convolution algorithm choice (a GPU's)", policyChoices(), errorOf(measure.ParsePolicy))
	fs.IntVar(&req.Repeats, "repeats", req.Repeats, "timed runs per kernel after warm-up (the median is kept)")
	fs.IntVar(&req.Input, "input", 0, "input resolution in pixels (default: each model's own)")
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
	if req.Policy, err = measure.ParsePolicy(policy); err != nil {
		return Usagef("--policy: %v", err)
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
	fmt.Fprintf(env.Stderr, "sweep of %s on %s: %d kernels of %d layer configurations (%d already in the cache), %d steps; estimate %s\n",
		strings.Join(req.Models, ", "), sw.Device().Name, len(plan.Kernels.Items), plan.Kernels.Configs, plan.Kernels.Cached, len(plan.Steps), roundDuration(plan.Kernels.Estimate))
	bar := &progressBar{w: env.Stderr}
	res, err := app.RunSweep(env.Ctx, cache, sw, plan, bar.update)
	bar.finish()
	if env.JSON {
		if jerr := WriteJSON(env.Stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		fmt.Fprintf(env.Stdout, "sweep %d %s: %d of %d measured in %s (%d out of memory), %d were already cached; cache %s\n",
			res.SweepID, res.State, res.Done, res.Total, roundDuration(res.Elapsed), res.OOM, res.Cached, cache.Path())
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

// progressBar draws one line on the terminal: a bar, the count, the ETA and what ran last.
type progressBar struct {
	w     io.Writer
	last  time.Time
	drawn bool
}

func (b *progressBar) update(p app.SweepProgress) {
	if p.Message != "" {
		b.clear()
		fmt.Fprintf(b.w, "warning: %s\n", p.Message)
		return
	}
	if time.Since(b.last) < 200*time.Millisecond && p.Done < p.Total {
		return
	}
	b.last = time.Now()
	const width = 30
	filled := width
	if p.Total > 0 {
		filled = width * p.Done / p.Total
	}
	what := ""
	if m := p.Measurement; m != nil {
		what = fmt.Sprintf("%s b=%d %s", strings.SplitN(m.ConfigKey, ",", 2)[0], m.Batch, m.Phase)
	} else if s := p.Step; s != nil {
		what = fmt.Sprintf("step %s b=%d", s.Model, s.Batch)
	}
	eta := "ETA -"
	if p.ETA > 0 {
		eta = "ETA " + roundDuration(p.ETA).String()
	}
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d %s  %-48.48s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.Done, p.Total, eta, what)
	b.drawn = true
}

func (b *progressBar) clear() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
}

func (b *progressBar) finish() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
