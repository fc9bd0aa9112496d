package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"cnntime/app/charts"
	"cnntime/app/launch"
	"cnntime/app/numfmt"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/measure"
	"cnntime/predictor/pipeline"
	"cnntime/predictor/recipe"
)

// The launch files cnntime writes for a chosen run.
const (
	LaunchSkyPilot = "skypilot" // a SkyPilot task (YAML)
	LaunchSlurm    = "slurm"    // a Slurm batch script
)

// LaunchKinds lists the launch files, in the order help and the window show them.
var LaunchKinds = []string{LaunchSkyPilot, LaunchSlurm}

// LaunchRequest is a launch file to write for a chosen run.
type LaunchRequest struct {
	Kind    string // LaunchSkyPilot or LaunchSlurm
	Command string // the user's own training command; "" runs cnntime's training script
	// Data is where the images are: a bucket SkyPilot mounts (s3://, gs://, ...) or a
	// path the nodes see; "" leaves DATA_PATH to be set at the start. DataCopy copies a
	// bucket to the nodes' disks instead of mounting it.
	Data     string
	DataCopy bool
	// Checkpoints is a bucket or a shared path for the checkpoints and the step CSV
	// ("" for the default); a spot run on SkyPilot needs a bucket.
	Checkpoints string
	Slurm       launch.SlurmOptions
	// BatchNote says how the batch was chosen, for the file's header (launch.Run's).
	BatchNote string
}

// LaunchBatch is how a launch file's global batch was chosen: the header's "# Batch:"
// line and the window's launch dialog say it in the same words (Note).
type LaunchBatch struct {
	Batch int
	// Recommended is the curve's recommended batch (RecommendedPoint), Best its best
	// batch; 0 where not known (a batch given with --batch is not checked against them).
	Recommended, Best int
	// ChosenBy says who chose a batch other than the recommended one: "given with
	// --batch", "chosen in the window".
	ChosenBy string
}

// Note says the batch and why it is the one: "1,120, the recommended batch (within 1%
// of the best time and cost, which batch 1,536 gives; …)" or "512, chosen in the window
// (the recommended batch is 1,120)".
func (b LaunchBatch) Note() string {
	n := numfmt.Count(int64(b.Batch))
	const everywhere = "best, the window and cnntime launch without --batch recommend it"
	switch {
	case b.Batch == b.Recommended && (b.Best == 0 || b.Best == b.Batch):
		return fmt.Sprintf("%s, the recommended batch (the best time and cost; %s)", n, everywhere)
	case b.Batch == b.Recommended:
		return fmt.Sprintf("%s, the recommended batch (within 1%% of the best time and cost, which batch %s gives; nearest the recipe's batch; %s)",
			n, numfmt.Count(int64(b.Best)), everywhere)
	case b.Recommended > 0:
		return fmt.Sprintf("%s, %s (the recommended batch is %s)", n, b.ChosenBy, numfmt.Count(int64(b.Recommended)))
	}
	return fmt.Sprintf("%s, %s", n, b.ChosenBy)
}

// RecommendedBatch is the batch to launch q's one model on its one target when none is
// given: the curve's recommended batch over q's batches (best's and the window's
// advice: within 1% of the best, nearest the recipe's batch), with the curve's best
// batch beside it. Nothing that fits is an error that says so.
func (e *Engine) RecommendedBatch(ctx context.Context, q Query) (LaunchBatch, error) {
	if len(q.Models) != 1 || len(q.Targets) != 1 {
		return LaunchBatch{}, fmt.Errorf("a launch file is for one model on one machine (got %d and %d)", len(q.Models), len(q.Targets))
	}
	curves, err := e.Curves(ctx, q)
	if err != nil {
		return LaunchBatch{}, err
	}
	c := curves[0]
	p, ok := RecommendedPoint(&c)
	if !ok {
		return LaunchBatch{}, fmt.Errorf("%s on %s: no batch fits in memory (the largest that fits is %d)", c.Model, c.Machine, max(c.MaxBatch, 0))
	}
	b := LaunchBatch{Batch: p.Batch, Recommended: p.Batch}
	if c.Best >= 0 {
		b.Best = c.Points[c.Best].Batch
	}
	return b, nil
}

