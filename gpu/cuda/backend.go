//go:build cuda

package cuda

/*
#cgo CFLAGS: -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcuda
#include <cuda.h>
#include "libs.h"
#include "hold.h"
static int pci_bus_id(char* buf, int n, int dev) { return (int)cuDeviceGetPCIBusId(buf, n, (CUdevice)dev); }
#include <dlfcn.h>
#include <string.h>
// uuid_v2 reads cuDeviceGetUuid_v2 (the MIG instance's own UUID; drivers since CUDA 11.4),
// resolved at run time so that an older driver still runs the worker: 0 when read.
static int uuid_v2(int dev, unsigned char* out) {
	static CUresult (*f)(CUuuid*, CUdevice);
	if (!f) {
		void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (h) f = (CUresult (*)(CUuuid*, CUdevice))dlsym(h, "cuDeviceGetUuid_v2");
	}
	if (!f) return -1;
	CUuuid u;
	if (f(&u, (CUdevice)dev) != CUDA_SUCCESS) return -1;
	memcpy(out, u.bytes, 16);
	return 0;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"cnntime/gpu"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/cudakern"
	"cnntime/gpu/cudastatus"
	"cnntime/gpu/timing"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// Framework names the CUDA backend in step measurements.
const Framework = "cnntime-cuda"

// Options name the run-time libraries; an empty path means $CNNTIME_CUDNN (and
// CNNTIME_CUBLAS, CNNTIME_NVRTC) or the library's usual names.
type Options struct {
	CuDNN, CuBLAS, NVRTC string
}

// libs are loaded once per process. cuDNN and cuBLAS are required; NVRTC is optional:
// without it the layers that need cnntime's own kernels are unsupported (nvrtcErr says
// why) and convolutions, batch norm and GEMMs are still measured.
var (
	libsOnce               sync.Once
	libsErr                error
	nvrtcErr               error
	nvrtcMajor, nvrtcMinor int
	nvmlOK                 bool
	// ltErr says why cuBLASLt did not load: linear layers then add their bias in a
	// second GEMM pass instead of the matmul's epilogue.
	ltErr error
	// paths are the files loaded, by library.
	paths = map[string]string{}
)

func loadLibs(o Options) error {
	libsOnce.Do(func() {
		machine.driver = cu.Version()
		if n, err := cu.NumDevices(); err == nil {
			for i := 0; i < n; i++ {
				if d, err := cu.GetDevice(i); err == nil {
					major, _ := d.Attribute(cu.ComputeCapabilityMajor)
					minor, _ := d.Attribute(cu.ComputeCapabilityMinor)
					if cc := major*10 + minor; cc > 0 && (machine.cc == 0 || cc < machine.cc) {
						machine.cc = cc
					}
				}
			}
		}
		for _, l := range []struct {
			lib  library
			path string
		}{{libCuDNN, o.CuDNN}, {libCuBLAS, o.CuBLAS}} {
			p, err := l.lib.open(l.path)
			if err != nil {
				libsErr = err
				return
			}
			paths[l.lib.What] = p
			if l.lib.What == libCuDNN.What {
				machine.cudnnCUDA = int(C.x_cudnnGetCudartVersion()) / 1000
			}
		}
		cudnnVersion = int(C.x_cudnnGetVersion())
		if p, err := openCompanion(libCuBLASLt, paths[libCuBLAS.What]); err != nil {
			ltErr = err
		} else {
			paths[libCuBLASLt.What] = p
		}
		if p, err := libNVRTC.open(o.NVRTC); err != nil {
			nvrtcErr = err
		} else {
			paths[libNVRTC.What] = p
			var major, minor C.int
			if C.x_nvrtcVersion(&major, &minor) == 0 {
				nvrtcMajor, nvrtcMinor = int(major), int(minor)
			}
		}
		if p, err := libNVML.open(""); err == nil && C.x_nvmlInit_v2() == 0 {
			nvmlOK = true
			paths[libNVML.What] = p
		}
	})
	return libsErr
}

// Worker serves this machine's CUDA devices over the worker protocol.
type Worker struct{ Options Options }

// Devices describes every CUDA device.
func (w Worker) Devices() ([]measure.Device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("count CUDA devices: %w", err)
	}
	libErr := loadLibs(w.Options)
	out := make([]measure.Device, 0, n)
	for i := 0; i < n; i++ {
		d, err := describe(i, libErr == nil)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Open prepares device index for measuring.
func (w Worker) Open(index int) (gpu.Backend, error) { return Open(index, w.Options) }

func versionString(v int, cudnn bool) string {
	switch {
	case v <= 0:
		return ""
	case cudnn && v >= 90000:
		return fmt.Sprintf("%d.%d.%d", v/10000, v%10000/100, v%100)
	case cudnn:
		return fmt.Sprintf("%d.%d.%d", v/1000, v%1000/100, v%100)
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

func describe(index int, withCuDNN bool) (measure.Device, error) {
	dev, err := cu.GetDevice(index)
	if err != nil {
		return measure.Device{}, fmt.Errorf("there is no CUDA device %d: %w", index, err)
	}
	name, err := dev.Name()
	if err != nil {
		return measure.Device{}, fmt.Errorf("name CUDA device %d: %w", index, err)
	}
	id, err := dev.UUID()
	if err != nil {
		return measure.Device{}, fmt.Errorf("read the UUID of CUDA device %d: %w", index, err)
	}
	var v1, v2 [16]byte
	copy(v1[:], id[:])
	haveV2 := C.uuid_v2(C.int(index), (*C.uchar)(unsafe.Pointer(&v2[0]))) == 0
	uuid := gpu.DeviceUUID(v1, v2, haveV2) // MIG slices by their own UUID
	attr := func(a cu.DeviceAttribute) int { v, _ := dev.Attribute(a); return v }
	mem, _ := dev.TotalMem()
	d := measure.Device{
		Key: "cuda:" + uuid, Backend: "cuda", Name: name, UUID: uuid,
		ComputeCapability: fmt.Sprintf("%d.%d", attr(cu.ComputeCapabilityMajor), attr(cu.ComputeCapabilityMinor)),
		SMs:               attr(cu.MultiprocessorCount), MemoryBytes: mem,
		ClockMHz: attr(cu.ClockRate) / 1000, MemoryClockMHz: attr(cu.MemoryClockRate) / 1000,
		CUDA: versionString(cu.Version(), false),
	}
	if withCuDNN {
		d.CuDNN = versionString(int(C.x_cudnnGetVersion()), true)
	}
	if nvmlOK {
		buf := make([]byte, 96)
		if C.x_nvmlSystemGetDriverVersion((*C.char)(unsafe.Pointer(&buf[0])), C.uint(len(buf))) == 0 {
			d.Driver = C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
		}
	}
	return d, nil
}

// Backend measures one CUDA device. Its methods must be called from one goroutine
// locked to its OS thread (the worker's main), where its context is current.
type Backend struct {
	device        measure.Device
	ctx           cu.CUContext
	cudnn         unsafe.Pointer
	cublas        unsafe.Pointer
	lt            unsafe.Pointer // cuBLASLt's handle; nil without cuBLASLt (ltErr says why)
	ltWarned      bool
	k32, k16, kbf *kernels // FP32, FP16 and bfloat16 data; nil when kernelsErr says why
	kernelsErr    error
	kernelsWarned bool
	preloadWarned bool
	lastBusy      time.Time // when the last timing ended: a busy GPU needs a short warm-up only
	cc            [2]int    // compute capability
	l2Bytes       int64     // the L2 cache's size
	nvml          unsafe.Pointer
	throttle      timing.Throttle
	api           string // the cuDNN API convolutions choose through: convalgo.Legacy ("") or V8
	layout        string // the activations' layout: gpu.NCHW ("") or gpu.NHWC
	l2Mode        string // timing.L2Cold ("") or L2ProducerHot
	flushes       uint   // how many L2 flushes so far: each writes a new value
	hold          timing.Hold
	holdHost      *C.uint // the stream wait's flag, in mapped host memory
	holdDev       C.ulonglong
	holdGen       uint32
	sink          cu.DevicePtr // the touch kernel's never-written word
	othersBefore  int          // other processes on the GPU when it was opened; -1 unknown
	busyWarning   string       // what Busy said at the start, warned once
}

// Open makes device index's primary context current, creates the library handles and
// compiles the kernels.
func Open(index int, o Options) (*Backend, error) {
	if err := loadLibs(o); err != nil {
		return nil, err
	}
	d, err := describe(index, true)
	if err != nil {
		return nil, err
	}
	dev, _ := cu.GetDevice(index)
	// Before this process has a context there: any compute process NVML lists is
	// another's (its PIDs may be the host's, in a container, so they are counted, not
	// compared with ours).
	nvmlHandle := nvmlOf(index)
	others, busyWarning := -1, ""
	if nvmlHandle != nil {
		if n := int(C.nvml_processes(nvmlHandle)); n >= 0 {
			var util [2]C.uint
			C.x_nvmlDeviceGetUtilizationRates(nvmlHandle, &util[0])
			w, err := timing.Busy(n, int(util[0]), os.Getenv(timing.SharedGPUEnv) == "1")
			if err != nil {
				return nil, err
			}
			others, busyWarning = n, w
		}
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, fmt.Errorf("create a CUDA context on device %d: %w", index, err)
	}
	if err := cu.SetCurrentContext(ctx); err != nil {
		return nil, fmt.Errorf("use the CUDA context of device %d: %w", index, err)
	}
	b := &Backend{device: d, ctx: ctx, nvml: nvmlHandle, othersBefore: -1}
	if others >= 0 {
		b.othersBefore = others
	}
	b.busyWarning = busyWarning
	if l2, err := dev.Attribute(cu.L2CacheSize); err == nil {
		b.l2Bytes = int64(l2)
	}
	if err := cudnnCheck("cudnnCreate", C.x_cudnnCreate(&b.cudnn)); err != nil {
		return nil, err
	}
	if err := createCuBLAS(&b.cublas); err != nil {
		return nil, err
	}
	if ltErr == nil {
		if err := ltCheck("cublasLtCreate", C.x_cublasLtCreate(&b.lt)); err != nil {
			ltErr, b.lt = err, nil
		}
	}
	fmt.Sscanf(d.ComputeCapability, "%d.%d", &b.cc[0], &b.cc[1])
	b.kernelsErr = nvrtcErr
	if b.kernelsErr == nil {
		if b.k32, b.kernelsErr = compileKernels(convalgo.Float, b.cc); b.kernelsErr == nil {
			if b.k16, b.kernelsErr = compileKernels(convalgo.Half, b.cc); b.kernelsErr == nil {
				b.kbf, b.kernelsErr = compileKernels(convalgo.BFloat16, b.cc)
			}
		}
	}
	if b.kernelsErr != nil {
		b.k32, b.k16, b.kbf = nil, nil, nil
	}
	b.hold = timing.ChooseHold(b.k32 != nil, C.hold_load() != 0)
	if b.hold == timing.HoldStream {
		var host *C.uint
		var devPtr C.ulonglong
		if C.hold_alloc(&host, &devPtr) != 0 {
			b.hold = timing.HoldNone
		} else {
			b.holdHost, b.holdDev = host, devPtr
		}
	}
	if b.k32 != nil {
		if b.sink, err = cu.MemAlloc(4); err != nil {
			b.sink = 0
		}
	}
	return b, nil
}

// createCuBLAS creates cuBLAS's handle, moving to the next cuBLAS of the search when the
// loaded one cannot (a driver or GPU it does not support: CUBLAS_STATUS_NOT_INITIALIZED
// or ARCH_MISMATCH), as long as one is left; the one that worked is the one recorded.
func createCuBLAS(h *unsafe.Pointer) error {
	err := cublasCheck("cublasCreate", C.x_cublasCreate_v2(h))
	for err != nil && len(cublasCands) > 0 {
		failed := paths[libCuBLAS.What]
		p, lerr := libCuBLAS.openFrom(cublasCands, failed)
		if lerr != nil {
			return fmt.Errorf("%w; and no other cuBLAS could take over: %v", err, lerr)
		}
		paths[libCuBLAS.What] = p
		if lt, lterr := openCompanion(libCuBLASLt, p); lterr != nil {
			ltErr = lterr
		} else {
			paths[libCuBLASLt.What], ltErr = lt, nil
		}
		err = cublasCheck("cublasCreate", C.x_cublasCreate_v2(h))
	}
	return err
}

// nvmlOf is NVML's handle of CUDA device index (found by its PCI bus), nil without NVML.
func nvmlOf(index int) unsafe.Pointer {
	if !nvmlOK {
		return nil
	}
	bus := make([]byte, 32)
	if C.pci_bus_id((*C.char)(unsafe.Pointer(&bus[0])), C.int(len(bus)), C.int(index)) != 0 {
		return nil
	}
	var h unsafe.Pointer
	if C.x_nvmlDeviceGetHandleByPciBusId_v2((*C.char)(unsafe.Pointer(&bus[0])), &h) != 0 {
		return nil
	}
	return h
}

// SetL2Mode makes the backend time phases that fit in the L2 cold or producer-hot
// (timing.L2Cold, L2ProducerHot): gpu.L2Setter.
func (b *Backend) SetL2Mode(mode string) error {
	if err := timing.CheckL2Mode(mode); err != nil {
		return err
	}
	b.l2Mode = mode
	return nil
}

// Finish says, after a sweep, whether other processes started on the GPU while it ran
// (gpu.Finisher): this process's context is one of those NVML lists now.
func (b *Backend) Finish() string {
	if b.nvml == nil || b.othersBefore < 0 {
		return ""
	}
	n := int(C.nvml_processes(b.nvml))
	if n < 0 {
		return ""
	}
	return timing.BusyAfter(b.othersBefore, n-1)
}

// Device describes the GPU.
func (b *Backend) Device() measure.Device { return b.device }

// Check reports throttling: the SM clock well below the highest seen during the sweep
// while the driver names a power or thermal reason, once the change has lasted
// (timing.Throttle: power-capped tensor-core layers alternate with memory-bound ones).
func (b *Backend) Check() string {
	if b.busyWarning != "" {
		w := b.busyWarning
		b.busyWarning = ""
		return w
	}
	if b.kernelsErr != nil && !b.kernelsWarned {
		b.kernelsWarned = true
		return fmt.Sprintf("the memory-bound layers (activations, pooling, add, ...) are recorded unsupported: %v", b.kernelsErr)
	}
	if ltErr != nil && !b.ltWarned {
		b.ltWarned = true
		return fmt.Sprintf("linear layers add their bias in a second GEMM pass, not in the matmul's epilogue as PyTorch 2 does: %v", ltErr)
	}
	if cudnnPreloadErr != nil && !b.preloadWarned {
		b.preloadWarned = true
		return fmt.Sprintf("%v; if cuDNN then fails (status 1008 or 3009), install its missing sub-libraries", cudnnPreloadErr)
	}
	if b.nvml == nil {
		return ""
	}
	var mhz C.uint
	var reasons C.ulonglong
	if C.x_nvmlDeviceGetClockInfo(b.nvml, 1 /* NVML_CLOCK_SM */, &mhz) != 0 {
		return ""
	}
	C.x_nvmlDeviceGetCurrentClocksThrottleReasons(b.nvml, &reasons)
	// SW power cap, HW slowdown, SW thermal, HW thermal, HW power brake.
	const slowdown = 0x4 | 0x8 | 0x20 | 0x40 | 0x80
	return b.throttle.Observe(time.Now(), uint(mhz), reasons&slowdown != 0)
}

