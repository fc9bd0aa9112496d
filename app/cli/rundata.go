package cli

import (
	"flag"
	"strings"

	"cnntime/app"
	"cnntime/predictor"
	"cnntime/predictor/dataset"
	"cnntime/predictor/pipeline"
)

// runDataFlags are the flags that describe how a run gets its images: the dataset and
// its overrides, the input pipeline and the memory format (predict, best, export).
type runDataFlags struct {
	dataset      string
	input        int
	classes      int
	loader       string
	workers      int
	memoryFormat string
	script       string
	framework    string
	software     string
}

// runDataNote is the help on the run-data flags, after a command's summary; each flag
// and choice explains itself in the flags' list.
const runDataNote = `The run-data flags (--dataset, --input, --classes, --images, --loader, --workers,
--memory-format, --script, --framework, --software) say how the run gets its images and what
runs its step. A step takes the longer of the GPU's step and the loader's time for the batch:
each row says which ("bound": "gpu" or "input") and gives the loader's own rate. --framework
says which kernels run and how the host issues them; --software which release of the kernel
libraries runs them (a GPU's kernels reach less of its peak in releases soon after its
architecture launched).`

func (rf *runDataFlags) register(fs *flag.FlagSet) {
	choiceVar(fs, &rf.dataset, "dataset", dataset.Default, "the training set: images per epoch, input size and classes", datasetChoices(), normalised(errorOf(dataset.Preset)))
	wholeVar(fs, &rf.input, "input", 0, "input size in pixels (default: the dataset's, else the model's own: 224, 299 for inception_v3, 380 for efficientnet_b4, ...)")
	wholeVar(fs, &rf.classes, "classes", 0, "output classes (default: the dataset's)")
	choiceVar(fs, &rf.loader, "loader", string(pipeline.PyTorch), "the input pipeline", loaderChoices(), normalised(errorOf(pipeline.ParseLoader)))
	wholeVar(fs, &rf.workers, "workers", 0, "loader workers per GPU (default: the machine's vCPUs per GPU less one, at least 1; 8 for a bare --gpu)")
	choiceVar(fs, &rf.memoryFormat, "memory-format", string(predictor.NCHW), "the activations' layout", memoryFormatChoices(), normalised(errorOf(predictor.ParseMemoryFormat)))
	choiceVar(fs, &rf.script, "script", string(predictor.DefaultScript), `the training script around the step, a per-step cost of its own ("script_ms")`, scriptChoices(), normalised(errorOf(predictor.ParseScript)))
	choiceVar(fs, &rf.framework, "framework", string(predictor.PyTorch2), "the software stack that runs the step, at the kernel level: which kernels run and fuse, how the host issues them, the optimizer's work per parameter tensor (explain lists the fused kernels and every stack's cost); left out, pytorch1 with a PyTorch 1 --software", frameworkChoices(), normalised(errorOf(predictor.ParseFramework)))
	fs.Func("software", "the release of the kernel libraries that runs the step: "+predictor.SoftwareExamples+" (default current: "+predictor.CurrentSoftware.Note+")", func(v string) error {
		if _, err := predictor.ParseSoftware(v); err != nil {
			return err
		}
		rf.software = strings.TrimSpace(v)
		return nil
	})
}

// runData checks the flags and returns the run data they describe; a mistake is a
// usage error that names the flag. frameworkSet says --framework was given: left out,
// the software's own stack runs the step (app.RunData.Framework "").
func (rf *runDataFlags) runData(frameworkSet bool) (app.RunData, error) {
	d := app.RunData{Dataset: strings.ToLower(strings.TrimSpace(rf.dataset)), Input: rf.input, Classes: rf.classes,
		Loader: strings.ToLower(strings.TrimSpace(rf.loader)), Workers: rf.workers, MemoryFormat: strings.ToLower(strings.TrimSpace(rf.memoryFormat)),
		Script: strings.ToLower(strings.TrimSpace(rf.script)), Framework: strings.ToLower(strings.TrimSpace(rf.framework)),
		Software: strings.ToLower(rf.software)}
	if !frameworkSet {
		d.Framework = ""
	}
	switch {
	case d.Dataset == "":
		return d, Usagef("--dataset: give one of %s", strings.Join(dataset.Names(), ", "))
	case rf.input < 0:
		return d, Usagef("--input %d: the input size must be positive (pixels)", rf.input)
	case rf.classes < 0:
		return d, Usagef("--classes %d: must be positive", rf.classes)
	case rf.workers < 0:
		return d, Usagef("--workers %d: must be positive (omit it for the default)", rf.workers)
	}
	if err := d.Check(); err != nil {
		flag := "--dataset"
		switch msg := err.Error(); {
		case strings.Contains(msg, "loader"):
			flag = "--loader"
		case strings.Contains(msg, "software"):
			flag = "--software"
		case strings.Contains(msg, "script"):
			flag = "--script"
		case strings.Contains(msg, "framework"):
			flag = "--framework"
		case strings.Contains(msg, "memory format"):
			flag = "--memory-format"
		case strings.Contains(msg, "input size"):
			flag = "--input"
		case strings.Contains(msg, "classes"):
			flag = "--classes"
		case strings.Contains(msg, "workers"):
			flag = "--workers"
		}
		return d, Usagef("%s: %v", flag, err)
	}
	return d, nil
}
