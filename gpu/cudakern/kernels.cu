// cnntime's own CUDA kernels: the memory-bound layers cuDNN and cuBLAS do not cover.
// The worker compiles this file with NVRTC at start-up (package gpu/cuda); the tests of
// package gpu/cudakern compile it with NVRTC where it is installed and run it on the CPU
// through host_cuda.h.
//
// Every parameter is 8 bytes (pointers, long, double): gorgonia.org/cu copies 8 bytes per
// argument. T is float, or a 16-bit half (stored as unsigned short, converted with PTX
// cvt, so no header is needed) when compiled with -DUSE_HALF for FP16-mixed precision,
// or a bfloat16 (the same storage, converted by shifts) with -DUSE_BF16.
// Reductions run in FP32 whatever T is.
//
// Launch geometry (launch.go sets it): blocks of 256 threads. Elementwise kernels are
// grid-stride loops. Row reductions give each row a group of G threads: G = 32 (one warp
// per row, eight rows per block, reduced by shuffles) or G = blockDim.x (one block per
// row, reduced through shared memory); the group's threads read the row's consecutive
// elements together, so every read is coalesced.

#if defined(USE_BF16) && !defined(CNNTIME_HOST)
// bfloat16 (compiled with -DUSE_BF16, PyTorch's bf16 training): the top 16 bits of an
// FP32, rounded to nearest even on the way down.
typedef unsigned short T;
__device__ __forceinline__ float LD(const T* p, long i) { return __uint_as_float((unsigned)p[i] << 16); }
__device__ __forceinline__ void ST(T* p, long i, float f) { unsigned u = __float_as_uint(f); p[i] = (T)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }
#elif defined(USE_HALF) && !defined(CNNTIME_HOST)
typedef unsigned short T;
__device__ __forceinline__ float LD(const T* p, long i) { float f; unsigned short h = p[i]; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ void ST(T* p, long i, float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); p[i] = h; }
#elif !defined(USE_HALF) && !defined(USE_BF16)
typedef float T;
__device__ __forceinline__ float LD(const T* p, long i) { return p[i]; }
__device__ __forceinline__ void ST(T* p, long i, float f) { p[i] = f; }
#endif

// 16-byte vectors: VEC elements of T (4 FP32, 8 FP16 or BF16) loaded and stored as one
// uint4, as PyTorch's vectorised elementwise kernels do (the scalar loads of the first
// H200 run reached 3.0 TB/s in FP32 where PyTorch's reach 4.0). The vector kernels take
// the element count n, a multiple of 8 (package cudakern's Build checks), and buffers
// aligned to 16 bytes (cuMemAlloc aligns to 256).
#define VEC ((long)(16 / sizeof(T)))
union vec_t { uint4 u; T t[16 / sizeof(T)]; };

// Fast division by a value known at launch, as PyTorch's IntDivider: the host packs
// the divisor d (low 32 bits) with its magic number m (high 32 bits, package cudakern's
// Div); for any n < 2^31, n / d = (umulhi(n, m) + n) >> s with s = ceil(log2 d). No
// 64-bit division or remainder runs per element: every index of a launch is below 2^31
// (Build refuses larger tensors).
struct udiv_t { unsigned d, m, s; };
__device__ __forceinline__ udiv_t divisor(long packed) {
	udiv_t v;
	v.d = (unsigned)((unsigned long long)packed & 0xffffffffull);
	v.m = (unsigned)((unsigned long long)packed >> 32);
	v.s = 32u - (unsigned)__clz((int)(v.d - 1u));
	return v;
}
__device__ __forceinline__ unsigned udiv(unsigned n, udiv_t v) { return (__umulhi(n, v.m) + n) >> v.s; }
// urem returns n mod d given q = n / d.
__device__ __forceinline__ unsigned urem(unsigned n, unsigned q, udiv_t v) { return n - q * v.d; }

// LOOP(i, n) visits this thread's elements of a grid-stride loop over n < 2^31, in 32 bits.
#define LOOP(i, n) for (unsigned i = (unsigned)(blockIdx.x * blockDim.x + threadIdx.x), i##_n = (unsigned)(n); i < i##_n; i += (unsigned)(blockDim.x * gridDim.x))