// precisionOf maps a kernel precision to the element size and whether TF32 is allowed.
func precisionOf(p measure.Precision) (elem int, tf32 bool, ok bool) {
	switch p {
	case measure.FP32, measure.FP32Strict:
		return 4, false, true
	case measure.TF32:
		return 4, true, true
	case measure.AMP, measure.BF16:
		return 2, false, true
	}
	return 0, false, false
}

// SetLayout makes the backend measure in layout (gpu.NCHW or gpu.NHWC): cuDNN's
// tensors and filters in that format (gpu.LayoutSetter).
func (b *Backend) SetLayout(layout string) error {
	if err := gpu.CheckLayout(layout); err != nil {
		return err
	}
	b.layout = layout
	return nil
}

// format is cuDNN's tensor format of the backend's layout.
func (b *Backend) format() int {
	if b.layout == gpu.NHWC {
		return convalgo.FormatNHWC
	}
	return convalgo.FormatNCHW
}

// TimeLayer times one phase of a layer configuration with CUDA events, after warm-up.
// An error that left the CUDA context broken (a sticky error: every later call fails
// until the process ends) wraps gpu.ErrSticky, so the sweep restarts the worker.
func (b *Backend) TimeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error) {
	m, err := b.timeLayer(ctx, cfg, batch, phase, prec, policy, repeats)
	if err != nil && ctx.Err() == nil {
		if serr := cu.Synchronize(); serr != nil { // the context no longer works
			err = fmt.Errorf("%w (%v): %w", gpu.ErrSticky, serr, err)
		}
	}
	return m, err
}