// LaunchRun is the run one point of q describes, as a launch file starts it: q names one
// model, one target and one batch (its run, data, nodes and prices as predict takes
// them). The file runs cnntime's training script, which reads an ImageFolder through
// PyTorch's DataLoader and runs eager PyTorch or torch.compile: where q asks for what the
// script cannot run (DALI, FFCV, NVIDIA's optimised stack, a lean loop), or SkyPilot
// cannot launch the machine q names (RunPod's Community Cloud), the run is predicted
// again as the file starts it, and the run says what differs and what cnntime predicts
// for q itself. The script trains with the network's recipe from the recipe book
// (scriptRecipe). A batch that does not fit is an error that says so.
func (e *Engine) LaunchRun(ctx context.Context, q Query, req LaunchRequest) (launch.Run, error) {
	if len(q.Models) != 1 || len(q.Targets) != 1 || len(q.Batches) != 1 {
		return launch.Run{}, fmt.Errorf("a launch file is for one model on one machine at one batch (got %d, %d and %d)", len(q.Models), len(q.Targets), len(q.Batches))
	}
	command := strings.TrimSpace(req.Command)
	asked := q
	run, differs, err := e.launchedQuery(q, req.Kind, req.Data != "", command != "")
	if err != nil {
		return launch.Run{}, err
	}
	c, p, err := e.launchPoint(ctx, run)
	if err != nil {
		return launch.Run{}, err
	}
	askedLine := ""
	if len(differs) > 0 {
		if ac, ap, err := e.launchPoint(ctx, asked); err != nil {
			askedLine = fmt.Sprintf("cnntime cannot predict what you asked (%v)", err)
		} else {
			askedLine = "cnntime predicts for what you asked " + predictionLine(ac, ap)
		}
	}
	t := run.Targets[0]
	r := launch.Run{
		BatchNote:      req.BatchNote,
		Model:          c.Model,
		Zoo:            cnn.Family(c.Model) != "", // a model of the user's may not take a zoo name
		Machine:        c.Machine,
		Cloud:          skyPilotCloud(t.Machine),
		Kubernetes:     t.Machine.Provider == "coreweave",
		Instance:       skyPilotInstance(t.Machine),
		Accelerator:    skyPilotAccelerator(t.Machine),
		GPUs:           t.Machine.GPUCount,
		CPUs:           t.Machine.VCPUs,
		MemoryGiB:      t.Machine.MemoryGiB,
		Nodes:          max(c.Nodes, 1),
		Region:         q.Price.Region,
		Spot:           q.Price.Spot,
		Batch:          p.Batch,
		Epochs:         p.Epochs,
		Precision:      string(c.Precision),
		ChannelsLast:   c.Format == predictor.NHWC,
		CUDNNBenchmark: q.Policy == measure.Fastest,
		Synthetic:      (c.Loader == pipeline.Synthetic || c.Loader == "") && strings.TrimSpace(req.Data) == "",
		Workers:        c.Workers,
		Input:          c.Input,
		Dataset:        q.Data.Dataset,
		Images:         c.Images,
		ValImages:      validationImages(q.Data.Dataset),
		GPUID:          t.Machine.GPUID,
		Data:           strings.TrimSpace(req.Data),
		DataCopy:       req.DataCopy,
		Checkpoints:    strings.TrimSpace(req.Checkpoints),
		Prediction:     predictionLine(c, p),
		TotalS:         p.TotalS,
		ErrorPct:       p.RunErrorPct(),
		Differs:        differs,
		Host:           hostLine(c, p),
		Command:        command,
	}
	switch c.Framework {
	case predictor.Compiled:
		r.Compile = "default" // torch.compile(model): fused kernels, issued one by one
	case predictor.CompiledGraphs:
		r.Compile = "reduce-overhead" // the same kernels replayed as CUDA graphs
	}
	if ds, _, err := q.Data.set(); err == nil {
		r.Classes = ds.Classes
	}
	if r.Images <= 0 {
		r.Images = q.Run.Images
	}
	if p.Regime == recipe.Extrapolated { // outside the recipe's evidence
		r.Regime = p.Regime
	}
	if command == "" {
		rc, own, err := launchRecipe(&c, q.Data.Dataset)
		if err != nil {
			return launch.Run{}, err
		}
		var recipeDiffers []string
		if r.Recipe, recipeDiffers, err = scriptRecipe(rc, own, c.Model, r.Batch, r.Epochs, r.Input); err != nil {
			return launch.Run{}, err
		}
		if r.Regime != "" && rc.Opt != "lars" && rc.Opt != "lamb" {
			r.Recipe.Note += fmt.Sprintf("; the epochs assume the %s regime at this batch, which %s may not reach", r.Regime, rc.Opt)
		}
		r.Differs = append(r.Differs, recipeDiffers...)
	}
	if askedLine != "" {
		r.Differs = append(r.Differs, askedLine)
	}
	if t.cpu != nil || t.GPU.IsCPU() {
		r.GPUs, r.Accelerator, r.GPUID = 0, "", ""
		if r.Workers == 0 { // a CPU's prediction has no loader: the workers asked, else the main process reads
			r.Workers = q.Data.Workers
		}
	}
	if r.Region == "" && c.CostKnown && !r.Kubernetes && r.Cloud != "runpod" {
		r.Region = c.Price.Region // the region whose price the prediction used
	}
	if req.Kind == LaunchSkyPilot {
		cc := 0
		if r.GPUs > 0 {
			cc = hw.ParseComputeCapability(t.GPU.ComputeCapability)
		}
		if r.Wheel, err = launch.WheelFor(cc); err != nil && command == "" {
			return launch.Run{}, fmt.Errorf("%s's %s: %w", c.Machine, t.GPU.ID, err)
		}
	}
	return r, nil
}

