package firstrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"cnntime/app"
	"cnntime/app/outfile"
	"cnntime/gpu/libfind"
	"cnntime/gpu/selftest"
	"cnntime/predictor/measure"
)

// ReportVersion is the version of the report's JSON layout.
const ReportVersion = 1

// File names of the report in the run's folder.
const (
	JSONFile = "first-run.json"
	TextFile = "first-run.txt"
)

// Verdicts of the run and of each check.
const (
	OK      = "ok"      // ran and found nothing wrong
	Problem = "problem" // ran and found something to fix or not to trust (Why says what)
	Skipped = "skipped" // did not run (Why says why: no PyTorch, an earlier check failed)
	Failed  = "failed"  // could not run to the end (Why has the error)
	NoGPU   = "no_gpu"  // the run's verdict without a usable GPU
)

// Check is one step of the run.
type Check struct {
	Name    string  `json:"name"` // libraries, selftest, sweep, pytorch, validate
	Verdict string  `json:"verdict"`
	Why     string  `json:"why,omitempty"`
	Seconds float64 `json:"seconds"`
}

// SweepSummary is the worker's short sweep.
type SweepSummary struct {
	Models     []string            `json:"models"`
	Batches    []int               `json:"batches"`
	Precisions []measure.Precision `json:"precisions"`
	// ChannelsLast are the precisions swept in channels_last (NHWC), under the GPU's
	// ":nhwc" key.
	ChannelsLast []measure.Precision `json:"channels_last,omitempty"`
	Measured     int                 `json:"measured"`
	OutOfMemory  int                 `json:"out_of_memory"`
	Unsupported  int                 `json:"unsupported"`
	Failed       int                 `json:"failed"`
	// Notes counts the measurements with each note (host-bound, l2-flushed, l2-hot).
	Notes    map[string]int `json:"notes,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	Failures []string       `json:"failures,omitempty"`
}

// LayerRatio is one layer phase measured by both the worker and PyTorch.
type LayerRatio struct {
	Config    string            `json:"config"`
	Op        string            `json:"op"`
	Phase     measure.Phase     `json:"phase"`
	Batch     int               `json:"batch"`
	Precision measure.Precision `json:"precision"`
	WorkerMS  float64           `json:"worker_ms"`
	PyTorchMS float64           `json:"pytorch_ms"`
	Ratio     float64           `json:"ratio"` // worker ÷ PyTorch
	Notes     string            `json:"notes,omitempty"`
}

// RatioSummary is the median worker ÷ PyTorch ratio of one layer kind at one precision.
type RatioSummary struct {
	Op          string            `json:"op"`
	Precision   measure.Precision `json:"precision"`
	Layers      int               `json:"layers"`
	MedianRatio float64           `json:"median_ratio"`
	// LongLayers and LongMedianRatio are the same over the layer phases whose kernel takes
	// at least LongKernelMS on the worker: there PyTorch's own time per call (Python,
	// the dispatcher, the launch: tens of microseconds) is small beside the kernel, so the
	// ratio compares the kernels. Below it PyTorch's figure is mostly its host's time (on
	// an H200 the median ratio was 0.35 over all phases and 0.89 over these).
	LongLayers      int     `json:"long_layers"`
	LongMedianRatio float64 `json:"long_median_ratio,omitempty"` // 0 when no phase is that long
	WorkerMS        float64 `json:"worker_ms"`                   // summed
	PyTorchMS       float64 `json:"pytorch_ms"`                  // summed
}

// LongKernelMS is the worker's kernel time from which a layer phase counts as long in
// RatioSummary.
const LongKernelMS = 0.1

// StepComparison is one measured step against the step predicted from the worker's
// layers (and the plain sums of the layers, which leave out the host and the update).
type StepComparison struct {
	Model          string            `json:"model"`
	Batch          int               `json:"batch"`
	Precision      measure.Precision `json:"precision"` // the training precision
	MeasuredMS     float64           `json:"measured_ms"`
	Framework      string            `json:"framework"`
	PredictedMS    float64           `json:"predicted_ms"` // the predictor's step from the worker's layers
	ErrorPct       float64           `json:"error_pct"`    // (predicted − measured) ÷ measured
	WorkerLayersMS float64           `json:"worker_layers_ms,omitempty"`
	PyTorchLayerMS float64           `json:"pytorch_layers_ms,omitempty"`
}

// Report is what the run found; first-run.json holds it.
type Report struct {
	Version int       `json:"version"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	Dir     string    `json:"dir"`
	// Saved are the report's files Save wrote.
	Saved     []string            `json:"-"`
	Cache     string              `json:"cache,omitempty"` // the run's own cache: every measurement it took (none without a GPU)
	Verdict   string              `json:"verdict"`         // ok, problem, no_gpu or failed
	Reason    string              `json:"reason"`          // one sentence: why not ok, or what was found
	Worker    string              `json:"worker"`          // the CUDA worker's path, when found
	NoNVIDIA  bool                `json:"no_nvidia"`       // the PCI bus lists no NVIDIA GPU
	DeviceIdx int                 `json:"device"`          // the CUDA device index checked
	Checks    []Check             `json:"checks"`          // in the order they ran
	Libraries []libfind.Candidate `json:"libraries"`       // where each library was looked for (cnntime's search; the self-test has the worker's)

	GPU      *measure.Device    `json:"gpu,omitempty"`
	Versions *selftest.Versions `json:"versions,omitempty"` // driver, CUDA, cuDNN, cuBLAS, NVRTC and the files loaded
	SelfTest *selftest.Report   `json:"selftest,omitempty"`
	Sweep    *SweepSummary      `json:"sweep,omitempty"`
	PyTorch  string             `json:"pytorch,omitempty"` // the PyTorch that ran, "torch 2.5.1+cu124 on python …"
	Layers   []LayerRatio       `json:"layers,omitempty"`
	Kinds    []RatioSummary     `json:"layer_kinds,omitempty"`
	Steps    []StepComparison   `json:"steps,omitempty"`
	Validate *Validation        `json:"validate,omitempty"`
}

