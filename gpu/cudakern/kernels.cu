// cnntime's own CUDA kernels: the memory-bound layers cuDNN and cuBLAS do not cover.
// The worker compiles this file with NVRTC at start-up (package gpu/cuda); the tests of
// package gpu/cudakern compile it with NVRTC where it is installed and run it on the CPU
// through host_cuda.h.
//
// Every parameter is 8 bytes (pointers, long, double): gorgonia.org/cu copies 8 bytes per
// argument. T is float, or a 16-bit half (stored as unsigned short, converted with PTX
// cvt, so no header is needed) when compiled with -DUSE_HALF for FP16-mixed precision.
// Reductions run in FP32 whatever T is.
//
// Launch geometry (launch.go sets it): blocks of 256 threads. Elementwise kernels are
// grid-stride loops. Row reductions give each row a group of G threads: G = 32 (one warp
// per row, eight rows per block, reduced by shuffles) or G = blockDim.x (one block per
// row, reduced through shared memory); the group's threads read the row's consecutive
// elements together, so every read is coalesced.

#if defined(USE_HALF) && !defined(CNNTIME_HOST)
typedef unsigned short T;
__device__ __forceinline__ float LD(const T* p, long i) { float f; unsigned short h = p[i]; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ void ST(T* p, long i, float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); p[i] = h; }
#elif !defined(USE_HALF)
typedef float T;
__device__ __forceinline__ float LD(const T* p, long i) { return p[i]; }
__device__ __forceinline__ void ST(T* p, long i, float f) { p[i] = f; }
#endif

#define LOOP(i, n) for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)blockDim.x * gridDim.x)

// ROWS(r, G) visits the rows of this thread's group of G threads (a warp or the block).
#define ROWS(r, rows, G) for (long r = blockIdx.x * (long)(blockDim.x / (G)) + threadIdx.x / (G); r < (rows); r += (long)gridDim.x * (blockDim.x / (G)))

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

// out[t] = Σ_j a[t·plane + j] · b[t·plane + j], a group per t: a scale's gradient per
// (sample, channel).
extern "C" __global__ void plane_dot(const T* a, const T* b, float* out, long planes, long plane, long G) {
	__shared__ float sh[32];
	long lane = threadIdx.x % G;
	ROWS(t, planes, G) {
		float s = 0.f;
		for (long j = lane; j < plane; j += G) s += LD(a, t * plane + j) * LD(b, t * plane + j);
		s = group_sum(s, G, sh);
		if (lane == 0) out[t] = s;
	}
}

// y[t] = the mean of x[t·plane + j] over j, a group per t: adaptive average pooling to 1×1.
extern "C" __global__ void plane_mean(const T* x, T* y, long planes, long plane, long G) {
	__shared__ float sh[32];
	long lane = threadIdx.x % G;
	ROWS(t, planes, G) {
		float s = 0.f;
		for (long j = lane; j < plane; j += G) s += LD(x, t * plane + j);
		s = group_sum(s, G, sh);
		if (lane == 0) ST(y, t, s / (float)plane);
	}
}

// out[j] = scale · Σ_r in[r·c + j] over FP32 partial sums, a warp per column: the last
// step of a column reduction (few rows).
extern "C" __global__ void column_sum(const float* in, float* out, long rows, long c, double scale) {
	long lane = threadIdx.x & 31;
	ROWS(j, c, 32) {
		float s = 0.f;
		for (long r = lane; r < rows; r += 32) s += in[r * c + j];
		s = warp_sum(s);
		if (lane == 0) out[j] = s * (float)scale;
	}
}