// GROUP(G) declares the thread's lane in its group of G threads (G is 32, a warp, or
// blockDim.x, the block: a power of two), the group's size as a power of two (gsize: a
// loop striding by it counts its trips with a shift, not a 64-bit division) and the
// groups a block holds; ROWS(r, rows) then visits the rows of this thread's group.
#define GROUP(G) \
	const unsigned g_shift = 31u - (unsigned)__clz((int)(G)), gsize = 1u << g_shift, lane = (unsigned)threadIdx.x & (gsize - 1u), \
		groups = (unsigned)blockDim.x >> g_shift; \
	(void)gsize
#define ROWS(r, rows) for (long r = (long)blockIdx.x * groups + ((unsigned)threadIdx.x >> g_shift); r < (rows); r += (long)gridDim.x * groups)

__device__ __forceinline__ float warp_sum(float v) {
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float warp_max(float v) {
	for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

// group_sum and group_max reduce v over the thread's group and return the result to
// every thread of it: a warp by shuffles; a block through sh (32 floats of shared
// memory), in which case every thread of the block must call it.
__device__ float group_sum(float v, long G, float* sh) {
	v = warp_sum(v);
	if (G == 32) return v;
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	__syncthreads(); // sh may still be read by the previous reduction
	if (lane == 0) sh[w] = v;
	__syncthreads();
	v = lane < (int)(blockDim.x >> 5) ? sh[lane] : 0.f;
	return warp_sum(v);
}

__device__ float group_max(float v, long G, float* sh) {
	v = warp_max(v);
	if (G == 32) return v;
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	__syncthreads();
	if (lane == 0) sh[w] = v;
	__syncthreads();
	v = lane < (int)(blockDim.x >> 5) ? sh[lane] : -3.4e38f;
	return warp_max(v);
}

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

// The same, and add, on 16-byte vectors (n a multiple of 8).
extern "C" __global__ void act_fwd_v(long op, const T* x, T* y, long n) {
	LOOP(i, n / VEC) {
		vec_t a, r;
		a.u = ((const uint4*)x)[i];
		for (int j = 0; j < VEC; j++) ST(r.t, j, act(op, LD(a.t, j)));
		((uint4*)y)[i] = r.u;
	}
}
extern "C" __global__ void act_bwd_v(long op, const T* x, const T* dy, T* dx, long n) {
	LOOP(i, n / VEC) {
		vec_t a, d, r;
		a.u = ((const uint4*)x)[i];
		d.u = ((const uint4*)dy)[i];
		for (int j = 0; j < VEC; j++) ST(r.t, j, LD(d.t, j) * dact(op, LD(a.t, j)));
		((uint4*)dx)[i] = r.u;
	}
}
extern "C" __global__ void add_v(const T* a, const T* b, T* y, long n) {
	LOOP(i, n / VEC) {
		vec_t u, v, r;
		u.u = ((const uint4*)a)[i];
		v.u = ((const uint4*)b)[i];
		for (int j = 0; j < VEC; j++) ST(r.t, j, LD(u.t, j) + LD(v.t, j));
		((uint4*)y)[i] = r.u;
	}
}

// op 0: a + b; 1: a · b[i / plane] (a per-sample-channel scale); 2: a · b[(i / plane) % c] (a
// per-channel scale); 3: a + b[(i / plane) % c] (a bias). plane and c are divisors.
extern "C" __global__ void binary(long op, const T* a, const T* b, T* y, long n, long plane_div, long c_div) {
	const udiv_t plane = divisor(plane_div), c = divisor(c_div);
	LOOP(i, n) {
		float av = LD(a, i), r;
		unsigned q = udiv(i, plane);
		if (op == 0) r = av + LD(b, i);
		else if (op == 1) r = av * LD(b, q);
		else if (op == 2) r = av * LD(b, urem(q, udiv(q, c), c));
		else r = av + LD(b, urem(q, udiv(q, c), c));
		ST(y, i, r);
	}
}

// out[t] = Σ_j a[t·plane + j] · b[t·plane + j], a group per t: a scale's gradient per
// (sample, channel).
extern "C" __global__ void plane_dot(const T* a, const T* b, float* out, long planes, long plane, long G) {
	__shared__ float sh[32];
	GROUP(G);
	ROWS(t, planes) {
		float s = 0.f;
		for (long j = lane; j < plane; j += gsize) s += LD(a, t * plane + j) * LD(b, t * plane + j);
		s = group_sum(s, G, sh);
		if (lane == 0) out[t] = s;
	}
}

// y[t] = the mean of x[t·plane + j] over j, a group per t: adaptive average pooling to 1×1.
extern "C" __global__ void plane_mean(const T* x, T* y, long planes, long plane, long G) {
	__shared__ float sh[32];
	GROUP(G);
	ROWS(t, planes) {
		float s = 0.f;
		for (long j = lane; j < plane; j += gsize) s += LD(x, t * plane + j);
		s = group_sum(s, G, sh);
		if (lane == 0) ST(y, t, s / (float)plane);
	}
}

// out[j] = scale · Σ_r in[r·c + j] over FP32 partial sums, a warp per column: the last
// step of a column reduction (few rows).
extern "C" __global__ void column_sum(const float* in, float* out, long rows, long c, double scale) {
	GROUP(32);
	ROWS(j, c) {
		float s = 0.f;
		for (long r = lane; r < rows; r += 32) s += in[r * c + j];
		s = warp_sum(s);
		if (lane == 0) out[j] = s * (float)scale;
	}
}

// Dropout (row = 1) or stochastic depth (row = elements per sample, a divisor): unit
// i / row is dropped when its hash falls below threshold (p · 2^24); the rest is scaled
// by 1/(1-p). package gpu/cpu draws the same mask.
extern "C" __global__ void drop(const T* x, T* y, long n, long row_div, long threshold, long seed) {
	const udiv_t row = divisor(row_div);
	float keep = 16777216.f / (float)(16777216 - threshold);
	LOOP(i, n) {
		unsigned h = udiv(i, row) * 2654435761u ^ (unsigned)seed;
		h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
		ST(y, i, (long)(h & 0xffffff) < threshold ? 0.f : LD(x, i) * keep);
	}
}

// Copies count elements (a divisor) per sample between tensors (concat, slice, their
// gradients).
extern "C" __global__ void copy_runs(const T* src, T* dst, long samples, long src_per, long src_off, long dst_per, long dst_off, long count_div) {
	const udiv_t count = divisor(count_div);
	LOOP(i, samples * count.d) {
		unsigned s = udiv(i, count), j = urem(i, s, count);
		dst[s * dst_per + dst_off + j] = src[s * src_per + src_off + j];
	}
}

// Transposes each sample's rows×cols matrix of elem-sized blocks (permute, channel
// shuffle); rows, cols and elem are divisors.
extern "C" __global__ void transpose(const T* src, T* dst, long samples, long rows_div, long cols_div, long elem_div) {
	const udiv_t rows = divisor(rows_div), cols = divisor(cols_div), elem = divisor(elem_div);
	LOOP(i, samples * rows.d * cols.d * elem.d) {
		unsigned k = udiv(i, elem), e = urem(i, k, elem), k2 = udiv(k, cols), c = urem(k, k2, cols), s = udiv(k2, rows), r = urem(k2, s, rows);
		dst[(((long)s * cols.d + c) * rows.d + r) * elem.d + e] = src[i];
	}
}

// window is the input range [lo, hi) of output o along an axis of n inputs and out
// outputs (a divisor): mode 2 (adaptive) splits n evenly, else a kernel k at stride s,
// padded by p.
__device__ void window(long mode, long o, long n, udiv_t out, long k, long s, long p, long* lo, long* hi) {
	if (mode == 2) { *lo = udiv((unsigned)(o * n), out); *hi = udiv((unsigned)((o + 1) * n + out.d - 1), out); }
	else { *lo = o * s - p; *hi = *lo + k; }
}

// Pooling: mode 0 max (arg keeps the winner), 1 average counting padding, 2 adaptive
// average. The geometry: planes, then divisors of h, w, oh, ow, h·w, oh·ow, sh and sw, then
// kh, kw, ph, pw.
#define POOL_GEOMETRY long planes, long h_div, long w_div, long oh_div, long ow_div, long hw_div, long ohw_div, long sh_div, long sw_div, long kh, long kw, long ph, long pw
#define POOL_DIVISORS \
	const udiv_t hd = divisor(h_div), wd = divisor(w_div), ohd = divisor(oh_div), owd = divisor(ow_div), hwd = divisor(hw_div), \
		ohwd = divisor(ohw_div), shd = divisor(sh_div), swd = divisor(sw_div); \
	const long h = hd.d, w = wd.d, oh = ohd.d, ow = owd.d, sh = shd.d, sw = swd.d; \
	(void)hwd; (void)ohwd; (void)oh; (void)ow /* each kernel uses some */

extern "C" __global__ void pool_fwd(long mode, const T* x, T* y, long* arg, POOL_GEOMETRY) {
	POOL_DIVISORS;
	LOOP(i, planes * ohwd.d) {
		unsigned t = udiv(i, ohwd), o = urem(i, t, ohwd), oy = udiv(o, owd), ox = urem(o, oy, owd);
		long y0, y1, x0, x1;
		window(mode, oy, h, ohd, kh, sh, ph, &y0, &y1);
		window(mode, ox, w, owd, kw, sw, pw, &x0, &x1);
		float best = -3.4e38f, sum = 0.f; long besti = -1;
		for (long iy = max(y0, 0L); iy < min(y1, h); iy++)
			for (long ix = max(x0, 0L); ix < min(x1, w); ix++) {
				float v = LD(x, (long)t * h * w + iy * w + ix);
				sum += v;
				if (v > best) { best = v; besti = iy * w + ix; }
			}
		if (mode == 0) { ST(y, i, best); arg[i] = besti; }
		else ST(y, i, sum / (float)((y1 - y0) * (x1 - x0)));
	}
}

// The pooling gradient, gathered per input element (no atomics) from the windows that
// can hold it.
extern "C" __global__ void pool_bwd(long mode, const T* dy, const long* arg, T* dx, POOL_GEOMETRY) {
	POOL_DIVISORS;
	LOOP(i, planes * hwd.d) {
		unsigned t = udiv(i, hwd), p = urem(i, t, hwd), iy = udiv(p, wd), ix = urem(p, iy, wd);
		long oy0, oy1, ox0, ox1;
		if (mode == 2) {
			oy0 = udiv(iy * (unsigned)oh, hd); oy1 = min(oh, (long)udiv((iy + 1) * (unsigned)oh, hd) + 1);
			ox0 = udiv(ix * (unsigned)ow, wd); ox1 = min(ow, (long)udiv((ix + 1) * (unsigned)ow, wd) + 1);
		} else {
			// The first window that can hold iy starts at or after iy + ph - kh + 1.
			oy0 = (long)iy + ph < kh ? 0 : (long)udiv((unsigned)(iy + ph - kh), shd);
			oy1 = min(oh, (long)udiv((unsigned)(iy + ph), shd) + 1);
			ox0 = (long)ix + pw < kw ? 0 : (long)udiv((unsigned)(ix + pw - kw), swd);
			ox1 = min(ow, (long)udiv((unsigned)(ix + pw), swd) + 1);
		}
		float s = 0.f;
		for (long oy = oy0; oy < oy1; oy++) {
			long y0, y1;
			window(mode, oy, h, ohd, kh, sh, ph, &y0, &y1);
			if ((long)iy < y0 || (long)iy >= y1) continue;
			for (long ox = ox0; ox < ox1; ox++) {
				long x0, x1;
				window(mode, ox, w, owd, kw, sw, pw, &x0, &x1);
				if ((long)ix < x0 || (long)ix >= x1) continue;
				long o = (long)t * oh * ow + oy * ow + ox;
				if (mode == 0) { if (arg[o] == (long)p) s += LD(dy, o); }
				else s += LD(dy, o) / (float)((y1 - y0) * (x1 - x0));
			}
		}
		ST(dx, i, s);
	}
}

// Layer norm over rows of c contiguous features, a group per row.
extern "C" __global__ void rownorm_fwd(const T* x, const float* g, const float* b, T* y, float* mean, float* rstd, long rows, long c, long G) {
	__shared__ float sh[32];
	GROUP(G);
	ROWS(r, rows) {
		const long o = r * c;
		float s = 0.f, ss = 0.f;
		for (long j = lane; j < c; j += gsize) { float v = LD(x, o + j); s += v; ss += v * v; }
		s = group_sum(s, G, sh);
		ss = group_sum(ss, G, sh);
		float m = s / c, rs = rsqrtf(fmaxf(ss / c - m * m, 0.f) + 1e-6f);
		if (lane == 0) { mean[r] = m; rstd[r] = rs; }
		for (long j = lane; j < c; j += gsize) ST(y, o + j, (LD(x, o + j) - m) * rs * g[j] + b[j]);
	}
}

extern "C" __global__ void rownorm_bwd(const T* x, const float* g, const T* dy, const float* mean, const float* rstd, T* dx, long rows, long c, long G) {
	__shared__ float sh[32];
	GROUP(G);
	ROWS(r, rows) {
		const long o = r * c;
		float m = mean[r], rs = rstd[r], s = 0.f, sx = 0.f;
		for (long j = lane; j < c; j += gsize) { float gg = LD(dy, o + j) * g[j]; s += gg; sx += gg * (LD(x, o + j) - m) * rs; }
		s = group_sum(s, G, sh);
		sx = group_sum(sx, G, sh);
		for (long j = lane; j < c; j += gsize) {
			float xh = (LD(x, o + j) - m) * rs;
			ST(dx, o + j, rs / c * (c * LD(dy, o + j) * g[j] - s - xh * sx));
		}
	}
}

// The layer norm's weight gradients, first step: each block sums dγ = Σ dy·x̂ and
// dβ = Σ dy for 32 columns over one of chunks runs of per rows (tiles = ⌈c/32⌉ is a
// divisor; its 8 warps take every 8th row, each thread one column) into pg and
// pb[chunk·c + column]; column_sum adds the chunks up.
extern "C" __global__ void rownorm_wgrad(const T* x, const T* dy, const float* mean, const float* rstd, float* pg, float* pb, long rows, long c, long chunks, long tiles_div, long per) {
	__shared__ float sg[8][33], sb[8][33]; // blockDim.x = 256: 32 columns × 8 row lanes
	const udiv_t tiles = divisor(tiles_div);
	const unsigned col = (unsigned)threadIdx.x & 31u, lane = (unsigned)threadIdx.x >> 5;
	for (unsigned bi = (unsigned)blockIdx.x; bi < tiles.d * (unsigned)chunks; bi += (unsigned)gridDim.x) {
		unsigned chunk = udiv(bi, tiles);
		long j = (long)urem(bi, chunk, tiles) * 32 + col, r1 = min(rows, ((long)chunk + 1) * per);
		float sgv = 0.f, sbv = 0.f;
		if (j < c)
			for (long r = (long)chunk * per + lane; r < r1; r += 8) {
				float d = LD(dy, r * c + j);
				sgv += d * (LD(x, r * c + j) - mean[r]) * rstd[r];
				sbv += d;
			}
		__syncthreads(); // the previous tile's sums are read
		sg[lane][col] = sgv;
		sb[lane][col] = sbv;
		__syncthreads();
		if (lane == 0 && j < c) {
			for (int k = 1; k < 8; k++) { sgv += sg[k][col]; sbv += sb[k][col]; }
			pg[chunk * c + j] = sgv;
			pb[chunk * c + j] = sbv;
		}
	}
}

// Softmax cross-entropy per row against labels (r·7) mod c (c a divisor), a group per
// row; loss[r] is the row's loss (column_sum averages them).
extern "C" __global__ void xent_fwd(const T* x, float* prob, float* loss, long rows, long c_div, long G) {
	__shared__ float sh[32];
	const udiv_t cd = divisor(c_div);
	const long c = cd.d;
	GROUP(G);
	ROWS(r, rows) {
		const long o = r * c;
		float m = -3.4e38f, s = 0.f;
		for (long j = lane; j < c; j += gsize) m = fmaxf(m, LD(x, o + j));
		m = group_max(m, G, sh);
		for (long j = lane; j < c; j += gsize) { float e = __expf(LD(x, o + j) - m); prob[o + j] = e; s += e; }
		s = group_sum(s, G, sh);
		for (long j = lane; j < c; j += gsize) prob[o + j] /= s;
		unsigned label = (unsigned)r * 7u;
		if (lane == 0) loss[r] = __logf(s) + m - LD(x, o + urem(label, udiv(label, cd), cd));
	}
}

extern "C" __global__ void xent_bwd(const float* prob, T* dx, long rows, long c_div) {
	const udiv_t c = divisor(c_div);
	LOOP(i, rows * c.d) {
		unsigned r = udiv(i, c), j = urem(i, r, c), label = r * 7u;
		ST(dx, i, (prob[i] - (j == urem(label, udiv(label, c), c) ? 1.f : 0.f)) / rows);
	}
}

// Training-mode batch norm as PyTorch's own CUDA kernels run it where cuDNN does not
// (bfloat16 data: aten/src/ATen/native/Normalization.cpp's _select_batch_norm_backend
// refuses cuDNN for it): statistics per channel in FP32, then one element-wise pass.
// NCHW: a plane is one (sample, channel)'s plane elements; c is a divisor.
//
// plane_stats: mode 0 sums x and x² over each plane, mode 1 dy and dy·(x - mean[c]), a
// group per plane, into ps and pq.
extern "C" __global__ void plane_stats(long mode, const T* x, const T* dy, const float* mean, float* ps, float* pq, long planes, long plane, long c_div, long G) {
	__shared__ float sh[32];
	const udiv_t cd = divisor(c_div);
	GROUP(G);
	ROWS(t, planes) {
		float s = 0.f, q = 0.f, m = mode == 1 ? mean[urem((unsigned)t, udiv((unsigned)t, cd), cd)] : 0.f;
		for (long j = lane; j < plane; j += gsize) {
			float v = LD(x, t * plane + j);
			if (mode == 0) { s += v; q += v * v; }
			else { float d = LD(dy, t * plane + j); s += d; q += d * (v - m); }
		}
		s = group_sum(s, G, sh);
		q = group_sum(q, G, sh);
		if (lane == 0) { ps[t] = s; pq[t] = q; }
	}
}

// bn_finalize sums the n planes of each channel, a warp per channel: mode 0 turns Σx and
// Σx² over count elements into mean and 1/√(var + 1e-5) (the biased variance, as in
// training); mode 1 gives the weight and bias gradients Σdy·x̂ and Σdy into g and b, and
// keeps Σdy and Σdy·(x - mean) in ps[0..c) and pq[0..c) for bn_apply's backward.
extern "C" __global__ void bn_finalize(long mode, float* ps, float* pq, float* mean, float* invstd, float* g, float* b, long n, long c, double count) {
	GROUP(32);
	ROWS(j, c) {
		float s = 0.f, q = 0.f;
		for (long r = lane; r < n; r += 32) { s += ps[r * c + j]; q += pq[r * c + j]; }
		s = warp_sum(s);
		q = warp_sum(q);
		if (lane != 0) continue;
		if (mode == 0) {
			float m = s / (float)count;
			mean[j] = m;
			invstd[j] = rsqrtf(fmaxf(q / (float)count - m * m, 0.f) + 1e-5f);
		} else {
			g[j] = q * invstd[j];
			b[j] = s;
			ps[j] = s;
			pq[j] = q;
		}
	}
}

// bn_apply: mode 0 the forward y = (x - mean)·invstd·γ + β; mode 1 the input gradient
// dx = γ·invstd·(dy - Σdy/count - (x - mean)·invstd²·Σdy(x - mean)/count), with the sums
// bn_finalize left in sdy and sdyx. plane and c are divisors.
extern "C" __global__ void bn_apply(long mode, const T* x, const T* dy, const float* mean, const float* invstd, const float* g, const float* b,
	const float* sdy, const float* sdyx, T* y, long n, long plane_div, long c_div, double count) {
	const udiv_t plane = divisor(plane_div), cd = divisor(c_div);
	LOOP(i, n) {
		unsigned q = udiv(i, plane), ch = urem(q, udiv(q, cd), cd);
		float xm = LD(x, i) - mean[ch], is = invstd[ch];
		if (mode == 0) ST(y, i, xm * is * g[ch] + b[ch]);
		else ST(y, i, g[ch] * is * (LD(dy, i) - sdy[ch] / (float)count - xm * is * is * sdyx[ch] / (float)count));
	}
}

// Reads n 32-bit words at p, so that they are in the L2 as a step's previous layer
// leaves its output (the producer-hot timing mode); sink is written only if the words'
// XOR is a value no test data gives, which keeps the loads.
extern "C" __global__ void touch(const unsigned* p, long n, unsigned* sink) {
	unsigned acc = 0;
	LOOP(i, n) acc ^= p[i];
	if (acc == 0x9e3779b9u) *sink = acc;
}

// Keeps one thread of the GPU busy for cycles clock cycles: queued before a sample's
// start event, so that the host has issued every run of the sample before the first
// one starts and the GPU runs them back to back (package timing's Spin).
extern "C" __global__ void spin(long cycles) {
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
}
