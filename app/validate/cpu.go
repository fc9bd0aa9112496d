package validate

import (
	"cnntime/app"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"cnntime/gpu/cpu"
	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/measure"
)

// CPUAccuracy compares whole training steps on this machine's CPU, predicted from
// per-layer CPU measurements, with the same steps measured end to end.
type CPUAccuracy struct {
	Device  string          `json:"device"`
	Input   int             `json:"input_resolution"`
	Rounds  int             `json:"rounds"`
	Repeats int             `json:"repeats"`
	Rows    []CPUComparison `json:"rows"`
	MAPEPct float64         `json:"mape_pct"`
	// LoadBefore and LoadAfter are the machine's one-minute load average when the
	// measurements started and ended (0 where /proc/loadavg cannot be read): other
	// processes on the cores make every time noisier.
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
}

// CPUComparison is one network at one batch size on the CPU.
type CPUComparison struct {
	Model       string  `json:"model"`
	Batch       int     `json:"batch"`
	MeasuredMS  float64 `json:"measured_ms"`
	PredictedMS float64 `json:"predicted_ms"`
	ErrorPct    float64 `json:"error_pct"`
}

// CPUOptions says what the CPU validation measures.
type CPUOptions struct {
	Models  []string // zoo names
	Batches []int
	Input   int // input resolution, pixels
	// Rounds is how many times each network's layers and step are measured, one
	// network and batch size after another, so that the layer and step measurements
	// of each round see the same load on the machine; each round predicts its steps
	// from its own layer times, and the round with the median error counts. Repeats
	// is the timed runs per measurement (after gpu.WarmupRuns untimed ones).
	Rounds, Repeats int
}

// DefaultCPUOptions is `cnntime validate`'s table 1: five CNNs at 32×32 × four
// batch sizes, about a minute per round on two cores with 3 repeats (VGG's 130 M parameters most of it).
func DefaultCPUOptions(rounds, repeats int) CPUOptions {
	return CPUOptions{
		Models:  []string{"resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x0_5", "vgg11"},
		Batches: []int{1, 2, 4, 8}, Input: 32, Rounds: rounds, Repeats: repeats,
	}
}

// MeasureCPU measures, on this machine's CPU, every layer phase of each network at
// each batch size and the whole training step, then predicts the step from the layer
// measurements alone (predictor.CPUOverheads: the kernels one after another, nothing else) and
// compares. progress, when not nil, hears what is being measured.
func MeasureCPU(ctx context.Context, cal *kernels.Calibration, o CPUOptions, progress io.Writer) (*CPUAccuracy, error) {
	if len(o.Models) == 0 || len(o.Batches) == 0 || o.Input < 1 || o.Rounds < 1 || o.Repeats < 1 {
		return nil, fmt.Errorf("CPU validation of %d models × %d batch sizes at %d px, %d rounds of %d repeats: all must be positive",
			len(o.Models), len(o.Batches), o.Input, o.Rounds, o.Repeats)
	}
	be := cpu.New()
	dev := be.Device()
	acc := &CPUAccuracy{Device: dev.Name, Input: o.Input, Rounds: o.Rounds, Repeats: o.Repeats, LoadBefore: loadAverage()}
	nets := make([]*cnn.Network, 0, len(o.Models))
	for _, name := range o.Models {
		net, err := cnn.Build(name, cnn.Options{Resolution: o.Input, Classes: 10})
		if err != nil {
			return nil, err
		}
		nets = append(nets, net)
	}
	type point struct {
		net   string
		batch int
	}
	type phaseKey struct {
		cfg   cnn.Config
		batch int
		phase measure.Phase
	}
	stepRounds := map[point][]float64{}
	layerRounds := map[phaseKey][]measure.Measurement{}
	for round := 1; round <= o.Rounds; round++ {
		for _, net := range nets {
			if progress != nil {
				fmt.Fprintf(progress, "round %d/%d: measuring %s on the CPU…\n", round, o.Rounds, net.Name)
			}
			for _, b := range o.Batches {
				// Every phase the step runs, each distinct configuration once, then the step.
				for i := range net.Layers {
					l := &net.Layers[i]
					for _, ph := range predictor.EveryPhaseKernels.Phases(l) {
						k := phaseKey{l.Config, b, ph}
						if len(layerRounds[k]) == round {
							continue // another layer of the network has this configuration
						}
						m, err := be.TimeLayer(ctx, l.Config, b, ph, measure.FP32, measure.NoPolicy, o.Repeats)
						if err != nil {
							return nil, err
						}
						if m.Status != measure.OK {
							return nil, fmt.Errorf("the CPU backend cannot time %s of %s (%s): %s", ph, l.Name, net.Name, m.Status)
						}
						layerRounds[k] = append(layerRounds[k], m)
					}
				}
				s, err := be.RunStep(ctx, net, b, measure.FP32, o.Repeats)
				if err != nil {
					return nil, err
				}
				if s.Status != measure.OK {
					return nil, fmt.Errorf("the CPU backend cannot run a step of %s at batch %d: %s", net.Name, b, s.Status)
				}
				stepRounds[point{net.Name, b}] = append(stepRounds[point{net.Name, b}], s.MedianMS)
			}
		}
	}
	acc.LoadAfter = loadAverage()
	// Each round predicts its steps from its own layer measurements, taken just before
	// them under the same load; a row is the round with the median error.
	rounds := make([]map[point]CPUComparison, o.Rounds)
	for r := range rounds {
		ms := make([]measure.Measurement, 0, len(layerRounds))
		for _, m := range layerRounds {
			ms = append(ms, m[r])
		}
		predicted, err := PredictCPUSteps(cal, dev, nets, o.Batches, ms)
		if err != nil {
			return nil, err
		}
		rounds[r] = map[point]CPUComparison{}
		for _, net := range nets {
			for i, b := range o.Batches {
				want, got := predicted[net.Name][i], stepRounds[point{net.Name, b}][r]
				rounds[r][point{net.Name, b}] = CPUComparison{Model: net.Name, Batch: b, MeasuredMS: got,
					PredictedMS: want, ErrorPct: 100 * (want - got) / got}
			}
		}
	}
	for _, net := range nets {
		for _, b := range o.Batches {
			row := medianError(rounds, point{net.Name, b})
			acc.Rows = append(acc.Rows, row)
			acc.MAPEPct += math.Abs(row.ErrorPct)
		}
	}
	acc.MAPEPct /= float64(len(acc.Rows))
	return acc, nil
}

