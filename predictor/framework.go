package predictor

import (
	"fmt"
	"math"
	"strings"

	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Framework is the software stack that runs the training step, modelled at the kernel
// level: which kernels run (what it fuses, see fusion.go), what issuing them costs the
// host (eager Python, a C++ executor, or a replayed CUDA graph), the layout the
// convolutions see, and its work once per parameter tensor: the optimizer's update,
// clearing the gradients, adding each new gradient into the old and batch norm's step
// counters. The last does not grow with the batch, so it is the step's intercept: what
// a small batch pays most.
type Framework string

// The frameworks. The zero value is PyTorch2, what a run today uses.
const (
	// PyTorch2 is PyTorch 2's eager defaults on a GPU: every layer its own kernels,
	// issued from Python; torch.optim.SGD runs foreach (four _foreach_ operators over
	// all the tensors, each a few multi-tensor kernels) and zero_grad sets the gradients
	// to None (no kernel; backward then stores each new gradient without adding).
	PyTorch2 Framework = "pytorch2"
	// PyTorch1 is PyTorch 1.x's defaults: torch.optim.SGD loops over the parameters in
	// Python, four operators (and kernels) each with momentum and weight decay;
	// zero_grad(set_to_none=False) runs one zero_ per gradient, and backward's
	// AccumulateGrad then adds each new gradient into it (one more kernel per tensor).
	PyTorch1 Framework = "pytorch1"
	// Graph is a graph framework as it runs by default (TensorFlow, MXNet's hybridized
	// symbols): the optimizer is one fused kernel per parameter tensor issued by the
	// runtime's C++ executor, no gradient is cleared or accumulated, no Python runs per
	// operator, and under amp its layout optimizer runs the convolutions in NHWC, so an
	// NCHW graph pays no transposes around them. Batch norm, activation and add stay
	// kernels of their own: TensorFlow's fused batch-norm-ReLU needs NHWC graphs and
	// MXNet's an explicit flag (NVIDIA's implementations that set them: optimized).
	Graph Framework = "graph"
	// Compiled is torch.compile(model) as most people call it: TorchInductor in its
	// default mode. Every chain of normalisations and elementwise layers becomes one
	// generated kernel, in every precision (convolutions and linear layers stay cuDNN's
	// and cuBLAS's); the generated wrapper code still issues the kernels one by one,
	// without eager PyTorch's module calls and autograd recording (the host cost of a
	// kernel issued from C++, as the backward pass's are); the optimizer and the loop
	// around it stay eager PyTorch 2.
	Compiled Framework = "compiled"
	// CompiledGraphs is torch.compile in mode="reduce-overhead": Compiled's kernels,
	// with the forward and backward graphs replayed as CUDA graphs, so the host issues
	// no kernel of them one by one.
	CompiledGraphs Framework = "compiled-graphs"
	// Optimized is NVIDIA's MLPerf-class implementations (the DeepLearningExamples
	// MXNet and PaddlePaddle ResNet-50, NVIDIA's MLPerf submissions): under amp, NHWC
	// throughout, batch norm folded into the convolutions by cuDNN's runtime fusion
	// (statistics in the producing convolution's epilogue, scale, bias and ReLU in the
	// consuming one's prologue), batch-norm-add-ReLU as one kernel at each residual
	// join, one multi-tensor update kernel per few dozen tensors, the whole step
	// captured as one CUDA graph with no per-step host work. Its input pipeline is
	// DALI's (give --loader dali).
	Optimized Framework = "optimized"
)

// Frameworks lists the frameworks in the order help text shows them.
var Frameworks = []Framework{PyTorch2, PyTorch1, Graph, Compiled, CompiledGraphs, Optimized}

// frameworkHelp is each framework's one-line description.
var frameworkHelp = map[Framework]string{
	PyTorch2:       "PyTorch 2 eager: every layer its own kernels, foreach optimizer, gradients set to None",
	PyTorch1:       "PyTorch 1.x eager: the optimizer loops over the parameters in Python, gradients are zeroed and accumulated",
	Graph:          "a graph framework's defaults (TensorFlow, MXNet): a C++ executor, one fused update per tensor, under amp convolutions in NHWC",
	Compiled:       "torch.compile's default mode (inductor): normalisation and elementwise chains fused into one kernel each, kernels still issued one by one, eager optimizer",
	CompiledGraphs: "torch.compile mode=\"reduce-overhead\": the compiled kernels replayed as CUDA graphs, eager optimizer",
	Optimized:      "NVIDIA's MLPerf-class implementation: under amp NHWC throughout, batch norm fused into the convolutions, BN-add-ReLU fused, one CUDA graph per step",
}

// Description is f's one-line description.
func (f Framework) Description() string { return frameworkHelp[f.orDefault()] }

// CUDAGraphs reports whether f replays its step's kernels as CUDA graphs, so the host
// issues none of them one by one.
func (f Framework) CUDAGraphs() bool {
	f = f.orDefault()
	return f == CompiledGraphs || f == Optimized
}

// Compiles reports whether f is torch.compile, in either mode: its fused kernels, an
// eager optimizer.
func (f Framework) Compiles() bool {
	f = f.orDefault()
	return f == Compiled || f == CompiledGraphs
}

// Eager reports whether f runs every layer as its own kernels, issued from Python.
func (f Framework) Eager() bool {
	f = f.orDefault()
	return f == PyTorch1 || f == PyTorch2
}

// ConvertsLayout reports whether f runs the convolutions in the layout tensor cores
// want whatever layout the model is written in: a graph framework's layout optimizer
// and NVIDIA's optimised implementations under amp (NHWC throughout). Elsewhere an NCHW
// network under amp pays cuDNN's transposes around every convolution.
func (f Framework) ConvertsLayout(p measure.Precision) bool {
	f = f.orDefault()
	return HalfPrecision(p) && (f == Graph || f == Optimized)
}

// ParseFramework accepts pytorch2, pytorch1, graph, compiled, compiled-graphs or
// optimized ("" is pytorch2).
func ParseFramework(s string) (Framework, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return PyTorch2, nil
	}
	for _, f := range Frameworks {
		if string(f) == s {
			return f, nil
		}
	}
	var opts []string
	for _, f := range Frameworks {
		opts = append(opts, fmt.Sprintf("%s (%s)", f, f.Description()))
	}
	return "", fmt.Errorf("unknown framework %q: use %s", s, strings.Join(opts, "; "))
}