// launchPoint predicts q's one point and refuses one that does not fit.
func (e *Engine) launchPoint(ctx context.Context, q Query) (predictor.Curve, predictor.Point, error) {
	curves, err := e.Curves(ctx, q)
	if err != nil {
		return predictor.Curve{}, predictor.Point{}, err
	}
	c := curves[0]
	if len(c.Points) != 1 || !c.Points[0].Fits {
		return c, predictor.Point{}, fmt.Errorf("%s on %s does not fit at batch %d: the largest that fits is %d", c.Model, c.Machine, q.Batches[0], c.MaxBatch)
	}
	return c, c.Points[0], nil
}

// launchedQuery is q as the launch file runs it, and what differs from q, one phrase
// each. cnntime's training script reads an ImageFolder through PyTorch's DataLoader
// (or synthetic images kept on the GPU when no data is given), runs eager PyTorch 2 or
// torch.compile (its default mode, or reduce-overhead), and reads the loss and accuracy every step as
// torchvision's reference script does; SkyPilot launches RunPod's Secure Cloud only.
// The user's own command runs as asked: only the machine can differ.
func (e *Engine) launchedQuery(q Query, kind string, data, ownCommand bool) (Query, []string, error) {
	var differs []string
	out := q
	if kind == LaunchSkyPilot {
		t, why, err := e.skyPilotTarget(q.Targets[0])
		if err != nil {
			return q, nil, err
		}
		if why != "" {
			out.Targets = []Target{t}
			differs = append(differs, why)
		}
	}
	if ownCommand {
		return out, differs, nil
	}
	d := q.Data
	_, named, err := d.set()
	if err != nil {
		return q, nil, err
	}
	switch loader := pipeline.Loader(strings.ToLower(d.Loader)); {
	case !named || loader == "" || loader == pipeline.Synthetic:
		if data && named {
			d.Loader = string(pipeline.PyTorch)
			differs = append(differs, "the loader: synthetic images → PyTorch's DataLoader over your --data")
		}
	case loader != pipeline.PyTorch:
		d.Loader = string(pipeline.PyTorch)
		differs = append(differs, fmt.Sprintf("the loader: %s → PyTorch's DataLoader (the script reads an ImageFolder with torchvision's transforms)", loader))
	}
	switch f := d.framework(); f {
	case predictor.PyTorch2, predictor.Compiled, predictor.CompiledGraphs:
	case predictor.PyTorch1:
		if kind == LaunchSkyPilot {
			d.Framework = string(predictor.PyTorch2)
			differs = append(differs, fmt.Sprintf("the stack: PyTorch 1.x eager → PyTorch %s eager, which setup installs", launchTorch()))
		}
	case predictor.Optimized:
		d.Framework = string(predictor.CompiledGraphs)
		differs = append(differs, "the stack: NVIDIA's optimised implementation → torch.compile in reduce-overhead mode (compiled-graphs), the nearest the script runs")
	default:
		d.Framework = string(predictor.PyTorch2)
		differs = append(differs, fmt.Sprintf("the stack: %s → eager PyTorch 2", f))
	}
	if kind == LaunchSkyPilot { // setup installs one PyTorch: the run is predicted on its libraries
		installed, err := predictor.ParseSoftware("pytorch-" + launchTorchMinor())
		if err != nil {
			return q, nil, fmt.Errorf("the launch's PyTorch %s is not a release cnntime dates: %w", launchTorch(), err)
		}
		if asked := d.software(); strings.TrimSpace(d.Software) != "" && asked.Name != installed.Name {
			differs = append(differs, fmt.Sprintf("the software: %s → %s, which setup installs", asked.Name, installed.Name))
		}
		d.Software = installed.Name
	}
	if s := d.script(); s != predictor.Reference {
		if s == "" {
			s = predictor.Lean
		}
		d.Script = string(predictor.Reference)
		differs = append(differs, fmt.Sprintf("the script's per-step work: %s → reference (the script reads the loss and accuracy every step, as torchvision's reference script does)", s))
	}
	out.Data = d
	return out, differs, nil
}

