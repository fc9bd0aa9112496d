package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"cnntime/app"
	"cnntime/app/numfmt"
	"cnntime/predictor"
	"cnntime/predictor/hw"
)

// explainUsage is explain's synopsis.
var explainUsage = "explain --model M (--machine ID | --gpu ID) --batch B [--precision " + alternatives(trainingPrecisionChoices()) + "]\n" +
	"        [--policy " + alternatives(policyChoices()) + "] [--epochs 90] [--images N] [--region R] [--spot]\n" +
	"        [--dataset " + alternatives(datasetChoices()) + "] [--input N] [--classes K]\n" +
	"        [--loader " + alternatives(loaderChoices()) + "] [--workers N]\n" +
	"        [--memory-format " + alternatives(memoryFormatChoices()) + "] [--script " + alternatives(scriptChoices()) + "]\n" +
	"        [--framework " + alternatives(frameworkChoices()) + "] " + nodesUsage + " [--layers N] [--json|--csv]" + trainFlagsUsage

// explainDetails is explain's help after the summary.
var explainDetails = `explain takes apart the iteration time predict gives for one CNN on one machine at one
global batch size. The table shows:
  the header    the run, the iteration time ± its expected error, images/s, what bounds the
                step (the GPU or the input pipeline), the host the loader runs on (its CPU,
                how fast one core does the loader's work against the reference core, its
                vCPUs; "CPU assumed" where the catalog names none, and how far that can move
                the step), the least trusted source of its kernels (measured <
                interpolated < transferred < estimated), memory per GPU
  phases        the iteration split into forward, backward-data and backward-weight kernels,
                the optimizer (the update and the framework's other kernels per parameter
                tensor: zero_grad, gradient accumulation, batch norm's counters under
                --framework pytorch1), host (the GPU waiting for the host to issue kernels,
                plus its per-step work), script (the training script's own work per step),
                input (the batch's host-to-device copy, the DataLoader's hand-over of the
                batch, DALI's decoding on the GPU), loader (waiting for a loader slower than
                the GPU; 0 when the GPU bounds the step) and communication (the gradient
                all-reduce the backward pass does not hide, NCCL's interference and the
                wait for the slowest of the GPUs; 0 on one GPU); they add up to the iteration
  kinds         the layers' kernel time by kind of layer (conv2d, conv2d-depthwise,
                conv2d-grouped, batchnorm2d, relu, linear, ...) and its share
  stack         the software stack (--framework) at the kernel level: the layout the
                convolutions see, whether CUDA graphs replay the step, the launches and
                memory-bound time against eager PyTorch's, the kernels it fuses (by kind,
                with their layers' unfused time) and the same step under every stack
  layers        the slowest layers by forward + backward time, on one GPU at its share of the
                batch: shape (input→output per sample; k kernel, s stride, p padding,
                g groups), each phase's ms, source and expected error; a fused layer's
                time is its share of its fused kernel's
--layers N lists the N slowest layers (default 10); --layers 0 lists every layer in the
network's order. --json prints the whole explanation (every layer in order, "slowest": the ten
slowest); --csv prints one row per layer. Training to a target (--train to-target) the header
adds the epochs the batch needs to the recipe's accuracy, the recipe and whether the batch is
inside the evidence of its law or extrapolated, and why.

` + runDataNote + "\n\n" + trainNote

// explainFlags are explain's own flags beside the shared run flags.
type explainFlags struct {
	runFlags
	csv    bool
	layers int
}

func explainCommands(register func(Command)) {
	cmd := Command{
		Name:    "explain",
		Summary: "why this number? one CNN's iteration time on a machine at one batch, by layer and phase",
		Usage:   explainUsage,
		Details: explainDetails,
	}
	cmd.Run = func(env *Env, args []string) error {
		fs := env.Flags(cmd)
		var ef explainFlags
		ef.oneBatch = true
		ef.register(fs, true)
		fs.BoolVar(&ef.csv, "csv", false, "print one CSV row per layer instead of a table")
		wholeVar(fs, &ef.layers, "layers", 10, "how many of the slowest layers the table lists; 0 lists every layer in order")
		if err := checkFlagValues(fs, args); err != nil {
			return err
		}
		if err := fs.Parse(args); err != nil {
			return err
		}
		switch {
		case ef.csv && env.JSON:
			return Usagef("give --json or --csv, not both")
		case ef.layers < 0:
			return Usagef("--layers %d: give how many layers to list (0: all)", ef.layers)
		case len(splitList(ef.models)) > 1:
			return Usagef("--model %s: explain takes one model, e.g. --model %s", ef.models, splitList(ef.models)[0])
		case ef.machines != "" && ef.gpus != "":
			return Usagef("give --machine or --gpu, not both: explain takes one machine (e.g. --machine aws/p3.2xlarge or --gpu v100-sxm2-16gb)")
		case len(splitList(ef.machines)) > 1 || len(splitList(ef.gpus)) > 1:
			return Usagef("explain takes one machine: give one --machine ID or one --gpu ID")
		}
		eng, done, err := openEngine(env)
		if err != nil {
			return err
		}
		defer done()
		q, err := ef.query(env.Ctx, eng, fs)
		if err != nil {
			return err
		}
		x, err := eng.Explain(env.Ctx, q, q.Models[0], q.Targets[0], q.Batches[0])
		var fe *predictor.FitError
		if errors.As(err, &fe) {
			hint := "try --precision amp or a GPU with more memory"
			if fe.MaxBatch > 0 {
				hint = fmt.Sprintf("try --batch %d or less, or --precision amp", fe.MaxBatch)
			}
			return fmt.Errorf("%w; %s", err, hint)
		}
		if err != nil {
			return err
		}
		switch {
		case env.JSON && app.IsCPU(x.GPU):
			return WriteJSON(env.Stdout, cpuExplanation{Explanation: &x, Device: hw.CPUGPUID})
		case env.JSON:
			return WriteJSON(env.Stdout, x)
		case ef.csv:
			return app.WriteExplanationCSV(env.Stdout, &x)
		}
		if err := writeExplainTable(env.Stdout, &x, ef.layers); err != nil {
			return err
		}
		if x.Network != nil {
			fmt.Fprintln(env.Stdout)
			writeNodeNotes(env, []string{x.Machine}, []int{x.Nodes}, []*hw.Network{x.Network}, nil)
		}
		return nil
	}
	register(cmd)
}