// check returns the named check, nil when it did not run.
func (r *Report) check(name string) *Check {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

// Save writes first-run.json and first-run.txt into the run's folder, and lists in
// Saved each it wrote: a file it could not write is not there to be read.
func (r *Report) Save() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		return err
	}
	r.Saved = nil
	var errs []error
	for _, f := range []struct {
		name string
		data []byte
	}{{JSONFile, append(data, '\n')}, {TextFile, []byte(b.String())}} {
		path := filepath.Join(r.Dir, f.name)
		if err := writeFile(path, f.data); err != nil {
			errs = append(errs, err)
			continue
		}
		r.Saved = append(r.Saved, path)
	}
	return errors.Join(errs...)
}

// writeFile writes a report file at its fixed name in the run's folder: through a
// temporary file renamed into place, so a crash leaves the last whole report, never
// half of one, with the user's umask; never through a link or into a named pipe planted
// at its name (outfile.WriteFixed).
func writeFile(path string, data []byte) error {
	err := outfile.WriteFixed(path, 0o666, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write the first-run report %s: %w", path, err)
	}
	return nil
}

// Write prints the report as a person reads it.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "cnntime first run, %s (%.0f s): %s\n", r.Started.Format("2006-01-02 15:04 MST"), r.Seconds, strings.ToUpper(strings.ReplaceAll(r.Verdict, "_", " ")))
	fmt.Fprintf(&b, "%s\n\n", r.Reason)
	if r.GPU != nil {
		g := r.GPU
		fmt.Fprintf(&b, "GPU       cuda:%d %s (%s), compute capability %s, %d SMs, %.1f GiB\n", r.DeviceIdx, g.Name, g.UUID, g.ComputeCapability, g.SMs, float64(g.MemoryBytes)/(1<<30))
	}
	if v := r.Versions; v != nil {
		fmt.Fprintf(&b, "versions  driver %s, CUDA %s, cuDNN %s, cuBLAS %s, NVRTC %s\n", orAbsent(v.Driver), orAbsent(v.CUDA), orAbsent(v.CuDNN), orAbsent(v.CuBLAS), orAbsent(v.NVRTC))
		for _, lib := range []string{"cuDNN", "cuBLAS", "cuBLASLt", "NVRTC", "NVML"} {
			if p, ok := v.Paths[lib]; ok {
				fmt.Fprintf(&b, "          %-8s %s\n", lib, p)
			}
		}
	}
	if r.Worker != "" {
		fmt.Fprintf(&b, "worker    %s\n", r.Worker)
	}
	if r.Cache != "" {
		fmt.Fprintf(&b, "cache     %s\n", r.Cache)
	}
	b.WriteString("\nchecks:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "  %s\t%s\t%.0f s\t%s\n", c.Name, c.Verdict, c.Seconds, c.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s := r.Sweep; s != nil {
		nhwc := ""
		if len(s.ChannelsLast) > 0 {
			nhwc = fmt.Sprintf(" and %v in channels_last", s.ChannelsLast)
		}
		fmt.Fprintf(&b, "\nsweep: %s at batch sizes %v, %v%s: %d measured, %d out of memory, %d unsupported, %d failed", strings.Join(s.Models, ", "), s.Batches, s.Precisions, nhwc, s.Measured, s.OutOfMemory, s.Unsupported, s.Failed)
		for _, n := range []string{"host-bound", "l2-flushed", "l2-hot"} {
			if s.Notes[n] > 0 {
				fmt.Fprintf(&b, ", %d %s", s.Notes[n], n)
			}
		}
		b.WriteString("\n")
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "  failed: %s\n", f)
		}
		for _, wn := range s.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", wn)
		}
	}
	if len(r.Kinds) > 0 {
		fmt.Fprintf(&b, "\nthe worker's layer times against PyTorch's (%s), by layer kind (ratio = worker ÷ PyTorch, median; LONG: the phases of at least %v ms on the worker, where PyTorch's own time per call no longer dominates):\n", r.PyTorch, LongKernelMS)
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KIND\tPRECISION\tLAYERS\tMEDIAN RATIO\tLONG\tLONG RATIO\tWORKER MS\tPYTORCH MS")
		for _, k := range r.Kinds {
			long := "-"
			if k.LongLayers > 0 {
				long = fmt.Sprintf("%.2f", k.LongMedianRatio)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%.2f\t%d\t%s\t%.3f\t%.3f\n", k.Op, k.Precision, k.Layers, k.MedianRatio, k.LongLayers, long, k.WorkerMS, k.PyTorchMS)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(&b, "  (%d layer phases in all: first-run.json lists each)\n", len(r.Layers))
	}
	if len(r.Steps) > 0 {
		b.WriteString("\nwhole steps: measured against predicted from the worker's layers:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  MODEL\tBATCH\tPRECISION\tMEASURED MS\tPREDICTED MS\tERROR\tWORKER LAYERS MS\tPYTORCH LAYERS MS\tMEASURED BY")
		for _, s := range r.Steps {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%.2f\t%.2f\t%+.1f%%\t%s\t%s\t%s\n", s.Model, s.Batch, s.Precision, s.MeasuredMS, s.PredictedMS, s.ErrorPct,
				msOrDash(s.WorkerLayersMS), msOrDash(s.PyTorchLayerMS), s.Framework)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if r.Validate != nil {
		b.WriteString("\ncnntime validate --table steps, on the run's cache:\n")
		b.WriteString(r.Validate.Table)
	}
	if r.SelfTest != nil {
		b.WriteString("\nthe worker's self-test:\n")
		if err := r.SelfTest.Write(&b); err != nil {
			return err
		}
	}
	if err := app.WriteLibraries(&b, r.Libraries); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orAbsent(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func msOrDash(ms float64) string {
	if ms <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", ms)
}