func (b *Backend) timeLayer(ctx context.Context, cfg cnn.Config, batch int, phase measure.Phase, prec measure.Precision, policy measure.Policy, repeats int) (measure.Measurement, error) {
	m := measure.Measurement{
		DeviceKey: b.device.Key, ConfigKey: cfg.Key(), Batch: batch, Precision: prec, Phase: phase,
		Policy: policy, Status: measure.OK, At: time.Now().UTC(),
	}
	if policy == measure.NoPolicy {
		m.Policy = measure.Heuristic
	}
	if _, _, ok := precisionOf(prec); !ok || batch < 1 || repeats < 1 {
		return m, fmt.Errorf("time %s: precision %q, batch %d and repeats %d must be valid", cfg.Key(), prec, batch, repeats)
	}
	l, err := b.newLayer(cfg, batch, prec, m.Policy)
	if l != nil {
		defer l.free()
	}
	if status, ok := classify(err); ok {
		m.Status = status
		return m, nil
	} else if err != nil {
		return m, fmt.Errorf("set up %s at batch %d: %w", cfg.Key(), batch, err)
	}
	algo, ws, err := l.prepare(phase)
	if status, ok := classify(err); ok {
		m.Status = status
		return m, nil
	} else if err != nil {
		return m, fmt.Errorf("prepare %s %s at batch %d: %w", cfg.Key(), phase, batch, err)
	}
	m.Algorithm, m.WorkspaceBytes = algo, ws
	start, end, release, err := eventPair()
	if err != nil {
		return m, err
	}
	defer release()
	// The L2 is decided on what the phase touches, not on all the layer holds: a phase
	// that fits would read back to back what its last run left there (timing.DecideL2).
	var flush cu.DevicePtr
	flushBytes := timing.FlushBytes(b.l2Bytes)
	canFlush := false
	if timing.L2Resident(l.phaseBytes(phase), b.l2Bytes) {
		if flush, err = cu.MemAlloc(flushBytes); err == nil {
			canFlush = true
			defer cu.MemFree(flush)
		}
	}
	inPtr, inBytes := l.phaseInput(phase)
	l2 := timing.DecideL2(l.phaseBytes(phase), b.l2Bytes, b.l2Mode, canFlush, b.k32 != nil && b.sink != 0 && inBytes >= 4)
	// sample times k back-to-back runs between two events, after a flush of the L2 (and
	// the input read back into it, producer-hot) when asked, behind a hold so that the
	// host has queued the runs before the first starts: the spin kernel of spinMS, or a
	// stream wait the host releases once it has issued them. It returns the GPU's time,
	// the host's time to issue the runs, and whether the hold covered it.
	sample := func(k int, l2d timing.L2Decision, spinMS float64) (eventMS, hostMS float64, covered bool, err error) {
		if err := ctx.Err(); err != nil {
			return 0, 0, false, err
		}
		if l2d.Flush {
			b.flushes++
			if err := cu.MemsetD32Async(flush, uint(b.flushes), flushBytes/4, cu.Stream{}); err != nil {
				return 0, 0, false, fmt.Errorf("flush the L2: %w", err)
			}
			if l2d.Touch {
				if err := b.k32.launch("touch", int(min((inBytes/4+cudakern.Block-1)/cudakern.Block, int64(b.device.SMs)*32)), cudakern.Block,
					[]uint64{inPtr, uint64(inBytes / 4), uint64(b.sink)}); err != nil {
					return 0, 0, false, err
				}
			}
		}
		hold := b.hold
		var release func()
		switch hold {
		case timing.HoldSpin:
			if err := b.k32.launch("spin", 1, 1, []uint64{uint64(timing.SpinCycles(spinMS, b.device.ClockMHz))}); err != nil {
				return 0, 0, false, err
			}
		case timing.HoldStream:
			b.holdGen++
			gen := C.uint(b.holdGen)
			if C.hold_wait(b.holdDev, gen) != 0 {
				hold = timing.HoldNone // the driver would not queue the wait: unheld
				break
			}
			var once sync.Once
			rel := func() { once.Do(func() { C.hold_release(b.holdHost, gen) }) }
			watchdog := time.AfterFunc(timing.StreamWaitTimeout, rel) // should the host block while issuing
			release = func() { watchdog.Stop(); rel() }
		}
		t0 := time.Now()
		runErr := start.Record(cu.Stream{})
		for j := 0; j < k && runErr == nil; j++ {
			runErr = l.run(phase)
		}
		if runErr == nil {
			runErr = end.Record(cu.Stream{})
		}
		hostMS = float64(time.Since(t0)) / float64(time.Millisecond)
		if release != nil {
			release()
		}
		if runErr != nil {
			return 0, 0, false, runErr
		}
		if err := end.Synchronize(); err != nil {
			return 0, 0, false, fmt.Errorf("wait for %s on the GPU: %w", cfg.Key(), err)
		}
		ms, err := start.Elapsed(end)
		if err != nil {
			return 0, 0, false, fmt.Errorf("read a CUDA event: %w", err)
		}
		return float64(ms), hostMS, timing.Covered(hold, hostMS, timing.Spin(spinMS)), nil
	}
	runErr := func(err error) (measure.Measurement, error) {
		if status, ok := classify(err); ok {
			m.Status = status
			return m, nil
		}
		if ctx.Err() != nil {
			return m, ctx.Err()
		}
		return m, fmt.Errorf("run %s %s at batch %d: %w", cfg.Key(), phase, batch, err)
	}
	idle := time.Duration(-1) // never busy: the full warm-up
	if !b.lastBusy.IsZero() {
		idle = time.Since(b.lastBusy)
	}
	target := timing.WarmupTarget(idle)
	defer func() { b.lastBusy = time.Now() }()
	// One run alone for a first estimate, then warm-up by GPU time in samples of K runs
	// (as timed), each behind a hold as long as the host took to issue the last one.
	oneMS, hostMS, _, err := sample(1, timing.L2Decision{}, 0)
	if err != nil {
		return runErr(err)
	}
	k := timing.RunsPerSample(oneMS)
	hostMS *= float64(k)
	warmMS, lastMS := oneMS, oneMS*float64(k)
	for warm := 0; !timing.Warm(warm, warmMS, target); warm++ {
		ms, host, _, err := sample(k, timing.L2Decision{}, hostMS)
		if err != nil {
			return runErr(err)
		}
		warmMS, lastMS, hostMS = warmMS+ms, ms, host
	}
	warmK := k
	perRun := lastMS / float64(warmK)
	if k = timing.RunsPerSample(perRun); l2.Flush {
		k = 1
	}
	hostMS = hostMS * float64(k) / float64(warmK) // the last sample's issue time, for k runs
	// NVML is read while the timed samples run (not after, while the GPU idles): the
	// row's mean SM clock, and whether the driver capped its power or heat meanwhile.
	var clocks timing.Clocks
	stopClocks := b.sampleClocks(&clocks)
	times := make([]float64, 0, repeats)
	note := ""
	for i, retakes := 0, 0; i < repeats; {
		ms, host, covered, err := sample(k, l2, hostMS)
		if err != nil {
			stopClocks()
			return runErr(err)
		}
		spinMS := hostMS
		hostMS = host
		if timing.Retake(b.hold, host, timing.Spin(spinMS), ms, retakes) {
			retakes++ // behind a hold sized from this issue time
			continue
		}
		if !covered && timing.HostBound(host, ms) {
			note = timing.NoteHostBound
		}
		times = append(times, ms/float64(k))
		i, retakes = i+1, 0
	}
	stopClocks()
	m.MedianMS, m.SpreadMS = gpu.Summarize(times)
	m.Repeats = repeats
	notes := []string{l2.Note}
	if note != "" {
		notes = append(notes, note)
	}
	if _, own := l.(*kernelLayer); own && b.layout == gpu.NHWC && cudakern.IndexesNCHW(cfg.Op) {
		notes = append(notes, timing.NoteNCHWKernel)
	}
	if n := convalgo.DepthwiseNote(cfg, prec, b.layout == gpu.NHWC); n != "" { // PyTorch's backend differs
		notes = append(notes, n)
	}
	notes = append(notes, clocks.Notes()...)
	m.Notes = strings.Join(notes, ",")
	return m, nil
}

