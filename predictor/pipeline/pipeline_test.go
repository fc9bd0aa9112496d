package pipeline

import (
	"math"
	"strings"
	"testing"

	"cnntime/predictor/dataset"
	"cnntime/predictor/hw"
)

func TestDefaultWorkers(t *testing.T) {
	for _, tc := range []struct{ vcpus, gpus, want int }{
		{4, 1, 3},   // aws/g4dn.xlarge
		{96, 8, 11}, // aws/p4d.24xlarge
		{8, 1, 7},   // aws/p3.2xlarge
		{2, 1, 1},   // never below one
		{1, 4, 1},   //
		{0, 1, 8},   // a bare GPU
	} {
		if got := DefaultWorkers(tc.vcpus, tc.gpus); got != tc.want {
			t.Errorf("DefaultWorkers(%d, %d) = %d, want %d", tc.vcpus, tc.gpus, got, tc.want)
		}
	}
}

func TestParseLoaderAndCheck(t *testing.T) {
	for _, s := range []string{"synthetic", "PyTorch", " dali ", "dali-cpu", "FFCV", "tfdata"} {
		if _, err := ParseLoader(s); err != nil {
			t.Errorf("ParseLoader(%q): %v", s, err)
		}
	}
	if _, err := ParseLoader("webdataset"); err == nil || !strings.Contains(err.Error(), "dali-cpu, ffcv or tfdata") {
		t.Errorf("ParseLoader(webdataset) error = %v", err)
	}
	if err := (Settings{Loader: PyTorch, Workers: -1}).Check(); err == nil || !strings.Contains(err.Error(), "workers -1") {
		t.Errorf("Check(workers -1) = %v", err)
	}
}

func TestModelRates(t *testing.T) {
	imagenet, _ := dataset.Preset("imagenet-1k")
	cifar, _ := dataset.Preset("cifar-10")
	v100 := hw.GPU{ID: "v100", MemoryBandwidthGBs: 900}
	perWorker224 := 1000 / (PerImageOverheadMS + 1000/WorkerImagesPerS) // 132.2 images/s
	for _, tc := range []struct {
		name        string
		s           Settings
		d           dataset.Dataset
		input       int
		vcpus, gpus int
		wantIPS     float64
		wantWorkers int
		wantGPUMS   float64
	}{
		{"synthetic costs nothing", Settings{Loader: Synthetic}, imagenet, 224, 4, 1, 0, 0, 0},
		// g4dn.xlarge: 3 workers and the training process on 4 vCPUs (2 cores):
		// 2 + 0.25×2 = 2.5 cores, 3/4 of them the workers'.
		{"g4dn.xlarge: 3 workers on 2 cores", Settings{Loader: PyTorch}, imagenet, 224, 4, 1, 2.5 * 3 / 4 * perWorker224, 3, 0},
		// p4d.24xlarge: 8 × (11 + 1) threads on 48 cores: 60 cores, 7.5 per GPU, 11/12 the workers'.
		{"p4d.24xlarge: 11 workers per GPU", Settings{Loader: PyTorch}, imagenet, 224, 96, 8, 7.5 * 11 / 12 * perWorker224, 11, 0},
		// 4 workers on 32 vCPUs: every thread has its own core.
		{"few workers, many cores", Settings{Loader: PyTorch, Workers: 4}, imagenet, 224, 32, 1, 4 * perWorker224, 4, 0},
		{"bare GPU: 8 workers", Settings{Loader: PyTorch}, imagenet, 224, 0, 1, 8 * perWorker224, 8, 0},
		// 380 px: the input-size part grows by (380/224)².
		{"efficientnet_b4's 380 px", Settings{Loader: PyTorch, Workers: 4}, imagenet, 380, 0, 1,
			4 * 1000 / (0.1 + 0.8/WorkerImagesPerS*1000 + 0.2/WorkerImagesPerS*1000*380*380/(224*224)), 4, 0},
		// CIFAR in memory: no decode, a 32×32 input.
		{"cifar-10 in memory", Settings{Loader: PyTorch, Workers: 2}, cifar, 32, 0, 1, 2 * 1000 / (0.1 + 0.2/WorkerImagesPerS*1000*1024/50176), 2, 0},
		{"dali on a V100", Settings{Loader: DALI, Workers: 4}, imagenet, 224, 0, 1, 4 * 1000 / (0.025 + 0.25*0.8/WorkerImagesPerS*1000), 4, 0.35 * 0.14},
	} {
		r, err := Model(tc.s, tc.d, tc.input, tc.vcpus, tc.gpus, v100)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if math.Abs(r.ImagesPerS-tc.wantIPS) > 1e-6*math.Max(1, tc.wantIPS) || r.Workers != tc.wantWorkers || math.Abs(r.GPUMSPerImage-tc.wantGPUMS) > 1e-9 || r.Input != tc.input {
			t.Errorf("%s: got %+v, want %.2f images/s, %d workers, %.4f GPU ms per image", tc.name, r, tc.wantIPS, tc.wantWorkers, tc.wantGPUMS)
		}
	}
	if _, err := Model(Settings{Loader: PyTorch}, imagenet, 0, 4, 1, v100); err == nil {
		t.Error("Model accepted an input size of 0")
	}
	// An H100's hardware JPEG decoders take DALI's default 65% of the images: the CPU
	// threads Huffman-decode the other 35% only, and the SMs decode only those.
	h100 := hw.GPU{ComputeCapability: "9.0", MemoryBandwidthGBs: 3350}
	r, err := Model(Settings{Loader: DALI, Workers: 4}, imagenet, 224, 0, 1, h100)
	if err != nil {
		t.Fatal(err)
	}
	wantIPS := 4 * 1000 / (0.025 + 0.35*0.25*0.8/WorkerImagesPerS*1000)
	if math.Abs(r.ImagesPerS-wantIPS) > 1e-6*wantIPS || math.Abs(r.GPUMSPerImage-0.35*0.35*0.14*900/3350) > 1e-9 {
		t.Errorf("dali on an H100: %+v, want %.1f images/s and %.5f GPU ms per image", r, wantIPS, 0.35*0.35*0.14*900/3350)
	}
	for _, tc := range []struct {
		cc   string
		want bool
	}{{"7.0", false}, {"8.0", true}, {"8.6", false}, {"8.9", false}, {"9.0", true}, {"10.0", true}, {"", false}} {
		if got := HasJPEGDecoder(hw.GPU{ComputeCapability: tc.cc}); got != tc.want {
			t.Errorf("HasJPEGDecoder(cc %q) = %t, want %t", tc.cc, got, tc.want)
		}
	}
}

