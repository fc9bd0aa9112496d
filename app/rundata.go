package app

import (
	"fmt"
	"strings"

	"cnntime/predictor"
	"cnntime/predictor/cnn"
	"cnntime/predictor/dataset"
	"cnntime/predictor/host"
	"cnntime/predictor/pipeline"
)

// RunData is how a training run gets its images: the dataset (a preset, with
// overrides), the input pipeline and the activations' memory format. The zero value
// is the idealised step benchmarks report: synthetic data already on the GPU, each
// model at its own default input size, no layout transposes.
type RunData struct {
	Dataset string // a preset name (dataset.Names); "" for none (synthetic benchmark data)
	Input   int    // input size override, pixels; 0: the dataset's, else the model's default
	Classes int    // classes override; 0: the dataset's (1000 without one)
	Loader  string // synthetic, pytorch or dali; "" for synthetic
	Workers int    // loader workers per GPU; 0: the machine's vCPUs per GPU less one (8 on a bare GPU)
	// MemoryFormat is nchw or nhwc; "" adds no layout transposes.
	MemoryFormat string
	// Script is the training script around the step: lean, reference or lightning
	// (predictor.Scripts); "" is a tight loop, as benchmarks run.
	Script string
	// Framework is the software stack that runs the step: pytorch2, pytorch1, graph,
	// compiled, compiled-graphs or optimized (predictor.Frameworks); "" is the
	// software's own (pytorch1 for a PyTorch 1 release, pytorch2 otherwise).
	Framework string
	// Software is the release of the kernel libraries that runs it
	// (predictor.ParseSoftware: current, pytorch-X.Y, ngc-YY.MM or YYYY-MM); "" is
	// current (predictor.CurrentSoftware).
	Software string
}

// DefaultRunData is what a user's run reads unless told otherwise: ImageNet-1k's
// JPEGs through a PyTorch DataLoader, NCHW tensors (PyTorch's default), in a
// reference-style training script (predictor.DefaultScript).
func DefaultRunData() RunData {
	return RunData{Dataset: dataset.Default, Loader: string(pipeline.PyTorch), MemoryFormat: string(predictor.NCHW),
		Script: string(predictor.DefaultScript)}
}

// Check reports the first bad setting, naming it.
func (d RunData) Check() error {
	if d.Dataset != "" {
		if _, err := dataset.Preset(d.Dataset); err != nil {
			return err
		}
	}
	if _, err := (dataset.Dataset{}).With(dataset.Overrides{Input: d.Input, Classes: d.Classes}); err != nil {
		return err
	}
	if d.Loader != "" {
		if _, err := pipeline.ParseLoader(d.Loader); err != nil {
			return err
		}
	}
	if err := (pipeline.Settings{Workers: d.Workers}).Check(); err != nil {
		return err
	}
	if d.MemoryFormat != "" {
		if _, err := predictor.ParseMemoryFormat(strings.ToLower(d.MemoryFormat)); err != nil {
			return err
		}
	}
	if _, err := predictor.ParseScript(d.Script); err != nil {
		return err
	}
	if _, err := predictor.ParseFramework(d.Framework); err != nil {
		return err
	}
	sw, err := predictor.ParseSoftware(d.Software)
	if err != nil {
		return err
	}
	if d.Framework != "" {
		if err := sw.CheckFramework(d.framework()); err != nil {
			return fmt.Errorf("software: %w", err)
		}
	}
	return nil
}

// set is the dataset the run reads (its preset with the overrides), and whether one is named.
func (d RunData) set() (dataset.Dataset, bool, error) {
	if d.Dataset == "" {
		ds, err := dataset.Dataset{Classes: 1000}.With(dataset.Overrides{Input: d.Input, Classes: d.Classes})
		return ds, false, err
	}
	p, err := dataset.Preset(d.Dataset)
	if err != nil {
		return dataset.Dataset{}, false, err
	}
	ds, err := p.With(dataset.Overrides{Input: d.Input, Classes: d.Classes})
	return ds, true, err
}

// Images is the number of training images an epoch of the run reads: the dataset's,
// or 0 when no dataset is named.
func (d RunData) Images() int {
	ds, named, err := d.set()
	if err != nil || !named {
		return 0
	}
	return ds.Images
}

// buildOptions is how a zoo model is built for the run: at the dataset's input size
// (or the override's), else the model's own default; with the dataset's classes.
func (d RunData) buildOptions(model string) (cnn.Options, error) {
	ds, _, err := d.set()
	if err != nil {
		return cnn.Options{}, err
	}
	return cnn.Options{Resolution: ds.InputFor(cnn.DefaultResolution(model)), Classes: ds.Classes}, nil
}

// inputRate is the loader's rate for network net on target t, whose loader runs on
// host h (nil: none, a measured CPU's data is already where it trains).
func (d RunData) inputRate(net *cnn.Network, t Target, h *host.Host) (pipeline.Rate, error) {
	ds, named, err := d.set()
	if err != nil {
		return pipeline.Rate{}, err
	}
	loader := pipeline.Loader(strings.ToLower(d.Loader))
	if !named || t.cpu != nil || loader == "" {
		loader = pipeline.Synthetic // no files to read, or a CPU target: the data is where the step runs
	}
	if ds.InMemory && (loader == pipeline.DALI || loader == pipeline.FFCV) {
		return pipeline.Rate{}, Inputf("the %s loader decodes image files; %s is held in memory: choose the pytorch or synthetic loader", loader, ds.Name)
	}
	set := pipeline.Settings{Loader: loader, Workers: d.Workers}
	if h != nil {
		set.CPUScale, set.CPUScaleSlow, set.CPUScaleFast, set.ThreadsPerCore = h.Speed, h.SlowSpeed, h.FastSpeed, h.ThreadsPerCore
	}
	return pipeline.Model(set, ds, net.Input.H, t.Machine.VCPUs, max(t.Machine.GPUCount, 1), t.GPU)
}

// script is the run's training script for the predictor ("" when none is named).
func (d RunData) script() predictor.Script {
	s, err := predictor.ParseScript(d.Script)
	if err != nil || d.Script == "" {
		return ""
	}
	return s
}

// framework is what runs the run's step, for the predictor: the one named, else the
// software's own (pytorch1 on a PyTorch 1 release, pytorch2 on any other).
func (d RunData) framework() predictor.Framework {
	f, err := predictor.ParseFramework(d.Framework)
	if err != nil || strings.TrimSpace(d.Framework) == "" {
		return d.software().DefaultFramework()
	}
	return f
}

// software is the release of the kernel libraries the run uses (current when none is
// named or the name is bad: Check reports that).
func (d RunData) software() predictor.Software {
	s, err := predictor.ParseSoftware(d.Software)
	if err != nil {
		return predictor.CurrentSoftware
	}
	return s
}

// memoryFormat is the run's layout for the predictor.
func (d RunData) memoryFormat() predictor.MemoryFormat {
	f, err := predictor.ParseMemoryFormat(strings.ToLower(d.MemoryFormat))
	if err != nil {
		return ""
	}
	return f
}
