package pipeline

import (
	"fmt"
	"math"
	"strings"

	"cnntime/predictor/dataset"
	"cnntime/predictor/hw"
)

// Loader names an input pipeline.
type Loader string

// The loaders.
const (
	Synthetic Loader = "synthetic" // data already on the GPU: no loader cost
	PyTorch   Loader = "pytorch"   // DataLoader worker processes, PIL decode, torchvision transforms
	DALI      Loader = "dali"      // NVIDIA DALI: nvJPEG decode and augmentations on the GPU
	DALICPU   Loader = "dali-cpu"  // NVIDIA DALI's CPU pipeline: libjpeg-turbo decode and crop on CPU threads
	FFCV      Loader = "ffcv"      // FFCV: its own dataset file, JIT-compiled decode and crop on CPU threads
	TFData    Loader = "tfdata"    // tf.data: TensorFlow's C++ decode-and-crop on its thread pool
)

// Loaders lists the loaders in the order help text shows them.
var Loaders = []Loader{Synthetic, PyTorch, DALI, DALICPU, FFCV, TFData}

// ParseLoader accepts synthetic, pytorch, dali, dali-cpu, ffcv or tfdata.
func ParseLoader(s string) (Loader, error) {
	for _, l := range Loaders {
		if string(l) == strings.ToLower(strings.TrimSpace(s)) {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown loader %q: use synthetic, pytorch, dali, dali-cpu, ffcv or tfdata", s)
}

// CPUSpeedup is how many times fewer core-seconds per image a loader's CPU pipeline
// takes than PyTorch's DataLoader (PIL decode and torchvision's transform) for the
// same images on the same core. Each is fitted on one cited loader-bound figure
// (assets/validation/loader_runs.csv, set "tuning"); the other sources are held out:
//
//   - dali-cpu: DLPerf's PyTorch ResNet-50 with DALI's CPU pipeline
//     (get_dali_train_loader(dali_cpu=True)), --workers 8 over 8 V100s, so one thread
//     per GPU, 2244 images/s: 280 per thread against the DataLoader's 134 → 2.1.
//   - ffcv: FFCV's ImageNet data-loading benchmark (docs/benchmarks.rst) on a
//     p3dn.24xlarge, 31,278 images/s at 512 px JPEG, all 96 vCPUs (48 Xeon Platinum 8175M
//     cores; with hyperthreads 60 cores' worth, scaled to the reference CPU) → 4.1.
//   - tfdata: tensorpack's ImageNet reading benchmark (tensorpack/benchmarks
//     ImageNet/README.md): tf.data with GoogleNetResize and Flip reaches 11k images/s on
//     a DGX-1 (2 × Xeon E5-2698 v4, 80 threads; 50 cores' worth) → 1.5.
var CPUSpeedup = map[Loader]float64{PyTorch: 1, DALICPU: 2.1, FFCV: 4.1, TFData: 1.5}

// BareGPUWorkers is the worker count assumed for a GPU without a machine (whose
// vCPUs are unknown): PyTorch's ImageNet reference scripts' common setting.
const BareGPUWorkers = 8

// MaxWorkers bounds a worker count given by the user.
const MaxWorkers = 1024

// DefaultWorkers is the DataLoader worker count per GPU on a machine with vcpus vCPUs
// and gpus GPUs: the vCPUs per GPU less one for the training process itself, at
// least 1; BareGPUWorkers when the vCPUs are unknown (vcpus ≤ 0).
func DefaultWorkers(vcpus, gpus int) int {
	if vcpus <= 0 {
		return BareGPUWorkers
	}
	if gpus < 1 {
		gpus = 1
	}
	return max(vcpus/gpus-1, 1)
}

// Per-image costs of the loaders on one CPU core (one DataLoader worker process).
//
// WorkerImagesPerS is what one DataLoader worker delivers of ImageNet training images
// (JPEGs of 400×350 pixels on average) through torchvision's standard training
// transform (PIL decode, RandomResizedCrop(224), RandomHorizontalFlip, ToTensor,
// Normalize). It is fitted to one published loader-bound run: Oneflow-Inc/DLPerf
// (PyTorch/resnet50v1.5/README.md) trains ResNet-50 with pytorch/examples' imagenet
// main.py (PyTorch 1.6, FP32, batch 128 per GPU) on 8 V100s with --workers 8, which
// main.py divides among the GPUs: one worker per GPU gives 1070 images/s over 8 GPUs,
// 134 per worker, where the same GPUs reach 2244 with DALI. The other rows of that
// table are held out (assets/validation/modern_anchors.csv, loader columns).
// tensorpack's "Efficient DataFlow" tutorial (40–80 images/s per process with heavier
// ResNet augmentations) agrees in magnitude. The per-image time is split between a
// part that grows with the stored image's pixels (JPEG decode: DecodeShare) and a part
// that grows with the network's input pixels (resampling the crop, the flip,
// conversion to float and normalisation).
const (
	WorkerImagesPerS   = 134.0  // ImageNet JPEG at 400×350 to a 224×224 input, one worker on its own core
	referenceSource    = 140000 // 400×350 pixels
	referenceInput     = 224 * 224
	DecodeShare        = 0.8 // of the per-image CPU time at the reference sizes
	PerImageOverheadMS = 0.1 // Dataset.__getitem__, collation and queueing per image
	// HyperThreadYield is what a second hardware thread adds to a busy core: cloud
	// vCPUs are hyperthreads (two per core), and two busy threads on one core do about
	// 1.25× the work of one (Intel's figure for Hyper-Threading is "up to 30%").
	HyperThreadYield = 0.25
	// DALIHuffmanShare is the part of the JPEG decode a DALI "mixed" decoder leaves on
	// its CPU threads (Huffman decoding); nvJPEG runs the inverse DCT, colour
	// conversion and every augmentation on the GPU.
	DALIHuffmanShare = 0.25
	// DALIGPUMSPerMPixel is the GPU time DALI spends per million decoded source pixels
	// on a GPU with 900 GB/s of memory bandwidth (a V100), scaled by bandwidth on others:
	// decode, crop-resize and normalisation are memory-bound image kernels. DLPerf's
	// V100 runs (354 images/s with DALI, 1 GPU, FP32 ResNet-50) leave it no more than a
	// few percent of the step.
	DALIGPUMSPerMPixel = 0.35
	// DALIHardwareDecodeShare is the share of the images DALI's "mixed" decoder sends
	// to the GPU's hardware JPEG decoder where it has one (HasJPEGDecoder): DALI's
	// hw_decoder_load defaults to 0.65, and those images need no Huffman decoding on the
	// CPU threads at all (NVIDIA's DALI documentation, "Hardware-accelerated JPEG
	// decoding" on A100 and H100).
	DALIHardwareDecodeShare = 0.65
	referenceBandwidth      = 900.0
)

// HasJPEGDecoder reports whether gpu has hardware JPEG decoder engines that DALI
// uses: the datacenter GA100, GH100 and Blackwell chips (compute capability 8.0, 9.x
// and 10.x: A100, H100, H200, GH200, B200), whose NVJPG engines NVIDIA's A100 and H100
// whitepapers describe. The GA10x, Ada and older parts' DALI decodes on the CPU
// threads and CUDA cores alone.
func HasJPEGDecoder(gpu hw.GPU) bool {
	switch cc := hw.ParseComputeCapability(gpu.ComputeCapability); {
	case cc == 80, cc >= 90 && cc < 110:
		return true
	}
	return false
}

// cores is the CPU capacity, in cores' worth of one thread's work, that busy threads
// get on a machine with vcpus hardware threads, threadsPerCore of them to a core (2 on
// x86's Hyper-Threading and SMT, 1 on Arm): one core each up to the core count, then
// HyperThreadYield for each thread that shares a core.
func cores(busy, vcpus float64, threadsPerCore int) float64 {
	if threadsPerCore < 1 {
		threadsPerCore = 2
	}
	phys := vcpus / float64(threadsPerCore)
	if busy <= phys {
		return busy
	}
	return phys + HyperThreadYield*math.Min(busy-phys, phys*float64(threadsPerCore-1))
}

// Settings are the user's choice of loader and workers (0 workers: the default), and
// the machine's CPU cores: how fast one is and how many vCPUs share one.
type Settings struct {
	Loader  Loader
	Workers int
	// CPUScale is one core's speed relative to the reference CPU the rates are fitted
	// on (host.ReferenceCPU); 0 is 1. CPUScaleSlow and CPUScaleFast are the range it
	// may take where the host is assumed (0: CPUScale, nothing assumed).
	CPUScale                   float64
	CPUScaleSlow, CPUScaleFast float64
	// ThreadsPerCore is how many vCPUs share a core (host.Family); 0 is 2.
	ThreadsPerCore int
}

// Check reports a bad setting.
func (s Settings) Check() error {
	if s.Loader != "" {
		if _, err := ParseLoader(string(s.Loader)); err != nil {
			return err
		}
	}
	for _, scale := range []float64{s.CPUScale, s.CPUScaleSlow, s.CPUScaleFast} {
		if scale < 0 || scale > 10 {
			return fmt.Errorf("CPU speed %g times the reference core: must be between 0 and 10", scale)
		}
	}
	if s.ThreadsPerCore < 0 || s.ThreadsPerCore > 8 {
		return fmt.Errorf("%d threads a core: must be between 1 and 8 (0 for 2)", s.ThreadsPerCore)
	}
	if s.Workers < 0 || s.Workers > MaxWorkers {
		return fmt.Errorf("workers %d: must be between 1 and %d (0 for the default: the machine's vCPUs per GPU less one)", s.Workers, MaxWorkers)
	}
	return nil
}

// Rate is what a loader delivers to one GPU.
type Rate struct {
	Loader  Loader `json:"loader"`
	Workers int    `json:"workers,omitempty"` // worker processes (pytorch) or threads (dali, dali-cpu, ffcv, tfdata) per GPU
	// CPUScale is the machine's core speed relative to the reference CPU (1: the same);
	// CPUScaleSlow and CPUScaleFast the range an assumed host's may take (equal to
	// CPUScale when the host is known). ImagesPerS grows in proportion to it.
	CPUScale     float64 `json:"cpu_scale,omitempty"`
	CPUScaleSlow float64 `json:"cpu_scale_slow,omitempty"`
	CPUScaleFast float64 `json:"cpu_scale_fast,omitempty"`
	Input        int     `json:"input"` // the network's input size, pixels
	// ImagesPerS is the loader's own rate per GPU (CPU-bound part); 0 for synthetic:
	// unlimited.
	ImagesPerS float64 `json:"images_per_s,omitempty"`
	// GPUMSPerImage is the GPU time the loader takes per image (DALI's decode and
	// augmentations), added to the training step's.
	GPUMSPerImage float64 `json:"gpu_ms_per_image,omitempty"`
	// HostToDeviceBytesPerImage is what the training loop copies to the GPU per image
	// before the forward pass can start: float32 tensors from a PyTorch loader, none
	// from DALI (it writes on the GPU) or synthetic data.
	HostToDeviceBytesPerImage float64 `json:"h2d_bytes_per_image,omitempty"`
	// HandoffMS is the training process's own work per batch to take it from the
	// loader (DataLoaderHandoffMS for a PyTorch DataLoader), on the step's critical
	// path: the script's per-step read of the loss leaves the GPU idle while it runs.
	HandoffMS float64 `json:"handoff_ms,omitempty"`
}

// DataLoaderHandoffMS is what the training process spends per batch taking it from a
// PyTorch DataLoader: the worker queue's get and unpickling, the pin-memory thread's
// hand-over and the batch's .cuda() calls. Fitted, with the eager operator cost, on the
// tuning sources of the one-GPU step-time series (assets/validation/step_batch.csv,
// `cnntime validate` table 8; app/validate.FitStepOverheads); its held-out sources
// check it. 0.5 ms since FP32 3×3 convolutions run as Winograd's fewer blocks, and
// still since small forward and data-gradient GEMMs split their reduction (with the
// eager operator's 20 µs); 1.0 ms before; 1.5 ms before the maturity term's cost per
// convolution.
const DataLoaderHandoffMS = 0.5

// Model returns the rate of the loader s picks for dataset d at input size input on
// one of gpus GPUs of a machine with vcpus vCPUs (0: unknown, a bare GPU). The
// synthetic loader, and an empty one, costs nothing.
func Model(s Settings, d dataset.Dataset, input int, vcpus, gpus int, gpu hw.GPU) (Rate, error) {
	if err := s.Check(); err != nil {
		return Rate{}, err
	}
	if input <= 0 {
		return Rate{}, fmt.Errorf("input size %d: must be positive", input)
	}
	r := Rate{Loader: s.Loader, Input: input}
	if s.Loader == "" || s.Loader == Synthetic {
		r.Loader = Synthetic
		return r, nil
	}
	r.Workers = s.Workers
	r.CPUScale = s.CPUScale
	if r.CPUScale == 0 {
		r.CPUScale = 1
	}
	r.CPUScaleSlow, r.CPUScaleFast = r.CPUScale, r.CPUScale
	if s.CPUScaleSlow > 0 {
		r.CPUScaleSlow = math.Min(s.CPUScaleSlow, r.CPUScale)
	}
	if s.CPUScaleFast > 0 {
		r.CPUScaleFast = math.Max(s.CPUScaleFast, r.CPUScale)
	}
	if r.Workers == 0 {
		r.Workers = DefaultWorkers(vcpus, gpus)
	}
	// On a machine whose vCPUs are known, every GPU's workers and its training
	// process share the vCPUs' cores; a bare GPU's workers each get a core.
	parallel := float64(r.Workers)
	if vcpus > 0 {
		n := float64(max(gpus, 1))
		busy := n * (parallel + 1)
		parallel = cores(busy, float64(vcpus), s.ThreadsPerCore) / n * parallel / (parallel + 1)
	}
	parallel *= r.CPUScale
	inPx := float64(input) * float64(input)
	outMS := (1 - DecodeShare) / WorkerImagesPerS * 1000 * inPx / referenceInput
	decodeMS := DecodeShare / WorkerImagesPerS * 1000 * d.SourcePixels() / referenceSource
	switch s.Loader {
	case PyTorch:
		r.ImagesPerS = parallel / (PerImageOverheadMS + decodeMS + outMS) * 1000
		r.HostToDeviceBytesPerImage = 3 * inPx * 4
		r.HandoffMS = DataLoaderHandoffMS
	case DALICPU, FFCV, TFData:
		// The same decode and crop as PIL's, in C++ (or JIT-compiled) threads with no
		// per-sample Python: CPUSpeedup fewer core-seconds. DALI and FFCV hand the GPU
		// uint8 images (normalised there); tf.data float32 tensors.
		cpuMS := (decodeMS + outMS) / CPUSpeedup[s.Loader]
		if d.InMemory {
			cpuMS = outMS / CPUSpeedup[s.Loader]
		}
		r.ImagesPerS = parallel / cpuMS * 1000
		r.HostToDeviceBytesPerImage = 3 * inPx
		if s.Loader == TFData {
			r.HostToDeviceBytesPerImage = 3 * inPx * 4
		}
	case DALI:
		huffman := DALIHuffmanShare
		if HasJPEGDecoder(gpu) {
			huffman *= 1 - DALIHardwareDecodeShare // the decoder engines take their share whole
		}
		cpuMS := PerImageOverheadMS/4 + huffman*decodeMS
		if d.InMemory {
			cpuMS = PerImageOverheadMS / 4
		}
		r.ImagesPerS = parallel / cpuMS * 1000
		bw := gpu.MemoryBandwidthGBs
		if !(bw > 0) {
			bw = referenceBandwidth
		}
		px := math.Max(d.SourcePixels(), inPx)
		r.GPUMSPerImage = DALIGPUMSPerMPixel * px / 1e6 * referenceBandwidth / bw
		if HasJPEGDecoder(gpu) {
			// The hardware decoder's images cost the SMs nothing: the work per source
			// pixel is the decode's (the crop is resized to the far smaller input).
			r.GPUMSPerImage *= 1 - DALIHardwareDecodeShare
		}
	}
	return r, nil
}

// AtScale is the rate the loader would have were one core scale times the reference
// core (the loader's CPU work scales with it; synthetic data and the GPU's side do not):
// the ends of an assumed host's range (CPUScaleSlow, CPUScaleFast).
func (r Rate) AtScale(scale float64) Rate {
	if r.ImagesPerS > 0 && r.CPUScale > 0 && scale > 0 {
		r.ImagesPerS *= scale / r.CPUScale
		r.CPUScale = scale
	}
	return r
}

// StepMS is the time of a training step of b images on one GPU whose own step (the
// kernels and the host work around them) takes gpuStepMS, fed by r over a host link
// of linkGBs GB/s, with bound "gpu" or "input". A prefetching loader works while the
// GPU trains on the previous batch, so the step is the slower of the two; the batch's
// copy to the GPU, DALI's GPU work and the training process's hand-over of the batch
// add to the GPU's side.
func (r Rate) StepMS(b int, gpuStepMS, linkGBs float64) (ms float64, bound string) {
	gpu := gpuStepMS + float64(b)*r.GPUMSPerImage + r.HandoffMS
	if r.HostToDeviceBytesPerImage > 0 && linkGBs > 0 {
		gpu += float64(b) * r.HostToDeviceBytesPerImage / (linkGBs * 1e9) * 1000
	}
	if r.ImagesPerS > 0 {
		if loader := float64(b) / r.ImagesPerS * 1000; loader > gpu {
			return loader, "input"
		}
	}
	return gpu, "gpu"
}
