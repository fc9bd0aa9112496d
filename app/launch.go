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
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
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
	Command string // the user's own training command; "" runs torchvision's reference script
	Slurm   launch.SlurmOptions
}

// RecommendedBatch is the batch to launch q's one model on its one target when none is
// given: the curve's recommended batch over q's batches (best's and the window's
// advice: within 1% of the best, nearest the recipe's batch). Nothing that fits is an
// error that says so.
func (e *Engine) RecommendedBatch(ctx context.Context, q Query) (int, error) {
	if len(q.Models) != 1 || len(q.Targets) != 1 {
		return 0, fmt.Errorf("a launch file is for one model on one machine (got %d and %d)", len(q.Models), len(q.Targets))
	}
	curves, err := e.Curves(ctx, q)
	if err != nil {
		return 0, err
	}
	c := curves[0]
	p, ok := RecommendedPoint(&c)
	if !ok {
		return 0, fmt.Errorf("%s on %s: no batch fits in memory (the largest that fits is %d)", c.Model, c.Machine, max(c.MaxBatch, 0))
	}
	return p.Batch, nil
}

// LaunchRun is the run one point of q describes, as a launch file starts it: q names one
// model, one target and one batch (its run, data, nodes and prices as predict takes
// them). The point is predicted as predict predicts it; a batch that does not fit, or a
// machine without a GPU SkyPilot can name, is an error that says so.
func (e *Engine) LaunchRun(ctx context.Context, q Query, command string) (launch.Run, error) {
	if len(q.Models) != 1 || len(q.Targets) != 1 || len(q.Batches) != 1 {
		return launch.Run{}, fmt.Errorf("a launch file is for one model on one machine at one batch (got %d, %d and %d)", len(q.Models), len(q.Targets), len(q.Batches))
	}
	curves, err := e.Curves(ctx, q)
	if err != nil {
		return launch.Run{}, err
	}
	c := curves[0]
	if len(c.Points) != 1 || !c.Points[0].Fits {
		return launch.Run{}, fmt.Errorf("%s on %s does not fit at batch %d: the largest that fits is %d", c.Model, c.Machine, q.Batches[0], c.MaxBatch)
	}
	p := c.Points[0]
	t := q.Targets[0]
	r := launch.Run{
		Model:       c.Model,
		Zoo:         cnn.Family(c.Model) != "", // a model of the user's may not take a zoo name
		Machine:     c.Machine,
		Cloud:       skyPilotCloud(t.Machine),
		Instance:    skyPilotInstance(t.Machine),
		Accelerator: skyPilotAccelerator(t.Machine),
		GPUs:        t.Machine.GPUCount,
		CPUs:        t.Machine.VCPUs,
		Nodes:       max(c.Nodes, 1),
		Region:      q.Price.Region,
		Spot:        q.Price.Spot,
		Batch:       p.Batch,
		Epochs:      p.Epochs,
		Precision:   string(c.Precision),
		Workers:     c.Workers,
		Input:       c.Input,
		Dataset:     q.Data.Dataset,
		Prediction:  predictionLine(c, p),
		TotalS:      p.TotalS,
		ErrorPct:    p.RunErrorPct(),
		Command:     strings.TrimSpace(command),
	}
	if p.Regime == recipe.Extrapolated { // outside the recipe's evidence
		r.Regime = p.Regime
	}
	if t.cpu != nil || t.GPU.IsCPU() {
		r.GPUs, r.Accelerator = 0, ""
	}
	if r.Region == "" && c.CostKnown {
		r.Region = c.Price.Region // the region whose price the prediction used
	}
	return r, nil
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
	return fmt.Sprintf("%s ±%.0f%% for %s, %s; %.0f images/s, %s; cnntime %s",
		charts.FormatSeconds(p.TotalS), p.RunErrorPct(), how, cost, p.ImagesPerS, p.Source, Version)
}

// skyPilotCloud is the SkyPilot cloud of a machine, "" for one of the user's own, a
// measured one or a bare GPU.
func skyPilotCloud(m hw.Machine) string {
	switch m.Provider {
	case hw.UserProvider, hw.LocalProvider, hw.BareGPUProvider, "":
		return ""
	}
	return m.Provider
}

// gcpAttached is a GCP machine cnntime made of a VM and the GPUs attached to it
// (n1-standard-4-1x-nvidia-tesla-v100, or "n1-standard-4 + 1x nvidia-tesla-v100" in
// the shipped catalog): SkyPilot's instance type is the VM, the GPUs its accelerators.
var gcpAttached = regexp.MustCompile(`^(.+)-[0-9]+x-nvidia-`)

// skyPilotInstance is the machine's instance type as SkyPilot names it.
func skyPilotInstance(m hw.Machine) string {
	if skyPilotCloud(m) == "" || m.Listing == hw.ListingComponent { // a GPU add-on: SkyPilot picks its VM
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
	run, err := s.Run()
	if err != nil {
		return nil, err
	}
	q := Query{Models: []string{model}, Targets: []Target{t}, Batches: []int{batch}, Precision: s.Precision, Policy: s.Policy,
		Run: run, Data: s.Data, Nodes: s.Nodes, Price: s.Price}
	r, err := e.LaunchRun(ctx, q, req.Command)
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