// PredictCPUSteps is the step time, in ms, the predictor composes for each network (by
// name) at each of batches (in order) on the CPU device dev from the layer measurements
// ms alone, with predictor.CPUOverheads and the kernels the device's framework runs
// (predictor.CPUKernels: PyTorch's for a CPU PyTorch measured, the Go backend's for the
// others): the composition MeasureCPU and `validate --table steps` compare with real steps.
func PredictCPUSteps(cal *kernels.Calibration, dev measure.Device, nets []*cnn.Network, batches []int, ms []measure.Measurement) (map[string][]float64, error) {
	eng := predictor.NewEngine(kernels.NewModel(cal, nil, []measure.Device{dev}, ms), predictor.CPUOverheads, predictor.DefaultMemoryModel)
	out := make(map[string][]float64, len(nets))
	for _, net := range nets {
		c, err := eng.Curve(predictor.Request{Network: net, Machine: hw.Machine{ID: "cpu", GPUCount: 1},
			GPU: hw.GPU{ID: "cpu", Name: dev.Name, Architecture: "CPU"}, DeviceKey: dev.Key,
			Precision: measure.FP32, Policy: measure.NoPolicy, Batches: batches,
			Run: predictor.Run{Epochs: 1, Images: 1}, Kernels: predictor.CPUKernels(dev.Key)})
		if err != nil {
			return nil, err
		}
		if len(c.Points) != len(batches) {
			return nil, fmt.Errorf("the predictor gave %d points for %s's %d batch sizes", len(c.Points), net.Name, len(batches))
		}
		for i, p := range c.Points {
			if p.Batch != batches[i] {
				return nil, fmt.Errorf("the predictor's point %d for %s is batch %d, want %d", i, net.Name, p.Batch, batches[i])
			}
			out[net.Name] = append(out[net.Name], p.IterMS)
		}
	}
	return out, nil
}

// medianError is the comparison at key whose signed error is the rounds' median (the
// lower middle one of an even count).
func medianError[K comparable](rounds []map[K]CPUComparison, key K) CPUComparison {
	rows := make([]CPUComparison, len(rounds))
	for i, r := range rounds {
		rows[i] = r[key]
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ErrorPct < rows[j].ErrorPct })
	return rows[(len(rows)-1)/2]
}

// loadAverage reads the one-minute load average from /proc/loadavg, or returns 0.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return v
}

// WriteCPUTable prints table 1 of `cnntime validate`.
func WriteCPUTable(w io.Writer, a *CPUAccuracy) error {
	fmt.Fprintf(w, "1. Whole training step on the CPU (%s), %d×%d input, predicted from per-layer measurements: MAPE %.1f%%\n",
		a.Device, a.Input, a.Input, a.MAPEPct)
	fmt.Fprintf(w, "   %d rounds × %d repeats, medians; load average %.2f before, %.2f after (other processes share the cores)\n\n",
		a.Rounds, a.Repeats, a.LoadBefore, a.LoadAfter)
	t := app.NewTable(w, "MODEL", "BATCH", "MEASURED MS", "PREDICTED MS", "ERROR")
	for _, r := range a.Rows {
		t.Row(r.Model, strconv.Itoa(r.Batch), fmt.Sprintf("%.2f", r.MeasuredMS), fmt.Sprintf("%.2f", r.PredictedMS), fmt.Sprintf("%+.1f%%", r.ErrorPct))
	}
	return t.Flush()
}