// launchTorch is the PyTorch a SkyPilot task installs.
func launchTorch() string {
	w, _ := launch.WheelFor(0)
	return w.Torch
}

// launchTorchMinor is launchTorch's major.minor ("2.8" of "2.8.0").
func launchTorchMinor() string {
	v := launchTorch()
	if i := strings.LastIndexByte(v, '.'); strings.Count(v, ".") == 2 {
		return v[:i]
	}
	return v
}

// skyPilotTarget is the machine SkyPilot launches for t, and why it is another one
// ("" when it is t). SkyPilot's RunPod catalog lists Secure Cloud pods only
// (sky/catalog/data_fetchers/fetch_runpod.py skips Community Cloud), so a Community
// Cloud machine is launched, and priced, as the Secure Cloud machine of its GPU.
func (e *Engine) skyPilotTarget(t Target) (Target, string, error) {
	m := t.Machine
	if m.Provider != "runpod" || !strings.Contains(strings.ToLower(m.Instance), "community") {
		return t, "", nil
	}
	for _, id := range e.MachineIDs() {
		s, err := e.MachineTarget(id)
		if err != nil || s.Machine.Provider != "runpod" || s.Machine.GPUID != m.GPUID || s.Machine.GPUCount != m.GPUCount ||
			!strings.Contains(strings.ToLower(s.Machine.Instance), "secure") {
			continue
		}
		return s, fmt.Sprintf("the machine: %s → %s (SkyPilot launches RunPod's Secure Cloud only; its catalog skips Community Cloud)", m.ID, s.Machine.ID), nil
	}
	return t, "", fmt.Errorf("%s is RunPod's Community Cloud, which SkyPilot does not launch (its RunPod catalog lists Secure Cloud pods only), and cnntime has no Secure Cloud machine with its %d × %s: pick a Secure Cloud machine", m.ID, m.GPUCount, m.GPUID)
}

// validationImages is the validation set a pass evaluates: ImageNet-1k's (ILSVRC 2012:
// 50,000 images, Russakovsky et al. 2015, "ImageNet Large Scale Visual Recognition
// Challenge", IJCV, table 2) and CIFAR's test sets (10,000 images each, Krizhevsky
// 2009); 0 for a dataset cnntime does not know.
func validationImages(dataset string) int {
	switch strings.ToLower(dataset) {
	case "imagenet-1k":
		return 50000
	case "cifar-10", "cifar-100":
		return 10000
	}
	return 0
}

// hostLine says which host the prediction's loader rests on (its CPU, how fast its cores
// decode, its vCPUs) and what is assumed of it where the catalog names no CPU or vCPUs,
// with how far that can move the time.
func hostLine(c predictor.Curve, p predictor.Point) string {
	if c.Host == nil {
		return ""
	}
	s := c.Host.Sentence()
	if !c.Host.Assumed() {
		s = "Host: " + s
	}
	if p.HostErrorPct >= 0.5 {
		s += fmt.Sprintf(" (±%.0f%% on the time)", p.HostErrorPct)
	}
	return s
}

// predictionLine says what cnntime predicted for the run, in one line.
func predictionLine(c predictor.Curve, p predictor.Point) string {
	s := Summarize([]predictor.Curve{c})[0]
	how := fmt.Sprintf("%s epochs", EpochsText(p.Epochs, c.EpochsSource))
	if m := c.Recipe; m != nil {
		how = fmt.Sprintf("%.1f epochs to %s (recipe %s)", p.Epochs, m.TargetName(), c.EpochsSource)
	}
	cost := "cost unknown (price " + s.PriceText() + ")"
	if c.CostKnown {
		cost = charts.FormatUSD(p.CostUSD) + " at " + s.PriceText()
	}
	return fmt.Sprintf("%s ±%.0f%% for %s, %s; %s images/s, %s; cnntime %s",
		charts.FormatSeconds(p.TotalS), p.RunErrorPct(), how, cost, charts.FormatRate(p.ImagesPerS), charts.SourceText(&c, p), Version)
}

// skyPilotCloud is the SkyPilot cloud of a machine, "" for one of the user's own, a
// measured one, a bare GPU, or one SkyPilot reaches through Kubernetes (CoreWeave:
// SkyPilot lists coreweave among its storage-only clouds, sky/skylet/constants.py).
func skyPilotCloud(m hw.Machine) string {
	switch m.Provider {
	case hw.UserProvider, hw.LocalProvider, hw.BareGPUProvider, "coreweave", "":
		return ""
	}
	return m.Provider
}