// orDefault is f, or PyTorch2 when f is empty.
func (f Framework) orDefault() Framework {
	if f == "" {
		return PyTorch2
	}
	return f
}

// paramTensorSizes lists the sizes (elements) of net's parameter tensors: a weight per
// layer with parameters, and its bias where it has one (a normalisation's weight and
// bias are one per channel each).
func paramTensorSizes(net *cnn.Network) []float64 {
	var out []float64
	for i := range net.Layers {
		out = append(out, layerTensorSizes(&net.Layers[i])...)
	}
	return out
}

// layerTensorSizes lists the sizes of l's parameter tensors (none without parameters).
func layerTensorSizes(l *cnn.Layer) []float64 {
	switch {
	case l.Params == 0:
		return nil
	case l.Op == cnn.OpBatchNorm || l.Op == cnn.OpLayerNorm:
		half := float64(l.Params) / 2
		return []float64{half, half}
	case l.Bias && int64(l.Out.C) < l.Params:
		return []float64{float64(l.Params - int64(l.Out.C)), float64(l.Out.C)}
	}
	return []float64{float64(l.Params)}
}

// smallOp is one operator of the step's per-tensor work: the host time to issue it
// (µs) and the GPU time of its kernel (ms), and where explain counts it.
type smallOp struct {
	issueUS  float64
	gpuMS    float64
	backward bool // issued by the autograd engine during the backward pass
}

// smallOpMS is the GPU time of an elementwise kernel over n elements moving bytes per
// element: a small kernel's fixed cost plus the bytes at the streaming bandwidth.
func (o Overheads) smallOpMS(n, bytesPerElem, gbs float64) float64 {
	return o.SmallKernelUS/1000 + n*bytesPerElem/(gbs*1e9)*1000
}

// bookkeeping is the framework's per-step work around the layers' kernels for req: the
// operators each batch-norm forward adds (after layer i, in forwardAfter[i]), those
// between the forward and the backward pass (zero_grad), those the backward pass adds
// after a layer's last backward kernel (accumulating its gradients, in
// backwardAfter[i]) and those after it (the optimizer), and the update's fused part:
// GPU time and host issue time not tied to one operator. gbs is the streaming
// bandwidth, GB/s. With ForwardBackwardOnly no zero_grad, accumulation or update runs.
type bookkeeping struct {
	forwardAfter  map[int][]smallOp
	zeroGrad      []smallOp
	backwardAfter map[int][]smallOp
	optimizer     []smallOp
	// updateMS and updateIssueMS are the update's GPU and host time where it is not
	// a list of operators (foreach, fused).
	updateMS, updateIssueMS float64
}

