//go:build cuda

// The stream-wait hold (package timing's HoldStream): the default stream waits on a flag
// in mapped host memory, which the host sets once it has issued a sample's runs, so that
// the GPU runs them back to back without cnntime's spin kernel (NVRTC absent).
// cuStreamWaitValue32 is resolved from the driver at run time: its _v2 name in CUDA 12
// and later, the plain one before.
#include <cuda.h>
#include <dlfcn.h>
#include "hold.h"

typedef CUresult (*wait_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
static wait_fn p_wait;

int hold_load(void) {
	void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) return 0;
	p_wait = (wait_fn)dlsym(h, "cuStreamWaitValue32_v2");
	if (!p_wait) p_wait = (wait_fn)dlsym(h, "cuStreamWaitValue32");
	return p_wait != NULL;
}

int hold_alloc(unsigned** host, unsigned long long* dev) {
	void* p = NULL;
	CUresult r = cuMemHostAlloc(&p, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
	if (r != CUDA_SUCCESS) return (int)r;
	__atomic_store_n((unsigned*)p, 0u, __ATOMIC_RELEASE);
	CUdeviceptr d = 0;
	r = cuMemHostGetDevicePointer(&d, p, 0);
	if (r != CUDA_SUCCESS) {
		cuMemFreeHost(p);
		return (int)r;
	}
	*host = (unsigned*)p;
	*dev = (unsigned long long)d;
	return 0;
}

int hold_wait(unsigned long long dev, unsigned value) {
	if (!p_wait) return (int)CUDA_ERROR_NOT_SUPPORTED;
	return (int)p_wait(0, (CUdeviceptr)dev, value, CU_STREAM_WAIT_VALUE_GEQ);
}

void hold_release(unsigned* host, unsigned value) { __atomic_store_n(host, value, __ATOMIC_RELEASE); }
