//go:build cuda

package cuda

/*
#include "libs.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"cnntime/gpu/libfind"
)

// kernelSource holds the memory-bound kernels cnntime runs itself. Every parameter is
// 8 bytes (pointers, long, double) because gorgonia.org/cu copies 8 bytes per argument.
// T is float, or a 16-bit half (stored as unsigned short, converted with PTX cvt, so no
// header is needed) when compiled with -DUSE_HALF for FP16-mixed precision.
const kernelSource = `
#ifdef USE_HALF
typedef unsigned short T;
__device__ __forceinline__ float LD(const T* p, long i) { float f; unsigned short h = p[i]; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ void ST(T* p, long i, float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); p[i] = h; }
#else
typedef float T;
__device__ __forceinline__ float LD(const T* p, long i) { return p[i]; }
__device__ __forceinline__ void ST(T* p, long i, float f) { p[i] = f; }
#endif
#define LOOP(i, n) for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)blockDim.x * gridDim.x)

__device__ float act(long op, float x) {
	switch (op) {
	case 0: return fmaxf(x, 0.f);
	case 1: return fminf(fmaxf(x, 0.f), 6.f);
	case 2: return x / (1.f + __expf(-x));
	case 3: return x * fminf(fmaxf(x + 3.f, 0.f), 6.f) / 6.f;
	case 4: return fminf(fmaxf(x + 3.f, 0.f), 6.f) / 6.f;
	case 5: return 1.f / (1.f + __expf(-x));
	case 6: return 0.5f * x * (1.f + erff(x * 0.70710678f));
	}
	return x;
}

__device__ float dact(long op, float x) {
	float s;
	switch (op) {
	case 0: return x > 0.f ? 1.f : 0.f;
	case 1: return x > 0.f && x < 6.f ? 1.f : 0.f;
	case 2: s = 1.f / (1.f + __expf(-x)); return s * (1.f + x * (1.f - s));
	case 3: return x < -3.f ? 0.f : (x > 3.f ? 1.f : (2.f * x + 3.f) / 6.f);
	case 4: return x > -3.f && x < 3.f ? 1.f / 6.f : 0.f;
	case 5: s = 1.f / (1.f + __expf(-x)); return s * (1.f - s);
	case 6: return 0.5f * (1.f + erff(x * 0.70710678f)) + x * __expf(-0.5f * x * x) * 0.39894228f;
	}
	return 1.f;
}

extern "C" __global__ void act_fwd(long op, const T* x, T* y, long n) { LOOP(i, n) ST(y, i, act(op, LD(x, i))); }
extern "C" __global__ void act_bwd(long op, const T* x, const T* dy, T* dx, long n) { LOOP(i, n) ST(dx, i, LD(dy, i) * dact(op, LD(x, i))); }

// op 0: a + b; 1: a · b[i / plane] (a per-sample-channel scale); 2: a · b[(i / plane) % c] (a
// per-channel scale); 3: a + b[(i / plane) % c] (a bias).
extern "C" __global__ void binary(long op, const T* a, const T* b, T* y, long n, long plane, long c) {
	LOOP(i, n) {
		float av = LD(a, i), r;
		if (op == 0) r = av + LD(b, i);
		else if (op == 1) r = av * LD(b, i / plane);
		else if (op == 2) r = av * LD(b, (i / plane) % c);
		else r = av + LD(b, (i / plane) % c);
		ST(y, i, r);
	}
}

// out[t] = Σ_j a[t·plane + j] · b[t·plane + j]: a scale's gradient per (sample, channel).
extern "C" __global__ void plane_dot(const T* a, const T* b, float* out, long planes, long plane) {
	LOOP(t, planes) { float s = 0.f; for (long j = 0; j < plane; j++) s += LD(a, t * plane + j) * LD(b, t * plane + j); out[t] = s; }
}

// out[j] = Σ_r in[r·c + j]: a bias's gradient over rows.
extern "C" __global__ void column_sum(const T* in, float* out, long rows, long c) {
	LOOP(j, c) { float s = 0.f; for (long r = 0; r < rows; r++) s += LD(in, r * c + j); out[j] = s; }
}

// Dropout (row = 1) or stochastic depth (row = elements per sample) with a hashed mask.
extern "C" __global__ void drop(const T* x, T* y, long n, long row, double p, long seed) {
	LOOP(i, n) {
		unsigned h = (unsigned)(i / row) * 2654435761u ^ (unsigned)seed;
		h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
		float u = (h & 0xffffff) / 16777216.f;
		ST(y, i, u < (float)p ? 0.f : LD(x, i) / (1.f - (float)p));
	}
}

// Copies count elements per sample between tensors (concat, slice, their gradients).
extern "C" __global__ void copy_runs(const T* src, T* dst, long samples, long src_per, long src_off, long dst_per, long dst_off, long count) {
	LOOP(i, samples * count) { long s = i / count, j = i % count; dst[s * dst_per + dst_off + j] = src[s * src_per + src_off + j]; }
}

// Transposes each sample's rows×cols matrix of elem-sized blocks (permute, channel shuffle).
extern "C" __global__ void transpose(const T* src, T* dst, long samples, long rows, long cols, long elem) {
	LOOP(i, samples * rows * cols * elem) {
		long e = i % elem, k = i / elem, c = k % cols, r = (k / cols) % rows, s = k / (cols * rows);
		dst[((s * cols + c) * rows + r) * elem + e] = src[i];
	}
}

__device__ void window(long mode, long o, long n, long out, long k, long s, long p, long* lo, long* hi) {
	if (mode == 2) { *lo = o * n / out; *hi = ((o + 1) * n + out - 1) / out; }
	else { *lo = o * s - p; *hi = *lo + k; }
}

// Pooling: mode 0 max (arg keeps the winner), 1 average counting padding, 2 adaptive average.
extern "C" __global__ void pool_fwd(long mode, const T* x, T* y, long* arg, long planes, long h, long w, long oh, long ow, long kh, long kw, long sh, long sw, long ph, long pw) {
	LOOP(i, planes * oh * ow) {
		long t = i / (oh * ow), o = i % (oh * ow), oy = o / ow, ox = o % ow, y0, y1, x0, x1;
		window(mode, oy, h, oh, kh, sh, ph, &y0, &y1);
		window(mode, ox, w, ow, kw, sw, pw, &x0, &x1);
		float best = -3.4e38f, sum = 0.f; long besti = -1;
		for (long iy = max(y0, 0L); iy < min(y1, h); iy++)
			for (long ix = max(x0, 0L); ix < min(x1, w); ix++) {
				float v = LD(x, t * h * w + iy * w + ix);
				sum += v;
				if (v > best) { best = v; besti = iy * w + ix; }
			}
		if (mode == 0) { ST(y, i, best); arg[i] = besti; }
		else ST(y, i, sum / (float)((y1 - y0) * (x1 - x0)));
	}
}

// The pooling gradient, gathered per input element (no atomics).
extern "C" __global__ void pool_bwd(long mode, const T* dy, const long* arg, T* dx, long planes, long h, long w, long oh, long ow, long kh, long kw, long sh, long sw, long ph, long pw) {
	LOOP(i, planes * h * w) {
		long t = i / (h * w), p = i % (h * w), iy = p / w, ix = p % w;
		long oy0 = 0, oy1 = oh, ox0 = 0, ox1 = ow;
		if (mode != 2) {
			oy0 = max(0L, (iy + ph - kh) / sh); oy1 = min(oh, (iy + ph) / sh + 1);
			ox0 = max(0L, (ix + pw - kw) / sw); ox1 = min(ow, (ix + pw) / sw + 1);
		}
		float s = 0.f;
		for (long oy = oy0; oy < oy1; oy++) {
			long y0, y1;
			window(mode, oy, h, oh, kh, sh, ph, &y0, &y1);
			if (iy < y0 || iy >= y1) continue;
			for (long ox = ox0; ox < ox1; ox++) {
				long x0, x1;
				window(mode, ox, w, ow, kw, sw, pw, &x0, &x1);
				if (ix < x0 || ix >= x1) continue;
				long o = t * oh * ow + oy * ow + ox;
				if (mode == 0) { if (arg[o] == p) s += LD(dy, o); }
				else s += LD(dy, o) / (float)((y1 - y0) * (x1 - x0));
			}
		}
		ST(dx, i, s);
	}
}

// Layer norm over rows of c contiguous features.
extern "C" __global__ void rownorm_fwd(const T* x, const float* g, const float* b, T* y, float* mean, float* rstd, long rows, long c) {
	LOOP(r, rows) {
		float s = 0.f, ss = 0.f;
		for (long j = 0; j < c; j++) { float v = LD(x, r * c + j); s += v; ss += v * v; }
		float m = s / c, rs = rsqrtf(fmaxf(ss / c - m * m, 0.f) + 1e-6f);
		mean[r] = m; rstd[r] = rs;
		for (long j = 0; j < c; j++) ST(y, r * c + j, (LD(x, r * c + j) - m) * rs * g[j] + b[j]);
	}
}

extern "C" __global__ void rownorm_bwd(const T* x, const float* g, const T* dy, const float* mean, const float* rstd, T* dx, long rows, long c) {
	LOOP(r, rows) {
		float m = mean[r], rs = rstd[r], s = 0.f, sx = 0.f;
		for (long j = 0; j < c; j++) { float gg = LD(dy, r * c + j) * g[j]; s += gg; sx += gg * (LD(x, r * c + j) - m) * rs; }
		for (long j = 0; j < c; j++) {
			float xh = (LD(x, r * c + j) - m) * rs;
			ST(dx, r * c + j, rs / c * (c * LD(dy, r * c + j) * g[j] - s - xh * sx));
		}
	}
}

extern "C" __global__ void rownorm_wgrad(const T* x, const T* dy, const float* mean, const float* rstd, float* dg, float* db, long rows, long c) {
	LOOP(j, c) {
		float sg = 0.f, sb = 0.f;
		for (long r = 0; r < rows; r++) { float d = LD(dy, r * c + j); sg += d * (LD(x, r * c + j) - mean[r]) * rstd[r]; sb += d; }
		dg[j] = sg; db[j] = sb;
	}
}

// Softmax cross-entropy per row against labels (r·7) mod c.
extern "C" __global__ void xent_fwd(const T* x, float* prob, float* loss, long rows, long c) {
	LOOP(r, rows) {
		float m = -3.4e38f, s = 0.f;
		for (long j = 0; j < c; j++) m = fmaxf(m, LD(x, r * c + j));
		for (long j = 0; j < c; j++) { float e = __expf(LD(x, r * c + j) - m); prob[r * c + j] = e; s += e; }
		for (long j = 0; j < c; j++) prob[r * c + j] /= s;
		loss[r] = -__logf(fmaxf(prob[r * c + (r * 7) % c], 1e-30f));
	}
}

extern "C" __global__ void xent_bwd(const float* prob, T* dx, long rows, long c) {
	LOOP(i, rows * c) { long r = i / c, j = i % c; ST(dx, i, (prob[i] - (j == (r * 7) % c ? 1.f : 0.f)) / rows); }
}
`

// kernelNames lists the kernels the source defines.
var kernelNames = []string{"act_fwd", "act_bwd", "binary", "plane_dot", "column_sum", "drop", "copy_runs",
	"transpose", "pool_fwd", "pool_bwd", "rownorm_fwd", "rownorm_bwd", "rownorm_wgrad", "xent_fwd", "xent_bwd"}

// kernels is the compiled kernel set for one element type.
type kernels struct {
	fn      map[string]cu.Function
	maxGrid int
}

// compileKernels compiles the source with NVRTC to a CUBIN for the device's own
// architecture (no JIT: an NVRTC newer than the driver still works), falling back to PTX
// at the oldest ISA this NVRTC accepts for a device it does not know, and loads it.
func compileKernels(half bool, sms int, cc [2]int) (*kernels, error) {
	targets := libfind.KernelTargets(cc[0], cc[1], nvrtcMajor)
	if len(targets) == 0 {
		return nil, fmt.Errorf("NVRTC %d.%d cannot compile for compute capability %d.%d: install the NVRTC of an older CUDA (CNNTIME_NVRTC names it)", nvrtcMajor, nvrtcMinor, cc[0], cc[1])
	}
	var errs []string
	for _, t := range targets {
		image, err := nvrtcCompile(t, half)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		mod, err := cu.LoadData(string(image))
		if err != nil {
			errs = append(errs, fmt.Sprintf("load the %s image into the GPU: %v", t.Option, err))
			continue
		}
		return kernelsOf(mod, sms)
	}
	return nil, fmt.Errorf("cnntime's kernels could not be built: %s", strings.Join(errs, "; "))
}

// nvrtcCompile compiles the kernel source for one target and returns its image: a CUBIN,
// or NUL-terminated PTX.
func nvrtcCompile(t libfind.Target, half bool) ([]byte, error) {
	src := C.CString(kernelSource)
	defer C.free(unsafe.Pointer(src))
	name := C.CString("cnntime_kernels.cu")
	defer C.free(unsafe.Pointer(name))
	var prog unsafe.Pointer
	if r := C.x_nvrtcCreateProgram(&prog, src, name, 0, nil, nil); r != 0 {
		return nil, fmt.Errorf("NVRTC create program: status %d", r)
	}
	defer C.x_nvrtcDestroyProgram(&prog)
	opts := []string{t.Option, "--use_fast_math"}
	if half {
		opts = append(opts, "-DUSE_HALF")
	}
	copts := make([]*C.char, len(opts))
	for i, o := range opts {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	copt := (**C.char)(C.malloc(C.size_t(len(copts)) * C.size_t(unsafe.Sizeof(copts[0]))))
	defer C.free(unsafe.Pointer(copt))
	copy(unsafe.Slice(copt, len(copts)), copts)
	if r := C.x_nvrtcCompileProgram(prog, C.int(len(opts)), copt); r != 0 {
		var n C.size_t
		C.x_nvrtcGetProgramLogSize(prog, &n)
		log := make([]byte, int(n)+1)
		C.x_nvrtcGetProgramLog(prog, (*C.char)(unsafe.Pointer(&log[0])))
		return nil, fmt.Errorf("NVRTC could not compile cnntime's kernels with %s (status %d): %s", t.Option, r, strings.TrimRight(string(log[:n]), "\x00\n"))
	}
	var n C.size_t
	if t.CUBIN {
		if r := C.x_nvrtcGetCUBINSize(prog, &n); r != 0 || n == 0 {
			return nil, fmt.Errorf("NVRTC gave no CUBIN for %s (status %d)", t.Option, r)
		}
		image := make([]byte, int(n))
		C.x_nvrtcGetCUBIN(prog, (*C.char)(unsafe.Pointer(&image[0])))
		return image, nil
	}
	C.x_nvrtcGetPTXSize(prog, &n)
	ptx := make([]byte, int(n))
	C.x_nvrtcGetPTX(prog, (*C.char)(unsafe.Pointer(&ptx[0])))
	return ptx[:max(len(ptx)-1, 0)], nil
}

// kernelsOf finds the kernels in a loaded module.
func kernelsOf(mod cu.Module, sms int) (*kernels, error) {
	k := &kernels{fn: map[string]cu.Function{}, maxGrid: max(sms, 1) * 32}
	for _, name := range kernelNames {
		f, err := mod.Function(name)
		if err != nil {
			return nil, fmt.Errorf("find kernel %s: %w", name, err)
		}
		k.fn[name] = f
	}
	return k, nil
}

// launch runs kernel name over n elements (grid-stride loop) with the arguments, each
// an int64, a float64 or a device address (uint64).
func (k *kernels) launch(name string, n int64, args ...any) error {
	vals := make([]uint64, len(args))
	params := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int64:
			vals[i] = uint64(v)
		case int:
			vals[i] = uint64(int64(v))
		case uint64:
			vals[i] = v
		case float64:
			vals[i] = *(*uint64)(unsafe.Pointer(&v))
		default:
			return fmt.Errorf("kernel %s argument %d has type %T", name, i, a)
		}
		params[i] = unsafe.Pointer(&vals[i])
	}
	const block = 256
	grid := int(min((n+block-1)/block, int64(k.maxGrid)))
	return k.fn[name].Launch(max(grid, 1), 1, 1, block, 1, 1, 0, cu.Stream{}, params)
}