// cpuExplanation is a measured CPU's explanation as --json writes it: "device": "cpu"
// instead of a GPU, a GPU count and a per-GPU batch (a CPU is not one GPU).
type cpuExplanation struct {
	*predictor.Explanation
	Device      string `json:"device"`
	GPU         string `json:"gpu,omitempty"`           // hides the GPU fields
	GPUCount    int    `json:"gpu_count,omitempty"`     // of the explanation,
	PerGPUBatch int    `json:"per_gpu_batch,omitempty"` // left empty
}

// gbText writes gigabytes with two significant digits however small: "0.038 GB",
// "1.2 GB", "37 GB".
func gbText(gb float64) string {
	return strconv.FormatFloat(gb, 'g', 2, 64) + " GB"
}

// writeExplainTable writes the header block, the phases, the kinds and the slowest
// layers (all of them, in order, when layers is 0).
func writeExplainTable(w io.Writer, x *predictor.Explanation, layers int) error {
	per := ""
	if x.GPUCount > 1 {
		per = fmt.Sprintf(" (%d per GPU)", x.PerGPUBatch)
	}
	format := ""
	if x.Format != "" {
		format = ", " + string(x.Format)
	}
	h := app.NewTable(w, "model", fmt.Sprintf("%s, input %d, %s%s", x.Model, x.Input, x.Precision, format))
	h.Row("machine", fmt.Sprintf("%s (%s)", x.Machine, app.DeviceText(x.GPU, x.GPUCount)))
	h.Row("stack", fmt.Sprintf("%s: %s", x.Stack.Framework, x.Stack.Description))
	h.Row("software", fmt.Sprintf("%s: %s", x.Software.Name, x.Software.Note))
	h.Row("batch", countText(x.Batch)+per)
	h.Row("iteration", fmt.Sprintf("%s ±%.0f%%, %s images/s", numfmt.MS(x.IterMS), x.ErrorPct, numfmt.Rate(x.ImagesPerS)))
	bound := x.Bound
	switch {
	case x.LoaderImagesPerS > 0 && x.Bound == "input":
		bound = fmt.Sprintf("input: the %s loader (%d workers per GPU) delivers %s images/s", x.Loader, x.Workers, numfmt.Rate(x.LoaderImagesPerS))
	case x.LoaderImagesPerS > 0:
		bound = fmt.Sprintf("gpu (the %s loader, %d workers per GPU, could deliver %s images/s)", x.Loader, x.Workers, numfmt.Rate(x.LoaderImagesPerS))
	default:
		bound += fmt.Sprintf(" (%s data)", x.Loader)
	}
	h.Row("bound", bound)
	if x.Host != nil && x.LoaderImagesPerS > 0 {
		hostText := x.Host.Sentence()
		if x.HostErrorPct >= 0.5 {
			hostText += fmt.Sprintf("; that moves this step ±%.0f%%, in the ±%.0f%% above", x.HostErrorPct, x.ErrorPct)
		}
		h.Row("host", hostText)
	}
	h.Row("source", fmt.Sprintf("%s (the least trusted of the step's kernels)", x.Source))
	for i, m := range x.Measured {
		label := ""
		if i == 0 {
			label = "measured"
		}
		h.Row(label, app.MeasuredStepText(m))
	}
	if x.AnchoredMS > 0 {
		h.Row("anchored", app.AnchoredText(x))
	}
	largest := "unknown"
	if x.MaxBatch >= 0 {
		largest = countText(x.MaxBatch)
	}
	if app.IsCPU(x.GPU) {
		h.Row("memory", fmt.Sprintf("%s of the host's memory at this batch; the largest batch that fits: %s", gbText(x.MemoryGB), largest))
	} else {
		h.Row("memory", fmt.Sprintf("%.1f GB per GPU; the largest batch that fits: %s", x.MemoryGB, largest))
	}
	cost := ""
	if x.CostKnown {
		cost = ", " + numfmt.USD(x.CostUSD)
	}
	if at, m := x.EpochsAt, x.Recipe; at != nil && m != nil {
		h.Row("run", fmt.Sprintf("epoch %s, to %s %s ±%.0f%%%s", duration(x.EpochS), m.TargetName(), duration(x.TotalS), math.Hypot(x.ErrorPct, at.ErrorPct), cost))
		h.Row("epochs", fmt.Sprintf("%.1f ±%.0f%% (%s), regime %s", at.Epochs, at.ErrorPct, x.EpochsSource, at.Regime))
		h.Row("recipe", app.RecipeText(m))
		h.Row("law", app.LawText(m, x.Batch))
	} else {
		h.Row("run", fmt.Sprintf("epoch %s, all epochs %s%s", duration(x.EpochS), duration(x.TotalS), cost))
	}
	if err := h.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	t := app.NewTable(w, "PHASE", "MS", "SHARE")
	for _, p := range x.Phases.List() {
		t.Row(p.Phase, msText(p.MS), app.ShareText(p.MS, x.Phases.Total()))
	}
	t.Row("iteration", msText(x.IterMS), app.ShareText(x.IterMS, x.Phases.Total()))
	if err := t.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	t = app.NewTable(w, "KIND", "LAYERS", "MS", "SHARE OF LAYER KERNELS")
	for _, k := range x.Kinds {
		t.Row(k.Kind, strconv.Itoa(k.Layers), msText(k.MS), app.ShareText(k.SharePct, 100))
	}
	if err := t.Flush(); err != nil {
		return err
	}

	if err := writeStackTable(w, &x.Stack); err != nil {
		return err
	}

	fmt.Fprintln(w)
	rows := x.Layers
	if layers > 0 {
		rows = x.SlowestLayers(layers)
		fmt.Fprintf(w, "the %d slowest of %d layers (--layers 0 lists them all):\n", len(rows), len(x.Layers))
	} else {
		fmt.Fprintf(w, "all %d layers, in order:\n", len(x.Layers))
	}
	t = app.NewTable(w, "#", "LAYER", "KIND", "SHAPE", "FWD MS", "BWD-DATA MS", "BWD-WEIGHT MS", "TOTAL MS", "SOURCE")
	for _, l := range rows {
		src := "-"
		if l.Source != "" {
			src = fmt.Sprintf("%s ±%.0f%%", l.Source, l.ErrorPct)
		}
		t.Row(strconv.Itoa(l.Index), l.Name, l.Kind, l.Shape, fmt.Sprintf("%.3f", l.ForwardMS), fmt.Sprintf("%.3f", l.BackwardDataMS),
			fmt.Sprintf("%.3f", l.BackwardWeightMS), fmt.Sprintf("%.3f", l.MS()), src)
	}
	return t.Flush()
}

