//go:build cuda

package cuda

/*
#include "libs.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"cnntime/gpu"
	"cnntime/gpu/convalgo"
	"cnntime/gpu/gemm"
	"cnntime/gpu/randfill"
	"cnntime/predictor/cnn"
	"cnntime/predictor/measure"
)

// layer is one configuration's kernels at one batch size, with its device memory.
type layer interface {
	// prepare chooses the algorithm for a phase (allocating its workspace) and runs
	// the forward pass once when a backward phase needs what it saves.
	prepare(phase measure.Phase) (algorithm string, workspace int64, err error)
	run(phase measure.Phase) error
	// phaseBytes is the bytes a run of the phase reads and writes (its working set, the
	// workspace included): whether it fits in the L2 decides how it is timed.
	phaseBytes(phase measure.Phase) int64
	// phaseInput is the buffer the phase reads that a step's previous layer has just
	// written (the forward's input, a backward's output gradient) and its bytes; 0 when
	// none.
	phaseInput(phase measure.Phase) (ptr uint64, bytes int64)
	free()
}

// mem owns device allocations.
type mem struct {
	ptrs  []cu.DevicePtr
	dt    convalgo.Data // the layer's data: FP32, FP16 (amp) or bfloat16 (bf16)
	bytes int64
}

func (m *mem) footprint() int64 { return m.bytes }

func (l *convLayer) phaseBytes(p measure.Phase) int64 {
	return convalgo.ConvPhaseBytes(l.cfg, l.batch, p, l.elem(), int64(l.wsSize[p]))
}

func (l *convLayer) phaseInput(p measure.Phase) (uint64, int64) {
	if p == measure.Forward {
		return l.x, int64(l.batch) * l.cfg.In.Elems() * l.elem()
	}
	return l.dy, int64(l.batch) * l.cfg.Out.Elems() * l.elem()
}

func (l *linearLayer) phaseBytes(p measure.Phase) int64 {
	return l.shape.PhaseElems(p) * l.elem()
}

func (l *linearLayer) phaseInput(p measure.Phase) (uint64, int64) {
	e := l.shape.Elems()
	if p == measure.Forward {
		return l.ptr[gemm.X], e[gemm.X] * l.elem()
	}
	return l.ptr[gemm.DY], e[gemm.DY] * l.elem()
}

// phaseBytes of a batch norm: the forward reads x and writes y, the backward reads x
// and dy and writes dx, with the per-channel parameters and statistics.
func (l *bnLayer) phaseBytes(p measure.Phase) int64 {
	tensors := int64(2)
	if p == measure.BackwardData {
		tensors = 3
	}
	return tensors*l.elems*l.elem() + 8*l.channels*4
}

func (l *bnLayer) phaseInput(p measure.Phase) (uint64, int64) {
	if p == measure.Forward {
		return l.x, l.elems * l.elem()
	}
	return l.dy, l.elems * l.elem()
}

func (m *mem) elem() int64 { return m.dt.Bytes() }

// tensor allocates elems elements of the layer's type, filled with pseudo-random
// normal values (package randfill), as PyTorch's randn data.
func (m *mem) tensor(elems int64) (uint64, error) {
	p, err := m.alloc(elems * m.elem())
	if err != nil {
		return 0, err
	}
	return p, fillRandom(p, elems*m.elem(), m.dt)
}

// floats allocates elems FP32 values, filled the same way (parameters and statistics
// are FP32 under mixed precision too).
func (m *mem) floats(elems int64) (uint64, error) {
	p, err := m.alloc(elems * 4)
	if err != nil {
		return 0, err
	}
	return p, fillRandom(p, elems*4, convalgo.Float)
}

// fillRandom fills bytes at p with randfill's tile of the data type dt: the tile from
// the host, then doubling copies on the device.
func fillRandom(p uint64, bytes int64, dt convalgo.Data) error {
	tile := randfill.Tile(dt == convalgo.Half)
	if dt == convalgo.BFloat16 {
		tile = randfill.TileBF16()
	}
	for _, c := range randfill.Plan(bytes, int64(len(tile))) {
		var err error
		if c.FromHost {
			err = cu.MemcpyHtoD(cu.DevicePtr(p+uint64(c.Dst)), unsafe.Pointer(&tile[0]), c.Bytes)
		} else {
			err = cu.MemcpyDtoD(cu.DevicePtr(p+uint64(c.Dst)), cu.DevicePtr(p+uint64(c.Src)), c.Bytes)
		}
		if err != nil {
			return fmt.Errorf("fill a tensor with random data: %w", err)
		}
	}
	return nil
}

func (m *mem) alloc(bytes int64) (uint64, error) {
	p, err := cu.MemAlloc(max(bytes, 4))
	if err != nil {
		return 0, err
	}
	m.ptrs = append(m.ptrs, p)
	m.bytes += max(bytes, 4)
	return uint64(p), nil
}

func (m *mem) free() {
	for _, p := range m.ptrs {
		_ = cu.MemFree(p)
	}
	m.ptrs, m.bytes = nil, 0
}

const (
	cudnnFloat = 0
	cudnnNCHW  = 0
	// Math types: tensor cores for FP16, TF32 allowed (cuDNN's default), strict FP32.
	cudnnDefaultMath   = 0
	cudnnTensorOpMath  = 1
	cudnnFMAMath       = 3
	cudnnCrossCorr     = 1
	cudnnBatchNormSpat = 1
	// CUDNN_BATCHNORM_SPATIAL_PERSISTENT: PyTorch's cuDNN batch norm on channels_last
	// tensors (aten/src/ATen/native/cudnn/BatchNorm.cpp, getCudnnBatchNormMode).
	cudnnBatchNormPersistent = 2
)

func (b *Backend) newLayer(cfg cnn.Config, batch int, prec measure.Precision, policy measure.Policy) (layer, error) {
	_, tf32, _ := precisionOf(prec)
	dt := convalgo.DataOf(prec)
	switch cfg.Op {
	case cnn.OpConv2d:
		return b.newConv(cfg, batch, prec, policy)
	case cnn.OpLinear: // cuBLAS alone, the bias included: no NVRTC needed
		return b.newLinear(cfg, batch, dt, tf32)
	case cnn.OpBatchNorm:
		if !convalgo.BatchNormOnCuDNN(prec) { // bf16: PyTorch's own kernels, and so cnntime's
			return b.newKernelLayer(cfg, batch, dt)
		}
		if !convalgo.FitsLegacyAPI(int64(batch) * cfg.In.Elems()) {
			return nil, fmt.Errorf("%w: cuDNN's batch norm takes at most 2^31 elements", errUnsupported)
		}
		return b.newBatchNorm(cfg, batch, dt)
	}
	return b.newKernelLayer(cfg, batch, dt)
}

// tensorDesc describes an N×C×H×W tensor of cuDNN data type dtype in format (NCHW or
// NHWC, convalgo.FormatNCHW or FormatNHWC).
func tensorDesc(n, c, h, w int, dtype, format int) (unsafe.Pointer, error) {
	var d unsafe.Pointer
	if err := cudnnCheck("cudnnCreateTensorDescriptor", C.x_cudnnCreateTensorDescriptor(&d)); err != nil {
		return nil, err
	}
	return d, cudnnCheck("cudnnSetTensor4dDescriptor", C.x_cudnnSetTensor4dDescriptor(d, C.int(format), C.int(dtype), C.int(n), C.int(c), C.int(h), C.int(w)))
}

// convLayer runs a convolution through cuDNN.
type convLayer struct {
	mem
	b                         *Backend
	policy                    measure.Policy
	prec                      measure.Precision
	xD, yD, biasD, wD, cD     unsafe.Pointer
	x, y, w, dx, dy, dw, bias uint64
	dbias                     uint64
	hasBias                   bool
	algo                      map[measure.Phase]C.int
	ws                        map[measure.Phase]uint64
	wsSize                    map[measure.Phase]C.size_t
	api                       string                      // convalgo.Legacy or convalgo.V8
	cfg                       cnn.Config                  // for the graph API's descriptors
	batch                     int                         //
	v8                        map[measure.Phase]*v8Choice // the graph API's plans, by phase
	nhwc                      bool                        // channels_last tensors and filters
}

func (b *Backend) newConv(c cnn.Config, batch int, prec measure.Precision, policy measure.Policy) (layer, error) {
	n := int64(batch)
	if !convalgo.FitsLegacyAPI(n*c.In.Elems(), n*c.Out.Elems()) {
		return nil, fmt.Errorf("%w: cuDNN's legacy convolution API takes tensors of at most 2^31 elements", errUnsupported)
	}
	math, dt := convalgo.Start(prec)
	l := &convLayer{mem: mem{dt: dt}, b: b, policy: policy, prec: prec, hasBias: c.Bias,
		algo: map[measure.Phase]C.int{}, ws: map[measure.Phase]uint64{}, wsSize: map[measure.Phase]C.size_t{},
		api: b.cudnnAPI(), cfg: c, batch: batch, v8: map[measure.Phase]*v8Choice{}, nhwc: b.layout == gpu.NHWC}
	dtype, format := dt.CuDNN(), b.format()
	g := max(c.Groups, 1)
	var err error
	if l.xD, err = tensorDesc(batch, c.In.C, c.In.H, c.In.W, dtype, format); err != nil {
		return l, err
	}
	if l.yD, err = tensorDesc(batch, c.Out.C, c.Out.H, c.Out.W, dtype, format); err != nil {
		return l, err
	}
	if l.biasD, err = tensorDesc(1, c.Out.C, 1, 1, dtype, format); err != nil {
		return l, err
	}
	if err := cudnnCheck("cudnnCreateFilterDescriptor", C.x_cudnnCreateFilterDescriptor(&l.wD)); err != nil {
		return l, err
	}
	// A channels_last weight is K×R×S×C in memory, as PyTorch's channels_last filters.
	if err := cudnnCheck("cudnnSetFilter4dDescriptor", C.x_cudnnSetFilter4dDescriptor(l.wD, C.int(dtype), C.int(format), C.int(c.Out.C), C.int(c.In.C/g), C.int(c.Kernel[0]), C.int(c.Kernel[1]))); err != nil {
		return l, err
	}
	if err := cudnnCheck("cudnnCreateConvolutionDescriptor", C.x_cudnnCreateConvolutionDescriptor(&l.cD)); err != nil {
		return l, err
	}
	// Under mixed precision the data are FP16 and the arithmetic FP32, as in PyTorch.
	if err := cudnnCheck("cudnnSetConvolution2dDescriptor", C.x_cudnnSetConvolution2dDescriptor(l.cD, C.int(c.Padding[0]), C.int(c.Padding[1]),
		C.int(max(c.Stride[0], 1)), C.int(max(c.Stride[1], 1)), C.int(max(c.Dilation[0], 1)), C.int(max(c.Dilation[1], 1)), cudnnCrossCorr, cudnnFloat)); err != nil {
		return l, err
	}
	if err := cudnnCheck("cudnnSetConvolutionGroupCount", C.x_cudnnSetConvolutionGroupCount(l.cD, C.int(g))); err != nil {
		return l, err
	}
	if err := cudnnCheck("cudnnSetConvolutionMathType", C.x_cudnnSetConvolutionMathType(l.cD, C.int(math))); err != nil {
		return l, err
	}
	wElems := int64(c.Out.C) * int64(c.In.C/g) * int64(c.Kernel[0]*c.Kernel[1])
	for _, t := range []struct {
		p     *uint64
		elems int64
	}{{&l.x, n * c.In.Elems()}, {&l.y, n * c.Out.Elems()}, {&l.w, wElems}, {&l.dx, n * c.In.Elems()},
		{&l.dy, n * c.Out.Elems()}, {&l.dw, wElems}, {&l.bias, int64(c.Out.C)}, {&l.dbias, int64(c.Out.C)}} {
		if *t.p, err = l.tensor(t.elems); err != nil {
			return l, err
		}
	}
	return l, nil
}

var (
	fwdAlgos  = []string{"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"}
	dataAlgos = []string{"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"}
	filtAlgos = []string{"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"}
)

func algoName(phase measure.Phase, a int) string {
	names, prefix := fwdAlgos, "CUDNN_CONVOLUTION_FWD_ALGO_"
	switch phase {
	case measure.BackwardData:
		names, prefix = dataAlgos, "CUDNN_CONVOLUTION_BWD_DATA_ALGO_"
	case measure.BackwardWeights:
		names, prefix = filtAlgos, "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_"
	}
	if a >= 0 && a < len(names) {
		return prefix + names[a]
	}
	return fmt.Sprintf("%s%d", prefix, a)
}

// prepare asks cuDNN for its algorithms (the heuristic's ranking, or every algorithm
// timed by cudnnFind*AlgorithmEx on the layer's own buffers), takes the first usable one
// whose workspace fits, as PyTorch does, and sets the math type it was ranked under on
// the descriptor.
func (l *convLayer) prepare(phase measure.Phase) (string, int64, error) {
	if l.api == convalgo.V8 {
		return l.prepareV8(phase)
	}
	const want = 10
	perf := make([]C.perf_t, want)
	var got C.int
	h := l.b.cudnn
	var status C.int
	var call string
	if l.policy == measure.Fastest {
		ws, size, release, err := l.searchWorkspace(phase)
		if err != nil {
			return "", 0, err
		}
		switch phase {
		case measure.Forward:
			call = "cudnnFindConvolutionForwardAlgorithmEx"
			status = C.x_cudnnFindConvolutionForwardAlgorithmEx(h, l.xD, dev(l.x), l.wD, dev(l.w), l.cD, l.yD, dev(l.y), want, &got, &perf[0], ws, size)
		case measure.BackwardData:
			call = "cudnnFindConvolutionBackwardDataAlgorithmEx"
			status = C.x_cudnnFindConvolutionBackwardDataAlgorithmEx(h, l.wD, dev(l.w), l.yD, dev(l.dy), l.cD, l.xD, dev(l.dx), want, &got, &perf[0], ws, size)
		case measure.BackwardWeights:
			call = "cudnnFindConvolutionBackwardFilterAlgorithmEx"
			status = C.x_cudnnFindConvolutionBackwardFilterAlgorithmEx(h, l.xD, dev(l.x), l.yD, dev(l.dy), l.cD, l.wD, dev(l.dw), want, &got, &perf[0], ws, size)
		}
		release()
	} else {
		switch phase {
		case measure.Forward:
			call = "cudnnGetConvolutionForwardAlgorithm_v7"
			status = C.x_cudnnGetConvolutionForwardAlgorithm_v7(h, l.xD, l.wD, l.cD, l.yD, want, &got, &perf[0])
		case measure.BackwardData:
			call = "cudnnGetConvolutionBackwardDataAlgorithm_v7"
			status = C.x_cudnnGetConvolutionBackwardDataAlgorithm_v7(h, l.wD, l.yD, l.cD, l.xD, want, &got, &perf[0])
		case measure.BackwardWeights:
			call = "cudnnGetConvolutionBackwardFilterAlgorithm_v7"
			status = C.x_cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, l.xD, l.yD, l.cD, l.wD, want, &got, &perf[0])
		}
	}
	if call == "" {
		return "", 0, errUnsupported
	}
	if err := cudnnCheck(call, status); err != nil {
		return "", 0, err
	}
	ranked := make([]convalgo.Perf, 0, int(got))
	for _, p := range perf[:got] {
		ranked = append(ranked, convalgo.Perf{Algo: int(p.algo), Status: int(p.status), Memory: int64(p.memory), MathType: int(p.mathType)})
	}
	var wsPtr uint64
	chosen, ok, oom := convalgo.Choose(ranked, l.prec, func(bytes int64) bool {
		p, err := l.alloc(bytes)
		wsPtr = p
		return err == nil
	})
	switch {
	case oom:
		return "", 0, cu.OutOfMemory
	case !ok:
		return "", 0, fmt.Errorf("%w: cuDNN has no usable %s algorithm for this convolution under %s", errUnsupported, phase, l.prec)
	}
	if err := cudnnCheck("cudnnSetConvolutionMathType", C.x_cudnnSetConvolutionMathType(l.cD, C.int(chosen.MathType))); err != nil {
		return "", 0, err
	}
	l.algo[phase], l.ws[phase], l.wsSize[phase] = C.int(chosen.Algo), wsPtr, C.size_t(chosen.Memory)
	return algoName(phase, chosen.Algo), chosen.Memory, nil
}

// searchWorkspace allocates the workspace cudnnFind*AlgorithmEx searches with: the
// largest any algorithm of the phase asks for, capped at the free memory (halved until
// it can be had). release frees it after the search.
func (l *convLayer) searchWorkspace(phase measure.Phase) (unsafe.Pointer, C.size_t, func(), error) {
	h := l.b.cudnn
	count := map[measure.Phase]int{measure.Forward: len(fwdAlgos), measure.BackwardData: len(dataAlgos), measure.BackwardWeights: len(filtAlgos)}[phase]
	sizes := make([]int64, count)
	for a := range sizes {
		var s C.size_t
		var st C.int
		switch phase {
		case measure.Forward:
			st = C.x_cudnnGetConvolutionForwardWorkspaceSize(h, l.xD, l.wD, l.cD, l.yD, C.int(a), &s)
		case measure.BackwardData:
			st = C.x_cudnnGetConvolutionBackwardDataWorkspaceSize(h, l.wD, l.yD, l.cD, l.xD, C.int(a), &s)
		case measure.BackwardWeights:
			st = C.x_cudnnGetConvolutionBackwardFilterWorkspaceSize(h, l.xD, l.yD, l.cD, l.wD, C.int(a), &s)
		}
		sizes[a] = -1
		if st == 0 {
			sizes[a] = int64(s)
		}
	}
	free, _, err := cu.MemInfo()
	if err != nil {
		return nil, 0, nil, fmt.Errorf("read the free GPU memory: %w", err)
	}
	size := convalgo.FindWorkspace(sizes, free-free/16)
	for size > 0 {
		p, err := cu.MemAlloc(size)
		if err == nil {
			return dev(uint64(p)), C.size_t(size), func() { _ = cu.MemFree(p) }, nil
		}
		size /= 2
	}
	return nil, 0, func() {}, nil
}

func (l *convLayer) run(phase measure.Phase) error {
	one, zero := float32(1), float32(0)
	al, be := unsafe.Pointer(&one), unsafe.Pointer(&zero)
	h, algo, ws, wss := l.b.cudnn, l.algo[phase], dev(l.ws[phase]), l.wsSize[phase]
	if v8 := l.v8[phase]; v8 != nil {
		return l.runV8(phase, v8)
	}
	switch phase {
	case measure.Forward:
		if err := cudnnCheck("cudnnConvolutionForward", C.x_cudnnConvolutionForward(h, al, l.xD, dev(l.x), l.wD, dev(l.w), l.cD, algo, ws, wss, be, l.yD, dev(l.y))); err != nil {
			return err
		}
		if l.hasBias {
			return cudnnCheck("cudnnAddTensor", C.x_cudnnAddTensor(h, al, l.biasD, dev(l.bias), al, l.yD, dev(l.y)))
		}
	case measure.BackwardData:
		return cudnnCheck("cudnnConvolutionBackwardData", C.x_cudnnConvolutionBackwardData(h, al, l.wD, dev(l.w), l.yD, dev(l.dy), l.cD, algo, ws, wss, be, l.xD, dev(l.dx)))
	case measure.BackwardWeights:
		if err := cudnnCheck("cudnnConvolutionBackwardFilter", C.x_cudnnConvolutionBackwardFilter(h, al, l.xD, dev(l.x), l.yD, dev(l.dy), l.cD, algo, ws, wss, be, l.wD, dev(l.dw))); err != nil {
			return err
		}
		if l.hasBias {
			return cudnnCheck("cudnnConvolutionBackwardBias", C.x_cudnnConvolutionBackwardBias(h, al, l.yD, dev(l.dy), be, l.biasD, dev(l.dbias)))
		}
	}
	return nil
}

func (l *convLayer) free() {
	for _, c := range l.v8 {
		c.free()
	}
	for _, d := range []unsafe.Pointer{l.xD, l.yD, l.biasD} {
		if d != nil {
			C.x_cudnnDestroyTensorDescriptor(d)
		}
	}
	if l.wD != nil {
		C.x_cudnnDestroyFilterDescriptor(l.wD)
	}
	if l.cD != nil {
		C.x_cudnnDestroyConvolutionDescriptor(l.cD)
	}
	l.mem.free()
}

// linearLayer runs y = x·Wᵀ (+ b) through cuBLAS GEMMs alone: package gemm's calls,
// the bias included (the forward GEMM's epilogue through cuBLASLt, as PyTorch 2's addmm;
// without cuBLASLt a rank-1 GEMM against a vector of ones first).
type linearLayer struct {
	mem
	b              *Backend
	shape          gemm.Linear
	dtype, compute C.int
	ptr            map[gemm.Operand]uint64
	lt             map[int]*ltMatmul // the forward's bias-epilogue GEMMs, by call index
}

const (
	cudaR32F             = 0 // the scale type of every matmul: FP32
	cublasCompute32F     = 68
	cublasCompute32FTF32 = 77
	cublasOpN            = 0
	cublasOpT            = 1
	cublasGemmDefault    = -1
)

func (b *Backend) newLinear(c cnn.Config, batch int, dt convalgo.Data, tf32 bool) (layer, error) {
	l := &linearLayer{mem: mem{dt: dt}, b: b, dtype: C.int(dt.CUDA()), compute: cublasCompute32F, ptr: map[gemm.Operand]uint64{},
		shape: gemm.Linear{Rows: batch * c.In.H * c.In.W, In: c.In.C, Out: c.Out.C, Bias: c.Bias, Epilogue: b.lt != nil},
		lt:    map[int]*ltMatmul{}}
	if tf32 {
		l.compute = cublasCompute32FTF32
	}
	for op, elems := range l.shape.Elems() {
		p, err := l.tensor(elems)
		if err != nil {
			return l, err
		}
		l.ptr[op] = p
	}
	if ones, ok := l.ptr[gemm.Ones]; ok {
		var err error
		switch dt {
		case convalgo.Half:
			err = cu.MemsetD16(cu.DevicePtr(ones), 0x3c00, int64(l.shape.Rows)) // FP16 1.0
		case convalgo.BFloat16:
			err = cu.MemsetD16(cu.DevicePtr(ones), 0x3f80, int64(l.shape.Rows)) // bfloat16 1.0
		default:
			err = cu.MemsetD32(cu.DevicePtr(ones), 0x3f800000, int64(l.shape.Rows)) // FP32 1.0
		}
		if err != nil {
			return l, fmt.Errorf("fill a vector of ones: %w", err)
		}
	}
	return l, nil
}

func (l *linearLayer) prepare(phase measure.Phase) (string, int64, error) {
	algo, ws := "cublasGemmEx", int64(0)
	for i, g := range l.shape.Calls(phase) {
		if !g.AddBias || l.lt[i] != nil {
			continue
		}
		m, err := l.newLtMatmul(g)
		if m != nil {
			l.lt[i] = m
		}
		if err != nil {
			return "", 0, err
		}
		algo, ws = "cublasLtMatmul, bias epilogue", int64(m.algo.workspaceSize)
	}
	return algo, ws, nil
}

func (l *linearLayer) free() {
	for _, m := range l.lt {
		m.free()
	}
	l.mem.free()
}

func (l *linearLayer) run(phase measure.Phase) error {
	for i, g := range l.shape.Calls(phase) {
		if g.AddBias {
			m := l.lt[i]
			if m == nil {
				return fmt.Errorf("the bias-epilogue GEMM of %s was not prepared", phase)
			}
			if err := m.run(l.b.lt); err != nil {
				return err
			}
			continue
		}
		one, beta := float32(1), g.Beta
		ta, tb := C.int(cublasOpN), C.int(cublasOpN)
		if g.TransA {
			ta = cublasOpT
		}
		if g.TransB {
			tb = cublasOpT
		}
		if err := cublasCheck("cublasGemmEx", C.x_cublasGemmEx(l.b.cublas, ta, tb, C.int(g.M), C.int(g.N), C.int(g.K),
			unsafe.Pointer(&one), dev(l.ptr[g.A]), l.dtype, C.int(g.LDA), dev(l.ptr[g.B]), l.dtype, C.int(g.LDB),
			unsafe.Pointer(&beta), dev(l.ptr[g.C]), l.dtype, C.int(g.LDC), l.compute, cublasGemmDefault)); err != nil {
			return err
		}
	}
	return nil
}

// bnLayer is training-mode batch norm through cuDNN (spatial mode, as PyTorch).
type bnLayer struct {
	mem
	b                                        *Backend
	mode                                     C.int // spatial, or spatial persistent on NHWC
	xD, pD                                   unsafe.Pointer
	x, y, dx, dy, scale, bias, dscale, dbias uint64
	runMean, runVar, saveMean, saveInv       uint64
	elems, channels                          int64 // of the input, and its channels
}

func (b *Backend) newBatchNorm(c cnn.Config, batch int, dt convalgo.Data) (layer, error) {
	l := &bnLayer{mem: mem{dt: dt}, b: b, mode: cudnnBatchNormSpat, elems: int64(batch) * c.In.Elems(), channels: int64(c.In.C)}
	if b.layout == gpu.NHWC {
		l.mode = cudnnBatchNormPersistent
	}
	var err error
	if l.xD, err = tensorDesc(batch, c.In.C, c.In.H, c.In.W, dt.CuDNN(), b.format()); err != nil {
		return l, err
	}
	if l.pD, err = tensorDesc(1, c.In.C, 1, 1, cudnnFloat, convalgo.FormatNCHW); err != nil {
		return l, err
	}
	n := int64(batch) * c.In.Elems()
	for _, p := range []*uint64{&l.x, &l.y, &l.dx, &l.dy} {
		if *p, err = l.tensor(n); err != nil {
			return l, err
		}
	}
	for _, p := range []*uint64{&l.scale, &l.bias, &l.dscale, &l.dbias, &l.runMean, &l.runVar, &l.saveMean, &l.saveInv} {
		if *p, err = l.floats(int64(c.In.C)); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (l *bnLayer) prepare(phase measure.Phase) (string, int64, error) {
	switch phase {
	case measure.Forward:
	case measure.BackwardData: // one fused kernel: input, scale and shift gradients
		if err := l.run(measure.Forward); err != nil {
			return "", 0, err
		}
	default:
		return "", 0, errUnsupported
	}
	return "cudnnBatchNormalization", 0, nil
}

func (l *bnLayer) run(phase measure.Phase) error {
	one, zero := float32(1), float32(0)
	al, be := unsafe.Pointer(&one), unsafe.Pointer(&zero)
	if phase == measure.Forward {
		return cudnnCheck("cudnnBatchNormalizationForwardTraining", C.x_cudnnBatchNormalizationForwardTraining(l.b.cudnn, l.mode,
			al, be, l.xD, dev(l.x), l.xD, dev(l.y), l.pD, dev(l.scale), dev(l.bias), 0.1, dev(l.runMean), dev(l.runVar), 1e-5, dev(l.saveMean), dev(l.saveInv)))
	}
	return cudnnCheck("cudnnBatchNormalizationBackward", C.x_cudnnBatchNormalizationBackward(l.b.cudnn, l.mode,
		al, be, al, be, l.xD, dev(l.x), l.xD, dev(l.dy), l.xD, dev(l.dx), l.pD, dev(l.scale), dev(l.dscale), dev(l.dbias), 1e-5, dev(l.saveMean), dev(l.saveInv)))
}

func (l *bnLayer) free() {
	for _, d := range []unsafe.Pointer{l.xD, l.pD} {
		if d != nil {
			C.x_cudnnDestroyTensorDescriptor(d)
		}
	}
	l.mem.free()
}