// gcpAttached is a GCP machine cnntime made of a VM and the GPUs attached to it
// (n1-standard-4-1x-nvidia-tesla-v100, or "n1-standard-4 + 1x nvidia-tesla-v100" in
// the shipped catalog): SkyPilot's instance type is the VM, the GPUs its accelerators.
var gcpAttached = regexp.MustCompile(`^(.+)-[0-9]+x-nvidia-`)

// runPodName is how SkyPilot's RunPod catalog spells an accelerator in its instance
// types: {count}x_{name}_SECURE (sky/catalog/data_fetchers/fetch_runpod.py).
var runPodName = regexp.MustCompile(`^[A-Za-z0-9-]+$`)

// skyPilotInstance is the machine's instance type as SkyPilot names it.
func skyPilotInstance(m hw.Machine) string {
	if skyPilotCloud(m) == "" || m.Listing == hw.ListingComponent { // a GPU add-on: SkyPilot picks its VM
		return ""
	}
	if m.Provider == "runpod" {
		if acc := skyPilotAccelerator(m); runPodName.MatchString(acc) {
			return fmt.Sprintf("%dx_%s_SECURE", m.GPUCount, acc)
		}
		return ""
	}
	if vm, _, attached := strings.Cut(m.Instance, " + "); attached { // "n1-standard-4 + 1x nvidia-tesla-v100"
		return vm
	}
	if g := gcpAttached.FindStringSubmatch(m.Instance); g != nil {
		return g[1]
	}
	return m.Instance
}

// skyPilotAccelerator is SkyPilot's name of the machine's GPU: the one its imported
// catalog row gives, else the first of hw.AcceleratorRules that maps onto its GPU on its
// cloud and instance type.
func skyPilotAccelerator(m hw.Machine) string {
	if m.Accelerator != "" {
		return m.Accelerator
	}
	for _, r := range hw.AcceleratorRules {
		if r.GPU != m.GPUID || r.Cloud != "" && r.Cloud != m.Provider {
			continue
		}
		if r.Instance != "" && !regexp.MustCompile(r.Instance).MatchString(m.Instance) {
			continue
		}
		return r.Accelerator
	}
	return ""
}

// LaunchFile writes the launch file req asks for, of r.
func LaunchFile(r launch.Run, req LaunchRequest) ([]byte, error) {
	switch req.Kind {
	case LaunchSkyPilot:
		return launch.SkyPilot(r)
	case LaunchSlurm:
		return launch.Slurm(r, req.Slurm)
	}
	return nil, fmt.Errorf("unknown launch file %q: use %s", req.Kind, strings.Join(LaunchKinds, " or "))
}

// ExportLaunchFile writes a launch file to path as ExportFile writes an export.
func ExportLaunchFile(path string, content []byte) error {
	return ExportFile(path, func(w io.Writer) error {
		_, err := w.Write(content)
		return err
	})
}

// Launcher writes launch files for a session's points.
type Launcher interface {
	// LaunchFile is the launch file of model on machine at a global batch size under
	// the settings' run, as PredictCurves predicts it.
	LaunchFile(ctx context.Context, s SessionSettings, model, machine string, batch int, req LaunchRequest) ([]byte, error)
}

// LaunchFile writes the launch file of one point of PredictCurves' curves.
func (b *EngineBackend) LaunchFile(ctx context.Context, s SessionSettings, model, machine string, batch int, req LaunchRequest) ([]byte, error) {
	b.mu.Lock()
	e := b.engine
	b.mu.Unlock()
	t, err := e.MachineTarget(machine)
	if err != nil {
		return nil, err
	}
	q, err := s.query()
	if err != nil {
		return nil, err
	}
	q.Models, q.Targets, q.Batches = []string{model}, []Target{t}, []int{batch}
	r, err := e.LaunchRun(ctx, q, req)
	if err != nil {
		return nil, err
	}
	return LaunchFile(r, req)
}

// LaunchFile writes the launch file of model on machine at batch under the session's
// settings (see Launcher).
func (s *Session) LaunchFile(ctx context.Context, model, machine string, batch int, req LaunchRequest) ([]byte, error) {
	l, ok := s.backend.(Launcher)
	if !ok {
		return nil, errors.New("this window's predictions cannot be exported as a launch file (no prediction engine)")
	}
	return l.LaunchFile(ctx, s.Settings(), model, machine, batch, req)
}
