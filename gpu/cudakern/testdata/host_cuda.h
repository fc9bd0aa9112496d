// The CUDA built-ins kernels.cu uses, emulated on the CPU for the tests of package
// gpu/cudakern. The threads of a block are fibers on one OS thread (started with
// makecontext, then switched with _setjmp/_longjmp, which leave the signal mask alone and
// so make no system call), switched at barriers: __syncthreads is a barrier of the block, a warp shuffle an exchange through
// memory between two barriers of the warp. Blocks run one after another, so __shared__
// variables can be statics. A barrier that not every thread reaches is a deadlock, which
// the scheduler reports.
#pragma once
#define CNNTIME_HOST // kernels.cu leaves FP16 loads and stores to this header
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <csetjmp>
#include <cstring>
#include <functional>
#include <memory>
#include <ucontext.h>
#include <vector>

struct host_dim3 { long x, y, z; };
inline host_dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static

constexpr size_t host_stack = 64 << 10;

struct host_barrier { long count = 0, gen = 0; };

struct host_fiber {
	ucontext_t ctx;
	jmp_buf jb;
	bool started = false;
	std::unique_ptr<char[]> stack{new char[host_stack]}; // not cleared: most of it is never touched
	bool done = false;
};

struct host_sched {
	jmp_buf jb;
	std::vector<host_fiber> fibers;
	long current = 0, progress = 0;
	host_barrier block;
	std::vector<host_barrier> warps;
	std::vector<float> exchange;
	std::function<void()> body;
};
inline host_sched host;

inline void host_yield() {
	if (!_setjmp(host.fibers[host.current].jb)) _longjmp(host.jb, 1);
}

inline void host_wait(host_barrier& b, long n) {
	long g = b.gen;
	host.progress++;
	if (++b.count == n) { b.count = 0; b.gen++; return; }
	while (b.gen == g) host_yield();
}

inline void host_entry() {
	host.body();
	host.fibers[host.current].done = true;
	host.progress++;
	_longjmp(host.jb, 1); // back to the scheduler; this fiber is never resumed
}

// host_run_block runs body in every thread of block b and returns when all are done.
inline void host_run_block(long b, const std::function<void()>& body) {
	long n = blockDim.x;
	host.fibers.resize(n);
	host.warps.assign(n / 32, host_barrier{});
	host.block = host_barrier{};
	host.exchange.assign(n, 0.f);
	host.body = body;
	blockIdx = {b, 0, 0};
	for (long i = 0; i < n; i++) {
		host_fiber& f = host.fibers[i];
		f.done = false;
		f.started = false;
		getcontext(&f.ctx);
		f.ctx.uc_stack.ss_sp = f.stack.get();
		f.ctx.uc_stack.ss_size = host_stack;
		f.ctx.uc_link = nullptr; // host_entry jumps back to the scheduler itself
		makecontext(&f.ctx, host_entry, 0);
	}
	for (long left = n; left > 0;) {
		long before = host.progress;
		left = 0;
		for (long i = 0; i < n; i++) {
			if (host.fibers[i].done) continue;
			host.current = i;
			threadIdx = {i, 0, 0};
			if (!_setjmp(host.jb)) {
				if (host.fibers[i].started) _longjmp(host.fibers[i].jb, 1);
				host.fibers[i].started = true;
				setcontext(&host.fibers[i].ctx);
			}
			left += !host.fibers[i].done;
		}
		if (left > 0 && host.progress == before) {
			fprintf(stderr, "deadlock in block %ld: %ld threads wait at a barrier the others never reach\n", b, left);
			exit(3);
		}
	}
}

inline void __syncthreads() { host_wait(host.block, blockDim.x); }

inline float __shfl_xor_sync(unsigned, float v, int mask) {
	long lane = threadIdx.x % 32, w = threadIdx.x / 32;
	float* ex = &host.exchange[w * 32];
	ex[lane] = v;
	host_wait(host.warps[w], 32);
	float r = ex[lane ^ mask];
	host_wait(host.warps[w], 32);
	return r;
}

inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline long long clock64() { static long long c; return c += 1000; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
using std::erff;
using std::fmaxf;
using std::fminf;
using std::max;
using std::min;

struct uint4 { unsigned x, y, z, w; };

#if defined(USE_BF16)
typedef unsigned short T;
inline float LD(const T* p, long i) { uint32_t u = (uint32_t)p[i] << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline void ST(T* p, long i, float f) { uint32_t u; std::memcpy(&u, &f, 4); p[i] = (T)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }
#elif defined(USE_HALF)
typedef unsigned short T;
inline float LD(const T* p, long i) { _Float16 h; std::memcpy(&h, p + i, 2); return (float)h; }
inline void ST(T* p, long i, float f) { _Float16 h = (_Float16)f; std::memcpy(p + i, &h, 2); }
#endif