// sampleClocks reads the SM clock, the power and the throttle reasons through NVML
// every timing.ClockSampleEvery into c until the returned stop is called (and has
// waited for the reader); without NVML it does nothing.
func (b *Backend) sampleClocks(c *timing.Clocks) (stop func()) {
	if b.nvml == nil {
		return func() {}
	}
	h := b.nvml
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(timing.ClockSampleEvery)
		defer t.Stop()
		for {
			var mhz, mw C.uint
			var reasons C.ulonglong
			if C.x_nvmlDeviceGetClockInfo(h, 1 /* NVML_CLOCK_SM */, &mhz) == 0 {
				C.x_nvmlDeviceGetPowerUsage(h, &mw)
				C.x_nvmlDeviceGetCurrentClocksThrottleReasons(h, &reasons)
				c.Add(uint(mhz), uint(mw), uint64(reasons))
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// eventPair creates the two CUDA events a timed sample lies between; release destroys
// them.
func eventPair() (start, end cu.Event, release func(), err error) {
	if start, err = cu.MakeEvent(cu.BlockingSyncEvent); err != nil {
		return start, end, nil, fmt.Errorf("create a CUDA event: %w", err)
	}
	if end, err = cu.MakeEvent(cu.BlockingSyncEvent); err != nil {
		cu.DestroyEvent(&start)
		return start, end, nil, fmt.Errorf("create a CUDA event: %w", err)
	}
	return start, end, func() { cu.DestroyEvent(&start); cu.DestroyEvent(&end) }, nil
}

// errUnsupported marks a phase or configuration the CUDA backend has no kernel for.
var errUnsupported = errors.New("unsupported")

// classify turns out-of-memory and unsupported failures into a measurement status. A
// bad parameter is not one of them: it is a bug in the worker, and an error naming the
// layer (recording "unsupported" for it would report a broken sweep as a success).
func classify(err error) (measure.Status, bool) {
	var le *cudastatus.Error
	if errors.As(err, &le) && le.Category == cudastatus.MaybeOutOfMemory {
		// Out of memory in disguise, or a failure: decided by the memory left now.
		free, total, merr := cu.MemInfo()
		if merr != nil {
			free = -1
		}
		le.Category = cudastatus.Resolve(le.Category, free, total)
		if le.Category == cudastatus.Failed {
			le.Hint = fmt.Sprintf("not out of memory: %.1f GiB of the GPU's memory was free", float64(free)/(1<<30))
		}
	}
	switch {
	case err == nil:
		return "", false
	case errors.Is(err, cu.OutOfMemory), errors.As(err, &le) && le.Category == cudastatus.OutOfMemory:
		return measure.OutOfMemory, true
	case errors.Is(err, errUnsupported), errors.As(err, &le) && le.Category == cudastatus.Unsupported:
		return measure.Unsupported, true
	}
	return "", false
}

// RunStep is not implemented on CUDA: the whole-network ground truth for GPUs comes from
// scripts/pytorch_sweep.py (a real framework), so the step is reported unsupported.
func (b *Backend) RunStep(ctx context.Context, net *cnn.Network, batch int, prec measure.Precision, repeats int) (measure.Step, error) {
	return measure.Step{
		DeviceKey: b.device.Key, Model: net.Name, Batch: batch, Precision: prec, Framework: Framework,
		Source: "cnntime sweep --step", Status: measure.Unsupported, At: time.Now().UTC(),
	}, nil
}
