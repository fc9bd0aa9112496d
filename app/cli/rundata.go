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
}

// RunDataUsage explains each run-data flag, for `cnntime help predict` and the README.
const RunDataUsage = `run data (how the run gets its images):
  --dataset imagenet-1k|cifar-10|cifar-100   the training set: images per epoch, input size and classes
                       (imagenet-1k: 1,281,167 JPEGs, each model at its weights' crop size, 1000 classes;
                       cifar-10/100: 50,000 images of 32x32 held in memory, 10/100 classes)
  --input N            input size in pixels, overriding the dataset's and the model's (e.g. 160)
  --classes K          output classes, overriding the dataset's
  --images N           training images per epoch, overriding the dataset's
  --loader synthetic|pytorch|dali
                       synthetic: data already on the GPU (what benchmarks report);
                       pytorch (default): DataLoader workers decode JPEGs with PIL on the CPU
                       (about 134 ImageNet images/s per worker on its own core);
                       dali: nvJPEG decodes on the GPU, which costs GPU time
  --workers N          loader workers per GPU (default: the machine's vCPUs per GPU less one,
                       at least 1; 8 for a bare --gpu, whose vCPUs are unknown)
  --memory-format nchw|nhwc
                       nchw (PyTorch's default) pays layout transposes around tensor-core
                       convolutions under amp; nhwc is channels_last
  --script lean|reference|lightning
                       the training script around the step, a per-step cost of its own
                       ("script_ms"): reference (default; torchvision's reference script:
                       accuracy, .item() reads and meters every step), lean (a tight loop,
                       as benchmarks run) or lightning (a Lightning Trainer)
  --framework pytorch2|pytorch1|graph|compiled|optimized
                       the software stack that runs the step, at the kernel level (which
                       kernels run and fuse, how the host issues them, the optimizer's
                       work per parameter tensor): pytorch2 (default; eager PyTorch 2:
                       every layer its own kernels, foreach optimizer), pytorch1 (PyTorch
                       1.x: the optimizer loops over the parameters in Python, gradients
                       are zeroed and accumulated), graph (TensorFlow, MXNet as they run
                       by default: a C++ executor, fused updates, under amp NHWC
                       convolutions), compiled (torch.compile, reduce-overhead: batch norm
                       and elementwise chains fused into one kernel each, CUDA graphs) or
                       optimized (NVIDIA's MLPerf-class implementations: under amp NHWC
                       throughout, batch norm fused into the convolutions, BN-add-ReLU
                       fused, one CUDA graph per step; use with --loader dali); explain
                       lists the fused kernels and every stack's cost
A step takes the longer of the GPU's step and the loader's time for the batch: each row
says which ("bound": "gpu" or "input") and gives the loader's own rate.`

func (rf *runDataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&rf.dataset, "dataset", dataset.Default, "training set: "+strings.Join(dataset.Names(), ", "))
	fs.IntVar(&rf.input, "input", 0, "input size in pixels (default: the dataset's, else the model's own: 224, 299 for inception_v3, 380 for efficientnet_b4, ...)")
	fs.IntVar(&rf.classes, "classes", 0, "output classes (default: the dataset's)")
	fs.StringVar(&rf.loader, "loader", string(pipeline.PyTorch), "input pipeline: synthetic (data on the GPU), pytorch (DataLoader workers decoding JPEGs) or dali (decoding on the GPU)")
	fs.IntVar(&rf.workers, "workers", 0, "loader workers per GPU (default: the machine's vCPUs per GPU less one, at least 1; 8 for a bare --gpu)")
	fs.StringVar(&rf.memoryFormat, "memory-format", "nchw", "activation layout: nchw (PyTorch's default) or nhwc (channels_last)")
	fs.StringVar(&rf.script, "script", string(predictor.DefaultScript), "training script around the step: reference (per-step metrics and .item() reads), lean (a tight loop) or lightning")
	fs.StringVar(&rf.framework, "framework", string(predictor.PyTorch2), "the software stack: pytorch2 (eager, foreach optimizer), pytorch1 (eager, a Python loop over the parameters), graph (TensorFlow, MXNet), compiled (torch.compile) or optimized (NVIDIA's MLPerf-class)")
}

// runData checks the flags and returns the run data they describe; a mistake is a
// usage error that names the flag.
func (rf *runDataFlags) runData() (app.RunData, error) {
	d := app.RunData{Dataset: strings.ToLower(strings.TrimSpace(rf.dataset)), Input: rf.input, Classes: rf.classes,
		Loader: strings.ToLower(strings.TrimSpace(rf.loader)), Workers: rf.workers, MemoryFormat: strings.ToLower(strings.TrimSpace(rf.memoryFormat)),
		Script: strings.ToLower(strings.TrimSpace(rf.script)), Framework: strings.ToLower(strings.TrimSpace(rf.framework))}
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
