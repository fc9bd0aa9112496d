package predictor

import (
	"fmt"

	"cnntime/predictor/cnn"
	"cnntime/predictor/hw"
	"cnntime/predictor/kernels"
	"cnntime/predictor/pipeline"
)

// MemoryFormat is the layout of activation tensors: PyTorch's default NCHW
// (contiguous) or NHWC (torch.channels_last).
type MemoryFormat string

// The memory formats. The zero value is the kernels' own layout: no transposes are
// added (benchmarks that time layers in the layout their kernels want).
const (
	NCHW MemoryFormat = "nchw"
	NHWC MemoryFormat = "nhwc"
)

// MemoryFormats lists the memory formats, in the order help shows them.
var MemoryFormats = []MemoryFormat{NCHW, NHWC}

// MemoryFormatAliases are PyTorch's names for the memory formats, which
// ParseMemoryFormat accepts too.
var MemoryFormatAliases = map[string]MemoryFormat{"contiguous": NCHW, "channels_last": NHWC}

// ParseMemoryFormat accepts nchw or nhwc, or one of MemoryFormatAliases (channels_last
// for nhwc).
func ParseMemoryFormat(s string) (MemoryFormat, error) {
	for _, f := range MemoryFormats {
		if string(f) == s {
			return f, nil
		}
	}
	if f, ok := MemoryFormatAliases[s]; ok {
		return f, nil
	}
	return "", fmt.Errorf("unknown memory format %q: use nchw (PyTorch's default) or nhwc (channels_last)", s)
}

// HostLinkEfficiency is the share of the PCIe link's bandwidth a pinned host-to-device
// copy reaches (about 12 of 15.75 GB/s on PCIe 3.0 ×16).
const HostLinkEfficiency = 0.78

// hostLinkGBs is the host-to-GPU bandwidth: PCIe from the GPU's generation and
// lanes, else PCIe 3.0 ×16, times HostLinkEfficiency.
func hostLinkGBs(gpu hw.GPU) float64 {
	perLane := 0.985 // GB/s per lane of PCIe 3, also for an unknown generation
	switch gpu.PCIeGen {
	case 4:
		perLane = 1.969
	case 5:
		perLane = 3.938
	}
	lanes := gpu.PCIeLanes
	if lanes <= 0 {
		lanes = 16
	}
	return perLane * float64(lanes) * HostLinkEfficiency
}

// inputStepMS is the step at per-GPU batch b whose GPU side takes gpuStepMS, fed by
// the request's input pipeline, and what bounds it.
func (req *Request) inputStepMS(b int, gpuStepMS float64) (float64, string) {
	return req.Input.StepMS(b, gpuStepMS, hostLinkGBs(req.GPU))
}

// networkInput is the input size (height) the network is built at: its first
// layer's input that reads the image; 0 when none does.
func networkInput(net *cnn.Network) int {
	for i := range net.Layers {
		l := &net.Layers[i]
		for _, in := range l.Inputs {
			if in < 0 {
				return l.Config.In.H
			}
		}
	}
	return 0
}

// layoutTimer adds to the convolution kernels of an NCHW network trained under amp
// on a GPU with FP16 tensor cores the layout transposes cuDNN runs around them:
// tensor-core convolution kernels read and write NHWC, so with NCHW tensors each
// convolution phase converts its two activation operands (forward: input and output;
// data gradient: output gradient and input gradient; weight gradient: input and
// output gradient) to and from NHWC, reading and writing each element once in FP16.
// Depthwise convolutions are left alone: PyTorch runs its own NCHW kernels for them.
// Its batch-norm layers (unless a stack fuses them into kernels of its own) run
// cuDNN's NCHW batch-norm kernels, which the SMs rather than the memory bound
// (kernels.Request.NCHWNorm): under amp on an H200 they take 2.7 times channels_last's
// NHWC kernels.
// Only estimates from specifications get the transposes and the slower batch norm: a
// time measured on a GPU (this one, interpolated, or another one transferred) was
// measured with NCHW tensors, so cuDNN's layout work is in it already.
// NVIDIA's "Convolutional Layers" performance guide (NHWC for Tensor Cores) and the
// PyTorch channels_last tutorial describe these transposes.
type layoutTimer struct {
	inner     LayerTimer
	memEff    float64
	fallbackB float64
}