// writeStackTable writes what the step's stack does at the kernel level: its layout,
// launches and memory-bound time against eager PyTorch's, the kernels it fuses by kind,
// and the same step under every stack.
func writeStackTable(w io.Writer, s *predictor.StackReport) error {
	fmt.Fprintln(w)
	graphs := "no: the host issues each kernel"
	if s.CUDAGraphs {
		graphs = "yes: the step's kernels are replayed, not issued one by one"
	}
	h := app.NewTable(w, "stack "+string(s.Framework), "")
	h.Row("layout", s.Layout)
	h.Row("CUDA graphs", graphs)
	h.Row("kernels", fmt.Sprintf("%d launches per step (eager pytorch2: %d); the host issues them in %.2f ms", s.Kernels, s.EagerKernels, s.HostIssueMS))
	h.Row("memory-bound", fmt.Sprintf("%.2f ms of normalisation, activation, add and pooling kernels (eager: %.2f ms)", s.MemoryMS, s.EagerMemoryMS))
	if err := h.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if len(s.FusedKinds) == 0 {
		fmt.Fprintln(w, "fused kernels: none (every layer runs its own kernels)")
	} else {
		t := app.NewTable(w, "FUSED KERNEL", "COUNT", "MS", "UNFUSED MS")
		for _, k := range s.FusedKinds {
			t.Row(k.Kind, strconv.Itoa(k.Count), fmt.Sprintf("%.2f", k.MS), fmt.Sprintf("%.2f", k.UnfusedMS))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	t := app.NewTable(w, "STACK", "ITERATION MS", "IMAGES/S", "KERNELS", "FUSED")
	for _, c := range s.Costs {
		name := string(c.Framework)
		if c.Framework == s.Framework {
			name += " (this)"
		}
		t.Row(name, fmt.Sprintf("%.2f", c.IterMS), fmt.Sprintf("%.0f", c.ImagesPerS), strconv.Itoa(c.Kernels), strconv.Itoa(c.Fused))
	}
	return t.Flush()
}