func TestStepMS(t *testing.T) {
	r := Rate{Loader: PyTorch, ImagesPerS: 200, HostToDeviceBytesPerImage: 3 * 224 * 224 * 4}
	for _, tc := range []struct {
		name      string
		r         Rate
		b         int
		gpuMS     float64
		link      float64
		wantMS    float64
		wantBound string
	}{
		{"loader-bound", r, 256, 300, 12, 1280, "input"},
		// 256 × 602112 B / 12 GB/s = 12.85 ms of copy on top of the GPU's 1400 ms.
		{"gpu-bound with the batch copy", r, 256, 1400, 12, 1400 + 256*602112/12e9*1000, "gpu"},
		{"synthetic", Rate{Loader: Synthetic}, 256, 300, 12, 300, "gpu"},
		{"dali adds GPU time", Rate{Loader: DALI, ImagesPerS: 5000, GPUMSPerImage: 0.05}, 100, 50, 12, 55, "gpu"},
	} {
		ms, bound := tc.r.StepMS(tc.b, tc.gpuMS, tc.link)
		if math.Abs(ms-tc.wantMS) > 1e-9 || bound != tc.wantBound {
			t.Errorf("%s: StepMS = %.4f %s, want %.4f %s", tc.name, ms, bound, tc.wantMS, tc.wantBound)
		}
	}
}