// Dropout (row = 1) or stochastic depth (row = elements per sample): unit i / row is
// dropped when its hash falls below threshold (p · 2^24); the rest is scaled by 1/(1-p).
// package gpu/cpu draws the same mask.
extern "C" __global__ void drop(const T* x, T* y, long n, long row, long threshold, long seed) {
	float keep = 16777216.f / (float)(16777216 - threshold);
	LOOP(i, n) {
		unsigned h = (unsigned)(i / row) * 2654435761u ^ (unsigned)seed;
		h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
		ST(y, i, (long)(h & 0xffffff) < threshold ? 0.f : LD(x, i) * keep);
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

// The pooling gradient, gathered per input element (no atomics) from the windows that
// can hold it.
extern "C" __global__ void pool_bwd(long mode, const T* dy, const long* arg, T* dx, long planes, long h, long w, long oh, long ow, long kh, long kw, long sh, long sw, long ph, long pw) {
	LOOP(i, planes * h * w) {
		long t = i / (h * w), p = i % (h * w), iy = p / w, ix = p % w, oy0, oy1, ox0, ox1;
		if (mode == 2) {
			oy0 = iy * oh / h; oy1 = min(oh, (iy + 1) * oh / h + 1);
			ox0 = ix * ow / w; ox1 = min(ow, (ix + 1) * ow / w + 1);
		} else {
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

// Layer norm over rows of c contiguous features, a group per row.
extern "C" __global__ void rownorm_fwd(const T* x, const float* g, const float* b, T* y, float* mean, float* rstd, long rows, long c, long G) {
	__shared__ float sh[32];
	long lane = threadIdx.x % G;
	ROWS(r, rows, G) {
		const long o = r * c;
		float s = 0.f, ss = 0.f;
		for (long j = lane; j < c; j += G) { float v = LD(x, o + j); s += v; ss += v * v; }
		s = group_sum(s, G, sh);
		ss = group_sum(ss, G, sh);
		float m = s / c, rs = rsqrtf(fmaxf(ss / c - m * m, 0.f) + 1e-6f);
		if (lane == 0) { mean[r] = m; rstd[r] = rs; }
		for (long j = lane; j < c; j += G) ST(y, o + j, (LD(x, o + j) - m) * rs * g[j] + b[j]);
	}
}

extern "C" __global__ void rownorm_bwd(const T* x, const float* g, const T* dy, const float* mean, const float* rstd, T* dx, long rows, long c, long G) {
	__shared__ float sh[32];
	long lane = threadIdx.x % G;
	ROWS(r, rows, G) {
		const long o = r * c;
		float m = mean[r], rs = rstd[r], s = 0.f, sx = 0.f;
		for (long j = lane; j < c; j += G) { float gg = LD(dy, o + j) * g[j]; s += gg; sx += gg * (LD(x, o + j) - m) * rs; }
		s = group_sum(s, G, sh);
		sx = group_sum(sx, G, sh);
		for (long j = lane; j < c; j += G) {
			float xh = (LD(x, o + j) - m) * rs;
			ST(dx, o + j, rs / c * (c * LD(dy, o + j) * g[j] - s - xh * sx));
		}
	}
}

// The layer norm's weight gradients, first step: each block sums dγ = Σ dy·x̂ and
// dβ = Σ dy for 32 columns over one of chunks runs of rows (its 8 warps take every 8th
// row, each thread one column) into pg and pb[chunk·c + column]; column_sum adds the
// chunks up.
extern "C" __global__ void rownorm_wgrad(const T* x, const T* dy, const float* mean, const float* rstd, float* pg, float* pb, long rows, long c, long chunks) {
	__shared__ float sg[8][33], sb[8][33]; // blockDim.x = 256: 32 columns × 8 row lanes
	long col = threadIdx.x & 31, lane = threadIdx.x >> 5, tiles = (c + 31) / 32, per = (rows + chunks - 1) / chunks;
	for (long bi = blockIdx.x; bi < tiles * chunks; bi += gridDim.x) {
		long j = (bi % tiles) * 32 + col, chunk = bi / tiles, r1 = min(rows, (chunk + 1) * per);
		float sgv = 0.f, sbv = 0.f;
		if (j < c)
			for (long r = chunk * per + lane; r < r1; r += 8) {
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

// Softmax cross-entropy per row against labels (r·7) mod c, a group per row; loss[r] is
// the row's loss (column_sum averages them).
extern "C" __global__ void xent_fwd(const T* x, float* prob, float* loss, long rows, long c, long G) {
	__shared__ float sh[32];
	long lane = threadIdx.x % G;
	ROWS(r, rows, G) {
		const long o = r * c;
		float m = -3.4e38f, s = 0.f;
		for (long j = lane; j < c; j += G) m = fmaxf(m, LD(x, o + j));
		m = group_max(m, G, sh);
		for (long j = lane; j < c; j += G) { float e = __expf(LD(x, o + j) - m); prob[o + j] = e; s += e; }
		s = group_sum(s, G, sh);
		for (long j = lane; j < c; j += G) prob[o + j] /= s;
		if (lane == 0) loss[r] = __logf(s) + m - LD(x, o + (r * 7) % c);
	}
}

extern "C" __global__ void xent_bwd(const float* prob, T* dx, long rows, long c) {
	LOOP(i, rows * c) { long r = i / c, j = i % c; ST(dx, i, (prob[i] - (j == (r * 7) % c ? 1.f : 0.f)) / rows); }
}