func (o Overheads) bookkeeping(req *Request, gbs float64) bookkeeping {
	net := req.Network
	f := req.Framework.orDefault()
	bk := bookkeeping{forwardAfter: map[int][]smallOp{}, backwardAfter: map[int][]smallOp{}}
	eager := f == PyTorch1 || f == PyTorch2
	if eager {
		// _BatchNorm.forward: self.num_batches_tracked.add_(1) in training.
		for i := range net.Layers {
			if net.Layers[i].Op == cnn.OpBatchNorm {
				bk.forwardAfter[i] = append(bk.forwardAfter[i], smallOp{issueUS: o.EagerOpUS, gpuMS: o.SmallKernelUS / 1000})
			}
		}
	}
	if req.ForwardBackwardOnly {
		return bk
	}
	ampBytes := 0.0
	switch req.Precision {
	case measure.AMP:
		ampBytes = o.AMPBytesPerParam
	case measure.BF16:
		ampBytes = o.BF16BytesPerParam
	}
	params := float64(net.Params())
	tensors := paramTensorSizes(net)
	switch f {
	case Optimized:
		// A multi-tensor fused update (MXNet's aggregated multi-precision SGD, Apex's
		// FusedSGD/LARS): one kernel per OptimizedTensorsPerLaunch tensors reads the
		// weight, gradient and momentum and writes the weight and momentum (and under
		// amp the FP16 copy of the weight: 2 bytes), inside the step's CUDA graph.
		launches := math.Ceil(float64(len(tensors)) / OptimizedTensorsPerLaunch)
		copyBytes := 0.0
		if HalfPrecision(req.Precision) {
			copyBytes = 2
		}
		bk.updateMS = launches*o.SmallKernelUS/1000 + params*(o.UpdateBytesPerParam+copyBytes)/(gbs*1e9)*1000
	case PyTorch1:
		for i := range net.Layers {
			for _, n := range layerTensorSizes(&net.Layers[i]) {
				// AccumulateGrad: grad += new (read two, write one, FP32).
				bk.backwardAfter[i] = append(bk.backwardAfter[i], smallOp{issueUS: o.LaunchBackwardUS, gpuMS: o.smallOpMS(n, 12, gbs), backward: true})
			}
		}
		for _, n := range tensors {
			bk.zeroGrad = append(bk.zeroGrad, smallOp{issueUS: o.EagerOpUS, gpuMS: o.smallOpMS(n, 4, gbs)})
			// d_p = grad.add(p, alpha=wd); buf.mul_(momentum).add_(d_p); p.add_(buf, alpha=-lr)
			for _, bytes := range [4]float64{12, 8, 12, 12} {
				bk.optimizer = append(bk.optimizer, smallOp{issueUS: o.EagerOpUS, gpuMS: o.smallOpMS(n, bytes, gbs)})
			}
		}
		bk.updateMS = params * ampBytes / (gbs * 1e9) * 1000
	case PyTorch2, Compiled, CompiledGraphs:
		// torch.compile leaves the optimizer eager: four _foreach_ operators of SGD, each one launch per MultiTensorTensors
		// tensors; the gradient-scaler's unscale under amp is one more pass.
		launches := 4 * math.Ceil(float64(len(tensors))/MultiTensorTensors)
		bk.updateMS = launches*o.SmallKernelUS/1000 + params*(o.SGDBytesPerParam+ampBytes)/(gbs*1e9)*1000
		bk.updateIssueMS = (4*o.EagerOpUS + float64(len(tensors))*o.UpdateIssueUSPerTensor) / 1000
	default: // Graph: one fused update kernel per tensor
		bk.updateMS = float64(len(tensors))*o.SmallKernelUS/1000 + params*(o.UpdateBytesPerParam+ampBytes)/(gbs*1e9)*1000
	}
	return bk
}

// OptimizedTensorsPerLaunch is how many tensors one launch of an optimised stack's
// fused update takes: the DeepLearningExamples MXNet ResNet-50 sets
// MXNET_OPTIMIZER_AGGREGATION_SIZE=60.
const OptimizedTensorsPerLaunch = 60

// MultiTensorTensors is how many tensors one multi-tensor kernel of a _foreach_
// operator takes (PyTorch's multi_tensor_apply: 110, 64, 48 or 36 tensors per launch
// for one to four tensor lists; SGD's operators take two or three lists).
const MultiTensorTensors = 48

// FrameworkOf is the framework a published run's description names ("PyTorch 1.13
// (NGC 22.10)", "TensorFlow 1.15", "Caffe2 + cuDNN v4", ...): PyTorch 2 where it says
// PyTorch 2.x, PyTorch 1 for any other PyTorch (every release before 2.0), and a
// compiled graph for the others (TensorFlow, MXNet, Caffe, Caffe2, and Torch7, whose
// optimizer updates one flattened parameter tensor).
func FrameworkOf(description string) Framework {
	d := strings.ToLower(description)
	switch {
	case strings.Contains(d, "pytorch 2") || strings.Contains(d, "torch 2."):
		return PyTorch2
	case strings.Contains(d, "pytorch"):
		return PyTorch1
	}
	return Graph
}