func (t layoutTimer) Times(dev kernels.Device, req kernels.Request, batches []int, out []kernels.Estimate) {
	req, tensorCores := t.request(dev, req)
	t.inner.Times(dev, req, batches, out)
	perImageMS, ok := t.transposeMSPerImage(dev, req, tensorCores)
	if !ok {
		return
	}
	for i, b := range batches {
		if out[i].MS > 0 && out[i].Source == kernels.Estimated {
			out[i].MS += float64(b) * perImageMS
		}
	}
}

// TimesInto is Times writing into out's arrays, where the inner timer can (intoTimer).
func (t layoutTimer) TimesInto(dev kernels.Device, req kernels.Request, batches []int, out kernels.Timings) {
	inner, ok := t.inner.(intoTimer)
	if !ok {
		est := make([]kernels.Estimate, len(batches))
		t.Times(dev, req, batches, est)
		for i, e := range est {
			out.MS[i], out.RelErr[i], out.Rank[i] = e.MS, e.RelErr, e.Source.Rank()
		}
		return
	}
	req, tensorCores := t.request(dev, req)
	inner.TimesInto(dev, req, batches, out)
	perImageMS, ok := t.transposeMSPerImage(dev, req, tensorCores)
	if !ok {
		return
	}
	estimated := kernels.Estimated.Rank()
	for i, b := range batches {
		if out.MS[i] > 0 && out.Rank[i] == estimated {
			out.MS[i] += float64(b) * perImageMS
		}
	}
}

// request is req as the inner timer gets it (a batch norm under amp on tensor cores
// runs cuDNN's NCHW kernels), and whether req runs on FP16 tensor cores.
func (t layoutTimer) request(dev kernels.Device, req kernels.Request) (kernels.Request, bool) {
	tensorCores := HalfPrecision(req.Precision) && kernels.ArithmeticFor(dev.GPU, req.Precision) == kernels.ArithFP16
	if tensorCores && req.Config.Op == cnn.OpBatchNorm && req.FusedElems == 0 {
		req.NCHWNorm = true
	}
	return req, tensorCores
}

// transposeMSPerImage is the layout transposes' time per image around req's
// convolution; false where none runs (not a convolution on tensor cores, or depthwise).
func (t layoutTimer) transposeMSPerImage(dev kernels.Device, req kernels.Request, tensorCores bool) (float64, bool) {
	c := req.Config
	if c.Op != cnn.OpConv2d || !tensorCores {
		return 0, false
	}
	if c.Groups > 1 && c.Groups == c.In.C {
		return 0, false
	}
	bw, _ := kernels.BandwidthGBs(dev.GPU)
	if !(bw > 0) {
		bw = t.fallbackB
	}
	return 2 * 2 * float64(c.In.Elems()+c.Out.Elems()) / (bw * 1e9 * t.memEff) * 1000, true
}

// timerFor is the layer timer of req: the engine's, with NCHW's transposes under amp
// unless the stack runs its convolutions in NHWC whatever the model's layout
// (Framework.ConvertsLayout).
func (e *Engine) timerFor(req *Request) LayerTimer {
	if req.MemoryFormat != NCHW || req.Framework.ConvertsLayout(req.Precision) {
		return e.timer
	}
	return layoutTimer{inner: e.timer, memEff: e.over.MemoryEfficiency, fallbackB: e.over.FallbackBandwidthGBs}
}

// checkInput reports a bad input pipeline or memory format.
func (req *Request) checkInput() error {
	if req.MemoryFormat != "" {
		if _, err := ParseMemoryFormat(string(req.MemoryFormat)); err != nil {
			return err
		}
	}
	if req.Input.Loader != "" {
		if _, err := pipeline.ParseLoader(string(req.Input.Loader)); err != nil {
			return err
		}
	}
	if req.Input.ImagesPerS < 0 || req.Input.GPUMSPerImage < 0 || req.Input.HostToDeviceBytesPerImage < 0 {
		return fmt.Errorf("the input pipeline's rates must not be negative: %+v", req.Input)
	}
	return nil
}

// NetworkInput is the input size (pixels, height = width) net takes: its first
// layer's input; 0 for a network without layers.
func NetworkInput(net *cnn.Network) int { return networkInput(net) }