// The CPU loaders take CPUSpeedup fewer core-seconds than the DataLoader for the same
// images, and a core CPUScale times as fast delivers CPUScale times the images: a
// bare GPU's 8 threads, each on its own core.
func TestCPULoadersAndCPUScale(t *testing.T) {
	imagenet, _ := dataset.Preset("imagenet-1k")
	v100 := hw.GPU{ID: "v100", MemoryBandwidthGBs: 900}
	perImageMS := 1000 / WorkerImagesPerS // decode and output at the reference sizes
	for _, tc := range []struct {
		loader   Loader
		scale    float64
		want     float64
		h2dBytes float64
	}{
		{DALICPU, 0, 8 * 2.1 / perImageMS * 1000, 3 * 224 * 224},
		{FFCV, 1, 8 * 4.1 / perImageMS * 1000, 3 * 224 * 224},
		{TFData, 1.25, 1.25 * 8 * 1.5 / perImageMS * 1000, 3 * 224 * 224 * 4},
		{PyTorch, 2, 2 * 8 / (PerImageOverheadMS + perImageMS) * 1000, 3 * 224 * 224 * 4},
	} {
		r, err := Model(Settings{Loader: tc.loader, CPUScale: tc.scale}, imagenet, 224, 0, 1, v100)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.ImagesPerS-tc.want) > 1e-6*tc.want || r.HostToDeviceBytesPerImage != tc.h2dBytes {
			t.Errorf("%s at %gx: %.2f images/s, %v bytes to the GPU; want %.2f and %v", tc.loader, tc.scale, r.ImagesPerS, r.HostToDeviceBytesPerImage, tc.want, tc.h2dBytes)
		}
	}
	if _, err := Model(Settings{Loader: PyTorch, CPUScale: -1}, imagenet, 224, 0, 1, v100); err == nil {
		t.Error("a negative CPU speed was accepted")
	}
}

// A vCPU of an Arm host is a whole core: Grace's 64 vCPUs run 63 workers and the
// training process on 64 cores, where 64 x86 hyperthreads give them 32 + 0.25×32.
func TestThreadsPerCoreSetsTheCoresTheWorkersGet(t *testing.T) {
	imagenet, _ := dataset.Preset("imagenet-1k")
	perWorker224 := 1000 / (PerImageOverheadMS + 1000/WorkerImagesPerS)
	for _, tc := range []struct {
		name    string
		threads int
		vcpus   int
		want    float64
	}{
		{"Arm: one thread a core", 1, 64, 63 * perWorker224},
		{"x86: two threads a core", 2, 64, (32 + 0.25*32) * 63 / 64 * perWorker224},
		{"the default is two", 0, 64, (32 + 0.25*32) * 63 / 64 * perWorker224},
		{"Arm with more workers than cores gets no more", 1, 5, 4 * perWorker224},
	} {
		r, err := Model(Settings{Loader: PyTorch, ThreadsPerCore: tc.threads}, imagenet, 224, tc.vcpus, 1, hw.GPU{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.ImagesPerS-tc.want) > 1e-6 {
			t.Errorf("%s: %.2f images/s, want %.2f", tc.name, r.ImagesPerS, tc.want)
		}
	}
	if err := (Settings{ThreadsPerCore: 9}).Check(); err == nil {
		t.Error("9 threads a core was accepted")
	}
}

// An assumed host's range is the rate's; AtScale moves only the CPU-bound rate.
func TestAtScaleMovesTheLoaderWithItsCores(t *testing.T) {
	imagenet, _ := dataset.Preset("imagenet-1k")
	r, err := Model(Settings{Loader: PyTorch, CPUScale: 1, CPUScaleSlow: 0.9, CPUScaleFast: 1.8}, imagenet, 224, 8, 1, hw.GPU{})
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUScaleSlow != 0.9 || r.CPUScaleFast != 1.8 {
		t.Errorf("range %g–%g, want 0.9–1.8", r.CPUScaleSlow, r.CPUScaleFast)
	}
	fast := r.AtScale(1.8)
	if math.Abs(fast.ImagesPerS/r.ImagesPerS-1.8) > 1e-9 || fast.HandoffMS != r.HandoffMS {
		t.Errorf("at 1.8× the core: %g images/s from %g, handoff %g from %g", fast.ImagesPerS, r.ImagesPerS, fast.HandoffMS, r.HandoffMS)
	}
	known, _ := Model(Settings{Loader: PyTorch, CPUScale: 1.4}, imagenet, 224, 8, 1, hw.GPU{})
	if known.CPUScaleSlow != 1.4 || known.CPUScaleFast != 1.4 {
		t.Errorf("a known host's range %g–%g, want it at its speed", known.CPUScaleSlow, known.CPUScaleFast)
	}
	if syn := (Rate{Loader: Synthetic}).AtScale(2); syn.ImagesPerS != 0 {
		t.Errorf("synthetic data at another scale: %+v", syn)
	}
}
